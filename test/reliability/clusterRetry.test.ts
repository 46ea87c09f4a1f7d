import { clusterRetrySuite } from "../support/clusterRetry.js"

// The long run: five failed boots, and the waits between them measured (the short run is in
// test/adapters/cluster.test.ts).
clusterRetrySuite({ failures: 5, measureWaits: true })
