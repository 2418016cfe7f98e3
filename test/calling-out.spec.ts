import { env } from "cloudflare:workers";
import { introspectWorkflow, runInDurableObject } from "cloudflare:test";
import { TASK_CLAIM, loadSigningKey, signCallbackJwt, signCallerToken } from "@dynamicagents/core/a2a";
import { createLocalJWKSet, decodeJwt, decodeProtectedHeader, jwtVerify } from "jose";
import { describe, expect, it } from "vitest";
import { callerObjectName } from "@dynamicagents/core/worker";
import { GATEKEEPER, ORIGIN } from "./support/constants.js";
import { isolatedEdge } from "./support/isolated-edge.js";
import { interceptOutbound } from "./support/outbound.js";
import { call, referenceWorker, sendParams } from "./support/rpc.js";

const ourJwks = async () => createLocalJWKSet((await (await referenceWorker(new Request(`${ORIGIN}/.well-known/jwks.json`))).json()) as never);

describe("signCallerToken", () => {
  it("mints a short-lived EdDSA token: iss = our origin, jku derived from it, aud the target's exact endpoint, tenant claim", async () => {
    const key = await loadSigningKey(env.A2A_SIGNING_KEY);
    const token = await signCallerToken({
      key,
      issuer: `${ORIGIN}/a2a`,
      audience: "https://peer.test/a2a",
      identity: { key: "assistant" },
      tenant: "assistant",
    });
    const { payload, protectedHeader } = await jwtVerify(token, await ourJwks(), {
      algorithms: ["EdDSA"],
      issuer: ORIGIN,
      audience: "https://peer.test/a2a",
    });
    expect(protectedHeader).toMatchObject({ alg: "EdDSA", kid: "a2a-test", jku: `${ORIGIN}/.well-known/jwks.json` });
    expect(payload.aud).toBe("https://peer.test/a2a");
    expect(payload["https://dynamicagents.dev/tenant"]).toBe("assistant");
    expect(payload["https://dynamicagents.dev/identity"]).toEqual({ key: "assistant" });
    expect(payload.exp! - payload.iat!).toBe(120);
  });

  it("sets aud to exactly <origin>/a2a whether given the origin or an endpoint, never a query or another path", async () => {
    const key = await loadSigningKey(env.A2A_SIGNING_KEY);
    for (const audience of [
      "https://peer.test",
      "https://peer.test/",
      "https://peer.test/a2a",
      "https://peer.test/a2a/?x=1",
      "https://peer.test/elsewhere#f",
    ]) {
      const token = await signCallerToken({ key, issuer: ORIGIN, audience, identity: { key: "assistant" }, tenant: "assistant" });
      expect(decodeJwt(token).aud, audience).toBe("https://peer.test/a2a");
    }
  });

  it("throws on an audience that is not an absolute URL", async () => {
    const key = await loadSigningKey(env.A2A_SIGNING_KEY);
    for (const audience of ["/relative", "peer.test", ""]) {
      await expect(signCallerToken({ key, issuer: ORIGIN, audience, identity: {}, tenant: "t" }), audience).rejects.toBeInstanceOf(TypeError);
    }
  });

  it("is accepted by another deployment's edge that trusts this one's origin as a gatekeeper", async () => {
    const PEER = "https://peer.test";
    using outbound = interceptOutbound();
    const jwks = await (await referenceWorker(new Request(`${ORIGIN}/.well-known/jwks.json`))).json();
    outbound.pushReplies.set(`${ORIGIN}/.well-known/jwks.json`, () => Response.json(jwks));
    const peer = isolatedEdge({}, { PUBLIC_ORIGIN: PEER, GATEKEEPER_ORIGINS: JSON.stringify([ORIGIN]) });
    const key = await loadSigningKey(env.A2A_SIGNING_KEY);
    const token = await signCallerToken({ key, issuer: ORIGIN, audience: PEER, identity: { key: "assistant" }, tenant: "assistant" });
    const reply = await call("GetTask", { id: "t-1" }, { worker: peer.fetch, endpoint: `${PEER}/a2a`, token });
    expect(reply.status).toBe(200);
    expect(reply.body.error.code).toBe(-32001);
  });

  it("is refused by this deployment's own edge, even with its own origin in GATEKEEPER_ORIGINS, before any fetch", async () => {
    using outbound = interceptOutbound();
    const key = await loadSigningKey(env.A2A_SIGNING_KEY);
    const token = await signCallerToken({ key, issuer: ORIGIN, audience: ORIGIN, identity: { key: "assistant" }, tenant: "assistant" });
    expect(decodeJwt(token).aud).toBe(`${ORIGIN}/a2a`);
    const edge = isolatedEdge({}, { GATEKEEPER_ORIGINS: JSON.stringify([GATEKEEPER, ORIGIN]) });
    const reply = await call("GetTask", { id: "t-1" }, { worker: edge.fetch, token });
    expect(reply.status).toBe(401);
    expect(reply.body).toMatchObject({ error: "invalid_token", check: "jku-allowlisted" });
    expect(outbound.requests).toHaveLength(0);
    expect(edge.doAccesses()).toBe(0);
  });
});

describe("signCallbackJwt", () => {
  it("binds aud to the push URL's origin and path and the task claim to the task, and lives at most five minutes", async () => {
    const key = await loadSigningKey(env.A2A_SIGNING_KEY);
    const url = "https://gatekeeper.test/hooks/a2a?delivery=1";
    const token = await signCallbackJwt({ key, issuer: ORIGIN, url, taskId: "task-1" });
    const payload = decodeJwt(token);
    expect(payload).toMatchObject({ iss: ORIGIN, aud: "https://gatekeeper.test/hooks/a2a", [TASK_CLAIM]: "task-1" });
    expect(payload.exp! - payload.iat!).toBeLessThanOrEqual(300);
    expect(decodeProtectedHeader(token)).toMatchObject({ alg: "EdDSA", kid: "a2a-test", jku: `${ORIGIN}/.well-known/jwks.json` });
    const other = await signCallbackJwt({ key, issuer: ORIGIN, url: "https://gatekeeper.test/elsewhere", taskId: "task-1" });
    expect(decodeJwt(other).aud).toBe("https://gatekeeper.test/elsewhere");
  });

  it("is never reused: every token has a jti of its own, also for the same task and URL", async () => {
    const key = await loadSigningKey(env.A2A_SIGNING_KEY);
    const url = "https://gatekeeper.test/hooks/a2a";
    const tokens = await Promise.all([1, 2, 3].map(() => signCallbackJwt({ key, issuer: ORIGIN, url, taskId: "task-1" })));
    expect(new Set(tokens).size).toBe(3);
    const ids = tokens.map((t) => decodeJwt(t).jti);
    expect(ids.every((id) => typeof id === "string" && id.length > 0)).toBe(true);
    expect(new Set(ids).size).toBe(3);
  });
});

describe("requireSelfOrigin", () => {
  it("throws before any turn, and answers the origin the first turn carried", async () => {
    await using workflows = await introspectWorkflow(env.TURN_WORKFLOW);
    await workflows.modifyAll(async (m) => m.mockStepError({ name: "run" }, new Error("not needed here")));
    using _ = interceptOutbound();
    const key = `caller-${crypto.randomUUID()}`;
    const stub = env.ASSISTANT.get(env.ASSISTANT.idFromName(callerObjectName({ gatekeeper: GATEKEEPER, tenant: "assistant", key })));
    type Probe = { requireSelfOrigin(): string; selfOrigin(): string | undefined };
    await runInDurableObject(stub, (instance) => {
      expect((instance as unknown as Probe).selfOrigin()).toBeUndefined();
      expect(() => (instance as unknown as Probe).requireSelfOrigin()).toThrow(/first turn/);
    });
    await call("SendMessage", sendParams("hi"), { mint: { identity: { key } } });
    await runInDurableObject(stub, (instance) => {
      expect((instance as unknown as Probe).requireSelfOrigin()).toBe(ORIGIN);
    });
  });
});
