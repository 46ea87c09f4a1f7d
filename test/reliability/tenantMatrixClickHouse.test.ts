import { findChdbForTests } from "../support/chdb.js"
import { tenantMatrixSuite } from "./support/tenantMatrix.js"

if (findChdbForTests("tenant matrix on ClickHouse") !== undefined) tenantMatrixSuite({ rounds: 20, engine: "clickhouse" })
