/** The limit: node:http with the parameter validated by hand. */
import { rawListener } from "../lib/rawListener.js";
import { listenNodeServer, runServer } from "../lib/serverMain.js";

void runServer({
  name: "raw",
  verify: { post: true, auth: false },
  start: (port, host) => listenNodeServer(rawListener, port, host),
});
