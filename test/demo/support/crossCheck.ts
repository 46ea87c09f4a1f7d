/**
 * The demo API served over another database (Postgres, ClickHouse), checked call by call, for
 * every tenant, against the same API served over DuckDB and against independent SQL on that
 * DuckDB copy of the same generated data.
 */
import { expect, it } from "vitest"
import { type AnalyticsCaller, type AnalyticsEndpoint, createAnalyticsApi, DEMO_API_KEYS } from "../../../examples/analytics/api.js"
import { copyDemoDataset, type DatasetTarget, type ParquetTarget } from "../../../examples/analytics/copyDataset.js"
import { createDemoDatabase } from "../../../examples/analytics/dataset.js"
import { duckDbDriver } from "../../../examples/analytics/duckdb.js"
import { createDb, type Db } from "../../../examples/analytics/sql.js"
import { callApi } from "./http.js"
import { METRIC_CASES, type MetricCase, type SqlQuery, sqlOn } from "./references.js"

/** The demo's keys: `npm start` serves these. */
export const TENANT_KEYS = { acme: "demo-acme-key", globex: "demo-globex-key" } as const
export const ADMIN_KEY = "demo-admin-key"

/** The cross-checked APIs also have a key for the third tenant, so every tenant is checked. */
const CHECKED_TENANT_KEYS = { ...TENANT_KEYS, initech: "check-initech-key" } as const
const CHECKED_KEYS: Readonly<Record<string, AnalyticsCaller>> = {
  ...DEMO_API_KEYS,
  [CHECKED_TENANT_KEYS.initech]: { name: "Initech analyst", tenantId: "initech", roles: ["analyst"] }
}

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
        : Object.entries(CHECKED_TENANT_KEYS).map(([tenant, key]): CheckedCall => ({ name: `${name} as ${tenant}`, metric, key, tenant }))
    )

export interface ServedApi {
  readonly baseUrl: string
  stop(): Promise<void>
}

/** The demo API over `db` on a free loopback port. */
export const serveApi = async (db: Db, endpoints?: ReadonlyArray<AnalyticsEndpoint>): Promise<ServedApi> => {
  const api = createAnalyticsApi(db, { ...(endpoints && { endpoints }), keys: CHECKED_KEYS, queryLogging: false })
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
  /** The API over the database under test. */
  readonly api: ServedApi
  /** The same API over the DuckDB original of the copied data. */
  readonly duckDbApi: ServedApi
  /** SQL on the DuckDB original. */
  readonly query: SqlQuery
  close(): Promise<void>
}

/** Generates the demo data (`rows` orders), copies it into `target`, and serves the API over `db` reading it, and over DuckDB. */
export const prepareCrossCheck = async (
  target: DatasetTarget | ParquetTarget,
  db: Db,
  endpoints: ReadonlyArray<AnalyticsEndpoint> | undefined,
  rows: number
): Promise<CrossCheck> => {
  const reference = await createDemoDatabase({ rows, log: () => {} })
  await copyDemoDataset(reference.connection, target, { log: () => {} })
  // Its own connection, so that the API's queries never share one with the reference SQL.
  const connection = await reference.instance.connect()
  const [api, duckDbApi] = await Promise.all([serveApi(db, endpoints), serveApi(createDb(duckDbDriver(connection)), endpoints)])
  return {
    api,
    duckDbApi,
    query: sqlOn(reference.connection),
    close: async () => {
      await Promise.all([api.stop(), duckDbApi.stop()])
      connection.closeSync()
      await reference.close()
    }
  }
}

/** One test per checked call of `endpoints`: 200 and exactly the rows the API over DuckDB answers and independent SQL computes. */
export const itAnswersLikeDuckDb = (endpoints: ReadonlyArray<AnalyticsEndpoint>, check: () => CrossCheck): void => {
  for (const call of checkedCalls(endpoints)) {
    it(call.name, async () => {
      const { api, duckDbApi, query } = check()
      const options = { key: call.key, input: call.metric.input }
      const [answer, duckDbAnswer] = await Promise.all([
        callApi(api.baseUrl, call.metric.endpoint, options),
        callApi(duckDbApi.baseUrl, call.metric.endpoint, options)
      ])
      expect(answer.status, answer.text).toBe(200)
      expect(duckDbAnswer.status, duckDbAnswer.text).toBe(200)
      expect(answer.json).toEqual(duckDbAnswer.json)
      expect(answer.json).toEqual(await call.metric.reference(query, call.tenant))
    })
  }
}
