import { it } from "vitest"
import { tenantMatrixSuite } from "../reliability/support/tenantMatrix.js"
import { findChdbForTests } from "../support/chdb.js"

// The short run of the tenant matrix with the demo served from chDB, ClickHouse in the server's process.
if (findChdbForTests("tenant matrix on ClickHouse") !== undefined) tenantMatrixSuite({ rounds: 1, engine: "clickhouse" })
else it.skip("tenant matrix on ClickHouse (chDB is not installed)", () => {})
