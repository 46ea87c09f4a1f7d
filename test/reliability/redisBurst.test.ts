import { redisBurstSuite } from "./support/redisBurst.js"

redisBurstSuite({ processes: 2, requests: 1_500, max: 5, runs: 5 })
