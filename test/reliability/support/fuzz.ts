/**
 * The fuzz suite, at any size: generated raw requests against the server process, eight at a time,
 * each answer checked against the invariants; then the process must still be up and answering.
 */
import fc from "fast-check"
import { afterAll, beforeAll, describe, expect, it } from "vitest"
import { violations, type Violation } from "./invariants.js"
import { exchange, type RawOutcome } from "./rawClient.js"
import { figure } from "./report.js"
import { type FuzzRequest, fuzzRequest, serialize } from "./requests.js"
import { DEFAULT_TARGET, startTarget, type Target } from "./target.js"
import { signTokens, type Tokens } from "./tokens.js"

export interface FuzzSize {
  /** Generated requests in the run; a multiple of the batch size. */
  readonly requests: number
}

/** Requests sent at once. */
const BATCH = 8

const SAFE_REQUEST_ID = /^[A-Za-z0-9._:-]{1,128}$/

/** The headers node:http sees for a well-formed request: a CRLF inside a value starts a header of its own. */
const headersAsParsed = (request: FuzzRequest): ReadonlyArray<readonly [string, string]> =>
  request.headers.flatMap(([name, value]) => {
    const [first = "", ...injected] = value.split("\r\n")
    return [[name.toLowerCase(), first.trim()] as const, ...injected.map((line) => {
      const colon = line.indexOf(":")
      return [line.slice(0, colon).toLowerCase(), line.slice(colon + 1).trim()] as const
    })]
  })

/** The id a well-formed request's answer must carry: one safe `x-request-id`, else one safe `x-trace-id`. */
const echoedRequestId = (request: FuzzRequest): string | undefined => {
  if (!request.clean) return undefined
  const headers = headersAsParsed(request)
  const valuesOf = (name: string) => headers.filter(([n]) => n === name).map(([, value]) => value)
  const ids = valuesOf("x-request-id")
  const candidates = ids.length > 0 ? ids : valuesOf("x-trace-id")
  // Repeated headers arrive joined with ", ", which is not a safe id: a new one is generated.
  return candidates.length === 1 && SAFE_REQUEST_ID.test(candidates[0]!) ? candidates[0] : undefined
}

/** Counts of one run, with a few examples of each violation for the failure message. */
class Tally {
  requests = 0
  readonly statuses = new Map<number | string, number>()
  readonly found = new Map<Violation, number>()
  readonly examples: Array<string> = []

  record(request: FuzzRequest, outcome: RawOutcome, broken: ReadonlyArray<Violation>): void {
    this.requests++
    const key = outcome.answered ? outcome.response.status : outcome.reason
    this.statuses.set(key, (this.statuses.get(key) ?? 0) + 1)
    for (const violation of broken) this.found.set(violation, (this.found.get(violation) ?? 0) + 1)
    if (broken.length > 0 && this.examples.length < 10) {
      const answer = outcome.answered
        ? `${outcome.response.status} ${JSON.stringify(Object.fromEntries(outcome.response.headers))} ${outcome.response.body.slice(0, 300)}`
        : `${outcome.reason}: ${outcome.received.slice(0, 300)}`
      this.examples.push(`${broken.join(", ")}\n  sent: ${JSON.stringify(serialize(request).toString("latin1").slice(0, 400))}\n  got:  ${answer}`)
    }
  }

  count(violation: Violation): number {
    return this.found.get(violation) ?? 0
  }
}

const send = async (target: Target, request: FuzzRequest, tally: Tally): Promise<boolean> => {
  await target.whenRunning()
  const ports = target.ports()
  const bytes = serialize(request)
  const outcome = await exchange(request.api === "demo" ? ports.demo : ports.faults, bytes, {
    headRequest: request.method === "HEAD",
    timeoutMs: 15_000
  })
  // 431 and 408 are node:http's refusals of a request it has not wholly received (headers too large,
  // or not all of it in time): answered from the socket, where the request's headers are not at hand.
  const unreceived = outcome.answered && (outcome.response.status === 431 || outcome.response.status === 408)
  const broken = violations(outcome, {
    headRequest: request.method === "HEAD",
    echoedRequestId: unreceived ? undefined : echoedRequestId(request),
    sent: bytes.toString("latin1")
  })
  tally.record(request, outcome, broken)
  return broken.length === 0
}

export const fuzzSuite = ({ requests }: FuzzSize): void => {
  describe(`fuzzing a real server with ${requests} raw requests`, () => {
    let target: Target
    let tokens: Tokens
    beforeAll(async () => {
      // A quota low enough that some answers are 429s.
      ;[target, tokens] = await Promise.all([startTarget({ rateLimitPerSecond: 5 }), signTokens()])
    })
    afterAll(() => target?.stop())

    it("never crashes the process; every answer has a documented status, an envelope, no leak and a safe request id", async () => {
      const tally = new Tally()
      const batch = fc.array(fuzzRequest(tokens, DEFAULT_TARGET.bodyLimit), { minLength: BATCH, maxLength: BATCH })
      try {
        await fc.assert(
          fc.asyncProperty(batch, async (requests) => (await Promise.all(requests.map((request) => send(target, request, tally)))).every(Boolean)),
          // No shrinking: it would resend batches for minutes; the tally prints the failing requests as sent.
          { numRuns: Math.ceil(requests / BATCH), endOnFailure: true }
        )
      } finally {
        const statuses = [...tally.statuses].sort(([, a], [, b]) => b - a).map(([status, n]) => `${status}×${n}`).join(" ")
        figure(
          `fuzz: ${tally.requests} requests, ${target.crashes} crashes, ${tally.count("lost")} lost, ` +
            `${tally.count("undocumented status")} undocumented statuses, ${tally.count("bad envelope")} bad envelopes, ` +
            `${tally.count("bad success body")} bad success bodies, ` +
            `${tally.count("leak")} leaks, ${tally.count("bad request id")} bad request ids (statuses: ${statuses})`
        )
        if (tally.examples.length > 0) console.log(tally.examples.join("\n"))
      }
      expect(tally.requests).toBeGreaterThanOrEqual(requests)
      expect(target.crashes).toBe(0)
    })

    it("leaves the process up and answering", async () => {
      expect(target.child.exitCode).toBeNull()
      const outcome = await exchange(target.ports().faults, "GET /api/analytics/ping HTTP/1.1\r\nHost: t\r\n\r\n", {
        headRequest: false,
        timeoutMs: 5_000
      })
      expect(outcome.answered && outcome.response.status).toBe(200)
    })
  })
}
