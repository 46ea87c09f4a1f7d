/**
 * Handlers that misbehave, against the server process: one that hangs (the timeout answers 504 and
 * aborts ctx.signal), one whose timer throws after the answer, one that leaks a rejected promise, one
 * that fails with secrets in its error. The process must stay up and keep answering; with
 * `handleUncaughtErrors: false` it follows Node's policy and exits.
 */
import { afterAll, beforeAll, describe, expect, it } from "vitest"
import { figure } from "./report.js"
import { DEFAULT_TARGET, startTarget, type Target } from "./target.js"

export interface FaultSize {
  /** Requests to each misbehaving handler. */
  readonly perFault: number
}

interface Answer {
  readonly status: number
  readonly body: unknown
  readonly ms: number
}

const get = async (port: number, endpoint: string): Promise<Answer> => {
  const started = performance.now()
  const response = await fetch(`http://127.0.0.1:${port}/api/analytics/${endpoint}`)
  return { status: response.status, body: await response.json(), ms: performance.now() - started }
}

const times = <A>(n: number, run: () => Promise<A>): Promise<Array<A>> => Promise.all(Array.from({ length: n }, run))

const occurrences = (text: string, needle: string): number => text.split(needle).length - 1

const GENERIC_500 = { error: { type: "INTERNAL_SERVER_ERROR", message: "An unexpected error occurred" } }

export const faultSuite = ({ perFault }: FaultSize): void => {
  describe(`misbehaving handlers, ${perFault} requests each: the process stays up`, () => {
    let target: Target
    beforeAll(async () => {
      target = await startTarget({ rows: 1_000 })
    })
    afterAll(() => target?.stop())
    const port = () => target.ports().faults

    it("a hanging handler gets 504 GATEWAY_TIMEOUT at requestTimeout, and its ctx.signal aborts", async () => {
      const answers = await times(perFault, () => get(port(), "hang"))
      for (const answer of answers) {
        expect(answer.status).toBe(504)
        expect(answer.body).toMatchObject({ error: { type: "GATEWAY_TIMEOUT" } })
        expect(answer.ms).toBeGreaterThanOrEqual(DEFAULT_TARGET.faultRequestTimeout - 5)
      }
      expect((await get(port(), "observed")).body).toEqual({ aborted: perFault })
    })

    it("a timer that throws after the answer, and a dropped rejected promise, are logged; nothing else happens", async () => {
      const late = await times(perFault, () => get(port(), "throwAfterAnswer"))
      const leaked = await times(perFault, () => get(port(), "leakRejection"))
      for (const answer of [...late, ...leaked]) expect(answer).toMatchObject({ status: 200, body: { answered: true } })
      // The timers fire 5 ms after their answers.
      await new Promise((resolve) => setTimeout(resolve, 100))
      const stderr = target.stderr()
      const uncaught = occurrences(stderr, "[queryserve] uncaught exception outside any answer")
      const unhandled = occurrences(stderr, "[queryserve] unhandled promise rejection")
      expect([uncaught, unhandled]).toEqual([perFault, perFault])
      expect(stderr).toContain("late failure: a timer of the handler threw after the answer was sent")
      expect(target.crashes).toBe(0)
      expect(target.child.exitCode).toBeNull()
      expect((await get(port(), "ping")).body).toEqual({ ok: true })
      figure(
        `faults: ${perFault} hanging → ${perFault} × 504 with ctx.signal aborted, ${perFault} late throws and ${perFault} leaked ` +
          `rejections → logged (${uncaught} + ${unhandled} lines), ${target.crashes} crashes, process up and answering`
      )
    })

    it("an error with secrets in it is a generic 500", async () => {
      const answers = await times(perFault, () => get(port(), "secretFailure"))
      for (const answer of answers) expect(answer).toMatchObject({ status: 500, body: GENERIC_500 })
    })
  })

  describe("with handleUncaughtErrors: false", () => {
    let target: Target
    beforeAll(async () => {
      target = await startTarget({ rows: 1_000, handleUncaughtErrors: false }, { restart: false })
    })
    afterAll(() => target?.stop())

    it("Node's own policy applies: a late throw ends the process (exit code 1)", async () => {
      const exited = new Promise<number | null>((resolve) => target.child.once("exit", (code) => resolve(code)))
      expect((await get(target.ports().faults, "throwAfterAnswer")).status).toBe(200)
      expect(await exited).toBe(1)
      expect(target.stderr()).toContain("late failure: a timer of the handler threw after the answer was sent")
    })
  })
}
