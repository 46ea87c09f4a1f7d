import { faultSuite } from "./support/faults.js"

faultSuite({ perFault: 200 })
