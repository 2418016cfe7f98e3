import { vi } from "vitest";
import { GATEKEEPER_JWKS } from "./constants.js";
import { gatekeeperKey } from "./gatekeeper.js";

export interface Outbound {
  /** Every request the code under test sent out, in order. */
  requests: Request[];
  /** What the gatekeeper's JWKS endpoint currently serves. */
  jwks: { keys: unknown[] };
  /** Responses for push URLs, by URL; default 200. */
  pushReplies: Map<string, () => Response>;
  restore(): void;
  [Symbol.dispose](): void;
}

/**
 * Replaces the network for one spec: the simulated gatekeeper's JWKS is
 * served, push URLs answer 200 unless told otherwise, and anything else fails
 * like an unreachable host. Every request is recorded so a spec can assert
 * that none was made.
 */
export function interceptOutbound(): Outbound {
  const outbound: Outbound = {
    requests: [],
    jwks: { keys: [gatekeeperKey.publicJwk] },
    pushReplies: new Map(),
    restore: () => spy.mockRestore(),
    [Symbol.dispose]: () => spy.mockRestore(),
  };
  const spy = vi.spyOn(globalThis, "fetch").mockImplementation(async (input, init) => {
    const request = new Request(input as RequestInfo, init);
    outbound.requests.push(request.clone());
    if (request.url === GATEKEEPER_JWKS) {
      return new Response(JSON.stringify(outbound.jwks), { headers: { "Content-Type": "application/json" } });
    }
    const reply = outbound.pushReplies.get(request.url);
    if (reply) return reply();
    throw new TypeError(`network blocked in tests: ${request.method} ${request.url}`);
  });
  return outbound;
}
