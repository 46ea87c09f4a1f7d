import { tenantMatrixSuite } from "../reliability/support/tenantMatrix.js"

// The short run of `npm test`; `npm run test:reliability` sends the matrix 20 times (the shape matrix 5),
// each time all at once, and generates 1,000 property cases.
tenantMatrixSuite({ rounds: 1, generatedCases: 60 })
// With the result cache on, the second round is answered from it: still only the caller's own rows.
tenantMatrixSuite({ rounds: 2, resultCache: true })
