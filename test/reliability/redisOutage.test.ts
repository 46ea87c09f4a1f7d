import { redisOutageSuite } from "./support/redisOutage.js"

redisOutageSuite({ outages: 3, outageMs: 10_000 })
