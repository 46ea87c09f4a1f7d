import { soakSuite } from "../reliability/support/soak.js"

// The short run of `npm test`; `npm run test:reliability` soaks for 60 s.
soakSuite({ seconds: 5, warmUpSeconds: 2, assertRss: false })
