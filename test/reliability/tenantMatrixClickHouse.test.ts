import { it } from "vitest"
import { findChdbForTests } from "../support/chdb.js"
import { tenantMatrixSuite } from "./support/tenantMatrix.js"

// 5 rounds, not DuckDB's 20: chDB runs one parameterized query at a time, so a round takes about 14 s
// on 2 busy cores, and 20 rounds (272 s) came close to the 300 s test timeout.
if (findChdbForTests("tenant matrix on ClickHouse") !== undefined) tenantMatrixSuite({ rounds: 5, engine: "clickhouse" })
else it.skip("tenant matrix on ClickHouse (chDB is not installed)", () => {})
