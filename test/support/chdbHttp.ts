/**
 * A test-only ClickHouse HTTP interface over chDB, so that `@clickhouse/client` runs against a
 * real ClickHouse engine (Debian's clickhouse-server is too old for query parameters). It speaks
 * the part of the interface the client uses:
 * - `GET /ping` answers `Ok.`;
 * - `GET|POST /`: the query is the `query` URL parameter, the body, or both (the body appended
 *   after a newline, as ClickHouse does for INSERT data); the body may be gzip-compressed;
 * - `param_NAME` values bound to `{NAME:Type}` placeholders (see bindParams);
 * - `default_format` (else TabSeparated) and a FORMAT clause; `database`; `query_id`; every other
 *   URL parameter a setting, for this query alone; `enable_http_compression=1` with
 *   `Accept-Encoding: gzip` compresses the answer;
 * - answers carry X-ClickHouse-Query-Id, X-ClickHouse-Format and X-ClickHouse-Summary; errors
 *   are status 500 with X-ClickHouse-Exception-Code and ClickHouse's text, `Code: N.
 *   DB::Exception: … (NAME)` (a server answers some codes with 400 or 404; the client reads the
 *   text, not the status).
 * Not spoken: sessions (`session_id`), multipart parameters, ClickHouse's native compression,
 * credentials (any are accepted). A client that leaves aborts its query: a queued one never starts,
 * a running one finishes in the engine unread (chDB cannot interrupt it).
 */
import { randomUUID } from "node:crypto"
import { createServer, type IncomingMessage, type ServerResponse } from "node:http"
import type { AddressInfo } from "node:net"
import { gunzipSync, gzipSync } from "node:zlib"
import { type ChdbResult, type ChdbSession, loadChdb } from "../../examples/clickhouse/chdb.js"

export interface ChdbHttp {
  /** `http://127.0.0.1:PORT`, for `createClient({ url })`. */
  readonly url: string
  stop(): Promise<void>
}

/** An error as ClickHouse reports it: its code, and its text in ClickHouse's form. */
class ClickHouseFailure extends Error {
  constructor(
    readonly code: number,
    message: string
  ) {
    super(message)
  }
}

const failure = (code: number, name: string, text: string): ClickHouseFailure =>
  new ClickHouseFailure(code, `Code: ${code}. DB::Exception: ${text}. (${name})`)

/** chDB's errors carry ClickHouse's text already; anything else (an abort) is said in that form. */
const asClickHouseFailure = (error: unknown): ClickHouseFailure => {
  if (error instanceof ClickHouseFailure) return error
  const message = error instanceof Error ? error.message : String(error)
  const code = /^Code: (\d+)\. /.exec(message)?.[1]
  return code === undefined ? failure(1001, "STD_EXCEPTION", message) : new ClickHouseFailure(Number(code), message)
}

/** URL parameters that are the interface's own, not settings. */
const INTERFACE_PARAMS: ReadonlySet<string> = new Set(["query", "query_id", "database", "default_format", "user", "password", "quota_key"])
/** Settings of the transport, not of the query (enable_http_compression is read on its own). */
const TRANSPORT_SETTINGS: ReadonlySet<string> = new Set(["wait_end_of_query", "send_progress_in_http_headers"])
const UNSUPPORTED_PARAMS: ReadonlySet<string> = new Set(["session_id", "session_timeout", "session_check", "compress", "decompress"])
const SETTING_NAME = /^[A-Za-z_]\w*$/

const ESCAPES: Readonly<Record<string, string>> = { b: "\b", f: "\f", n: "\n", r: "\r", t: "\t", "0": "\0", a: "\x07", v: "\v" }

/**
 * A parameter's text in ClickHouse's escaped form as the text it stands for: what a server's
 * escaped reading of a scalar gives (`\t`, `\'`, `\\`, `\xHH`; any other escaped character is
 * itself).
 */
export const unescapeParam = (text: string): string =>
  text.replace(/\\(x[0-9A-Fa-f]{2}|[\s\S])/g, (_, escaped: string) =>
    escaped.length === 3 ? String.fromCharCode(Number.parseInt(escaped.slice(1), 16)) : (ESCAPES[escaped] ?? escaped)
  )

const PLACEHOLDER = /\{\s*([A-Za-z_]\w*)\s*:\s*([^{}]+?)\s*\}/g
const WRAPPER = /^(?:Nullable|LowCardinality)\((.*)\)$/s
const COMPOSITE = /^(?:Array|Tuple|Map|Nested)\(/

const isComposite = (type: string): boolean => {
  const inner = WRAPPER.exec(type)?.[1]
  return inner === undefined ? COMPOSITE.test(type) : isComposite(inner)
}

/**
 * The statement and values chDB binds for a query and its `param_*` texts. chDB binds parameters
 * in the engine but takes JavaScript values, which it escapes itself; a server takes the escaped
 * texts. So a scalar's text is unescaped here (`\N` is NULL) and chDB escapes it again: the
 * engine reads the same text a server would. A composite value (Array, Tuple, Map) a server reads
 * as its literal text, without unescaping: here that text is bound as a String and the placeholder
 * becomes `CAST({NAME:String} AS Type)`, which reads it the same way. Placeholders are found by
 * their pattern, also inside quotes (none of the tests' SQL has one there).
 */
export const bindParams = (
  sql: string,
  texts: ReadonlyMap<string, string>
): { readonly sql: string; readonly params: Record<string, string | null> } => {
  const params: Record<string, string | null> = {}
  for (const [name, text] of texts) params[name] = text === "\\N" ? null : unescapeParam(text)
  const bound = sql.replace(PLACEHOLDER, (placeholder, name: string, type: string) => {
    const text = texts.get(name)
    if (text === undefined || !isComposite(type)) return placeholder
    params[name] = text
    return `CAST({${name}:String} AS ${type})`
  })
  return { sql: bound, params }
}

const CONTENT_TYPES: Readonly<Record<string, string>> = {
  JSON: "application/json; charset=UTF-8",
  JSONCompact: "application/json; charset=UTF-8",
  JSONEachRow: "application/x-ndjson; charset=UTF-8",
  JSONCompactEachRow: "application/x-ndjson; charset=UTF-8",
  CSV: "text/csv; charset=UTF-8; header=absent",
  CSVWithNames: "text/csv; charset=UTF-8; header=present",
  TabSeparated: "text/tab-separated-values; charset=UTF-8"
}

const TRAILING_FORMAT = /\bFORMAT\s+([A-Za-z]\w*)\s*;?\s*$/i

/** The output format: the query's own FORMAT clause (INSERT's is its input), else the default. */
const outputFormat = (query: string, fallback: string): string =>
  /^\s*INSERT\b/i.test(query) ? fallback : (TRAILING_FORMAT.exec(query)?.[1] ?? fallback)

const readBody = async (request: IncomingMessage): Promise<string> => {
  const chunks: Array<Buffer> = []
  for await (const chunk of request) chunks.push(chunk as Buffer)
  const body = Buffer.concat(chunks)
  const encoding = request.headers["content-encoding"]
  if (encoding === undefined || encoding === "identity") return body.toString("utf8")
  if (encoding === "gzip") return gunzipSync(body).toString("utf8")
  throw failure(1, "UNSUPPORTED_METHOD", `Content-Encoding ${encoding} is not supported by this test front`)
}

interface ParsedRequest {
  readonly query: string
  readonly texts: ReadonlyMap<string, string>
  readonly settings: ReadonlyArray<readonly [string, string]>
  readonly database: string | undefined
  readonly format: string
  readonly compress: boolean
}

const parseRequest = (url: URL, body: string, acceptEncoding: string | undefined): ParsedRequest => {
  const queryParam = url.searchParams.get("query") ?? ""
  const query = queryParam === "" ? body : body === "" ? queryParam : `${queryParam}\n${body}`
  if (query.trim() === "") throw failure(62, "SYNTAX_ERROR", "Empty query")
  const texts = new Map<string, string>()
  const settings: Array<readonly [string, string]> = []
  let compress = false
  for (const [name, value] of url.searchParams) {
    if (name.startsWith("param_")) texts.set(name.slice("param_".length), value)
    else if (UNSUPPORTED_PARAMS.has(name)) throw failure(1, "UNSUPPORTED_METHOD", `${name} is not supported by this test front`)
    else if (name === "enable_http_compression") compress = value === "1" && /\bgzip\b/.test(acceptEncoding ?? "")
    else if (INTERFACE_PARAMS.has(name) || TRANSPORT_SETTINGS.has(name)) continue
    else if (SETTING_NAME.test(name)) settings.push([name, value])
    else throw failure(115, "UNKNOWN_SETTING", `Unknown setting '${name}'`)
  }
  const database = url.searchParams.get("database") ?? undefined
  return { query, texts, settings, database, format: url.searchParams.get("default_format") ?? "TabSeparated", compress }
}

/**
 * Serves ClickHouse's HTTP interface on 127.0.0.1, a free port, over chDB sessions on the data
 * directory `path`: a session per query, so that its settings and database are its own, and one
 * open from start to stop, which keeps the engine (and its Memory tables) up between queries. Only
 * one data directory can be open in a process: an embedded chDB beside the front must use `path` too.
 */
export const startChdbHttp = async (path: string): Promise<ChdbHttp> => {
  const { chdb } = loadChdb()
  const engine = new chdb.Session(path)
  const run = async (request: ParsedRequest, signal: AbortSignal): Promise<ChdbResult> => {
    const session: ChdbSession = new chdb.Session(path, {
      connectionArgs: request.settings.map(([name, value]) => `--${name}=${value}`)
    })
    try {
      if (request.database !== undefined && request.database !== "default") {
        await session.queryAsync(`USE \`${request.database.replaceAll("\\", "\\\\").replaceAll("`", "\\`")}\``)
      }
      const options = { format: request.format, signal }
      if (request.texts.size === 0) return await session.queryAsync(request.query, options)
      const { sql, params } = bindParams(request.query, request.texts)
      return await session.queryBindAsync(sql, params, options)
    } finally {
      session.close()
    }
  }

  const answer = async (request: IncomingMessage, response: ServerResponse): Promise<void> => {
    const url = new URL(request.url ?? "/", "http://front")
    if (url.pathname === "/ping") {
      response.writeHead(200, { "Content-Type": "text/plain; charset=UTF-8" }).end("Ok.\n")
      return
    }
    const queryId = url.searchParams.get("query_id") || randomUUID()
    const left = new AbortController()
    response.once("close", () => {
      if (!response.writableFinished) left.abort(new Error("the client closed the connection"))
    })
    try {
      if (url.pathname !== "/") throw failure(1, "UNSUPPORTED_METHOD", `No handler for ${url.pathname}`)
      if (request.method !== "GET" && request.method !== "POST") throw failure(1, "UNSUPPORTED_METHOD", `Method ${request.method} is not supported`)
      const parsed = parseRequest(url, await readBody(request), request.headers["accept-encoding"])
      const result = await run(parsed, left.signal)
      const format = outputFormat(parsed.query, parsed.format)
      const body = Buffer.from(result.bytes())
      response.writeHead(200, {
        "Content-Type": CONTENT_TYPES[format] ?? "text/plain; charset=UTF-8",
        "X-ClickHouse-Query-Id": queryId,
        "X-ClickHouse-Format": format,
        "X-ClickHouse-Summary": JSON.stringify({
          read_rows: String(result.rowsRead),
          read_bytes: String(result.bytesRead),
          elapsed_ns: String(Math.round(result.elapsed * 1e9))
        }),
        ...(parsed.compress && { "Content-Encoding": "gzip" })
      })
      response.end(parsed.compress ? gzipSync(body) : body)
    } catch (error) {
      const { code, message } = asClickHouseFailure(error)
      if (response.destroyed) return
      response
        .writeHead(500, { "Content-Type": "text/plain; charset=UTF-8", "X-ClickHouse-Query-Id": queryId, "X-ClickHouse-Exception-Code": String(code) })
        .end(`${message}\n`)
    }
  }

  const server = createServer((request, response) => void answer(request, response))
  try {
    await new Promise<void>((resolve, reject) => {
      server.once("error", reject)
      server.listen(0, "127.0.0.1", resolve)
    })
  } catch (error) {
    engine.close()
    throw error
  }
  return {
    url: `http://127.0.0.1:${(server.address() as AddressInfo).port}`,
    stop: async () => {
      await new Promise<void>((resolve, reject) => {
        server.close((error) => (error ? reject(error) : resolve()))
        server.closeAllConnections()
      })
      engine.close()
    }
  }
}
