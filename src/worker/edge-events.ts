import type { Context } from "hono";
import type { VerifiedCaller } from "../a2a/verify-token.js";
import { analyticsSink, callerHash, jsonLogSink, Telemetry, type EventCatalogue, type EventScope } from "../telemetry/index.js";
import type { EdgeEvents, EdgeHono } from "./context.js";
import type { EdgeEnv } from "./options.js";

type EdgeContext<Env extends EdgeEnv> = Context<EdgeHono<Env>>;

/** The events the edge emits (docs/telemetry.md). */
type EdgeEventName = "edge.refused" | "quota.exceeded";

/**
 * The verified caller's hash, once per request: the `caller` of its events
 * and the rate limit's key. Only ever asked for after the token verified.
 */
export function callerHashOf<Env extends EdgeEnv>(c: EdgeContext<Env>): Promise<string | undefined> {
  let hash = c.get("callerHash");
  if (!hash) {
    const caller = c.get("caller");
    hash = callerHash(c.env.A2A_SIGNING_KEY, { gatekeeper: caller.issuer, tenant: caller.tenant, key: caller.identity.key });
    c.set("callerHash", hash);
  }
  return hash;
}

function eventsOf<Env extends EdgeEnv>(c: EdgeContext<Env>): EdgeEvents {
  let events = c.get("events");
  if (!events) {
    const sinks = c.env.A2A_ANALYTICS ? [jsonLogSink, analyticsSink(c.env.A2A_ANALYTICS)] : [jsonLogSink];
    events = { telemetry: new Telemetry({ sinks, secrets: [c.env.A2A_SIGNING_KEY, c.env.OPENAI_API_KEY] }), requestId: crypto.randomUUID() };
    c.set("events", events);
  }
  return events;
}

/**
 * Emits one of the edge's events past the response: nothing here is awaited
 * by the request, and `waitUntil` keeps the isolate for the flush. The scope
 * is the token's tenant and the caller's hash once the token verified,
 * nothing before; never the identity or the token.
 */
export function emitAtEdge<Env extends EdgeEnv, N extends EdgeEventName>(c: EdgeContext<Env>, name: N, data: EventCatalogue[N]): void {
  const { telemetry, requestId } = eventsOf(c);
  // Unset until step 2 verified the token (hono's typing says otherwise).
  const caller = c.get("caller") as VerifiedCaller | undefined;
  const emitted = (async () => {
    let scope: EventScope = {};
    if (caller) {
      const hash = await callerHashOf(c);
      scope = { tenant: caller.tenant, ...(hash === undefined ? {} : { caller: hash }) };
    }
    await telemetry.emit(name, scope, data, [requestId]);
  })();
  try {
    c.executionCtx.waitUntil(emitted);
  } catch {
    // No ExecutionContext (the app called directly): the emit runs on regardless.
  }
}
