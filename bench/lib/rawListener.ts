/** The limit every ratio is taken against: node:http with the parameter validated by hand. */
import type { IncomingMessage, ServerResponse } from "node:http";
import { GET_PATH, POST_PATH, isLimit, isRegion, reportFor, revenueFor } from "./fixture.js";

const BODY_LIMIT = 1024 * 1024;

const send = (res: ServerResponse, status: number, payload: unknown): void => {
  const body = JSON.stringify(payload);
  res.writeHead(status, {
    "content-type": "application/json; charset=utf-8",
    "content-length": Buffer.byteLength(body),
  });
  res.end(body);
};

const invalid = (res: ServerResponse, message: string): void =>
  send(res, 400, { error: { type: "VALIDATION_ERROR", message } });

const handleGet = (res: ServerResponse, search: string): void => {
  const region = new URLSearchParams(search).get("region");
  if (!isRegion(region)) return invalid(res, "region must be one of eu, us, apac");
  send(res, 200, revenueFor(region));
};

const handlePost = (req: IncomingMessage, res: ServerResponse): void => {
  const chunks: Buffer[] = [];
  let size = 0;
  req.on("data", (chunk: Buffer) => {
    size += chunk.length;
    if (size <= BODY_LIMIT) chunks.push(chunk);
  });
  req.on("end", () => {
    if (size > BODY_LIMIT) return send(res, 413, { error: { type: "PAYLOAD_TOO_LARGE", message: "body too large" } });
    let parsed: unknown;
    try {
      parsed = JSON.parse(Buffer.concat(chunks).toString("utf8"));
    } catch {
      return invalid(res, "body is not valid JSON");
    }
    if (typeof parsed !== "object" || parsed === null) return invalid(res, "body must be an object");
    const region: unknown = Reflect.get(parsed, "region");
    const limit: unknown = Reflect.get(parsed, "limit");
    if (!isRegion(region)) return invalid(res, "region must be one of eu, us, apac");
    if (!isLimit(limit)) return invalid(res, "limit must be an integer 1..100");
    send(res, 200, reportFor(region, limit));
  });
};

/** The request listener of the raw server (bench/servers/raw.ts, and tasks/listenerLoop.ts). */
export const rawListener = (req: IncomingMessage, res: ServerResponse): void => {
  const url = req.url ?? "/";
  const q = url.indexOf("?");
  const path = q === -1 ? url : url.slice(0, q);
  if (path === GET_PATH && req.method === "GET") return handleGet(res, q === -1 ? "" : url.slice(q + 1));
  if (path === POST_PATH && req.method === "POST") return handlePost(req, res);
  send(res, 404, { error: { type: "NOT_FOUND", message: "not found" } });
};
