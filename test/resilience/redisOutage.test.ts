import { redisOutageSuite } from "../reliability/support/redisOutage.js"

// The short run of `npm test`; `npm run test:reliability` stalls Redis 3 times for 5 s and kills it 3 times for 10 s.
redisOutageSuite({ outages: 1, outageMs: 1_500, stall: { stalls: 1, stallMs: 2_000 } })
