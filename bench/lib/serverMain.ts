/**
 * Shared entry of every bench/servers/*.ts file.
 *
 * Reads PORT (default 3000) and HOST (default 127.0.0.1), starts the server,
 * checks its answers (verifyServer), then prints one protocol line on stdout (on stderr with
 * BENCH_PROTOCOL=stderr, when stdout carries the server's query log):
 *   ready <port>      listening and verified
 *   fail <reason>     it started but answers wrongly, or crashed; exit 1
 * It stops on SIGTERM/SIGINT, and when started by bench/run.ts (BENCH_PARENT=1)
 * also when its stdin closes, so a killed orchestrator leaves no server behind.
 */
import { createServer, type RequestListener } from "node:http";
import { verifyServer, type VerifyOptions } from "./verify.js";

export interface RunningServer {
  stop(): Promise<void>;
}

/** A plain node:http server of `listener` listening on `port`; its stop closes every connection. */
export const listenNodeServer = async (listener: RequestListener, port: number, host: string): Promise<RunningServer> => {
  const server = createServer(listener);
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
};

export interface ServerSpec {
  readonly name: string;
  /** The fixture's probes (verifyServer), or a check of the server's own. */
  readonly verify: VerifyOptions | ((baseUrl: string) => Promise<void>);
  start(port: number, host: string): Promise<RunningServer>;
  /** Extra in-process check after verifyServer; returns why it failed, or undefined. */
  afterVerify?(): string | undefined;
}

const protocolOut = process.env["BENCH_PROTOCOL"] === "stderr" ? process.stderr : process.stdout;

const oneLine = (text: string): string => text.replace(/\s+/g, " ").trim();

const describe = (error: unknown): string =>
  error instanceof Error ? `${error.name}: ${error.message}` : String(error);

export const runServer = async (spec: ServerSpec): Promise<void> => {
  const port = Number(process.env["PORT"] ?? "3000");
  const host = process.env["HOST"] ?? "127.0.0.1";
  if (!Number.isInteger(port) || port < 0 || port > 65535) {
    protocolOut.write(`fail invalid PORT ${String(process.env["PORT"])}\n`);
    process.exit(1);
  }

  let running: RunningServer | undefined;
  let stopping = false;
  const shutdown = (code: number): void => {
    if (stopping) return;
    stopping = true;
    const hard = setTimeout(() => process.exit(code), 3000);
    hard.unref();
    const done = (): void => process.exit(code);
    if (running === undefined) done();
    else running.stop().then(done, done);
  };
  process.once("SIGTERM", () => shutdown(0));
  process.once("SIGINT", () => shutdown(0));
  if (process.env["BENCH_PARENT"] === "1") {
    process.stdin.on("end", () => shutdown(0));
    process.stdin.on("error", () => shutdown(0));
    process.stdin.resume();
  }

  try {
    running = await spec.start(port, host);
  } catch (error) {
    protocolOut.write(`fail ${spec.name} did not start: ${oneLine(describe(error))}\n`);
    shutdown(1);
    return;
  }

  try {
    const baseUrl = `http://${host}:${port}`;
    await (typeof spec.verify === "function" ? spec.verify(baseUrl) : verifyServer(baseUrl, spec.verify));
    const problem = spec.afterVerify?.();
    if (problem !== undefined) throw new Error(problem);
  } catch (error) {
    protocolOut.write(`fail ${spec.name} answers wrongly: ${oneLine(describe(error))}\n`);
    shutdown(1);
    return;
  }
  protocolOut.write(`ready ${port}\n`);
};
