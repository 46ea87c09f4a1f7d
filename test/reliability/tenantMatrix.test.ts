import { tenantMatrixSuite } from "./support/tenantMatrix.js"

tenantMatrixSuite({ rounds: 20 })
