/**
 * The demo API served over another database (Postgres, ClickHouse), checked call by call against
 * independent SQL on a DuckDB copy of the same generated data.
 */
import { expect, it } from "vitest"
import { type AnalyticsEndpoint, createAnalyticsApi } from "../../../examples/analytics/api.js"
import { copyDemoDataset, type DatasetTarget } from "../../../examples/analytics/copyDataset.js"
import { createDemoDatabase } from "../../../examples/analytics/dataset.js"
import type { Db } from "../../../examples/analytics/sql.js"
import { callApi } from "./http.js"
import { METRIC_CASES, type MetricCase, type SqlQuery, sqlOn } from "./references.js"

export const TENANT_KEYS = { acme: "demo-acme-key", globex: "demo-globex-key" } as const
export const ADMIN_KEY = "demo-admin-key"

export interface CheckedCall {
  readonly name: string
  readonly metric: MetricCase
  readonly key: string
  /** Whose rows the answer must hold; null: every tenant's (the admin overview). */
  readonly tenant: string | null
}

/** Every metric case of `endpoints`: with each tenant's key, or with the admin key for the overview. */
export const checkedCalls = (endpoints: ReadonlyArray<AnalyticsEndpoint>): ReadonlyArray<CheckedCall> =>
  Object.entries(METRIC_CASES)
    .filter(([, metric]) => endpoints.includes(metric.endpoint))
    .flatMap(([name, metric]) =>
      metric.endpoint === "tenantsOverview"
        ? [{ name, metric, key: ADMIN_KEY, tenant: null } satisfies CheckedCall]
        : Object.entries(TENANT_KEYS).map(([tenant, key]): CheckedCall => ({ name: `${name} as ${tenant}`, metric, key, tenant }))
    )

export interface ServedApi {
  readonly baseUrl: string
  stop(): Promise<void>
}

/** The demo API over `db` on a free loopback port. */
export const serveApi = async (db: Db, endpoints: ReadonlyArray<AnalyticsEndpoint>): Promise<ServedApi> => {
  const api = createAnalyticsApi(db, { endpoints, queryLogging: false })
  const server = await api.start({ port: 0, hostname: "127.0.0.1", handleSignals: false })
  return {
    baseUrl: `${server.url}${api.basePath}`,
    stop: async () => {
      await server.stop()
      await api.dispose()
    }
  }
}

export interface CrossCheck {
  readonly api: ServedApi
  /** SQL on the DuckDB original of the copied data. */
  readonly query: SqlQuery
  close(): Promise<void>
}

/** Generates the demo data (`rows` orders), copies it into `target`, and serves the API over `db` reading it. */
export const prepareCrossCheck = async (
  target: DatasetTarget,
  db: Db,
  endpoints: ReadonlyArray<AnalyticsEndpoint>,
  rows: number
): Promise<CrossCheck> => {
  const reference = await createDemoDatabase({ rows, log: () => {} })
  await copyDemoDataset(reference.connection, target, { log: () => {} })
  const api = await serveApi(db, endpoints)
  return {
    api,
    query: sqlOn(reference.connection),
    close: async () => {
      await api.stop()
      await reference.close()
    }
  }
}

/** One test per checked call of `endpoints`: 200 and exactly the rows DuckDB computes. */
export const itAnswersLikeDuckDb = (endpoints: ReadonlyArray<AnalyticsEndpoint>, check: () => CrossCheck): void => {
  for (const call of checkedCalls(endpoints)) {
    it(call.name, async () => {
      const { api, query } = check()
      const answer = await callApi(api.baseUrl, call.metric.endpoint, { key: call.key, input: call.metric.input })
      expect(answer.status, answer.text).toBe(200)
      expect(answer.json).toEqual(await call.metric.reference(query, call.tenant))
    })
  }
}
