import { CHDB_MISSING, findChdb } from "../../examples/clickhouse/chdb.js"
import { missing } from "./testBinaries.js"

/** Where chDB loads from (the project's node_modules, else the test cache); missing, reported as findTestBinary does. */
export const findChdbForTests = (suite: string): string | undefined => findChdb() ?? missing(`${suite}: ${CHDB_MISSING}`)
