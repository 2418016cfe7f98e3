import { describe, expect, it } from "vitest";
import { GATEKEEPER_JWKS } from "./support/constants.js";
import { gatekeeperKey, mintToken, rawToken, standardClaims } from "./support/gatekeeper.js";
import { isolatedEdge, markerEdge } from "./support/isolated-edge.js";
import { eventually, holdModel, interceptOutbound } from "./support/outbound.js";
import { openStream, post, userMessage, type CallOptions } from "./support/rpc.js";
import { useMarkerHarness } from "./support/turn-harness.js";

// docs/gatekeeper.md "Refusals" and "SendStreamingMessage", as a gatekeeper
// reads them: which 401s come before the body is read and which after the
// JSON-RPC envelope, the challenge's description beside the body's, and the
// open-streams quota's Retry-After.

const harness = useMarkerHarness();
const getTask = (tenant = "assistant") => JSON.stringify({ jsonrpc: "2.0", id: 7, method: "GetTask", params: { tenant, id: "t-1" } });

async function send(body: string, options: CallOptions) {
  using _outbound = interceptOutbound();
  return post(body, { ...options, worker: isolatedEdge().fetch });
}

describe("the 401's check against the body's checks", () => {
  it("refuses a token before the body is read: its tenant and identity claims too, whatever the body is", async () => {
    const noTenant = await mintToken({ tenant: null });
    const badIdentity = await mintToken({ identity: { key: "" } });
    for (const [token, check] of [
      [noTenant, "tenant-claim"],
      [badIdentity, "identity-claim"],
    ] as const) {
      for (const [what, body, headers] of [
        ["not JSON", "{not json", {}],
        ["not JSON-RPC", "[]", {}],
        ["no A2A-Version", getTask(), { "A2A-Version": null }],
        ["text/plain", getTask(), { "Content-Type": "text/plain" }],
      ] as const) {
        const reply = await send(body, { token, headers });
        expect(reply.status, `${check}, ${what}`).toBe(401);
        expect(reply.body, `${check}, ${what}`).toMatchObject({ error: "invalid_token", check });
      }
    }
  });

  it("compares params.tenant only after the envelope: a bad body wins over a tenant the token was not minted for", async () => {
    const token = await mintToken({ tenant: "assistant" });
    const notJson = await send("{not json", { token });
    expect(notJson.status).toBe(400);
    expect(notJson.body.error.code).toBe(-32700);
    const noVersion = await send(getTask("researcher"), { token, headers: { "A2A-Version": null } });
    expect(noVersion.body.error.code).toBe(-32009);
    // With the body sound, the same mismatch is the token's 401.
    const sound = await send(getTask("researcher"), { token });
    expect(sound.status).toBe(401);
    expect(sound.body.check).toBe("tenant-claim");
  });
});

describe("the challenge beside the body", () => {
  it("says \"none\" in the body and 'none' in WWW-Authenticate", async () => {
    const token = rawToken({ alg: "none", typ: "JWT", jku: GATEKEEPER_JWKS, kid: gatekeeperKey.kid }, standardClaims());
    const reply = await send(getTask(), { token });
    expect(reply.status).toBe(401);
    expect(reply.body).toMatchObject({ check: "signature", error_description: `the token's alg must be EdDSA, got "none"` });
    expect(reply.headers.get("WWW-Authenticate")).toBe(`Bearer error="invalid_token", error_description="the token's alg must be EdDSA, got 'none'"`);
  });
});

describe("the open-streams quota", () => {
  it("is a plain JSON-RPC 429 with Retry-After: 5, naming the limit and the count", async () => {
    // The marker agent holds at most two streams per caller (test/support/agents.ts).
    const edge = markerEdge();
    const mint = { tenant: "marker", identity: { key: `caller-${crypto.randomUUID()}` } };
    const held = holdModel(harness.outbound);
    const sent = await post(
      JSON.stringify({
        jsonrpc: "2.0",
        id: 1,
        method: "SendMessage",
        params: { tenant: "marker", message: userMessage("hold"), configuration: { returnImmediately: true } },
      }),
      { worker: edge.fetch, mint },
    );
    const id: string = sent.body.result.task.id;
    const open = [
      await openStream("SubscribeToTask", { id }, { worker: edge.fetch, mint }),
      await openStream("SubscribeToTask", { id }, { worker: edge.fetch, mint }),
    ];
    const refused = await openStream("SendStreamingMessage", { message: userMessage("one more") }, { worker: edge.fetch, mint });
    expect(refused.status).toBe(429);
    expect(refused.headers.get("Retry-After")).toBe("5");
    expect(refused.headers.get("Content-Type")).toMatch(/^application\/json/);
    expect(refused.reply?.error).toMatchObject({
      code: -32000,
      data: [expect.objectContaining({ reason: "QUOTA_EXCEEDED", metadata: { limit: "maxOpenStreams", open: "2", retryAfterSeconds: "5" } })],
    });
    for (const stream of open) await stream.close();
    await eventually(
      () => held.length,
      (n) => n > 0,
      "the model call",
    );
    held[0]!.release();
  });
});
