import { tenantMatrixSuite } from "./support/tenantMatrix.js"

tenantMatrixSuite({ rounds: 20 })
tenantMatrixSuite({ rounds: 20, resultCache: true })
