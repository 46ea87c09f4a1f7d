import { fuzzSuite } from "../reliability/support/fuzz.js"

// The short run of `npm test`; `npm run test:reliability` sends 10,000.
fuzzSuite({ requests: 800 })
