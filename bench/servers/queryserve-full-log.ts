/**
 * queryserve, setup "full-log": the full pipeline plus queryLogging: a callback formatting each event with formatQueryEventJSON and dropping the line (QS_LOG_MODE=json: queryLogging 'json' with console.log sent to the sink).
 * WORKERS=n passes { workers: n } to builder.start().
 */
import { runQueryserveServer } from "../lib/queryserve.js";

runQueryserveServer("full-log", { post: false, auth: true });
