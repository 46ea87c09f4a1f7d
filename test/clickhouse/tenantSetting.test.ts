/**
 * The tenant as a per-query custom setting for a ClickHouse row policy (examples/clickhouse/tenantSetting.ts).
 * Over a ClickHouse server at CLICKHOUSE_URL whose user may manage access: a raw `SELECT * FROM orders`
 * returns only the caller's rows, for every tenant; a tenantless caller is refused before anything is sent.
 * chDB, the engine this machine has, cannot carry a custom setting: the last test shows it, so that the
 * day it can, the row-policy test gets an engine here.
 */
import { type ClickHouseClient, createClient } from "@clickhouse/client"
import { afterAll, describe, expect, it } from "vitest"
import { openChdb } from "../../examples/clickhouse/chdb.js"
import { TENANT_SETTING, tenantRowPolicySql, tenantSettingExecutor } from "../../examples/clickhouse/tenantSetting.js"
import { findChdbForTests } from "../support/chdb.js"

const URL = process.env.CLICKHOUSE_URL ?? "http://127.0.0.1:8123"
const DATABASE = "queryserve_tenant_setting_test"
const credentials = { url: URL, username: process.env.CLICKHOUSE_USER ?? "default", password: process.env.CLICKHOUSE_PASSWORD ?? "" }
const TENANTS = ["acme", "globex", "initech"]

/** The test database with its policy on a server, or why there is none: no server, or a user that may not create row policies. */
const prepareServer = async (): Promise<ClickHouseClient | string> => {
  const client = createClient({ ...credentials, request_timeout: 10_000 })
  if (!(await client.ping()).success) {
    await client.close()
    return `no ClickHouse server answered at ${URL} (set CLICKHOUSE_URL)`
  }
  await client.command({ query: `DROP DATABASE IF EXISTS ${DATABASE}` })
  await client.command({ query: `CREATE DATABASE ${DATABASE}` })
  await client.command({ query: `CREATE TABLE ${DATABASE}.orders (id UInt32, tenant_id String, amount Int64) ENGINE = MergeTree ORDER BY (tenant_id, id)` })
  await client.command({ query: `INSERT INTO ${DATABASE}.orders SELECT number, ['acme', 'globex', 'initech'][1 + number % 3], number * 10 FROM numbers(30)` })
  try {
    await client.command({ query: tenantRowPolicySql(`${DATABASE}.orders`) })
    return client
  } catch (error) {
    await client.command({ query: `DROP DATABASE IF EXISTS ${DATABASE}` })
    await client.close()
    return `the ClickHouse user ${credentials.username} may not create row policies (${String(error).slice(0, 120)})`
  }
}

const prepared = await prepareServer()
const skipReason = typeof prepared === "string" ? prepared : undefined
if (skipReason !== undefined) console.log(`[skip] ClickHouse row-policy test: ${skipReason}`)

describe.skipIf(skipReason !== undefined)("a row policy on the tenant setting, over a ClickHouse server", () => {
  const client = prepared as ClickHouseClient
  afterAll(async () => {
    await client.command({ query: `DROP ROW POLICY IF EXISTS tenant_isolation ON ${DATABASE}.orders` })
    await client.command({ query: `DROP DATABASE IF EXISTS ${DATABASE}` })
    await client.close()
  })

  it("a raw SELECT * FROM orders returns only the caller's rows, for every tenant", async () => {
    for (const tenant of TENANTS) {
      const rows = await tenantSettingExecutor(client, tenant).query(`SELECT * FROM ${DATABASE}.orders ORDER BY id`, {})
      expect(rows.length).toBe(10)
      expect(new Set(rows.map((row) => row.tenant_id))).toEqual(new Set([tenant]))
    }
  })

  it("refuses a tenantless caller before sending anything, and a query without the setting fails", async () => {
    for (const tenantless of [undefined, null, ""]) {
      await expect(tenantSettingExecutor(client, tenantless).query(`SELECT * FROM ${DATABASE}.orders`, {})).rejects.toMatchObject({
        _tag: "Forbidden",
        reason: "missing_tenant"
      })
    }
    await expect(client.query({ query: `SELECT * FROM ${DATABASE}.orders`, format: "JSON" }).then((result) => result.json())).rejects.toThrow(/SQL_tenant_id/)
  })
})

const chdbPath = findChdbForTests("ClickHouse tenant setting on chDB")

describe.skipIf(chdbPath === undefined)("chDB and the tenant setting", () => {
  it("writes the policy DDL for plain names only", () => {
    expect(tenantRowPolicySql("analytics.orders")).toBe(
      `CREATE ROW POLICY OR REPLACE tenant_isolation ON analytics.orders USING tenant_id = getSetting('${TENANT_SETTING}') TO ALL`
    )
    expect(() => tenantRowPolicySql("orders; DROP TABLE x")).toThrow(/not a plain ClickHouse identifier/)
  })

  it("cannot carry a custom setting (no custom_settings_prefixes): the row-policy test needs a server", async () => {
    const engine = await openChdb()
    try {
      await expect(engine.executor.query(`SELECT getSetting('${TENANT_SETTING}') AS tenant SETTINGS ${TENANT_SETTING} = 'acme'`, {})).rejects.toThrow(/Unknown setting 'SQL_tenant_id'/)
    } finally {
      await engine.executor.close()
    }
  })
})
