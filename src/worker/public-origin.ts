import { createMiddleware } from "hono/factory";
import { parseOrigin } from "../a2a/gatekeeper-origins.js";
import { loadTestClock } from "../a2a/test-clock.js";
import { ConfigError } from "../errors/index.js";
import type { EdgeHono } from "./context.js";
import { emitAtEdge } from "./edge-events.js";
import type { EdgeEnv } from "./options.js";
import { misdirected } from "./responses.js";

const cache = new Map<string, string | ConfigError>();

/**
 * Parses `PUBLIC_ORIGIN` once per isolate: the deployment's one public origin,
 * `https://…` (or `http://` on a loopback host). `undefined` when unset (or
 * empty): the edge then uses each request's own origin, as in local work.
 */
function loadPublicOrigin(raw: string | undefined): string | undefined {
  if (raw === undefined || raw.trim() === "") return undefined;
  let parsed = cache.get(raw);
  if (parsed === undefined) {
    try {
      parsed = parseOrigin(raw.trim(), "PUBLIC_ORIGIN", { kind: "setting", name: "PUBLIC_ORIGIN" });
    } catch (error) {
      if (!(error instanceof ConfigError)) throw error;
      parsed = error;
    }
    cache.set(raw, parsed);
  }
  if (parsed instanceof ConfigError) throw parsed;
  return parsed;
}

/**
 * Step 1, before anything else and on every route (docs/protocol.md "The
 * edge, in order"): the origin everything signed names (cards, `aud`, `jku`,
 * the callback `iss`) is PUBLIC_ORIGIN when set, and a request for another
 * host (a forged Host) gets 421 with nothing verified or signed. Before it, a
 * deployment off loopback with a test clock set answers every request with
 * its misconfiguration (docs/gatekeeper.md "Test clocks").
 */
export const hostStep = <Env extends EdgeEnv>() =>
  createMiddleware<EdgeHono<Env>>(async (c, next) => {
    loadTestClock(c.env);
    const publicOrigin = loadPublicOrigin(c.env.PUBLIC_ORIGIN);
    const url = new URL(c.req.url);
    if (publicOrigin !== undefined && url.host !== new URL(publicOrigin).host) {
      emitAtEdge(c, "edge.refused", { check: "host", status: 421, code: 0 });
      return misdirected(publicOrigin);
    }
    c.set("origin", publicOrigin ?? url.origin);
    await next();
  });
