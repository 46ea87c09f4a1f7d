/**
 * Correctness gate run against a server before it is measured: a benchmark of
 * a broken endpoint is worthless. Throws VerifyError naming the first failure.
 */
import {
  API_KEY,
  API_KEY_HEADER,
  EXPECTED_GET_BODY,
  EXPECTED_POST_BODY,
  GET_PATH,
  GET_URL_PATH,
  POST_BODY,
  POST_PATH,
} from "./fixture.js";

export class VerifyError extends Error {
  override readonly name = "VerifyError";
}

export interface VerifyOptions {
  /** Also check the POST JSON-body endpoint. */
  readonly post: boolean;
  /** The server runs the full pipeline: API key + role guard. */
  readonly auth: boolean;
}

/** A key the full setups accept but whose caller lacks the required role. */
export const NO_ROLE_API_KEY = "bench-key-without-role";

interface Probe {
  readonly label: string;
  readonly method: "GET" | "POST";
  readonly path: string;
  readonly headers?: Readonly<Record<string, string>>;
  readonly body?: string;
  readonly status: number;
  readonly expectBody?: string;
}

const authHeaders = (auth: boolean): Record<string, string> =>
  auth ? { [API_KEY_HEADER]: API_KEY } : {};

const probes = (options: VerifyOptions): Probe[] => {
  const h = authHeaders(options.auth);
  const json = { ...h, "content-type": "application/json" };
  const list: Probe[] = [
    { label: "GET valid region", method: "GET", path: GET_URL_PATH, headers: h, status: 200, expectBody: EXPECTED_GET_BODY },
    { label: "GET region=us", method: "GET", path: `${GET_PATH}?region=us`, headers: h, status: 200 },
    { label: "GET unknown region", method: "GET", path: `${GET_PATH}?region=mars`, headers: h, status: 400 },
    { label: "GET missing region", method: "GET", path: GET_PATH, headers: h, status: 400 },
  ];
  if (options.auth) {
    list.push(
      { label: "GET without API key", method: "GET", path: GET_URL_PATH, status: 401 },
      { label: "GET with wrong API key", method: "GET", path: GET_URL_PATH, headers: { [API_KEY_HEADER]: "nope" }, status: 401 },
      {
        label: "GET key lacking role",
        method: "GET",
        path: GET_URL_PATH,
        headers: { [API_KEY_HEADER]: NO_ROLE_API_KEY },
        status: 403,
      },
    );
  }
  if (options.post) {
    list.push(
      { label: "POST valid body", method: "POST", path: POST_PATH, headers: json, body: POST_BODY, status: 200, expectBody: EXPECTED_POST_BODY },
      { label: "POST limit=0", method: "POST", path: POST_PATH, headers: json, body: '{"region":"eu","limit":0}', status: 400 },
      { label: "POST limit=101", method: "POST", path: POST_PATH, headers: json, body: '{"region":"eu","limit":101}', status: 400 },
      { label: "POST limit=2.5", method: "POST", path: POST_PATH, headers: json, body: '{"region":"eu","limit":2.5}', status: 400 },
      { label: "POST unknown region", method: "POST", path: POST_PATH, headers: json, body: '{"region":"mars","limit":5}', status: 400 },
      { label: "POST malformed JSON", method: "POST", path: POST_PATH, headers: json, body: '{"region":', status: 400 },
    );
    if (options.auth) {
      list.push({ label: "POST without API key", method: "POST", path: POST_PATH, headers: { "content-type": "application/json" }, body: POST_BODY, status: 401 });
    }
  }
  return list;
};

const snippet = (text: string): string => (text.length > 160 ? `${text.slice(0, 160)}…` : text);

/** Runs every probe against `baseUrl` (e.g. http://127.0.0.1:3000). */
export const verifyServer = async (baseUrl: string, options: VerifyOptions): Promise<void> => {
  for (const probe of probes(options)) {
    const init: RequestInit = { method: probe.method, signal: AbortSignal.timeout(5000) };
    if (probe.headers !== undefined) init.headers = probe.headers;
    if (probe.body !== undefined) init.body = probe.body;
    let response: Response;
    try {
      response = await fetch(`${baseUrl}${probe.path}`, init);
    } catch (cause) {
      throw new VerifyError(`${probe.label}: request failed: ${cause instanceof Error ? cause.message : String(cause)}`);
    }
    const text = await response.text();
    if (response.status !== probe.status) {
      throw new VerifyError(`${probe.label}: expected status ${probe.status}, got ${response.status} ${snippet(text)}`);
    }
    if (probe.expectBody !== undefined) {
      if (text !== probe.expectBody) {
        throw new VerifyError(`${probe.label}: body differs\n  expected ${snippet(probe.expectBody)}\n  got      ${snippet(text)}`);
      }
      const type = response.headers.get("content-type") ?? "";
      if (!type.includes("application/json")) {
        throw new VerifyError(`${probe.label}: content-type is "${type}", expected application/json`);
      }
    }
  }
};
