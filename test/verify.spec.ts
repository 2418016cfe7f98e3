import { GatekeeperJwks, TokenRefused } from "@dynamicagents/core/a2a";
import { DynamicAgentsError } from "@dynamicagents/core/errors";
import type { A2AWorkerOptions } from "@dynamicagents/core/worker";
import { SignJWT } from "jose";
import { describe, expect, it } from "vitest";
import { ENDPOINT, GATEKEEPER, GATEKEEPER_JWKS, ORIGIN, OTHER_GATEKEEPER } from "./support/constants.js";
import { freshKeyPair, gatekeeperKey, mintToken, rawToken, standardClaims } from "./support/gatekeeper.js";
import { isolatedEdge } from "./support/isolated-edge.js";
import { interceptOutbound } from "./support/outbound.js";
import { call, type CallOptions } from "./support/rpc.js";
import type { Env } from "../reference/env.js";

/** Sends GetTask with `token` to a fresh edge and returns the reply plus what it touched. */
async function attempt(token: string | null, options: CallOptions & { params?: Record<string, unknown>; edge?: Partial<A2AWorkerOptions<Env>> } = {}) {
  using outbound = interceptOutbound();
  const edge = isolatedEdge(options.edge);
  const reply = await call("GetTask", { id: "t-1", ...options.params }, { ...options, token, worker: edge.fetch });
  return { reply, fetches: outbound.requests.length, doAccesses: edge.doAccesses() };
}

function expectRefused(result: Awaited<ReturnType<typeof attempt>>, check: string) {
  expect(result.reply.status).toBe(401);
  expect(result.reply.headers.get("WWW-Authenticate")).toMatch(/^Bearer error="invalid_token"/);
  expect(result.reply.body.error).toBe("invalid_token");
  expect(result.reply.body.check).toBe(check);
  expect(result.doAccesses).toBe(0);
}

describe("gatekeeper token verification", () => {
  it("accepts a well-formed token (the control every refusal below is measured against)", async () => {
    const result = await attempt(await mintToken());
    expect(result.reply.status).toBe(200);
    expect(result.reply.body.error.code).toBe(-32001);
    expect(result.doAccesses).toBeGreaterThan(0);
  });

  it("challenges a request without a token and addresses no Durable Object", async () => {
    const result = await attempt(null);
    expect(result.reply.status).toBe(401);
    expect(result.reply.headers.get("WWW-Authenticate")).toMatch(/^Bearer/);
    expect(result.reply.body).toEqual({ error: "invalid_token", error_description: expect.any(String), check: "bearer" });
    expect(result.doAccesses).toBe(0);
    expect(result.fetches).toBe(0);
  });

  it("refuses a malformed Authorization header as a token, 401 with the check, fetching nothing", async () => {
    for (const authorization of ["Bearer", "Basic dXNlcjpwYXNz", "Bearer two tokens"]) {
      const result = await attempt(null, { headers: { Authorization: authorization } });
      expectRefused(result, "bearer");
      expect(result.fetches, authorization).toBe(0);
    }
  });

  it("gives each refusal a stable code per check", () => {
    const refusal = new TokenRefused("jku-allowlisted", "x");
    expect(refusal).toBeInstanceOf(DynamicAgentsError);
    expect(refusal).toMatchObject({ name: "TokenRefused", check: "jku-allowlisted", code: "ERR_TOKEN_JKU_ALLOWLISTED" });
    expect(TokenRefused.code).toBe("ERR_TOKEN_REFUSED");
    expect(new TokenRefused("signature", "x").code).toBe("ERR_TOKEN_SIGNATURE");
  });

  it("refuses a token that is not a JWT", async () => {
    expectRefused(await attempt("not-a-jwt"), "bearer");
  });

  it("check 1: refuses a token without jku, fetching nothing", async () => {
    const result = await attempt(await mintToken({ jku: null }));
    expectRefused(result, "jku-present");
    expect(result.fetches).toBe(0);
  });

  it("check 2: refuses a jku off the allowlist with zero outbound requests", async () => {
    const result = await attempt(await mintToken({ jku: "https://evil.test/.well-known/jwks.json", iss: "https://evil.test" }));
    expectRefused(result, "jku-allowlisted");
    expect(result.fetches).toBe(0);
  });

  it("check 2: compares exact origins (a lookalike host or another scheme is not allowlisted)", async () => {
    for (const jku of [
      "https://gatekeeper.test.evil.test/.well-known/jwks.json",
      "http://gatekeeper.test/.well-known/jwks.json",
      "https://gatekeeper.test:8443/.well-known/jwks.json",
      "http://localhost:9999/.well-known/jwks.json",
    ]) {
      const result = await attempt(await mintToken({ jku, iss: new URL(jku).origin }));
      expectRefused(result, "jku-allowlisted");
      expect(result.fetches).toBe(0);
    }
  });

  it("check 2: the jku must be exactly <origin>/.well-known/jwks.json: no other path, query or fragment, no fetch, no cache entry", async () => {
    const jwks = new GatekeeperJwks();
    for (const jku of [
      `${GATEKEEPER}/keys.json`,
      `${GATEKEEPER}/.well-known/jwks.json/`,
      `${GATEKEEPER}//.well-known/jwks.json`,
      `${GATEKEEPER}/.well-known/jwks.json?v=2`,
      `${GATEKEEPER}/.well-known/jwks.json?`,
      `${GATEKEEPER}/.well-known/jwks.json#k`,
      `${GATEKEEPER}:443/.well-known/jwks.json`,
      "https://GATEKEEPER.test/.well-known/jwks.json",
      `${GATEKEEPER}/.well-known/%6Awks.json`,
    ]) {
      const result = await attempt(await mintToken({ jku }), { edge: { jwks } });
      expectRefused(result, "jku-allowlisted");
      expect(result.fetches, jku).toBe(0);
      expect(jwks.size, jku).toBe(0);
    }
    // The control: the exact URL is fetched and cached, once.
    const ok = await attempt(await mintToken({ jku: GATEKEEPER_JWKS }), { edge: { jwks } });
    expect(ok.reply.status).toBe(200);
    expect(jwks.size).toBe(1);
  });

  it("check 3: refuses a token whose iss is another allowlisted gatekeeper than its jku", async () => {
    const result = await attempt(await mintToken({ iss: OTHER_GATEKEEPER }));
    expectRefused(result, "iss-matches-jku");
    expect(result.fetches).toBe(0);
  });

  it("check 4: refuses alg none", async () => {
    const token = rawToken({ alg: "none", typ: "JWT", jku: GATEKEEPER_JWKS, kid: gatekeeperKey.kid }, standardClaims());
    const result = await attempt(token);
    expectRefused(result, "signature");
    expect(result.fetches).toBe(0);
  });

  it("check 4: refuses an HMAC token keyed with the gatekeeper's public key", async () => {
    const secret = new TextEncoder().encode(JSON.stringify(gatekeeperKey.publicJwk));
    const token = await new SignJWT(standardClaims()).setProtectedHeader({ alg: "HS256", jku: GATEKEEPER_JWKS, kid: gatekeeperKey.kid }).sign(secret);
    expectRefused(await attempt(token), "signature");
  });

  it("check 4: refuses a signature by a key the gatekeeper does not publish", async () => {
    const impostor = await freshKeyPair(gatekeeperKey.kid);
    expectRefused(await attempt(await mintToken({ key: impostor })), "signature");
  });

  it("check 4: refuses an expired token", async () => {
    const result = await attempt(await mintToken({ expiresIn: -30 }));
    expectRefused(result, "signature");
    expect(result.reply.body.error_description).toMatch(/expired/);
  });

  it("check 4: refuses a token whose exp is more than an hour ahead (3,601 s), accepts 3,599 s", async () => {
    const t = Date.UTC(2026, 11, 1, 12, 0, 0, 500);
    const edge = { now: () => t };
    const far = await attempt(await mintToken({ now: t, expiresIn: 3601 }), { edge });
    expectRefused(far, "signature");
    expect(far.reply.body.error_description).toMatch(/more than 3600 s ahead/);
    expect(far.reply.body.error_description).toMatch(/at most one hour/);
    const near = await attempt(await mintToken({ now: t, expiresIn: 3599 }), { edge });
    expect(near.reply.status).toBe(200);
    expect(near.reply.body.error.code).toBe(-32001);
  });

  it("check 4: refuses a token without exp", async () => {
    expectRefused(await attempt(await mintToken({ expiresIn: null })), "signature");
  });

  for (const [label, aud] of [
    ["the bare origin", ORIGIN],
    ["the endpoint with a trailing slash", `${ENDPOINT}/`],
    ["another path", `${ORIGIN}/other`],
    ["the endpoint with a query", `${ENDPOINT}?x=1`],
    ["another deployment's endpoint", "https://elsewhere.test/a2a"],
  ] as const) {
    it(`check 4: refuses aud = ${label}`, async () => {
      const result = await attempt(await mintToken({ aud }));
      expectRefused(result, "signature");
      expect(result.reply.body.error_description).toContain("aud");
    });
  }

  it("refuses a token without the tenant claim (never a wildcard)", async () => {
    expectRefused(await attempt(await mintToken({ tenant: null })), "tenant-claim");
  });

  it("refuses a token whose tenant claim differs from params.tenant", async () => {
    const token = await mintToken({ tenant: "researcher" });
    expectRefused(await attempt(token, { params: { tenant: "assistant" } }), "tenant-claim");
  });

  it("refuses a call without params.tenant", async () => {
    using _ = interceptOutbound();
    const edge = isolatedEdge();
    const reply = await call("GetTask", { id: "t", tenant: undefined }, { worker: edge.fetch });
    expect(reply.status).toBe(401);
    expect(reply.body.check).toBe("tenant-claim");
    expect(edge.doAccesses()).toBe(0);
  });

  it("refuses an identity without key, and a token without identity", async () => {
    expectRefused(await attempt(await mintToken({ identity: { name: "no key" } })), "identity-claim");
    expectRefused(await attempt(await mintToken({ identity: { key: "" } })), "identity-claim");
    expectRefused(await attempt(await mintToken({ identity: null })), "identity-claim");
  });

  it("accepts a token from the second allowlisted gatekeeper when iss and jku agree", async () => {
    using outbound = interceptOutbound();
    const edge = isolatedEdge();
    const jku = `${OTHER_GATEKEEPER}/.well-known/jwks.json`;
    const reply = await call("GetTask", { id: "t" }, { worker: edge.fetch, mint: { jku, iss: OTHER_GATEKEEPER } });
    expect(reply.status).toBe(200);
    expect(outbound.requests.map((r) => r.url)).toEqual([jku]);
  });
});
