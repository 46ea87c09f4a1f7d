/**
 * queryserve, setup "full": one apiKeyAuth strategy, one role guard (requiredRoles), schema validation, one global middleware.
 * WORKERS=n passes { workers: n } to builder.start().
 */
import { runQueryserveServer } from "../lib/queryserve.js";

runQueryserveServer("full", { post: true, auth: true });
