import { faultSuite } from "../reliability/support/faults.js"

// The short run of `npm test`; `npm run test:reliability` sends 200 to each handler.
faultSuite({ perFault: 10 })
