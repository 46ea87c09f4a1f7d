import { tenantMatrixSuite } from "../reliability/support/tenantMatrix.js"

// The short run of `npm test`; `npm run test:reliability` sends the matrix 20 times, each time all at once.
tenantMatrixSuite({ rounds: 1 })
// With the result cache on, the second round is answered from it: still only the caller's own rows.
tenantMatrixSuite({ rounds: 2, resultCache: true })
