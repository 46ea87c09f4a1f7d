/** The limit: node:http with the parameter validated by hand. */
import { createServer } from "node:http";
import { rawListener } from "../lib/rawListener.js";
import { runServer } from "../lib/serverMain.js";

void runServer({
  name: "raw",
  verify: { post: true, auth: false },
  start: async (port, host) => {
    const server = createServer(rawListener);
    await new Promise<void>((resolve, reject) => {
      server.once("error", reject);
      server.listen(port, host, () => resolve());
    });
    return {
      stop: () =>
        new Promise<void>((resolve) => {
          server.close(() => resolve());
          server.closeAllConnections();
        }),
    };
  },
});
