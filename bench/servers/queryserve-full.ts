/**
 * queryserve, setup "full": one apiKeyAuth strategy, one role guard (requiredRoles), schema validation, one global middleware.
 * WORKERS=n passes { workers: n } to builder.start().
 */
import { runServer } from "../lib/serverMain.js";
import { checkSetupRan, startQueryserve } from "../lib/queryserve.js";

const workersEnv = process.env["WORKERS"];
const workers = workersEnv === undefined || workersEnv === "" ? undefined : Number(workersEnv);

void runServer({
  name: "queryserve-full",
  verify: { post: true, auth: true },
  start: (port, host) => startQueryserve("full", port, host, workers),
  afterVerify: () => checkSetupRan("full", workers),
});
