import { createLocalJWKSet, decodeProtectedHeader, jwtVerify, type JSONWebKeySet } from "jose";
import { describe, expect, it, vi } from "vitest";
import { ORIGIN, PUSH_URL } from "./support/constants.js";
import { mintToken } from "./support/gatekeeper.js";
import { isolatedEdge } from "./support/isolated-edge.js";
import { eventually, interceptOutbound } from "./support/outbound.js";
import { call, sendParams } from "./support/rpc.js";
import { useTurnHarness } from "./support/turn-harness.js";

const PUBLIC = "https://agents.example.test";
// Requests reach the edge over http:// here, so the request's own origin
// differs from PUBLIC_ORIGIN while its host is the same: everything signed
// must still name PUBLIC_ORIGIN.
const ARRIVING = "http://agents.example.test";
const publicEdge = () => isolatedEdge({}, { PUBLIC_ORIGIN: PUBLIC });
const newCaller = () => ({ identity: { key: `caller-${crypto.randomUUID()}` }, aud: `${PUBLIC}/a2a` });

describe("PUBLIC_ORIGIN", () => {
  it("answers 421 for any other host on every route, before verifying or signing anything", async () => {
    using outbound = interceptOutbound();
    const edge = publicEdge();
    // Minted first: the spy below must see only what the edge signs.
    const tokens = await Promise.all([`${PUBLIC}/a2a`, `${ORIGIN}/a2a`].map((aud) => mintToken({ aud })));
    const sign = vi.spyOn(crypto.subtle, "sign");
    try {
      for (const path of ["/.well-known/agent-card.json", "/.well-known/jwks.json", "/nowhere"]) {
        const res = await edge.fetch(new Request(`${ORIGIN}${path}`));
        expect(res.status, path).toBe(421);
        expect(await res.json(), path).toMatchObject({ error: "misdirected_request" });
      }
      for (const token of tokens) {
        const reply = await call("GetExtendedAgentCard", {}, { worker: edge.fetch, token });
        expect(reply.status).toBe(421);
      }
      // Another port is another host.
      expect((await edge.fetch(new Request(`${PUBLIC}:8443/.well-known/agent-card.json`))).status).toBe(421);
      expect(sign).not.toHaveBeenCalled();
    } finally {
      sign.mockRestore();
    }
    expect(outbound.requests).toHaveLength(0);
    expect(edge.doAccesses()).toBe(0);
  });

  it("names PUBLIC_ORIGIN in the stub card's interface URL and its signature's jku", async () => {
    const res = await publicEdge().fetch(new Request(`${ARRIVING}/.well-known/agent-card.json`));
    expect(res.status).toBe(200);
    const card = (await res.json()) as Record<string, any>;
    expect(card.supportedInterfaces).toEqual([
      { url: `${PUBLIC}/a2a`, protocolBinding: "JSONRPC", protocolVersion: "1.0" },
      { url: `${PUBLIC}/a2a/rest`, protocolBinding: "HTTP+JSON", protocolVersion: "1.0" },
    ]);
    expect(decodeProtectedHeader(card.signatures[0]).jku).toBe(`${PUBLIC}/.well-known/jwks.json`);
  });

  it("accepts aud = <PUBLIC_ORIGIN>/a2a only, and names it in the tenant card", async () => {
    using _ = interceptOutbound();
    const edge = publicEdge();
    const own = await call("GetExtendedAgentCard", {}, { worker: edge.fetch, endpoint: `${ARRIVING}/a2a`, mint: { aud: `${ARRIVING}/a2a` } });
    expect(own.status).toBe(401);
    expect(own.body.error_description).toContain(`${PUBLIC}/a2a`);

    const reply = await call("GetExtendedAgentCard", {}, { worker: edge.fetch, endpoint: `${ARRIVING}/a2a`, mint: { aud: `${PUBLIC}/a2a` } });
    expect(reply.status).toBe(200);
    const card = reply.body.result;
    expect(card.supportedInterfaces).toEqual([
      expect.objectContaining({ url: `${PUBLIC}/a2a`, tenant: "assistant" }),
      expect.objectContaining({ url: `${PUBLIC}/a2a/rest`, tenant: "assistant" }),
    ]);
    expect(decodeProtectedHeader(card.signatures[0]).jku).toBe(`${PUBLIC}/.well-known/jwks.json`);
  });

  it("refuses a value that is not an origin as a configuration error", async () => {
    for (const value of ["agents.example.test", `${PUBLIC}/a2a`, `${PUBLIC}?x=1`, "http://agents.example.test", "ftp://agents.example.test"]) {
      const res = await isolatedEdge({}, { PUBLIC_ORIGIN: value }).fetch(new Request(`${PUBLIC}/.well-known/agent-card.json`));
      expect(res.status, value).toBe(500);
      expect(await res.json(), value).toMatchObject({ error: "server_misconfigured", error_description: expect.stringContaining("PUBLIC_ORIGIN") });
    }
    // http:// is for loopback hosts, as in GATEKEEPER_ORIGINS.
    const loopback = await isolatedEdge({}, { PUBLIC_ORIGIN: "http://127.0.0.1:8787" }).fetch(new Request("http://127.0.0.1:8787/.well-known/agent-card.json"));
    expect(loopback.status).toBe(200);
  });
});

describe("PUBLIC_ORIGIN in a real turn", () => {
  const harness = useTurnHarness();

  it("becomes the callback JWT's iss and jku of the push", async () => {
    const edge = publicEdge();
    const accepted = await call("SendMessage", sendParams("hello"), { worker: edge.fetch, endpoint: `${ARRIVING}/a2a`, mint: newCaller() });
    expect(accepted.status).toBe(200);
    const taskId = accepted.body.result.task.id;

    const push = await eventually(
      () => harness.outbound.pushes.find((p) => p.body.task?.id === taskId),
      (found) => found !== undefined,
      "the terminal push",
    );
    expect(push!.url).toBe(PUSH_URL);
    expect(push!.body.task.status.state).toBe("TASK_STATE_COMPLETED");
    const bearer = push!.headers.get("Authorization")!.replace(/^Bearer /, "");
    expect(decodeProtectedHeader(bearer).jku).toBe(`${PUBLIC}/.well-known/jwks.json`);
    const jwks = (await (await edge.fetch(new Request(`${PUBLIC}/.well-known/jwks.json`))).json()) as JSONWebKeySet;
    const { payload } = await jwtVerify(bearer, createLocalJWKSet(jwks), { issuer: PUBLIC, audience: PUSH_URL });
    expect(payload.iss).toBe(PUBLIC);
  });
});
