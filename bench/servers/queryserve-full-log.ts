/**
 * queryserve, setup "full-log": the full pipeline plus `queryLogging: 'json'`, its lines written to stdout
 * (the bench sends this server's stdout to /dev/null); QS_LOG_MODE=sink or callback: see bench/lib/env.ts.
 * WORKERS=n passes { workers: n } to builder.start().
 */
import { runQueryserveServer } from "../lib/queryserve.js";

runQueryserveServer("full-log", { post: false, auth: true });
