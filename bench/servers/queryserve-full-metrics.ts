/**
 * queryserve, setup "full-metrics": the full pipeline with `metrics: true` (prom-client series of every request).
 * WORKERS=n passes { workers: n } to builder.start().
 */
import { runQueryserveServer } from "../lib/queryserve.js";

runQueryserveServer("full-metrics", { post: false, auth: true });
