import { createServer, type Server } from "node:http"
import type { AddressInfo } from "node:net"
import { exportJWK, exportSPKI, generateKeyPair, type JWTPayload, SignJWT } from "jose"
import { defineServe, initServe, jwtAuth, type JwtAuthOptions, type ServeRequest } from "queryserve"
import { afterAll, beforeAll, describe, expect, it } from "vitest"

const SECRET = "a-test-secret-of-at-least-32-bytes!!"

const sign = (claims: JWTPayload, key: Uint8Array | CryptoKey, alg = "HS256", kid?: string) =>
  new SignJWT(claims)
    .setProtectedHeader(kid === undefined ? { alg } : { alg, kid })
    .setIssuedAt()
    .setExpirationTime(typeof claims.exp === "number" ? claims.exp : "5m")
    .sign(key)

const hsKey = new TextEncoder().encode(SECRET)

const bearer = (token: string): ServeRequest => ({
  method: "GET",
  path: "/api/analytics/me",
  headers: { authorization: `Bearer ${token}` }
})

const apiWith = (options: JwtAuthOptions) =>
  defineServe({ auth: jwtAuth(options), queries: { me: ({ ctx }: { ctx: { auth: unknown } }) => ctx.auth } })

const answer = async (api: ReturnType<typeof apiWith>, request: ServeRequest) => {
  const response = await api.handler(request)
  return { status: response.status, headers: response.headers, body: JSON.parse(response.body ?? "null") }
}

describe("jwtAuth", () => {
  describe("with an HMAC secret", () => {
    const api = apiWith({ secret: SECRET, issuer: "https://id.example.com", audience: "analytics" })
    const valid = { sub: "user-1", iss: "https://id.example.com", aud: "analytics" }

    it("maps a verified token to subject, roles, scopes and tenant id", async () => {
      const token = await sign({ ...valid, roles: ["analyst"], scope: "read export", tenant_id: "acme" }, hsKey)
      const { status, body } = await answer(api, bearer(token))
      expect(status).toBe(200)
      expect(body).toMatchObject({ subject: "user-1", roles: ["analyst"], scopes: ["read", "export"], tenantId: "acme" })
      expect(body.claims).toMatchObject({ sub: "user-1", tenant_id: "acme" })
    })

    it("has no caller without a bearer token: 401 missing_credentials", async () => {
      for (const headers of [{}, { authorization: "Basic dXNlcjpwYXNz" }, { authorization: "Bearer" }]) {
        const { status, body } = await answer(api, { method: "GET", path: "/api/analytics/me", headers })
        expect(status).toBe(401)
        expect(body.error.details).toEqual({ reason: "missing_credentials" })
      }
    })

    it.each([
      ["an expired token", () => sign({ ...valid, exp: Math.floor(Date.now() / 1000) - 60 }, hsKey), "The bearer token has expired"],
      ["another issuer", () => sign({ ...valid, iss: "https://evil.example.net" }, hsKey), `The bearer token's "iss" claim is not accepted`],
      ["another audience", () => sign({ ...valid, aud: "billing" }, hsKey), `The bearer token's "aud" claim is not accepted`],
      ["another secret", () => sign(valid, new TextEncoder().encode("some-other-secret-of-32-bytes!!!!")), "The bearer token is not valid"],
      ["a tampered payload", async () => {
        const [header, , signature] = (await sign(valid, hsKey)).split(".")
        const forged = Buffer.from(JSON.stringify({ ...valid, roles: ["admin"] })).toString("base64url")
        return `${header}.${forged}.${signature}`
      }, "The bearer token is not valid"],
      ["an unsigned token (alg none)", async () => {
        const encode = (part: object) => Buffer.from(JSON.stringify(part)).toString("base64url")
        return `${encode({ alg: "none" })}.${encode({ ...valid, exp: Math.floor(Date.now() / 1000) + 60 })}.`
      }, "The bearer token is not valid"],
      ["garbage", async () => "not-a-jwt", "The bearer token is not valid"]
    ])("refuses %s with 401 invalid_credentials and a WWW-Authenticate challenge", async (_, token, message) => {
      const { status, headers, body } = await answer(api, bearer(await token()))
      expect(status).toBe(401)
      expect(body.error).toEqual({ type: "UNAUTHORIZED", message, details: { reason: "invalid_credentials" } })
      // RFC 6750: error_description holds no `"` or `\\`; the body keeps the message as it is.
      expect(headers["www-authenticate"]).toBe(`Bearer error="invalid_token", error_description="${message.replaceAll('"', "'")}"`)
      expect(headers["www-authenticate"]).toMatch(/^Bearer error="invalid_token", error_description="[\x20\x21\x23-\x5B\x5D-\x7E]*"$/)
    })

    it("allows clock skew up to clockToleranceSeconds", async () => {
      const justExpired = await sign({ ...valid, exp: Math.floor(Date.now() / 1000) - 5 }, hsKey)
      expect((await answer(api, bearer(justExpired))).status).toBe(401)
      const tolerant = apiWith({ secret: SECRET, clockToleranceSeconds: 30 })
      expect((await answer(tolerant, bearer(justExpired))).status).toBe(200)
    })
  })

  // Regression: a token without `exp` was accepted forever.
  describe("expiry and age", () => {
    const now = () => Math.floor(Date.now() / 1000)
    /** Signs exactly these claims: no `exp` or `iat` unless given. */
    const signBare = (claims: JWTPayload) => new SignJWT(claims).setProtectedHeader({ alg: "HS256" }).sign(hsKey)
    const refusal = (message: string) => ({
      status: 401,
      body: { error: { type: "UNAUTHORIZED", message, details: { reason: "invalid_credentials" } } }
    })
    const statusAndBody = async (api: ReturnType<typeof apiWith>, token: string) => {
      const { status, body } = await answer(api, bearer(token))
      return { status, body }
    }

    it("refuses a token without exp, unless requireExpiry: false", async () => {
      const token = await signBare({ sub: "forever", iat: now() })
      expect(await statusAndBody(apiWith({ secret: SECRET }), token)).toEqual(refusal("The bearer token has no expiry time (exp claim)"))
      expect((await answer(apiWith({ secret: SECRET, requireExpiry: false }), bearer(token))).status).toBe(200)
    })

    it("maxTokenAge refuses tokens issued too long ago, and tokens without iat", async () => {
      const api = apiWith({ secret: SECRET, maxTokenAge: "10m" })
      expect((await answer(api, bearer(await signBare({ iat: now() - 60, exp: now() + 3600 })))).status).toBe(200)
      expect(await statusAndBody(api, await signBare({ iat: now() - 3600, exp: now() + 3600 }))).toEqual(
        refusal("The bearer token is older than the accepted maximum age")
      )
      expect(await statusAndBody(api, await signBare({ exp: now() + 3600 }))).toEqual(
        refusal("The bearer token has no issue time (iat claim), so its age cannot be checked")
      )
      expect((await answer(apiWith({ secret: SECRET, maxTokenAge: 600 }), bearer(await signBare({ iat: now() - 3600, exp: now() + 3600 })))).status).toBe(401)
    })

    it("clockTolerance takes seconds or a span; clockToleranceSeconds still works", async () => {
      const justExpired = await signBare({ iat: now() - 60, exp: now() - 5 })
      expect((await answer(apiWith({ secret: SECRET }), bearer(justExpired))).status).toBe(401)
      for (const options of [{ clockTolerance: "30s" }, { clockTolerance: 30 }, { clockToleranceSeconds: 30 }]) {
        expect((await answer(apiWith({ secret: SECRET, ...options }), bearer(justExpired))).status).toBe(200)
      }
    })

    // Regression: a token "issued" in the future was accepted unless maxTokenAge was set.
    it("refuses an iat in the future beyond clockTolerance, without maxTokenAge too", async () => {
      const fromTheFuture = await signBare({ iat: now() + 3600, exp: now() + 7200 })
      const inTheFuture = refusal("The bearer token's issue time (iat claim) is in the future")
      expect(await statusAndBody(apiWith({ secret: SECRET }), fromTheFuture)).toEqual(inTheFuture)
      expect(await statusAndBody(apiWith({ secret: SECRET, maxTokenAge: "2h" }), fromTheFuture)).toEqual(inTheFuture)
      const slightlyAhead = await signBare({ iat: now() + 20, exp: now() + 3600 })
      expect((await answer(apiWith({ secret: SECRET }), bearer(slightlyAhead))).status).toBe(401)
      for (const clockTolerance of [30, "30s", "1 minute", "0.5m"]) {
        expect((await answer(apiWith({ secret: SECRET, clockTolerance }), bearer(slightlyAhead))).status).toBe(200)
      }
      expect((await answer(apiWith({ secret: SECRET, clockTolerance: "10s" }), bearer(slightlyAhead))).status).toBe(401)
    })

    it("a span jose would not understand fails at construction, not per request", () => {
      expect(() => jwtAuth({ secret: SECRET, maxTokenAge: "ten minutes" })).toThrow(/maxTokenAge must be seconds .* or a span/)
      expect(() => jwtAuth({ secret: SECRET, clockTolerance: -1 })).toThrow(/clockTolerance must be seconds/)
    })

    it("never fetches a key URL a token names (jku, x5u)", async () => {
      let fetched = 0
      const trap = createServer((_, res) => {
        fetched++
        res.writeHead(200, { "content-type": "application/json" }).end('{"keys":[]}')
      })
      await new Promise<void>((resolve) => trap.listen(0, "127.0.0.1", resolve))
      try {
        const keyUrl = `http://127.0.0.1:${(trap.address() as AddressInfo).port}/keys`
        const { privateKey } = await generateKeyPair("RS256")
        const token = await new SignJWT({ sub: "intruder", roles: ["admin"] })
          .setProtectedHeader({ alg: "RS256", jku: keyUrl, x5u: keyUrl })
          .setIssuedAt()
          .setExpirationTime("5m")
          .sign(privateKey)
        expect((await answer(apiWith({ secret: SECRET }), bearer(token))).status).toBe(401)
        const { publicKey: otherKey } = await generateKeyPair("RS256")
        expect((await answer(apiWith({ publicKey: otherKey }), bearer(token))).status).toBe(401)
        expect(fetched).toBe(0)
      } finally {
        await new Promise<void>((resolve) => trap.close(() => resolve()))
      }
    })
  })

  describe("with public keys", () => {
    it("verifies RS256 with a CryptoKey and refuses an HS256 token signed with that public key's bytes", async () => {
      const { publicKey, privateKey } = await generateKeyPair("RS256")
      const api = apiWith({ publicKey })
      expect((await answer(api, bearer(await sign({ sub: "r" }, privateKey, "RS256")))).body).toMatchObject({ subject: "r" })
      // The classic algorithm-confusion attack: the public key used as an HMAC secret.
      const confused = await sign({ sub: "attacker" }, new TextEncoder().encode(await exportSPKI(publicKey)), "HS256")
      expect((await answer(api, bearer(confused))).status).toBe(401)
    })

    it("verifies ES256 with an SPKI PEM, the algorithm named by `algorithms`", async () => {
      const { publicKey, privateKey } = await generateKeyPair("ES256")
      const api = apiWith({ publicKey: await exportSPKI(publicKey), algorithms: ["ES256"] })
      expect((await answer(api, bearer(await sign({ sub: "e" }, privateKey, "ES256")))).status).toBe(200)
      expect(() => jwtAuth({ publicKey: "-----BEGIN PUBLIC KEY-----" })).toThrow(/algorithms/)
    })

    it("needs exactly one key source, and a secret that is not empty", () => {
      expect(() => jwtAuth({})).toThrow(/exactly one/)
      expect(() => jwtAuth({ secret: SECRET, jwksUrl: "http://127.0.0.1/jwks" })).toThrow(/exactly one/)
      expect(() => jwtAuth({ secret: "" })).toThrow(/secret is empty/)
      expect(() => jwtAuth({ secret: new Uint8Array(0) })).toThrow(/secret is empty/)
    })
  })

  describe("with a JWKS URL", () => {
    let server: Server
    let url: string
    let keys: Array<{ kid: string; publicKey: CryptoKey; privateKey: CryptoKey }>
    let fetches = 0

    beforeAll(async () => {
      keys = await Promise.all(["k1", "k2"].map(async (kid) => ({ kid, ...(await generateKeyPair("RS256")) })))
      const jwks = { keys: await Promise.all(keys.map(async ({ kid, publicKey }) => ({ ...(await exportJWK(publicKey)), kid, alg: "RS256" }))) }
      server = createServer((_, res) => {
        fetches++
        res.writeHead(200, { "content-type": "application/json" }).end(JSON.stringify(jwks))
      })
      await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve))
      url = `http://127.0.0.1:${(server.address() as AddressInfo).port}/.well-known/jwks.json`
    })

    afterAll(() => new Promise<void>((resolve) => server.close(() => resolve())))

    it("picks the key by kid, fetching the key set once", async () => {
      const api = apiWith({ jwksUrl: url })
      for (const { kid, privateKey } of keys) {
        const { status, body } = await answer(api, bearer(await sign({ sub: kid }, privateKey, "RS256", kid)))
        expect(status).toBe(200)
        expect(body.subject).toBe(kid)
      }
      expect(fetches).toBe(1)
    })

    it("answers 503 SERVICE_UNAVAILABLE, not 401, when the key set cannot be fetched", async () => {
      const api = apiWith({ jwksUrl: "http://127.0.0.1:9/jwks.json" })
      const { status, body } = await answer(api, bearer(await sign({ sub: "x" }, keys[0]!.privateKey, "RS256", "k1")))
      expect(status).toBe(503)
      expect(body.error.type).toBe("SERVICE_UNAVAILABLE")
    })

    // An identity provider that is down answers something: an error status, a maintenance page, a
    // broken key set. None of it says the token is bad; a 401 would also count as a guess.
    it("answers 503 when the key set URL answers an error status, no JSON or no key set; 401 when the token's key is not in a good set", async () => {
      const answers: Record<string, (res: import("node:http").ServerResponse) => void> = {
        status: (res) => void res.writeHead(502).end("Bad Gateway"),
        page: (res) => void res.writeHead(200, { "content-type": "text/html" }).end("<html>maintenance</html>"),
        keySet: (res) => void res.writeHead(200, { "content-type": "application/json" }).end(JSON.stringify({ keys: "none" }))
      }
      const down = createServer((req, res) => answers[req.url!.slice(1)]!(res))
      await new Promise<void>((resolve) => down.listen(0, "127.0.0.1", resolve))
      try {
        const base = `http://127.0.0.1:${(down.address() as AddressInfo).port}`
        const token = bearer(await sign({ sub: "x" }, keys[0]!.privateKey, "RS256", "k1"))
        for (const failure of Object.keys(answers)) {
          const { status, body } = await answer(apiWith({ jwksUrl: `${base}/${failure}` }), token)
          expect([failure, status, body.error.type]).toEqual([failure, 503, "SERVICE_UNAVAILABLE"])
        }
      } finally {
        await new Promise<void>((resolve) => down.close(() => resolve()))
      }
      const unknownKey = await answer(apiWith({ jwksUrl: url }), bearer(await sign({ sub: "x" }, keys[0]!.privateKey, "RS256", "k9")))
      expect(unknownKey.status).toBe(401)
    })
  })

  describe("claims mapping", () => {
    it("reads roles, scopes and tenant id from the claims you name, or from functions", async () => {
      const api = apiWith({
        secret: SECRET,
        claims: {
          roles: "https://example.com/roles",
          scopes: "scp",
          tenantId: (payload) => (payload.org as { id: number } | undefined)?.id
        }
      })
      const token = await sign({ "https://example.com/roles": ["admin"], scp: ["read"], org: { id: 42 } }, hsKey)
      expect((await answer(api, bearer(token))).body).toMatchObject({ roles: ["admin"], scopes: ["read"], tenantId: "42" })
    })

    it("drives role guards and tenant isolation", async () => {
      const { query, define } = initServe({ auth: jwtAuth({ secret: SECRET }) })
      const api = define({
        tenant: { extract: (auth) => auth?.tenantId },
        queries: { admin: query.requireRole("admin").query(({ ctx }) => ctx.tenantId) }
      })
      const call = async (claims: JWTPayload) => api.handler({ ...bearer(await sign(claims, hsKey)), path: "/api/analytics/admin" })
      expect((await call({ roles: ["admin"], tenant_id: "acme" })).body).toBe('"acme"')
      expect((await call({ roles: "viewer", tenant_id: "acme" })).status).toBe(403)
      expect(JSON.parse((await call({ roles: ["admin"] })).body!).error.details.reason).toBe("missing_tenant")
    })
  })
})
