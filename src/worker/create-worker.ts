// The PatternRouter preset: a few fixed paths need no faster router, and it is the smallest (scripts/check/bundle-size.mjs).
import { Hono } from "hono/tiny";
import type { Handler } from "hono";
import { etag } from "hono/etag";
import { agentStartFailed } from "../a2a/errors.js";
import { GatekeeperJwks } from "../a2a/gatekeeper-jwks.js";
import { loadGatekeeperOrigins } from "../a2a/gatekeeper-origins.js";
import { cardInputModes } from "../a2a/parts.js";
import { loadPreviousPublicKeys } from "../a2a/previous-keys.js";
import { loadSigningKey } from "../a2a/signing-key.js";
import { TRACEPARENT_HEADER, TRACESTATE_HEADER, traceOfRequest } from "../a2a/trace-context.js";
import { A2A_PATH, A2A_REST_PATH, CARD_PATH, JWKS_PATH } from "../a2a/wire.js";
import { ConfigError } from "../errors/index.js";
import { CardCache } from "./card-cache.js";
import { objectPerCaller } from "./caller-object.js";
import type { EdgeHono } from "./context.js";
import { dispatch } from "./dispatch.js";
import { errorResponse } from "./error-response.js";
import { EventStream, sseResponse } from "./event-stream.js";
import { extensionsStep } from "./extensions.js";
import { cachedBody, cachedResponse, lastModifiedOf, notModifiedSince, RETAINED_ON_304, type CachedBody } from "./http-cache.js";
import type { CallerObject } from "../boundary/index.js";
import { jsonRpcStep } from "./jsonrpc-binding.js";
import type { A2AWorkerOptions, EdgeEnv } from "./options.js";
import { hostStep } from "./public-origin.js";
import { rateLimitStep } from "./rate-limit.js";
import { bodyLimitStep, contentTypeStep, envelopeStep, knownTenantStep, versionStep } from "./request-steps.js";
import { methodNotAllowed, notFound } from "./responses.js";
import { restRouteStep } from "./rest-binding.js";
import { startInBackground, startOnTurnWorkflow } from "./start-turn.js";
import { tenantClaimStep, tokenStep } from "./token-steps.js";

const DEFAULT_MAX_BODY = 2 * 1024 * 1024;
const CARD_MAX_AGE = 300;
/** The longest period a Workers rate-limiting binding counts over. */
const DEFAULT_RATE_LIMIT_RETRY_AFTER = 60;
/** Streams show they are open at most 15 s apart (docs/protocol.md "Streams"); 10 s leaves room for timer and network delay. */
const DEFAULT_STREAM_HEARTBEAT_MS = 10_000;
const MAX_STREAM_HEARTBEAT_MS = 15_000;
/** The gatekeeper key sets' longest cache age: a revoked key's open streams end no later than its new calls are refused. */
const DEFAULT_STREAM_MAX_LIFETIME_MS = 10 * 60_000;

/**
 * The zero-trust edge: the stub card, the JWKS, JSON-RPC on `/a2a` and
 * HTTP+JSON under `/a2a/rest`, their steps registered in the order of
 * docs/protocol.md "The edge, in order", so each refuses before the next
 * runs and no Durable Object is addressed before the method. State lives for
 * the isolate (JWKS and card caches).
 */
export function createA2AWorker<Env extends EdgeEnv>(options: A2AWorkerOptions<Env>) {
  const tenantNames = Object.keys(options.tenants);
  if (tenantNames.length === 0) {
    throw new ConfigError({ kind: "manifest", name: "tenants" }, "createA2AWorker: at least one tenant is required", { code: ConfigError.MISSING });
  }
  const cards = new CardCache(options.deployment, new Map(Object.entries(options.tenants).map(([name, t]) => [name, t.manifest])));
  const jwks = options.jwks instanceof GatekeeperJwks ? options.jwks : new GatekeeperJwks({ now: options.now, ...options.jwks });
  const jwksBodies = new Map<string, Promise<CachedBody>>();
  const resolveAgent = options.resolveAgent ?? objectPerCaller(options.tenants);
  const startTurn = options.startTurn ?? startOnTurnWorkflow;
  const now = options.now ?? Date.now;
  const heartbeatMs = positiveSetting("streamHeartbeatMs", options.streamHeartbeatMs ?? DEFAULT_STREAM_HEARTBEAT_MS, MAX_STREAM_HEARTBEAT_MS);
  const maxLifetimeMs = positiveSetting("streamMaxLifetimeMs", options.streamMaxLifetimeMs ?? DEFAULT_STREAM_MAX_LIFETIME_MS);

  const app = new Hono<EdgeHono<Env>>();
  app.use(hostStep<Env>());

  // Conditional GETs against the validators each handler sets, both the same
  // in every isolate: If-None-Match by hono's etag() (the body hash), and
  // If-Modified-Since, outside it, only when If-None-Match is absent.
  for (const path of [CARD_PATH, JWKS_PATH]) {
    app.use(path, notModifiedSince());
    app.use(path, etag({ retainedHeaders: [...RETAINED_ON_304] }));
  }

  app.get(CARD_PATH, async (c) => {
    const key = await loadSigningKey(c.env.A2A_SIGNING_KEY);
    return cachedResponse(await cards.stubCard(c.get("origin"), key), CARD_MAX_AGE, lastModifiedOf(c.env, key.kid));
  });

  app.get(JWKS_PATH, async (c) => {
    const key = await loadSigningKey(c.env.A2A_SIGNING_KEY);
    const previous = c.env.A2A_PREVIOUS_PUBLIC_KEYS;
    const cacheKey = JSON.stringify([key.kid, key.publicJwk.x, previous ?? null]);
    let body = jwksBodies.get(cacheKey);
    if (!body) {
      // The current key first: it is the one that signs.
      body = loadPreviousPublicKeys(previous, key.kid).then((keys) => cachedBody({ keys: [key.publicJwk, ...keys] }));
      jwksBodies.set(cacheKey, body);
    }
    return cachedResponse(await body, CARD_MAX_AGE, lastModifiedOf(c.env, key.kid));
  });

  // Steps 3 to 9, one chain serving both bindings: each step asks the
  // request's binding (set before it) how to read the request and answer it.
  const steps = [
    contentTypeStep<Env>(),
    bodyLimitStep<Env>(options.maxBodyBytes ?? DEFAULT_MAX_BODY),
    versionStep<Env>(),
    envelopeStep<Env>(),
    tenantClaimStep<Env>(),
    rateLimitStep<Env>({
      limiter: options.rateLimiter ?? ((env) => env.A2A_RATE_LIMITER),
      retryAfterSeconds: Math.max(1, Math.ceil(options.rateLimitRetryAfterSeconds ?? DEFAULT_RATE_LIMIT_RETRY_AFTER)),
    }),
    knownTenantStep<Env>(options.tenants),
  ];
  const token = tokenStep<Env>({ jwks, now: options.now });
  // First on both bindings: every answer, a refusal too, echoes the extensions its request activated.
  const extensions = extensionsStep<Env>();
  const answer: Handler<EdgeHono<Env>> = async (c) => {
    const call = c.get("call");
    const caller = c.get("caller");
    let stub: CallerObject | undefined;
    const agent = (fresh = false) => {
      try {
        if (fresh) stub = undefined;
        return (stub ??= resolveAgent(caller, caller.tenant, c.env));
      } catch (error) {
        // The deployment is fine; this tenant's agent is not.
        if (error instanceof ConfigError) throw agentStartFailed(caller.tenant, error);
        throw error;
      }
    };
    const result = await dispatch(call.method, call.params(), {
      tenant: caller.tenant,
      origin: c.get("origin"),
      caller: { key: caller.identity.key, gatekeeper: caller.issuer, ...(caller.identity.name ? { name: caller.identity.name } : {}) },
      allowlist: loadGatekeeperOrigins(c.env.GATEKEEPER_ORIGINS),
      inputModes: cardInputModes(options.tenants[caller.tenant]?.manifest.defaultInputModes),
      agent,
      startTurn: (turn) => startInBackground(c.executionCtx, turn, () => startTurn(turn, c.env)),
      signingKey: () => loadSigningKey(c.env.A2A_SIGNING_KEY),
      cards,
      lastEventId: c.req.header("Last-Event-ID"),
      progress: c.get("progress"),
      // A malformed one is ignored, never refused (docs/telemetry.md "Trace context").
      trace: traceOfRequest(c.req.header(TRACEPARENT_HEADER), c.req.header(TRACESTATE_HEADER)),
    });
    const binding = c.get("binding");
    if (result instanceof EventStream) {
      const timing = { heartbeatMs, maxLifetimeMs, tokenExp: caller.claims.exp!, now };
      return sseResponse(
        c,
        (eventJson) => binding.eventData(call, eventJson),
        result,
        timing,
        (promise) => c.executionCtx.waitUntil(promise),
      );
    }
    return binding.result(call, result);
  };

  // hono runs each route's handlers as one chain, in order, and a step that
  // throws ends it (onError answers). JSON-RPC: `/a2a`, which hono/tiny's
  // PatternRouter also matches with a trailing slash (`/a2a/`, as clients
  // append the slash to the interface URL, docs/protocol.md "Wire").
  // HTTP+JSON: every path under `/a2a/rest`, whose route step (404, 405)
  // comes right after the token.
  app.post(A2A_PATH, extensions, jsonRpcStep<Env>(), token, ...steps, answer);
  app.all(`${A2A_REST_PATH}/*`, extensions, token, restRouteStep<Env>(), ...steps, answer);
  app.all(A2A_PATH, () => methodNotAllowed());
  app.notFound((c) => notFound(c.req.method, new URL(c.req.url).pathname));
  app.onError(errorResponse);

  return { fetch: app.fetch } satisfies ExportedHandler<Env>;
}

/** A duration option in milliseconds: a positive number, at most `max`. */
function positiveSetting(name: string, value: number, max?: number): number {
  if (!(Number.isFinite(value) && value > 0 && value <= (max ?? Infinity))) {
    const most = max === undefined ? "" : `, at most ${max}`;
    throw new ConfigError({ kind: "setting", name }, `createA2AWorker: ${name} must be a positive number of milliseconds${most}`);
  }
  return value;
}
