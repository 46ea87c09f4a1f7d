/**
 * queryserve, setup "bare": no auth, no middleware, no logging: routing + schema validation + handler.
 * WORKERS=n passes { workers: n } to builder.start().
 */
import { runServer } from "../lib/serverMain.js";
import { checkSetupRan, startQueryserve } from "../lib/queryserve.js";

const workersEnv = process.env["WORKERS"];
const workers = workersEnv === undefined || workersEnv === "" ? undefined : Number(workersEnv);

void runServer({
  name: "queryserve-bare",
  verify: { post: false, auth: false },
  start: (port, host) => startQueryserve("bare", port, host, workers),
  afterVerify: () => checkSetupRan("bare", workers),
});
