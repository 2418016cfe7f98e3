// The dev gatekeeper (scripts/dev/gatekeeper.mjs), in Node, against a fake
// agent that signs with the core's own code: trust on first use, the push
// checks, and tokens the edge's own verifier accepts.
import { randomUUID } from "node:crypto";
import { mkdtempSync, readFileSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { GatekeeperJwks, verifyGatekeeperToken } from "@dynamicagents/core/a2a";
import { SignJWT, importJWK } from "jose";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { A2A_JSON, CALLBACK_TTL_SECONDS, NOTIFICATION_TOKEN_HEADER, TASK_CLAIM, endpointOf, jwksUrlOf } from "../../src/a2a/wire.ts";
import { PinMismatch, RegistrationFailed, startGatekeeper } from "../../scripts/dev/gatekeeper.mjs";
import { freshAgentJwk, startFakeAgent } from "./support/fake-agent.mjs";

let stateDir;
let gatekeeper;
let agent;
const identity = { key: "dev-ada", name: "Ada", kind: "user", workspaceId: "local-dev" };

beforeEach(async () => {
  stateDir = mkdtempSync(join(tmpdir(), "dev-gatekeeper-test-"));
  gatekeeper = await startGatekeeper({ stateDir, port: 0 });
  agent = await startFakeAgent({ tenants: ["assistant", "researcher"] });
});

afterEach(async () => {
  await gatekeeper.close();
  await agent.close();
  rmSync(stateDir, { recursive: true, force: true });
});

describe("registration: trust on first use", () => {
  it("pins jku, kid and the key on first sight, and accepts the same key afterwards, also after a restart", async () => {
    const first = await gatekeeper.registerAgent(agent.origin);
    const key = await agent.key();
    expect(first.firstSight).toBe(true);
    expect(first.endpoint).toBe(endpointOf(agent.origin));
    expect(first.pin).toMatchObject({ origin: agent.origin, jku: jwksUrlOf(agent.origin), kid: key.kid, x: key.publicJwk.x });
    expect((await gatekeeper.registerAgent(agent.origin)).firstSight).toBe(false);

    await gatekeeper.close();
    gatekeeper = await startGatekeeper({ stateDir, port: 0 });
    const again = await gatekeeper.registerAgent(agent.origin);
    expect(again.firstSight).toBe(false);
    expect(again.pin.x).toBe(key.publicJwk.x);
  });

  it("refuses a changed key under the same kid, says what changed and how to reset, and keeps the old pin", async () => {
    await gatekeeper.registerAgent(agent.origin);
    const pinned = gatekeeper.pinOf(agent.origin);
    agent.useKey(await freshAgentJwk("a2a-test-1"));

    const refusal = await gatekeeper.registerAgent(agent.origin).catch((error) => error);
    expect(refusal).toBeInstanceOf(PinMismatch);
    expect(refusal.message).toContain(`REFUSED: the agent at ${agent.origin}`);
    expect(refusal.message).toMatch(/changed: +public key \S+ → \S+/);
    expect(refusal.message).not.toMatch(/changed:.*kid/);
    expect(refusal.message).toContain("npm start -- --unpin");
    expect(refusal.message).toContain(join(stateDir, "pins.json"));
    expect(gatekeeper.pinOf(agent.origin)).toEqual(pinned);
    expect(JSON.parse(readFileSync(join(stateDir, "pins.json"), "utf8"))[agent.origin]).toEqual(pinned);
  });

  it("refuses a new kid and names both kids", async () => {
    await gatekeeper.registerAgent(agent.origin);
    agent.useKey(await freshAgentJwk("a2a-test-2"));
    const refusal = await gatekeeper.registerAgent(agent.origin).catch((error) => error);
    expect(refusal).toBeInstanceOf(PinMismatch);
    expect(refusal.message).toContain("kid a2a-test-1 → a2a-test-2");
    expect(refusal.message).toContain("public key");
  });

  it("pins the new key after an explicit unpin", async () => {
    await gatekeeper.registerAgent(agent.origin);
    agent.useKey(await freshAgentJwk("a2a-test-2"));
    await expect(gatekeeper.registerAgent(agent.origin)).rejects.toBeInstanceOf(PinMismatch);
    expect(gatekeeper.unpin(agent.origin)).toBe(true);
    const repinned = await gatekeeper.registerAgent(agent.origin);
    expect(repinned.firstSight).toBe(true);
    expect(repinned.pin.kid).toBe("a2a-test-2");
  });

  it("refuses a tenant card signed with another key than the pinned one", async () => {
    await gatekeeper.registerAgent(agent.origin);
    await expect(gatekeeper.registerTenant(agent.origin, "assistant", identity)).resolves.toMatchObject({ tenant: "assistant" });
    agent.useKey(await freshAgentJwk("a2a-test-1"));
    await expect(gatekeeper.registerTenant(agent.origin, "researcher", identity)).rejects.toBeInstanceOf(PinMismatch);
  });

  it("refuses a card altered after signing (same key), without calling it a key change", async () => {
    await gatekeeper.registerAgent(agent.origin);
    agent.tamperWith((card) => ({ ...card, description: `${card.description} (edited)` }));
    const refusal = await gatekeeper.registerAgent(agent.origin).catch((error) => error);
    expect(refusal).toBeInstanceOf(RegistrationFailed);
    expect(refusal.message).toMatch(/altered/);
  });

  it("refuses to pin an unsigned or forged card on first sight", async () => {
    agent.tamperWith(({ signatures: _dropped, ...card }) => card);
    await expect(gatekeeper.registerAgent(agent.origin)).rejects.toThrow(/is not signed/);
    agent.tamperWith((card) => ({ ...card, name: "Someone else" }));
    await expect(gatekeeper.registerAgent(agent.origin)).rejects.toThrow(/signature does not verify/);
    expect(gatekeeper.pinOf(agent.origin)).toBeUndefined();
  });
});

describe("minted tokens", () => {
  it("pass the edge's own verifier (jku allowlisted, iss, aud, EdDSA, tenant and identity claims)", async () => {
    const audience = endpointOf(agent.origin);
    const token = await gatekeeper.mint({ audience, tenant: "researcher", identity });
    const caller = await verifyGatekeeperToken(token, { allowlist: new Set([gatekeeper.origin]), audience, jwks: new GatekeeperJwks() });
    expect(caller).toMatchObject({ tenant: "researcher", identity, issuer: gatekeeper.origin });
  });
});

describe("receiving pushes", () => {
  const completed = (id = "task-1") => ({ task: { id, contextId: "ctx-1", status: { state: "TASK_STATE_COMPLETED" } } });
  let token;
  let accepted;
  let refused;

  beforeEach(async () => {
    await gatekeeper.registerAgent(agent.origin);
    token = gatekeeper.issueNotificationToken({ agent: agent.origin, tenant: "assistant", identityKey: identity.key, messageId: "m-1" });
    accepted = [];
    refused = [];
    gatekeeper.events.on("push", (push) => accepted.push(push));
    gatekeeper.events.on("refused", (refusal) => refused.push(refusal));
  });

  /** @param {{ bearer?: string | null, notificationToken?: string | null, body?: unknown, contentType?: string, url?: string }} [options] */
  async function push({ bearer, notificationToken = token, body = completed(), contentType = A2A_JSON, url = gatekeeper.pushUrl } = {}) {
    const headers = { "Content-Type": contentType };
    const jwt =
      bearer === undefined
        ? await agent.callbackToken(gatekeeper.pushUrl, /** @type {any} */ (body).task?.id ?? /** @type {any} */ (body).statusUpdate?.taskId)
        : bearer;
    if (jwt !== null) headers.Authorization = `Bearer ${jwt}`;
    if (notificationToken !== null) headers[NOTIFICATION_TOKEN_HEADER] = notificationToken;
    const response = await fetch(url, { method: "POST", headers, body: JSON.stringify(body) });
    return { status: response.status, body: /** @type {any} */ (await response.json()), challenge: response.headers.get("WWW-Authenticate") };
  }

  /**
   * A callback token signed by `jwk` (default: the agent's own key), with any claim bent.
   * `task` and `jti` are left out when given as null.
   * @param {{ jwk?: string, iss?: string, aud?: string, iat?: number, exp?: number, kid?: string, jku?: string, task?: string | null, jti?: string | null }} [options]
   */
  async function callbackToken({
    jwk = agent.secret,
    iss = agent.origin,
    aud = gatekeeper.pushUrl,
    iat,
    exp,
    kid,
    jku,
    task = "task-1",
    jti = randomUUID(),
  } = {}) {
    const parsed = JSON.parse(jwk);
    const key = await importJWK({ ...parsed, alg: "EdDSA" }, "EdDSA");
    const now = Math.floor(Date.now() / 1000);
    const jwt = new SignJWT(task === null ? {} : { [TASK_CLAIM]: task })
      .setProtectedHeader({ alg: "EdDSA", typ: "JWT", kid: kid ?? JSON.parse(agent.secret).kid, jku: jku ?? jwksUrlOf(agent.origin) })
      .setIssuer(iss)
      .setAudience(aud)
      .setIssuedAt(iat ?? now)
      .setExpirationTime(exp ?? now + CALLBACK_TTL_SECONDS);
    if (jti !== null) jwt.setJti(jti);
    return jwt.sign(key);
  }

  function expectRefused(reply, check) {
    expect(reply.status).toBe(401);
    expect(reply.body.check).toBe(check);
    expect(reply.challenge).toMatch(/^Bearer error="invalid_token"/);
    expect(accepted).toEqual([]);
    expect(refused.map((r) => r.check)).toContain(check);
  }

  it("accepts a push signed as the Worker signs it, once, and answers a redelivery 200 without a second event", async () => {
    const first = await push();
    expect(first).toMatchObject({ status: 200, body: { ok: true, duplicate: false } });
    const again = await push();
    expect(again).toMatchObject({ status: 200, body: { ok: true, duplicate: true } });
    expect(accepted).toHaveLength(1);
    expect(accepted[0]).toMatchObject({
      agent: agent.origin,
      tenant: "assistant",
      identityKey: "dev-ada",
      messageId: "m-1",
      kind: "task",
      taskId: "task-1",
      state: "TASK_STATE_COMPLETED",
    });
  });

  it("accepts statusUpdate progress for the same task, each update once", async () => {
    const update = (messageId, text) => ({
      statusUpdate: {
        taskId: "task-1",
        contextId: "ctx-1",
        status: { state: "TASK_STATE_WORKING", message: { messageId, role: "ROLE_AGENT", parts: [{ text }] } },
      },
    });
    expect((await push({ body: update("p-1", "round 1") })).status).toBe(200);
    expect((await push({ body: update("p-1", "round 1") })).body.duplicate).toBe(true);
    expect((await push({ body: update("p-2", "round 2") })).status).toBe(200);
    expect((await push()).status).toBe(200);
    expect(accepted.map((a) => [a.kind, a.state])).toEqual([
      ["statusUpdate", "TASK_STATE_WORKING"],
      ["statusUpdate", "TASK_STATE_WORKING"],
      ["task", "TASK_STATE_COMPLETED"],
    ]);
  });

  it("refuses a bad signature: a key other than the pinned one under the pinned kid", async () => {
    expectRefused(await push({ bearer: await callbackToken({ jwk: await freshAgentJwk("a2a-test-1") }) }), "signature");
  });

  it("refuses a token whose signature was tampered with", async () => {
    const [header, payload, signature] = (await agent.callbackToken(gatekeeper.pushUrl)).split(".");
    const flipped = `${signature.slice(0, -2)}${signature.at(-2) === "A" ? "B" : "A"}${signature.at(-1)}`;
    expectRefused(await push({ bearer: `${header}.${payload}.${flipped}` }), "signature");
  });

  it("refuses a wrong aud: a token minted for another URL of this gatekeeper", async () => {
    expectRefused(await push({ bearer: await agent.callbackToken(`${gatekeeper.origin}/elsewhere`) }), "aud");
    expectRefused(await push({ bearer: await callbackToken({ aud: gatekeeper.origin }) }), "aud");
  });

  it("refuses an expired token", async () => {
    const now = Math.floor(Date.now() / 1000);
    expectRefused(await push({ bearer: await callbackToken({ iat: now - 200, exp: now - 30 }) }), "exp");
  });

  it("refuses a token that lives longer than five minutes", async () => {
    const now = Math.floor(Date.now() / 1000);
    expectRefused(await push({ bearer: await callbackToken({ iat: now, exp: now + CALLBACK_TTL_SECONDS + 60 }) }), "exp");
  });

  it("refuses a callback token signed for another task, one without a jti or task claim, and a replayed one", async () => {
    expectRefused(await push({ bearer: await callbackToken({ task: "task-2" }) }), "task");
    expectRefused(await push({ bearer: await callbackToken({ task: null }) }), "task");
    expectRefused(await push({ bearer: await callbackToken({ jti: null }) }), "jti");
    const once = await callbackToken();
    expect((await push({ bearer: once })).status).toBe(200);
    const replayed = await push({ bearer: once });
    expect(replayed.status).toBe(401);
    expect(replayed.body.check).toBe("jti");
    expect(accepted).toHaveLength(1);
  });

  it("refuses a wrong or missing notification token, and a token used for another task", async () => {
    expectRefused(await push({ notificationToken: "not-one-we-issued" }), "notification-token");
    expectRefused(await push({ notificationToken: null }), "notification-token");
    expect((await push({ body: completed("task-1") })).status).toBe(200);
    const other = await push({ body: completed("task-2") });
    expect(other.status).toBe(401);
    expect(other.body.check).toBe("notification-token");
    expect(accepted.map((a) => a.taskId)).toEqual(["task-1"]);
  });

  it("refuses a notification token issued to another agent", async () => {
    const foreign = gatekeeper.issueNotificationToken({ agent: "http://127.0.0.1:1", tenant: "assistant", identityKey: "x", messageId: "m-9" });
    expectRefused(await push({ notificationToken: foreign }), "notification-token");
  });

  it("refuses tokens from an agent it never registered, a kid or jku other than the pinned ones, and no token at all", async () => {
    expectRefused(await push({ bearer: await callbackToken({ iss: "http://127.0.0.1:1" }) }), "iss");
    expectRefused(await push({ bearer: await callbackToken({ kid: "a2a-other" }) }), "kid");
    expectRefused(await push({ bearer: await callbackToken({ jku: `${agent.origin}/other-jwks.json` }) }), "jku");
    expectRefused(await push({ bearer: null }), "bearer");
  });

  it("binds a token only after every check passed: a refused push does not use it up", async () => {
    expectRefused(await push({ bearer: await callbackToken({ aud: gatekeeper.origin }), body: completed("task-evil") }), "aud");
    expect((await push({ body: completed("task-1") })).status).toBe(200);
  });

  it("refuses a body that is not application/a2a+json only after the caller proved who it is", async () => {
    const reply = await push({ contentType: "text/plain" });
    expect(reply.status).toBe(415);
    expect(accepted).toEqual([]);
  });
});
