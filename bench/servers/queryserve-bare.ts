/**
 * queryserve, setup "bare": no auth, no middleware, no logging: routing + schema validation + handler.
 * WORKERS=n passes { workers: n } to builder.start().
 */
import { runQueryserveServer } from "../lib/queryserve.js";

runQueryserveServer("bare", { post: false, auth: false });
