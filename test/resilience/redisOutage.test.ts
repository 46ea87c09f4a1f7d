import { redisOutageSuite } from "../reliability/support/redisOutage.js"

// The short run of `npm test`, which must pass beside CPU-bound processes: no latency bound, and a hit that a
// loaded machine held past a stall or outage may be counted by Redis once it is back. `npm run test:reliability`
// stalls Redis 3 times for 5 s and kills it 3 times for 10 s, and judges latency and every hit strictly.
redisOutageSuite({ outages: 1, outageMs: 1_500, stall: { stalls: 1, stallMs: 2_000 }, timing: "tolerant" })
