import { Hono, type Context } from "hono";
import type { AgentManifest } from "../a2a/agent-manifest.js";
import { JWKS_PATH } from "../a2a/card-signing.js";
import { ErrorCode, RpcError } from "../a2a/errors.js";
import { loadGatekeeperOrigins } from "../a2a/gatekeeper-origins.js";
import { GatekeeperJwks } from "../a2a/gatekeeper-jwks.js";
import { parseJsonRpc } from "../a2a/jsonrpc.js";
import { loadPreviousPublicKeys } from "../a2a/previous-keys.js";
import { ConfigError, loadSigningKey } from "../a2a/signing-key.js";
import { TokenRefused, verifyGatekeeperToken } from "../a2a/verify-token.js";
import { CardCache } from "./card-cache.js";
import { callerObjectName } from "./caller-object.js";
import { dispatch } from "./dispatch.js";
import { cachedBody, serveCached, type CachedBody } from "./http-cache.js";
import type { A2AWorkerOptions, EdgeEnv, TaskAgentStub } from "./options.js";
import { readBodyWithin } from "./read-body.js";
import { loadPublicOrigin } from "./public-origin.js";
import { jsonRpcError, jsonRpcResult, misconfigured, misdirected, missingToken, refusedToken } from "./responses.js";

export const A2A_PATH = "/a2a";
export const CARD_PATH = "/.well-known/agent-card.json";
const DEFAULT_MAX_BODY = 2 * 1024 * 1024;
const CARD_MAX_AGE = 300;

/**
 * The zero-trust edge: the stub card, the JWKS, and JSON-RPC on `/a2a`.
 * Every POST is verified before its body is read and before any Durable
 * Object is addressed; state lives for the isolate (JWKS and card caches).
 * With `PUBLIC_ORIGIN` set, every route first refuses other hosts (421).
 */
export function createA2AWorker<Env extends EdgeEnv>(options: A2AWorkerOptions<Env>) {
  const tenantNames = Object.keys(options.tenants);
  if (tenantNames.length === 0) throw new Error("createA2AWorker: at least one tenant is required");
  const stub: AgentManifest = {
    ...options.deployment,
    description: `${options.deployment.description} Agents on this endpoint (send one as params.tenant; GetExtendedAgentCard returns its card): ${tenantNames.join(", ")}. Every call carries a gatekeeper-issued EdDSA bearer JWT whose aud is this endpoint and whose https://dynamicagents.dev/tenant claim equals params.tenant.`,
    skills: options.deployment.skills ?? [
      {
        id: "tenant-directory",
        name: "Tenant directory",
        description:
          "This endpoint serves several agents. Call GetExtendedAgentCard with params.tenant set to one of them to get that agent's signed card.",
        tags: ["directory"],
      },
    ],
  };
  const cards = new CardCache(stub, new Map(Object.entries(options.tenants).map(([name, t]) => [name, t.manifest])));
  const jwks = options.jwks instanceof GatekeeperJwks ? options.jwks : new GatekeeperJwks({ now: options.now, ...options.jwks });
  const jwksBodies = new Map<string, Promise<CachedBody>>();
  const maxBody = options.maxBodyBytes ?? DEFAULT_MAX_BODY;

  const app = new Hono<{ Bindings: Env; Variables: { origin: string } }>();

  // Before anything else, on every route: the origin everything signed names
  // (cards, `aud`, `jku`, the callback `iss`) is PUBLIC_ORIGIN when set, and a
  // request for another host (a forged Host) gets nothing verified or signed.
  app.use(async (c, next) => {
    const publicOrigin = loadPublicOrigin(c.env.PUBLIC_ORIGIN);
    const url = new URL(c.req.url);
    if (publicOrigin !== undefined && url.host !== new URL(publicOrigin).host) return misdirected(publicOrigin);
    c.set("origin", publicOrigin ?? url.origin);
    await next();
  });

  app.get(CARD_PATH, async (c) => {
    const key = await loadSigningKey(c.env.A2A_SIGNING_KEY);
    return serveCached(c.req.raw, await cards.stubCard(c.get("origin"), key), CARD_MAX_AGE);
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
    return serveCached(c.req.raw, await body, CARD_MAX_AGE);
  });

  app.post(A2A_PATH, (c) => handleJsonRpc(c));
  app.all(A2A_PATH, (c) => c.json({ error: "method_not_allowed", error_description: "POST JSON-RPC 2.0 here" }, 405, { Allow: "POST" }));
  app.notFound((c) => c.json({ error: "not_found", error_description: `No route for ${c.req.method} ${new URL(c.req.url).pathname}` }, 404));
  app.onError((error) => {
    if (error instanceof ConfigError) return misconfigured(error.message);
    console.error("a2a edge: unexpected error", error);
    return misconfigured("the server failed unexpectedly; see the Worker's logs");
  });

  async function handleJsonRpc(c: Context<{ Bindings: Env; Variables: { origin: string } }>): Promise<Response> {
    const request = c.req.raw;
    const origin = c.get("origin");
    const allowlist = loadGatekeeperOrigins(c.env.GATEKEEPER_ORIGINS);

    // 1. Who is calling — before the body is read and before any Durable Object exists for them.
    const authorization = request.headers.get("Authorization") ?? "";
    const match = /^Bearer[ ]+([^ ]+)[ ]*$/i.exec(authorization);
    if (!match) return missingToken();
    let caller;
    try {
      caller = await verifyGatekeeperToken(match[1]!, { allowlist, audience: `${origin}${A2A_PATH}`, jwks, now: options.now });
    } catch (error) {
      if (error instanceof TokenRefused) return refusedToken(error);
      throw error;
    }

    // 2. The envelope.
    const body = await readBodyWithin(request, maxBody);
    if (body === null) {
      return jsonRpcError(
        null,
        new RpcError(ErrorCode.INVALID_REQUEST, `Request body exceeds ${maxBody.toLocaleString("en-US")} bytes (message text itself is limited to 262,144 bytes)`),
        413,
      );
    }
    const parsed = parseJsonRpc(body);
    if (!parsed.ok) return jsonRpcError(parsed.id, parsed.error, 400);
    const { id, method, params } = parsed.call;

    // A2A §3.6.2: a request without the header is v0.3, which this server does not speak.
    const version = request.headers.get("A2A-Version")?.trim();
    if (version !== "1.0" && version !== "1") {
      return jsonRpcError(
        id,
        new RpcError(ErrorCode.VERSION_NOT_SUPPORTED, `A2A version ${version ? JSON.stringify(version) : "0.3 (no A2A-Version header)"} is not supported: send A2A-Version: 1.0`),
      );
    }

    // 3. The tenant the token was minted for is the only one this request may name.
    if (typeof params.tenant !== "string" || params.tenant === "") {
      return refusedToken(new TokenRefused("tenant-claim", "params.tenant is required and must equal the token's tenant claim"));
    }
    if (params.tenant !== caller.tenant) {
      return refusedToken(new TokenRefused("tenant-claim", "params.tenant differs from the token's tenant claim"));
    }
    const tenant = Object.hasOwn(options.tenants, caller.tenant) ? options.tenants[caller.tenant] : undefined;
    if (!tenant) {
      return jsonRpcError(id, new RpcError(ErrorCode.INVALID_PARAMS, `Unknown tenant ${JSON.stringify(caller.tenant)}: this deployment serves ${tenantNames.join(", ")}`), 404);
    }

    // 4. The method, against the caller's own Durable Object.
    let stub: TaskAgentStub | undefined;
    const agent = () => {
      if (!stub) {
        const namespace = tenant.agent(c.env);
        const name = callerObjectName({ gatekeeper: caller.issuer, tenant: caller.tenant, key: caller.identity.key });
        stub = namespace.get(namespace.idFromName(name)) as unknown as TaskAgentStub;
      }
      return stub;
    };
    try {
      const result = await dispatch(method, params, {
        tenant: caller.tenant,
        origin,
        allowlist,
        agent,
        signingKey: () => loadSigningKey(c.env.A2A_SIGNING_KEY),
        cards,
      });
      return jsonRpcResult(id, result);
    } catch (error) {
      if (error instanceof RpcError) return jsonRpcError(id, error);
      if (error instanceof ConfigError) return misconfigured(error.message);
      console.error(`a2a edge: ${method} failed`, error);
      return jsonRpcError(id, new RpcError(ErrorCode.INTERNAL_ERROR, `Internal error while handling ${method}`));
    }
  }

  return { fetch: app.fetch } satisfies ExportedHandler<Env>;
}
