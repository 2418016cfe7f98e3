import { env } from "cloudflare:workers";
import { callerHash } from "@dynamicagents/core/telemetry";
import { describe, expect, it } from "vitest";
import { GATEKEEPER, GATEKEEPER_JWKS, OTHER_GATEKEEPER } from "./support/constants.js";
import { captureConsole } from "./support/console-capture.js";
import { mintToken, rawToken, standardClaims } from "./support/gatekeeper.js";
import { isolatedEdge, type IsolatedEdge } from "./support/isolated-edge.js";
import { interceptOutbound } from "./support/outbound.js";
import { post, type CallOptions } from "./support/rpc.js";

// docs/telemetry.md "The edge's refusals": every request a check of the edge
// refuses is one `edge.refused` event naming the check, the HTTP status and
// the JSON-RPC code; `tenant` and `caller` only once the token verified.

const IDENTITY = { key: "events-identity-key", name: "Events Caller", kind: "user", workspaceId: "w-events" };
const body = (params: Record<string, unknown> = { tenant: "assistant", id: "t-1" }, method = "GetTask") =>
  JSON.stringify({ jsonrpc: "2.0", id: 1, method, params });

/** One request on a fresh edge: its reply, the edge's events once its background work settled, and every console line. */
async function refused(requestBody: string, options: CallOptions & { edge?: IsolatedEdge } = {}) {
  using _ = interceptOutbound();
  using output = captureConsole();
  const edge = options.edge ?? isolatedEdge();
  const token = options.token === undefined ? await mintToken({ identity: IDENTITY, ...options.mint }) : options.token;
  const reply = await post(requestBody, { ...options, token, worker: edge.fetch });
  await edge.backgroundSettled();
  const events = output.events().filter((e) => e.event === "edge.refused" || e.event === "quota.exceeded");
  return { reply, token, events, lines: output.lines() };
}

const verifiedCaller = () => callerHash(env.A2A_SIGNING_KEY, { gatekeeper: GATEKEEPER, tenant: "assistant", key: IDENTITY.key });

function expectOneRefusal(events: Array<{ event: string }>, data: Record<string, unknown>, scope: Record<string, unknown> = {}) {
  expect(events).toHaveLength(1);
  const [event] = events as Array<Record<string, unknown>>;
  expect(event).toEqual({
    type: "dynamicagents.event",
    v: 1,
    event: "edge.refused",
    eventId: expect.stringMatching(/^[0-9a-f]{32}$/),
    at: expect.any(String),
    ...scope,
    data,
  });
}

describe("edge.refused, before the token verified: no tenant, no caller", () => {
  it("token checks: the check as token.<check>, HTTP 401, code 0", async () => {
    const cases: Array<[string, string | null, Record<string, string | null>?]> = [
      ["token.bearer", null],
      ["token.bearer", null, { Authorization: "Basic dXNlcjpwYXNz" }],
      ["token.bearer", "not-a-jwt"],
      ["token.jku-present", await mintToken({ jku: null })],
      ["token.jku-allowlisted", await mintToken({ jku: "https://attacker.test/.well-known/jwks.json" })],
      ["token.jku-allowlisted", await mintToken({ jku: `${GATEKEEPER_JWKS}?x=1` })],
      ["token.iss-matches-jku", await mintToken({ iss: OTHER_GATEKEEPER })],
      ["token.signature", rawToken({ alg: "none", jku: GATEKEEPER_JWKS }, standardClaims())],
      ["token.signature", await mintToken({ aud: "https://elsewhere.test/a2a" })],
      ["token.signature", await mintToken({ expiresIn: -60 })],
      ["token.signature", await mintToken({ expiresIn: 7200 })],
      ["token.tenant-claim", await mintToken({ tenant: null })],
      ["token.identity-claim", await mintToken({ identity: null })],
    ];
    for (const [check, token, headers] of cases) {
      const { reply, events } = await refused(body(), { token, headers });
      expect(reply.status, check).toBe(401);
      expect(reply.body.check, check).toBe(check.slice("token.".length));
      expectOneRefusal(events, { check, status: 401, code: 0 });
    }
  });

  it("host: another host than PUBLIC_ORIGIN, HTTP 421, code 0, on the card routes too", async () => {
    const edge = isolatedEdge({}, { PUBLIC_ORIGIN: "https://agents.example.test" });
    const { reply, events } = await refused(body(), { edge });
    expect(reply.status).toBe(421);
    expectOneRefusal(events, { check: "host", status: 421, code: 0 });

    using output = captureConsole();
    const card = await edge.fetch(new Request("https://agents.test/.well-known/agent-card.json"));
    await edge.backgroundSettled();
    expect(card.status).toBe(421);
    expectOneRefusal(output.events(), { check: "host", status: 421, code: 0 });
  });
});

describe("edge.refused, once the token verified: the token's tenant and the caller's hash", () => {
  it("content type, body limit, version and envelope, each with its status and code", async () => {
    const caller = await verifiedCaller();
    const scope = { tenant: "assistant", caller };
    const cases: Array<[string, string, CallOptions & { edge?: IsolatedEdge }, number, number]> = [
      ["content-type", body(), { headers: { "Content-Type": "text/plain" } }, 415, -32005],
      ["body-limit", body({ tenant: "assistant", id: "x".repeat(2048) }), { edge: isolatedEdge({ maxBodyBytes: 1024 }) }, 413, -32600],
      ["version", body(), { headers: { "A2A-Version": "0.3" } }, 200, -32009],
      ["envelope", "{not json", {}, 400, -32700],
      ["envelope", `[${body()}]`, {}, 400, -32600],
    ];
    for (const [check, requestBody, options, status, code] of cases) {
      const { reply, events } = await refused(requestBody, options);
      expect(reply.status, check).toBe(status);
      expect(reply.body.error.code, check).toBe(code);
      expectOneRefusal(events, { check, status, code }, scope);
    }
  });

  it("tenant claim and unknown tenant, with the method when it is one", async () => {
    const caller = await verifiedCaller();
    const claim = await refused(body({ tenant: "researcher", id: "t" }));
    expect(claim.reply.status).toBe(401);
    expectOneRefusal(claim.events, { check: "tenant-claim", status: 401, code: 0, method: "GetTask" }, { tenant: "assistant", caller });

    const missing = await refused(body({ id: "t" }, "ListTasks"));
    expectOneRefusal(missing.events, { check: "tenant-claim", status: 401, code: 0, method: "ListTasks" }, { tenant: "assistant", caller });

    // A method that is none of ours stays out of the event.
    const unnamed = await refused(body({ tenant: "researcher" }, "Not-A-Method"));
    expectOneRefusal(unnamed.events, { check: "tenant-claim", status: 401, code: 0 }, { tenant: "assistant", caller });

    const ghostCaller = await callerHash(env.A2A_SIGNING_KEY, { gatekeeper: GATEKEEPER, tenant: "ghost", key: IDENTITY.key });
    const ghost = await refused(body({ tenant: "ghost", id: "t" }), { mint: { tenant: "ghost" } });
    expect(ghost.reply.status).toBe(404);
    expectOneRefusal(ghost.events, { check: "known-tenant", status: 404, code: -32602, method: "GetTask" }, { tenant: "ghost", caller: ghostCaller });
  });

  it("the caller's hash depends on the gatekeeper, the tenant and the identity key, and is none of them", async () => {
    const ours = await verifiedCaller();
    const other = await refused(body(), {
      mint: { iss: OTHER_GATEKEEPER, jku: `${OTHER_GATEKEEPER}/.well-known/jwks.json` },
      headers: { "A2A-Version": "0.3" },
    });
    const theirs = other.events[0]?.caller;
    expect(theirs).toMatch(/^[0-9a-f]{32}$/);
    expect(theirs).not.toBe(ours);
    expect(theirs).toBe(await callerHash(env.A2A_SIGNING_KEY, { gatekeeper: OTHER_GATEKEEPER, tenant: "assistant", key: IDENTITY.key }));
  });
});

describe("what an edge event never holds, and where it goes", () => {
  it("no token, no identity, no secret in any line the edge wrote", async () => {
    const outcomes = [
      await refused(body(), { headers: { "A2A-Version": "0.3" } }),
      await refused(body({ tenant: "researcher" })),
      await refused(body(), { mint: { expiresIn: -60 } }),
    ];
    for (const { token, lines, events } of outcomes) {
      expect(events).toHaveLength(1);
      const output = lines.join("\n");
      expect(output).not.toContain(token);
      expect(output).not.toMatch(/eyJ[A-Za-z0-9_-]{10,}\.eyJ/);
      for (const value of [IDENTITY.key, IDENTITY.name, IDENTITY.workspaceId, env.A2A_SIGNING_KEY!, JSON.parse(env.A2A_SIGNING_KEY!).d, env.OPENAI_API_KEY!]) {
        expect(output).not.toContain(value);
      }
    }
  });

  it("an accepted request emits nothing at the edge", async () => {
    const { reply, events } = await refused(body());
    expect(reply.status).toBe(200);
    expect(reply.body.error.code).toBe(-32001);
    expect(events).toEqual([]);
  });

  it("with A2A_ANALYTICS bound, a refusal is also a data point (without it, as everywhere else here, only the log line)", async () => {
    const points: unknown[] = [];
    const dataset = { writeDataPoint: (point: unknown) => void points.push(point) } as AnalyticsEngineDataset;
    const edge = isolatedEdge({}, { A2A_ANALYTICS: dataset });
    const { events } = await refused(body(), { edge, headers: { "Content-Type": "text/plain" } });
    expect(events).toHaveLength(1);
    expect(points).toEqual([{ blobs: ["edge.refused", "assistant", "content-type", "-32005"], doubles: [0, 0, 0, 415], indexes: ["assistant"] }]);
  });
});
