import { tenantMatrixSuite } from "./support/tenantMatrix.js"

tenantMatrixSuite({ rounds: 20, generatedCases: 1_000 })
tenantMatrixSuite({ rounds: 20, resultCache: true })
