/**
 * queryserve, setup "full-log": the full pipeline plus queryLogging: a callback formatting each event with formatQueryEventJSON and dropping the line (QS_LOG_MODE=json: queryLogging 'json' with console.log sent to the sink).
 * WORKERS=n passes { workers: n } to builder.start().
 */
import { runServer } from "../lib/serverMain.js";
import { checkSetupRan, startQueryserve } from "../lib/queryserve.js";

const workersEnv = process.env["WORKERS"];
const workers = workersEnv === undefined || workersEnv === "" ? undefined : Number(workersEnv);

void runServer({
  name: "queryserve-full-log",
  verify: { post: false, auth: true },
  start: (port, host) => startQueryserve("full-log", port, host, workers),
  afterVerify: () => checkSetupRan("full-log", workers),
});
