/**
 * Isolation ClickHouse enforces: every query of a caller carries the caller's tenant as a custom
 * setting (`SQL_tenant_id`), and a row policy on each table compares its tenant column with it:
 *
 *   CREATE ROW POLICY tenant_isolation ON orders USING tenant_id = getSetting('SQL_tenant_id') TO ALL
 *
 * The server then filters even hand-written SQL, which auto-inject cannot see. A query without the
 * setting fails (getSetting of an unknown setting is an error), so a forgotten tenant reads nothing.
 * Custom settings need a prefix the server lists in `custom_settings_prefixes` (`SQL_` by default);
 * creating a row policy needs access management for the user that runs the DDL.
 *
 * This works on a ClickHouse server. chDB (the engine in this process, ./chdb.ts) cannot: it knows
 * no custom settings prefix, so `SETTINGS SQL_tenant_id = …` is an unknown setting there, and its
 * default user may not create row policies.
 */
import type { ClickHouseClient } from "@clickhouse/client"
import { Forbidden } from "queryserve"
import { type ClickHouseExecutor, JSON_SETTINGS, serverQueries } from "./clickhouse.js"

/** The custom setting the tenant travels in. */
export const TENANT_SETTING = "SQL_tenant_id"

const IDENTIFIER = /^[A-Za-z_][A-Za-z0-9_]*$/

const identifier = (name: string): string => {
  if (!IDENTIFIER.test(name)) throw new TypeError(`not a plain ClickHouse identifier: ${JSON.stringify(name)}`)
  return name
}

export interface TenantPolicyOptions {
  /** The tenant column. Default `tenant_id`. */
  readonly column?: string
  /** Default TENANT_SETTING. */
  readonly setting?: string
  /** The policy's name. Default `tenant_isolation`. */
  readonly policy?: string
}

/** The row policy DDL for `table` (a plain or `database.table` name): rows whose tenant column is the query's setting. */
export const tenantRowPolicySql = (table: string, options: TenantPolicyOptions = {}): string => {
  const target = table.split(".").map(identifier).join(".")
  const column = identifier(options.column ?? "tenant_id")
  const setting = identifier(options.setting ?? TENANT_SETTING)
  return `CREATE ROW POLICY OR REPLACE ${identifier(options.policy ?? "tenant_isolation")} ON ${target} ` +
    `USING ${column} = getSetting('${setting}') TO ALL`
}

/**
 * A server executor for one caller: each query sends `tenantId` as the custom setting, beside the
 * JSON settings of ./clickhouse.ts. A caller without a tenant is refused (403 `missing_tenant`)
 * before anything is sent. The client is shared by every caller: closing the executor leaves it open.
 */
export const tenantSettingExecutor = (
  client: ClickHouseClient,
  tenantId: string | null | undefined,
  setting: string = TENANT_SETTING
): ClickHouseExecutor => {
  if (typeof tenantId !== "string" || tenantId.length === 0) {
    const refuse = (): never => {
      throw new Forbidden({ message: "A tenant is required for this query: the caller has none", reason: "missing_tenant" })
    }
    return { query: async () => refuse(), stream: async function* () { refuse() }, close: async () => undefined }
  }
  return { ...serverQueries(client, { ...JSON_SETTINGS, [setting]: tenantId }), close: async () => undefined }
}
