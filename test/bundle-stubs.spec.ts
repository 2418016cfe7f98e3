import { env } from "cloudflare:workers";
import { describe, expect, it } from "vitest";
import { rpcBody } from "../src/testing/rpc-client.js";
import { ORIGIN } from "./support/constants.js";
import { mintToken } from "./support/gatekeeper.js";
import { isolatedEdge } from "./support/isolated-edge.js";
import { interceptOutbound } from "./support/outbound.js";
import { referenceWorker } from "./support/rpc.js";

// The reference bundle leaves some packages out (wrangler.jsonc `alias`,
// reference/bundle-stubs/): each stand-in throws if it is ever reached. The
// specs run the real packages, so each spec here shows, against them, that the
// path which would reach a left-out package stays closed.

/** A WebSocket upgrade asking for the agents SDK's Cap'n Web transport (agents: `?__agents_transport=capnweb`). */
function capnWebUpgrade(url: string, init: { method?: string; token?: string; body?: string } = {}): Request {
  const headers: Record<string, string> = {
    Upgrade: "websocket",
    Connection: "Upgrade",
    "Sec-WebSocket-Version": "13",
    "Sec-WebSocket-Key": "dGhlIHNhbXBsZSBub25jZQ==",
  };
  if (init.token) Object.assign(headers, { Authorization: `Bearer ${init.token}`, "A2A-Version": "1.0", "Content-Type": "application/json" });
  const target = new URL(url);
  target.searchParams.set("__agents_transport", "capnweb");
  return new Request(target, { method: init.method ?? "GET", headers, body: init.body });
}

describe("capnweb (reference/bundle-stubs/capnweb.js)", () => {
  it("is what an object's fetch would start for the upgrade below: the control", async () => {
    const object = env.ASSISTANT.get(env.ASSISTANT.idFromName(`capnweb-control-${crypto.randomUUID()}`));
    const response = await object.fetch(capnWebUpgrade(`${ORIGIN}/a2a`));
    expect(response.status).toBe(101);
    response.webSocket?.accept();
    response.webSocket?.close(1000, "the control is done");
  });

  it("is never reached: the edge answers a WebSocket upgrade itself, on every path, and never forwards it to an object", async () => {
    using _ = interceptOutbound();
    const token = await mintToken();
    const edge = isolatedEdge();
    for (const worker of [edge.fetch, referenceWorker]) {
      for (const path of ["/a2a", "/", "/.well-known/agent-card.json", "/.well-known/jwks.json", "/agents/assistant/user-1"]) {
        const response = await worker(capnWebUpgrade(`${ORIGIN}${path}`, { token }));
        expect(response.status, path).not.toBe(101);
        expect(response.webSocket, path).toBeNull();
      }
    }
    expect(edge.doAccesses()).toBe(0);
    // A call the edge does hand to the caller's object goes by RPC: the upgrade headers change nothing.
    const call = await edge.fetch(
      capnWebUpgrade(`${ORIGIN}/a2a`, { method: "POST", token, body: rpcBody("GetTask", { id: "no-such-task" }, { tenant: "assistant" }) }),
    );
    expect(call.status).not.toBe(101);
    expect(call.webSocket).toBeNull();
    expect(await call.json()).toMatchObject({ jsonrpc: "2.0", error: { code: -32001 } });
  });
});
