/**
 * fast-check arbitraries for raw HTTP/1.1 requests to the server under test: mostly what real and
 * hostile clients send (valid calls, bad credentials, bad input), mixed with what only a raw socket
 * can send (bad percent-encoding, CRLF in header values, huge and duplicated headers, overlong request
 * ids, malformed and deeply nested JSON, prototype keys, wrong content types, bodies over the limit,
 * random methods and paths, broken framing).
 */
import fc from "fast-check"
import { METRIC_CASES } from "../../demo/support/references.js"
import { ADMIN_KEY, TENANT_IDS, TENANT_KEYS } from "./targetConfig.js"
import type { Tokens } from "./tokens.js"

export interface FuzzRequest {
  readonly api: "demo" | "faults"
  readonly method: string
  readonly target: string
  readonly headers: ReadonlyArray<readonly [name: string, value: string]>
  readonly body: string
  readonly framing: "none" | "length" | "chunked"
  /** Bytes after the request: a second, broken request on the same connection. */
  readonly trailer: string
  /**
   * Whether every part is valid HTTP/1.1, so node:http hands the request to queryserve and its
   * headers are exactly those listed (a CRLF-injected value is two clean headers).
   */
  readonly clean: boolean
}

/** A piece of a request and whether it is valid HTTP/1.1. */
interface Part<A> {
  readonly value: A
  readonly clean: boolean
}

const clean = <A>(arbitrary: fc.Arbitrary<A>): fc.Arbitrary<Part<A>> => arbitrary.map((value) => ({ value, clean: true }))
const unclean = <A>(arbitrary: fc.Arbitrary<A>): fc.Arbitrary<Part<A>> => arbitrary.map((value) => ({ value, clean: false }))

const BASE = "/api/analytics"

/** The demo's endpoints: those the reference SQL of the demo's own tests covers. */
export const DEMO_ENDPOINTS = [...new Set(Object.values(METRIC_CASES).map((metric) => metric.endpoint))]

const FAULT_ENDPOINTS = ["ping", "slow?ms=20", "hang", "throwAfterAnswer", "leakRejection", "secretFailure", "observed"]

/** Text as the latin1 "bytes" a request is written in: UTF-8 for anything beyond latin1. */
const bytes = (text: string): string => Buffer.from(text, "utf8").toString("latin1")

const day = fc
  .date({ min: new Date("2024-12-01T00:00:00Z"), max: new Date("2026-01-31T00:00:00Z"), noInvalidDate: true })
  .map((date) => date.toISOString().slice(0, 10))

const dayLike = fc.oneof(
  { weight: 6, arbitrary: day },
  fc.constantFrom("2025-02-30", "2025-13-01", "", "2025-01-01 junk", "0000-00-00", "-1", "2025-1-1", "'; DROP TABLE orders; --"),
  fc.string({ maxLength: 20 })
)

const range = fc.oneof(
  { weight: 4, arbitrary: fc.tuple(day, day).map(([a, b]) => (a <= b ? { from: a, to: b } : { from: b, to: a })) },
  fc.record({ from: dayLike, to: dayLike }, { requiredKeys: [] })
)

/** Inputs of the demo's endpoints: mostly valid, some out of range or of the wrong type, some spoofing a tenant. */
const inputFields = fc
  .tuple(
    range,
    fc.record(
      {
        region: fc.constantFrom("na", "emea", "apac", "latam", "na", "mars", ""),
        limit: fc.oneof({ weight: 4, arbitrary: fc.integer({ min: 1, max: 100 }) }, fc.constantFrom(-5, 0, 101, "1e3", "ten", "9".repeat(30))),
        granularity: fc.constantFrom("day", "week", "month", "day", "year"),
        // ordersExport's maxRows has no cap but a safe integer: 20,000 is valid, 10^30 is not.
        maxRows: fc.oneof({ weight: 4, arbitrary: fc.integer({ min: 1, max: 20_000 }) }, fc.constantFrom(0, -1, 1.5, "9".repeat(30))),
        tenant_id: fc.constantFrom(...TENANT_IDS)
      },
      { requiredKeys: [] }
    )
  )
  .map(([dates, extra]): Readonly<Record<string, string | number>> => ({ ...dates, ...extra }))

const urlEncoded = (fields: Readonly<Record<string, string | number>>): string =>
  new URLSearchParams(Object.entries(fields).map(([key, value]) => [key, String(value)])).toString()

const BAD_ENCODINGS = ["%", "%G1", "%E0%A4%A", "%C0%AF", "%00", "%ff%fe", "%%", "%2", "%u0041"]
const PROTOTYPE_KEYS = ["__proto__", "constructor", "__proto__[polluted]", "constructor[prototype][polluted]", "prototype"]

/** A query string: properly encoded fields, or fields mixed with bad percent-encoding and prototype keys. */
const queryString: fc.Arbitrary<Part<string>> = fc.oneof(
  { weight: 12, arbitrary: clean(inputFields.map(urlEncoded)) },
  clean(
    fc
      .array(
        fc.tuple(
          fc.oneof(fc.constantFrom(...PROTOTYPE_KEYS, "from", "to", "limit"), fc.constantFrom(...BAD_ENCODINGS)),
          fc.oneof(fc.constantFrom(...BAD_ENCODINGS), day, fc.stringMatching(/^[A-Za-z0-9%._~-]{0,30}$/))
        ),
        { maxLength: 8 }
      )
      .map((pairs) => pairs.map(([key, value]) => `${key}=${value}`).join("&"))
  ),
  clean(fc.integer({ min: 1, max: 3 }).map((n) => Array.from({ length: n }, () => "from=2025-01-01").join("&") + "&to=2025-02-01&to=2025-03-01")),
  // Spaces, raw non-ASCII and control bytes do not belong in a request line.
  unclean(fc.string({ unit: "binary", minLength: 1, maxLength: 40 }).map(bytes))
)

const segment = fc.oneof(
  fc.stringMatching(/^[A-Za-z0-9._~-]{0,12}$/),
  fc.constantFrom(...BAD_ENCODINGS, ...PROTOTYPE_KEYS, "..", ".", "%2e%2e", "%2F", "")
)

const path: fc.Arbitrary<Part<string>> = fc.oneof(
  {
    weight: 16,
    arbitrary: clean(
      fc
        .tuple(fc.constantFrom(...DEMO_ENDPOINTS), fc.constantFrom("", "", "", "", "", ".csv", ".ndjson", "/"))
        .map(([endpoint, suffix]) => `${BASE}/${endpoint}${suffix}`)
    )
  },
  clean(fc.constantFrom(`${BASE}/docs`, `${BASE}/openapi.json`, BASE, `${BASE}/`, "/", "*", `//api//analytics/tenantSummary`)),
  clean(fc.constantFrom(`${BASE}/../analytics/tenantSummary`, `${BASE}/TENANTSUMMARY`, `http://localhost${BASE}/tenantSummary`)),
  clean(fc.array(segment, { minLength: 1, maxLength: 6 }).map((segments) => `${BASE}/${segments.join("/")}`)),
  clean(fc.integer({ min: 1_000, max: 20_000 }).map((n) => `${BASE}/${"a".repeat(n)}`))
)

const target: fc.Arbitrary<Part<string>> = fc
  .tuple(path, fc.option(queryString, { freq: 10 }))
  .map(([p, query]) => ({ value: query === null ? p.value : `${p.value}?${query.value}`, clean: p.clean && (query?.clean ?? true) }))

const method: fc.Arbitrary<Part<string>> = fc.oneof(
  { weight: 20, arbitrary: clean(fc.constantFrom("GET", "GET", "GET", "POST", "POST", "HEAD")) },
  clean(fc.constantFrom("PUT", "PATCH", "DELETE", "OPTIONS", "TRACE", "PROPFIND", "M-SEARCH", "PURGE")),
  unclean(fc.oneof(fc.constantFrom("get", "FOO", "G E T", "", "GET\t", "CONNECT", "PRI"), fc.stringMatching(/^[A-Z]{1,12}$/)))
)

const validRequestId = fc.stringMatching(/^[A-Za-z0-9._:-]{1,128}$/)

type Header = readonly [string, string]
type Headers = Part<ReadonlyArray<Header>>

const one = (name: string, value: fc.Arbitrary<string>): fc.Arbitrary<Headers> => clean(value.map((v) => [[name, v]] as const))

const requestIdHeader = (name: string): fc.Arbitrary<Headers> =>
  fc.oneof(
    { weight: 3, arbitrary: one(name, validRequestId) },
    one(name, fc.integer({ min: 129, max: 6_000 }).map((n) => "r".repeat(n))),
    one(name, fc.constantFrom("", "a b", "a,b", "<script>", "id;drop", "é", "\u00ff\u00fe")),
    // CRLF in the value: the rest becomes a header of its own; only the part before it is the id.
    clean(fc.tuple(validRequestId, validRequestId).map(([id, injected]) => [[name, `${id}\r\nX-Injected: ${injected}`]] as const)),
    unclean(fc.tuple(validRequestId, fc.constantFrom("\n", "\r", "\0", "\x7f")).map(([id, bad]) => [[name, `${id}${bad}x`]] as const)),
    clean(fc.tuple(validRequestId, validRequestId).map(([a, b]) => [[name, a], [name, b]] as const))
  )

const authHeader = (tokens: Tokens): fc.Arbitrary<Headers> =>
  fc.oneof(
    { weight: 6, arbitrary: one("X-Api-Key", fc.constantFrom(...Object.values(TENANT_KEYS))) },
    one("x-api-key", fc.constantFrom(ADMIN_KEY, "", "demo-acme-key ", "DEMO-ACME-KEY")),
    one("x-api-key", fc.string({ maxLength: 64 }).filter((key) => /^[\x21-\x7e]*$/.test(key))),
    { weight: 4, arbitrary: one("Authorization", fc.constantFrom(...Object.values(tokens.tenant), tokens.admin).map((t) => `Bearer ${t}`)) },
    one("authorization", fc.constantFrom(...tokens.refused, "", "x.y.z", "a".repeat(5_000)).map((t) => `Bearer ${t}`)),
    one("Authorization", fc.constantFrom("Basic YWRtaW46YWRtaW4=", "Bearer", "bearer  ", "Digest x")),
    clean(fc.constantFrom(...Object.values(TENANT_KEYS)).map((key) => [["x-api-key", key], ["x-api-key", key]] as const)),
    clean(fc.constant([] as ReadonlyArray<Header>))
  )

const CONTENT_TYPES = [
  "application/json",
  "application/json; charset=utf-8",
  "APPLICATION/JSON",
  "application/vnd.api+json",
  "application/x-www-form-urlencoded",
  "text/plain",
  "multipart/form-data; boundary=x",
  "application/xml",
  "",
  "application/json; charset=utf-16",
  ";;;",
  "*/*"
]

const ACCEPTS = [
  "application/json",
  "text/csv",
  "application/x-ndjson",
  "text/csv;q=0.1, application/json;q=0.9",
  "*/*;q=abc",
  "text/html",
  "",
  "text/csv;q=1e400, application/ndjson"
]

const otherHeader: fc.Arbitrary<Headers> = fc.oneof(
  one("Accept", fc.constantFrom(...ACCEPTS)),
  one("If-None-Match", fc.oneof(fc.constant("*"), fc.stringMatching(/^"[A-Za-z0-9_-]{0,30}"$/))),
  one("X-Forwarded-For", fc.constantFrom("1.2.3.4", "1.2.3.4, 5.6.7.8", "", "not-an-ip", "::1")),
  one("X-Tenant-Id", fc.constantFrom(...TENANT_IDS)),
  one("Origin", fc.constantFrom("https://example.com", "null", "http://évil")),
  one("Expect", fc.constantFrom("100-continue", "tea", "100-continue, x")),
  clean(fc.constantFrom([["Connection", "Upgrade"], ["Upgrade", "websocket"]] as const, [["Connection", "keep-alive, Upgrade"], ["Upgrade", "h2c"]] as const)),
  one("Range", fc.constantFrom("bytes=0-1", "bytes=x")),
  // Huge: past node's 16 KiB header limit in about half the cases.
  one("X-Filler", fc.integer({ min: 1, max: 40_000 }).map((n) => "f".repeat(n))),
  // Duplicated.
  clean(
    fc
      .tuple(fc.constantFrom("X-Api-Key", "Content-Type", "Authorization", "Accept", "X-Dup"), fc.integer({ min: 2, max: 400 }))
      .map(([name, n]) => Array.from({ length: n }, (_, i) => [name, i % 2 === 0 ? "demo-acme-key" : "text/csv"] as const))
  ),
  // Random but well-formed names and values.
  clean(fc.tuple(fc.stringMatching(/^[A-Za-z0-9!#$%&'*+.^_`|~-]{1,20}$/), fc.stringMatching(/^[\x20-\x7e]{0,60}$/)).map(([n, v]) => [[n, v.trim()]] as const)),
  // Anything at all: control characters, colons, spaces in names...
  unclean(fc.tuple(fc.string({ maxLength: 20 }), fc.string({ maxLength: 60 })).map(([n, v]) => [[bytes(n), bytes(v)]] as const))
)

const nested = (depth: number, shape: "array" | "object" | "mixed"): string => {
  let open = ""
  let close = ""
  for (let i = 0; i < depth; i++) {
    const array = shape === "array" || (shape === "mixed" && i % 2 === 0)
    open += array ? "[" : '{"a":'
    close += array ? "]" : "}"
  }
  return open + "1" + [...close].reverse().join("")
}

const validInputJson = inputFields.map((fields) => JSON.stringify(fields))

const jsonBody = (bodyLimit: number): fc.Arbitrary<Part<string>> =>
  fc.oneof(
    { weight: 5, arbitrary: clean(validInputJson) },
    clean(fc.jsonValue({ maxDepth: 4 }).map((value) => JSON.stringify(value) ?? "null")),
    clean(fc.oneof(fc.string({ maxLength: 40 }), validInputJson.map((json) => json.slice(0, -1)), fc.constant("{'from': 1}")).map(bytes)),
    clean(
      fc
        .tuple(fc.integer({ min: 1, max: 20_000 }), fc.constantFrom("array", "object", "mixed") as fc.Arbitrary<"array" | "object" | "mixed">, fc.boolean())
        .map(([depth, shape, proto]) => `{${proto ? '"__proto__":{"polluted":1},' : ""}"from":"2025-01-01","to":"2025-02-01","x":${nested(depth, shape)}}`)
    ),
    clean(fc.integer({ min: 1, max: 20_000 }).map((depth) => nested(depth, "array"))),
    clean(
      validInputJson.map((json) =>
        `{"__proto__":{"polluted":true,"tenantId":"globex"},"constructor":{"prototype":{"polluted":true}},${json.slice(1)}`
      )
    ),
    clean(inputFields.map((fields) => `${urlEncoded(fields)}&__proto__[polluted]=1&constructor[prototype][x]=1`)),
    // Over the body limit.
    clean(fc.integer({ min: bodyLimit + 1, max: bodyLimit * 3 }).map((size) => JSON.stringify("x".repeat(size)))),
    clean(fc.uint8Array({ maxLength: 200 }).map((array) => Buffer.from(array).toString("latin1")))
  )

/** Framing the body: correct Content-Length or chunks, or framing node:http must refuse. */
const framing = (body: string): fc.Arbitrary<Part<{ framing: FuzzRequest["framing"]; headers: ReadonlyArray<Header> }>> =>
  fc.oneof(
    { weight: 6, arbitrary: clean(fc.constant({ framing: "length" as const, headers: [] })) },
    { weight: 2, arbitrary: clean(fc.constant({ framing: "chunked" as const, headers: [] })) },
    unclean(
      fc.constantFrom<ReadonlyArray<Header>>(
        [["Content-Length", "abc"]],
        [["Content-Length", "-1"]],
        [["Content-Length", `${body.length}`], ["Content-Length", `${body.length + 1}`]],
        [["Content-Length", `${body.length}`], ["Transfer-Encoding", "chunked"]],
        [["Transfer-Encoding", "gzip, chunked"], ["Transfer-Encoding", "identity"]]
      ).map((headers) => ({ framing: "none" as const, headers }))
    )
  )

const serializeBody = (request: FuzzRequest): string => {
  if (request.framing !== "chunked") return request.body
  let text = ""
  for (let at = 0; at < request.body.length; at += 7_919) {
    const chunk = request.body.slice(at, at + 7_919)
    text += `${chunk.length.toString(16)}\r\n${chunk}\r\n`
  }
  return text + "0\r\n\r\n"
}

/** The request as the bytes that go on the wire. */
export const serialize = (request: FuzzRequest): Buffer => {
  const lines = [`${request.method} ${request.target} HTTP/1.1`, "Host: 127.0.0.1"]
  for (const [name, value] of request.headers) lines.push(`${name}: ${value}`)
  if (request.framing === "length") lines.push(`Content-Length: ${request.body.length}`)
  if (request.framing === "chunked") lines.push("Transfer-Encoding: chunked")
  return Buffer.from(`${lines.join("\r\n")}\r\n\r\n${serializeBody(request)}${request.trailer}`, "latin1")
}

const faultTarget: fc.Arbitrary<Part<string>> = clean(fc.constantFrom(...FAULT_ENDPOINTS).map((endpoint) => `${BASE}/${endpoint}`))

/** One request to the server under test; `bodyLimit` is the server's, so some bodies pass it. */
export const fuzzRequest = (tokens: Tokens, bodyLimit: number): fc.Arbitrary<FuzzRequest> =>
  fc
    .record({
      api: fc.constantFrom<FuzzRequest["api"]>("demo", "demo", "demo", "demo", "demo", "demo", "demo", "demo", "demo", "faults"),
      method,
      demoTarget: target,
      faultTarget,
      auth: authHeader(tokens),
      requestId: fc.option(requestIdHeader("X-Request-Id"), { freq: 2 }),
      traceId: fc.option(requestIdHeader("X-Trace-Id"), { freq: 4 }),
      contentType: fc.option(one("Content-Type", fc.constantFrom(...CONTENT_TYPES)), { freq: 2 }),
      others: fc.oneof({ weight: 2, arbitrary: fc.constant([]) }, fc.array(otherHeader, { minLength: 1, maxLength: 3 })),
      body: fc.option(jsonBody(bodyLimit), { freq: 3 }),
      trailer: fc.oneof({ weight: 30, arbitrary: clean(fc.constant("")) }, unclean(fc.constantFrom("GARBAGE\r\n\r\n", "GET / HTTP/9.9\r\n\r\n")))
    })
    .chain((parts) => {
      const body = parts.body?.value ?? ""
      return (parts.body === null ? fc.constant({ value: { framing: "none" as const, headers: [] }, clean: true }) : framing(body)).map(
        (framed) => {
          const headerParts = [parts.auth, parts.requestId, parts.traceId, parts.contentType, ...parts.others].filter(
            (part): part is Headers => part !== null
          )
          const isDemo = parts.api === "demo"
          const chosenTarget = isDemo ? parts.demoTarget : parts.faultTarget
          return {
            api: parts.api,
            method: parts.method.value,
            target: chosenTarget.value,
            headers: [...headerParts.flatMap((part) => part.value), ...framed.value.headers],
            body,
            framing: framed.value.framing,
            trailer: parts.trailer.value,
            clean: parts.method.clean && chosenTarget.clean && headerParts.every((part) => part.clean) &&
              (parts.body?.clean ?? true) && framed.clean && parts.trailer.clean
          }
        }
      )
    })
