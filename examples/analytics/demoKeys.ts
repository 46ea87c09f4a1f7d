/**
 * Who the demo's API keys belong to. A module of plain data, apart from the API, so that the
 * dashboard's browser bundle can list the keys without bundling the server.
 */
import type { ServeAuthContext } from "queryserve"

/** Who an API key belongs to. */
export interface AnalyticsCaller extends ServeAuthContext {
  readonly name: string
  readonly tenantId?: string
  readonly roles: ReadonlyArray<string>
}

/**
 * The demo's fixed keys, so the README's commands work as printed. They are public knowledge:
 * never serve the demo beyond your own machine with them.
 */
export const DEMO_API_KEYS = {
  "demo-acme-key": { name: "Acme analyst", tenantId: "acme", roles: ["analyst"] },
  "demo-globex-key": { name: "Globex analyst", tenantId: "globex", roles: ["analyst"] },
  "demo-admin-key": { name: "Platform admin", roles: ["admin"] }
} as const satisfies Readonly<Record<string, AnalyticsCaller>>

export const API_KEY_HEADER = "x-api-key"

/** Where the demo's endpoints live (the API's default basePath). */
export const DEMO_BASE_PATH = "/api/analytics"
