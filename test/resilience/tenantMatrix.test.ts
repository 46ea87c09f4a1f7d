import { tenantMatrixSuite } from "../reliability/support/tenantMatrix.js"

// The short run of `npm test`; `npm run test:reliability` sends the matrix 20 times, each time all at once.
tenantMatrixSuite({ rounds: 1 })
