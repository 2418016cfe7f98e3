import { GatekeeperJwks } from "@dynamicagents/core/a2a";
import { describe, expect, it } from "vitest";
import { GATEKEEPER, GATEKEEPER_JWKS } from "./support/constants.js";
import { freshKeyPair, gatekeeperKey } from "./support/gatekeeper.js";
import { isolatedEdge } from "./support/isolated-edge.js";
import { interceptOutbound, type Outbound } from "./support/outbound.js";
import { call, type RpcReply } from "./support/rpc.js";

const COOLDOWN = 5_000;
const MAX_AGE = 10 * 60_000;

/** An edge whose gatekeeper key sets run on a clock the spec moves by hand. */
function clockedEdge() {
  const clock = { now: Date.UTC(2026, 11, 1) };
  const jwks = new GatekeeperJwks({ now: () => clock.now });
  const edge = isolatedEdge({ jwks });
  const getTask = (key = gatekeeperKey): Promise<RpcReply> => call("GetTask", { id: "t" }, { worker: edge.fetch, mint: { key } });
  return { clock, jwks, getTask };
}

const jwksFetches = (outbound: Outbound, url = GATEKEEPER_JWKS) => outbound.requests.filter((r) => r.url === url).length;

describe("gatekeeper key sets", () => {
  it("defaults: a 5 s cooldown, a 10 minute maximum age, at most 32 gatekeepers", () => {
    expect(new GatekeeperJwks().maxEntries).toBe(32);
  });

  it("are fetched once per gatekeeper, not per call", async () => {
    using outbound = interceptOutbound();
    const { getTask } = clockedEdge();
    for (let i = 0; i < 5; i++) expect((await getTask()).status).toBe(200);
    expect(jwksFetches(outbound)).toBe(1);
  });

  it("refuse a key the gatekeeper removed once the cached set is 10 minutes old, and not before", async () => {
    using outbound = interceptOutbound();
    const { clock, getTask } = clockedEdge();
    const retiring = await freshKeyPair("gatekeeper-retiring");
    outbound.jwks = { keys: [gatekeeperKey.publicJwk, retiring.publicJwk] };
    expect((await getTask(retiring)).status).toBe(200);

    outbound.jwks = { keys: [gatekeeperKey.publicJwk] };
    clock.now += MAX_AGE - 1;
    expect((await getTask(retiring)).status).toBe(200);
    expect(jwksFetches(outbound)).toBe(1);

    clock.now += 1;
    const refused = await getTask(retiring);
    expect(refused.status).toBe(401);
    expect(refused.body.check).toBe("signature");
    expect(jwksFetches(outbound)).toBe(2);
    // The gatekeeper's current key is still fine after the refetch.
    expect((await getTask()).status).toBe(200);
    expect(jwksFetches(outbound)).toBe(2);
  });

  it("refuse a removed key at once after one token with an unknown kid, past the cooldown (docs/gatekeeper.md: testing a revocation)", async () => {
    using outbound = interceptOutbound();
    const { clock, getTask } = clockedEdge();
    const revoked = await freshKeyPair("gatekeeper-revoked");
    outbound.jwks = { keys: [gatekeeperKey.publicJwk, revoked.publicJwk] };
    expect((await getTask(revoked)).status).toBe(200);

    outbound.jwks = { keys: [gatekeeperKey.publicJwk] };
    clock.now += COOLDOWN;
    expect((await getTask(revoked)).status).toBe(200); // still cached
    const throwaway = await freshKeyPair(`throwaway-${crypto.randomUUID()}`);
    expect((await getTask(throwaway)).status).toBe(401); // an unknown kid: the set is fetched again
    const refused = await getTask(revoked);
    expect(refused.status).toBe(401);
    expect(refused.body.check).toBe("signature");
    expect(jwksFetches(outbound)).toBe(2);
  });

  it("refetch on unknown kids at most once per cooldown", async () => {
    using outbound = interceptOutbound();
    const { clock, getTask } = clockedEdge();
    expect((await getTask()).status).toBe(200);
    const forged = await Promise.all(Array.from({ length: 6 }, (_, i) => freshKeyPair(`forged-${crypto.randomUUID()}-${i}`)));

    // Inside the cooldown of the first fetch: no refetch at all.
    clock.now += COOLDOWN - 1;
    for (const key of forged.slice(0, 3)) expect((await getTask(key)).status).toBe(401);
    expect(jwksFetches(outbound)).toBe(1);

    // After it: N unknown kids at once cost one fetch between them.
    clock.now += 1;
    const replies = await Promise.all(forged.map((key) => getTask(key)));
    expect(replies.map((r) => r.status)).toEqual(forged.map(() => 401));
    expect(jwksFetches(outbound)).toBe(2);
  });

  it("accept a rotated key at once: the first unknown kid after the cooldown refetches", async () => {
    using outbound = interceptOutbound();
    const { clock, getTask } = clockedEdge();
    expect((await getTask()).status).toBe(200);

    const rotated = await freshKeyPair("gatekeeper-rotated");
    outbound.jwks = { keys: [gatekeeperKey.publicJwk, rotated.publicJwk] };
    clock.now += COOLDOWN;
    expect((await getTask(rotated)).status).toBe(200);
    expect((await getTask(rotated)).status).toBe(200);
    expect(jwksFetches(outbound)).toBe(2);
  });

  it("hold at most maxEntries gatekeepers, dropping the least recently used", async () => {
    using outbound = interceptOutbound();
    const origins = Array.from({ length: 5 }, (_, i) => `https://gk-${i}.test`);
    for (const origin of origins) outbound.pages.set(`${origin}/.well-known/jwks.json`, () => Response.json({ keys: [gatekeeperKey.publicJwk] }));
    const jwks = new GatekeeperJwks({ maxEntries: 3 });
    const edge = isolatedEdge({ jwks }, { GATEKEEPER_ORIGINS: JSON.stringify(origins) });
    const from = async (i: number) => {
      const origin = origins[i]!;
      const reply = await call("GetTask", { id: "t" }, { worker: edge.fetch, mint: { iss: origin, jku: `${origin}/.well-known/jwks.json` } });
      expect(reply.status).toBe(200);
      expect(jwks.size).toBeLessThanOrEqual(3);
    };
    const fetchesOf = (i: number) => jwksFetches(outbound, `${origins[i]}/.well-known/jwks.json`);

    for (const i of [0, 1, 2, 0, 3, 4]) await from(i);
    expect(jwks.size).toBe(3);
    // 0 was used after 1 and 2, so 1 and 2 were dropped for 3 and 4; 0 is still held.
    await from(0);
    expect(fetchesOf(0)).toBe(1);
    await from(1);
    expect(fetchesOf(1)).toBe(2);
    expect(jwks.size).toBe(3);
  });

  it("fetch only the exact JWKS URL: a redirect, an error status or a body that is not a JWKS is a refusal", async () => {
    const bodies: Array<[string, () => Response, RegExp]> = [
      ["a redirect", () => new Response(null, { status: 302, headers: { Location: `${GATEKEEPER}/elsewhere.json` } }), /HTTP 302; redirects are not followed/],
      ["an error status", () => new Response("down", { status: 503 }), /HTTP 503/],
      ["HTML", () => new Response("<html>keys</html>", { status: 200 }), /not JSON/],
      ["JSON that is not a JWKS", () => Response.json({ keys: "none" }), /not a JWKS/],
    ];
    for (const [label, reply, reason] of bodies) {
      using outbound = interceptOutbound();
      outbound.pushReplies.set(GATEKEEPER_JWKS, reply);
      const { clock, getTask } = clockedEdge();
      const refused = await getTask();
      expect(refused.status, label).toBe(401);
      expect(refused.body.check, label).toBe("signature");
      expect(refused.body.error_description, label).toMatch(reason);
      expect(
        outbound.requests.map((r) => r.url),
        label,
      ).toEqual([GATEKEEPER_JWKS]);
      // A failed fetch is not retried within the cooldown either.
      expect((await getTask()).status, label).toBe(401);
      expect(jwksFetches(outbound), label).toBe(1);
      // Once the gatekeeper serves its keys again, the next call after the cooldown gets through.
      outbound.pushReplies.delete(GATEKEEPER_JWKS);
      clock.now += COOLDOWN;
      expect((await getTask()).status, label).toBe(200);
    }
  });
});
