import { redisOutageSuite } from "../reliability/support/redisOutage.js"

// The short run of `npm test`; `npm run test:reliability` kills Redis 3 times for 10 s each.
redisOutageSuite({ outages: 1, outageMs: 1_500 })
