import { soakSuite } from "./support/soak.js"

soakSuite({ seconds: 60, warmUpSeconds: 10, assertRss: true })
