import { fuzzSuite } from "./support/fuzz.js"

fuzzSuite({ requests: 10_000 })
