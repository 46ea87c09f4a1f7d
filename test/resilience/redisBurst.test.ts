import { redisBurstSuite } from "../reliability/support/redisBurst.js"

// The short run of `npm test`; `npm run test:reliability` sends 5 bursts of 1,500 requests.
redisBurstSuite({ processes: 2, requests: 600, max: 5, runs: 1 })
