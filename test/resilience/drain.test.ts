import { drainSuite } from "../reliability/support/drain.js"

// The short run of `npm test`; `npm run test:reliability` runs 5 cycles of 5 s of load each.
drainSuite({ cycles: 1, loadMs: 1_500 })
