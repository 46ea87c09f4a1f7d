import { drainSuite } from "./support/drain.js"

drainSuite({ cycles: 5, loadMs: 5_000 })
