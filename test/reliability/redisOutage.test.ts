import { redisOutageSuite } from "./support/redisOutage.js"

redisOutageSuite({ outages: 3, outageMs: 10_000, stall: { stalls: 3, stallMs: 5_000 }, timing: "strict" })
