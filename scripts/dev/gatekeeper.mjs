// The local dev gatekeeper: the one party the agents trust, run on your machine.
//
//   - It has its own Ed25519 key (created on first run, kept in its state
//     folder) and serves the public half at /.well-known/jwks.json; the Worker
//     fetches it there, because the tokens name it in `jku`.
//   - It mints the bearer token of every A2A call (docs/protocol.md, "The
//     gatekeeper token"): tenant and identity claims, `aud` = the agent's exact
//     endpoint, a few minutes to live.
//   - It registers agents: fetches the stub card, verifies its signature and
//     pins the card key (`jku`, `kid` and the key itself) on first sight. A
//     later card signed with anything else is refused, loudly, naming what
//     changed. Tenants are registered by their signed extended card, which must
//     verify against the same pinned key.
//   - It receives pushes at /a2a/notifications and accepts one only after the
//     callback JWT verified against the pinned key (alg, kid, jku, iss, aud =
//     this URL, iat/exp at most five minutes apart) and the notification token
//     is one it issued, for that agent and that task. Anything else is 401.
//   - Each call it makes carries a W3C `traceparent` of a trace of its own
//     (docs/telemetry.md "Trace context"): the turn a send starts is that
//     trace, and its pushes come back naming it.
import { EventEmitter } from "node:events";
import { createServer } from "node:http";
import { verifyAgentCardSignature } from "@a2a-js/sdk";
import { decodeJwt, decodeProtectedHeader, errors as joseErrors, jwtVerify } from "jose";
import { TRACEPARENT_HEADER, freshTraceparent, traceOfRequest } from "../../src/a2a/trace-context.ts";
import { A2A_JSON, CALLBACK_TTL_SECONDS, CARD_PATH, JWKS_PATH, NOTIFICATION_TOKEN_HEADER, TASK_CLAIM, jwksUrlOf } from "../../src/a2a/wire.ts";
import { makeGatekeeperToken } from "../../src/testing/gatekeeper-token.ts";
import { postRpc, rpcBody } from "../../src/testing/rpc-client.ts";
import { NotificationTokens, PinStore, loadOrCreateGatekeeperKey, pinnedKey, thumbprintOf } from "./gatekeeper-state.mjs";
import { BodyTooLarge, closeServer, listen, readBody, sendJson } from "./http.mjs";

/** Where this gatekeeper takes pushes: the `url` of every push config it sends. */
export const NOTIFY_PATH = "/a2a/notifications";
const CLOCK_TOLERANCE_S = 5;
const MAX_PUSH_BODY = 4 * 1024 * 1024;
const FETCH_TIMEOUT_MS = 10_000;
const SEEN_LIMIT = 10_000;

/** The agent presented a card key other than the one pinned on first use. */
export class PinMismatch extends Error {
  name = "PinMismatch";
  /**
   * @param {{ origin: string, pinned: import("./gatekeeper-state.mjs").Pin, presented: { jku?: string, kid?: string, x?: string, thumbprint?: string }, changes: string[], pinsFile: string, unpinHint: string }} details
   */
  constructor(details) {
    super(describeMismatch(details));
    Object.assign(this, details);
  }
}

/** Registration failed for a reason other than a changed key (unreachable, unsigned, forged…). */
export class RegistrationFailed extends Error {
  name = "RegistrationFailed";
}

/** Why a push was refused; `check` names the check, as in the 401 body. */
class PushRefused extends Error {
  name = "PushRefused";
  constructor(check, message, status = 401) {
    super(message);
    this.check = check;
    this.status = status;
  }
}

/**
 * Starts the dev gatekeeper on 127.0.0.1:`port` (0 for any free port).
 * Events: `push` ({ agent, tenant, identityKey, kind, taskId, state, body })
 * for every accepted, non-duplicate push; `refused` ({ check, message }) for
 * every refused one.
 * @param {{ stateDir: string, port: number, unpinHint?: string }} options
 *   `unpinHint`: the command that forgets a pin, quoted in a {@link PinMismatch}.
 */
export async function startGatekeeper({ stateDir, port, unpinHint = "npm start -- --unpin" }) {
  const key = await loadOrCreateGatekeeperKey(stateDir);
  const pins = new PinStore(stateDir);
  const tokens = new NotificationTokens(stateDir);
  const events = new EventEmitter();
  /** Agents registered in this run: origin → { endpoint, tenants: Map<name, card> }. */
  const agents = new Map();
  /** Dedupe of at-least-once delivery: task id + state (or status message). */
  const seen = new Set();
  // Callback tokens already used, until they expire: a replayed one is refused.
  const usedJtis = new Map();
  const jwksBody = { keys: [key.publicJwk] };
  /** Pages served beside the gatekeeper's own routes (the dev console): path prefix → handler. */
  /** @type {Map<string, (req: import("node:http").IncomingMessage, res: import("node:http").ServerResponse, path: string) => Promise<void> | void>} */
  const mounts = new Map();

  const server = createServer((req, res) => {
    route(req, res).catch((error) => {
      if (!res.headersSent) sendJson(res, 500, { error: "server_error", error_description: error.message });
      else res.destroy();
    });
  });
  const bound = await listen(server, port, "the dev gatekeeper", "choose another with --gatekeeper-port or GATEKEEPER_PORT");
  const origin = `http://127.0.0.1:${bound}`;
  const jwksUrl = jwksUrlOf(origin);
  const pushUrl = `${origin}${NOTIFY_PATH}`;

  async function route(req, res) {
    const path = new URL(req.url ?? "/", origin).pathname;
    if (path === JWKS_PATH && (req.method === "GET" || req.method === "HEAD")) {
      return sendJson(res, 200, jwksBody, { "Cache-Control": "max-age=60" });
    }
    if (path === NOTIFY_PATH) {
      if (req.method !== "POST") return sendJson(res, 405, { error: "method_not_allowed" }, { Allow: "POST" });
      return receivePush(req, res);
    }
    for (const [prefix, handler] of mounts) if (path === prefix || path.startsWith(`${prefix}/`)) return handler(req, res, path);
    return sendJson(res, 404, { error: "not_found", error_description: `No route for ${req.method} ${path}` });
  }

  async function receivePush(req, res) {
    let accepted;
    try {
      accepted = await verifyPush(req);
    } catch (error) {
      if (!(error instanceof PushRefused)) throw error;
      events.emit("refused", { check: error.check, message: error.message });
      /** @type {Record<string, string>} */
      const headers =
        error.status === 401 ? { "WWW-Authenticate": `Bearer error="invalid_token", error_description="${error.message.replace(/["\\]/g, "'")}"` } : {};
      if (error.check === "body-size") headers.Connection = "close";
      return sendJson(
        res,
        error.status,
        { error: error.status === 401 ? "invalid_token" : "invalid_request", check: error.check, error_description: error.message },
        headers,
      );
    }
    // A retried delivery (our 200 got lost) is answered 200 again but not shown twice.
    const duplicate = seen.has(accepted.dedupeKey);
    if (!duplicate) {
      seen.add(accepted.dedupeKey);
      if (seen.size > SEEN_LIMIT) seen.delete(seen.values().next().value);
      const { dedupeKey: _unused, ...push } = accepted;
      events.emit("push", push);
    }
    return sendJson(res, 200, { ok: true, duplicate });
  }

  /**
   * Every check, in order, before anything in the push is believed.
   * @param {import("node:http").IncomingMessage} req
   */
  async function verifyPush(req) {
    // 1. The callback JWT, before the body is read.
    const match = /^Bearer +(\S+) *$/i.exec(req.headers.authorization ?? "");
    if (!match) throw new PushRefused("bearer", "the push carries no `Authorization: Bearer` callback token");
    const token = match[1];
    let header;
    let unverified;
    try {
      header = decodeProtectedHeader(token);
      unverified = decodeJwt(token);
    } catch {
      throw new PushRefused("bearer", "the callback token is not a well-formed JWT");
    }
    const issOrigin = originOf(unverified.iss);
    const pin = issOrigin ? pins.get(issOrigin) : undefined;
    if (!pin) throw new PushRefused("iss", `the callback token's iss ${JSON.stringify(unverified.iss)} is not an agent this gatekeeper has registered`);
    if (unverified.iss !== pin.origin) throw new PushRefused("iss", `the callback token's iss must be exactly ${pin.origin}`);
    if (header.alg !== "EdDSA") throw new PushRefused("alg", `the callback token's alg must be EdDSA, got ${JSON.stringify(header.alg)}`);
    if (header.kid !== pin.kid)
      throw new PushRefused("kid", `the callback token's kid ${JSON.stringify(header.kid)} is not the pinned kid ${JSON.stringify(pin.kid)}`);
    if (header.jku !== pin.jku)
      throw new PushRefused("jku", `the callback token's jku ${JSON.stringify(header.jku)} is not the pinned jku ${JSON.stringify(pin.jku)}`);
    let payload;
    try {
      ({ payload } = await jwtVerify(token, await pinnedKey(pin), {
        algorithms: ["EdDSA"],
        issuer: pin.origin,
        audience: pushUrl,
        requiredClaims: ["iss", "aud", "iat", "exp", "jti", TASK_CLAIM],
        maxTokenAge: CALLBACK_TTL_SECONDS,
        clockTolerance: CLOCK_TOLERANCE_S,
      }));
    } catch (error) {
      throw refusedJwt(error, pushUrl);
    }
    if (/** @type {number} */ (payload.exp) - /** @type {number} */ (payload.iat) > CALLBACK_TTL_SECONDS) {
      throw new PushRefused("exp", `the callback token lives ${payload.exp - payload.iat} s: at most ${CALLBACK_TTL_SECONDS} s is allowed`);
    }

    // 2. The notification token: one this gatekeeper issued, to this agent.
    const notificationToken = req.headers[NOTIFICATION_TOKEN_HEADER];
    if (typeof notificationToken !== "string" || notificationToken === "") {
      throw new PushRefused("notification-token", `the push carries no ${NOTIFICATION_TOKEN_HEADER}`);
    }
    const record = tokens.lookup(notificationToken);
    if (!record || record.agent !== pin.origin) {
      throw new PushRefused("notification-token", `the ${NOTIFICATION_TOKEN_HEADER} is not one this gatekeeper issued to this agent`);
    }

    // 3. Only now the body.
    const contentType = String(req.headers["content-type"] ?? "")
      .split(";")[0]
      .trim()
      .toLowerCase();
    if (contentType !== A2A_JSON && contentType !== "application/json") {
      throw new PushRefused("content-type", `a push is ${A2A_JSON}, got ${JSON.stringify(contentType)}`, 415);
    }
    let body;
    try {
      body = JSON.parse(await readBody(req, MAX_PUSH_BODY));
    } catch (error) {
      if (error instanceof BodyTooLarge) throw new PushRefused("body-size", error.message, 413);
      throw new PushRefused("body", "the push body is not JSON", 400);
    }
    const { kind, taskId, state, dedupeKey } = describePush(body);
    if (!kind) throw new PushRefused("body", "a push body is a StreamResponse: {task} or {statusUpdate}", 400);
    if (!taskId) throw new PushRefused("body", "the pushed task has no id", 400);
    // 4. The callback token is about this very task, and used once.
    if (payload[TASK_CLAIM] !== taskId) throw new PushRefused("task", "the callback token was signed for another task than the pushed one");
    const now = Math.floor(Date.now() / 1000);
    for (const [jti, exp] of usedJtis) if (exp + CLOCK_TOLERANCE_S < now) usedJtis.delete(jti);
    if (usedJtis.has(payload.jti)) throw new PushRefused("jti", "the callback token was used before: a replay");
    usedJtis.set(payload.jti, /** @type {number} */ (payload.exp));
    // 5. A notification token is good for the one task it was first used for.
    if (!tokens.bind(notificationToken, taskId)) {
      throw new PushRefused("notification-token", `the ${NOTIFICATION_TOKEN_HEADER} was issued for another task`);
    }
    // The trace the push names: the one this gatekeeper's send started.
    const traceparent = req.headers[TRACEPARENT_HEADER];
    const traceId = typeof traceparent === "string" ? traceOfRequest(traceparent)?.traceId : undefined;
    const { tenant, identityKey, messageId } = record;
    return { agent: pin.origin, tenant, identityKey, messageId, kind, taskId, state, body, dedupeKey, ...(traceId ? { traceId } : {}) };
  }

  /**
   * A gatekeeper token for one call to an agent (docs/protocol.md "The gatekeeper token").
   * @param {{ audience: string, tenant: string, identity: { key: string, name?: string, kind?: string, workspaceId?: string }, ttlSeconds?: number }} options
   */
  function mint({ audience, tenant, identity, ttlSeconds = 300 }) {
    if (typeof tenant !== "string" || tenant === "") throw new TypeError("mint: a tenant is required (a token without one is refused)");
    if (!identity || typeof identity.key !== "string" || identity.key === "") throw new TypeError("mint: identity.key is required");
    return makeGatekeeperToken({ key, gatekeeper: origin, endpoint: audience, tenant, identity, expiresIn: ttlSeconds });
  }

  /**
   * Fetches an agent's stub card, verifies it and pins its key on first sight.
   * Throws {@link PinMismatch} when the key differs from the pinned one.
   * @param {string} agentUrl  the agent's origin (or any URL on it)
   */
  async function registerAgent(agentUrl) {
    const agentOrigin = new URL(agentUrl).origin;
    const cardUrl = `${agentOrigin}${CARD_PATH}`;
    const card = await fetchJson(cardUrl, "the agent's stub card");
    const { header } = cardSignatureOn(card, agentOrigin, cardUrl);
    const pinned = pins.get(agentOrigin);
    let pin = pinned;
    let firstSight = false;
    if (pinned) {
      await verifyAgainstPin(card, header, pinned, cardUrl);
    } else {
      const presented = await fetchCardKey(header);
      await verifyCard(card, presented.key, cardUrl);
      pin = {
        origin: agentOrigin,
        jku: header.jku,
        kid: header.kid,
        x: presented.x,
        thumbprint: await thumbprintOf(presented.x),
        pinnedAt: new Date().toISOString(),
        name: typeof card.name === "string" ? card.name : undefined,
      };
      pins.set(pin);
      firstSight = true;
    }
    const endpoint = jsonRpcEndpoint(card, agentOrigin, cardUrl);
    const agent = { origin: agentOrigin, endpoint, pin: /** @type {import("./gatekeeper-state.mjs").Pin} */ (pin), firstSight, card, tenants: new Map() };
    agents.set(agentOrigin, agent);
    return agent;
  }

  /**
   * Registers one tenant of a registered agent: its signed extended card,
   * fetched with a token for that tenant, must verify against the pinned key.
   * @param {string} agentOrigin
   * @param {string} tenant
   * @param {{ key: string }} identity  who asks (any identity may read a card)
   */
  async function registerTenant(agentOrigin, tenant, identity) {
    const agent = agents.get(agentOrigin);
    if (!agent) throw new RegistrationFailed(`register the agent at ${agentOrigin} before its tenants`);
    const reply = await jsonRpc(agent.endpoint, await mint({ audience: agent.endpoint, tenant, identity, ttlSeconds: 60 }), "GetExtendedAgentCard", { tenant });
    if (reply.error)
      throw new RegistrationFailed(`GetExtendedAgentCard for tenant ${JSON.stringify(tenant)} failed: ${reply.error.message} (${reply.error.code})`);
    const card = reply.result;
    const where = `${tenant}'s extended card`;
    const { header } = cardSignatureOn(card, agent.origin, where);
    await verifyAgainstPin(card, header, agent.pin, where);
    const names = (card.supportedInterfaces ?? []).map((i) => i.tenant);
    if (!names.includes(tenant)) throw new RegistrationFailed(`${where} names tenant(s) ${JSON.stringify(names)}, not ${JSON.stringify(tenant)}`);
    agent.tenants.set(tenant, card);
    return { tenant, card };
  }

  /** Verifies a card against a pin; a different jku, kid or key is a {@link PinMismatch}. */
  async function verifyAgainstPin(card, header, pin, where) {
    const changes = [];
    if (header.jku !== pin.jku) changes.push(`jku ${pin.jku} → ${header.jku}`);
    if (header.kid !== pin.kid) changes.push(`kid ${pin.kid} → ${header.kid}`);
    if (changes.length === 0) {
      try {
        await verifyCard(card, await pinnedKey(pin), where);
        return;
      } catch (error) {
        if (!(error instanceof RegistrationFailed)) throw error;
        // Same jku and kid, yet the pinned key does not verify: find out whether the key changed.
      }
    }
    const presented = await fetchCardKey(header).catch(() => undefined);
    if (presented && presented.x !== pin.x) changes.push(`public key ${pin.thumbprint} → ${await thumbprintOf(presented.x)} (RFC 7638 thumbprints)`);
    if (changes.length === 0) {
      throw new RegistrationFailed(
        `${where} does not verify against the key pinned for ${pin.origin} (kid ${pin.kid}), although the agent still publishes that key: the card was altered`,
      );
    }
    throw new PinMismatch({
      origin: pin.origin,
      pinned: pin,
      presented: { jku: header.jku, kid: header.kid, x: presented?.x, thumbprint: presented ? await thumbprintOf(presented.x) : undefined },
      changes,
      pinsFile: pins.file,
      unpinHint,
    });
  }

  return {
    origin,
    port: bound,
    jwksUrl,
    pushUrl,
    kid: key.kid,
    keyCreated: key.created,
    stateDir,
    pinsFile: pins.file,
    events,
    mint,
    registerAgent,
    registerTenant,
    /** The registered agent at `origin`, with its endpoint and tenants' cards. */
    agent: (agentOrigin) => agents.get(agentOrigin),
    /** Forgets the pin of an agent origin (after you changed its key on purpose). */
    unpin: (agentOrigin) => pins.delete(new URL(agentOrigin).origin),
    pinOf: (agentOrigin) => pins.get(new URL(agentOrigin).origin),
    /** A notification token for one SendMessage of `tenant` by `identityKey` to `agent`. */
    issueNotificationToken: (record) => tokens.issue(record),
    /** Ties a token to the task SendMessage returned (a push may also bind it first). */
    bindNotificationToken: (token, taskId) => tokens.bind(token, taskId),
    /**
     * Serves `prefix` and everything under it with `handler`, on this gatekeeper's own
     * loopback port (the dev console). The gatekeeper's routes come first.
     * @param {string} prefix
     * @param {(req: import("node:http").IncomingMessage, res: import("node:http").ServerResponse, path: string) => Promise<void> | void} handler
     */
    mount: (prefix, handler) => void mounts.set(prefix, handler),
    close: () => closeServer(server),
  };
}

/** The stub card's signature whose key lives on the agent's own origin. */
function cardSignatureOn(card, agentOrigin, where) {
  if (!card || typeof card !== "object" || !Array.isArray(card.signatures) || card.signatures.length === 0) {
    throw new RegistrationFailed(`${where} is not signed: a card this gatekeeper registers must carry a JWS signature`);
  }
  for (const signature of card.signatures) {
    let header;
    try {
      header = decodeProtectedHeader(signature);
    } catch {
      continue;
    }
    if (header.alg === "EdDSA" && typeof header.kid === "string" && typeof header.jku === "string" && originOf(header.jku) === agentOrigin) {
      return { signature, header };
    }
  }
  throw new RegistrationFailed(`${where} has no EdDSA signature with a kid and a jku on ${agentOrigin}`);
}

/** The Ed25519 key a card header names, fetched from its `jku`. */
async function fetchCardKey(header) {
  const jwks = await fetchJson(header.jku, "the agent's JWKS");
  const jwk = (Array.isArray(jwks?.keys) ? jwks.keys : []).find((k) => k && k.kid === header.kid);
  if (!jwk) throw new RegistrationFailed(`the agent's JWKS at ${header.jku} has no key with kid ${JSON.stringify(header.kid)}`);
  if (jwk.kty !== "OKP" || jwk.crv !== "Ed25519" || typeof jwk.x !== "string" || "d" in jwk) {
    throw new RegistrationFailed(`the agent's key ${JSON.stringify(header.kid)} is not a public Ed25519 JWK`);
  }
  return { x: jwk.x, key: await pinnedKey({ x: jwk.x }) };
}

/**
 * Verifies a card's signature with @a2a-js/sdk's verifier, as any A2A client
 * would, with `key` as the only key it may resolve.
 */
async function verifyCard(card, key, where) {
  const verify = verifyAgentCardSignature(async () => key);
  // The SDK logs every failed signature entry through console.debug; the
  // refusal below already says what failed.
  const debug = console.debug;
  console.debug = () => {};
  try {
    // Given the served wire JSON, as docs/protocol.md "Card signatures" says: the verifier decodes it
    // itself, and a card decoded twice loses its security scheme (a oneof) and no longer verifies.
    await verify(/** @type {import("@a2a-js/sdk").AgentCard} */ (card));
  } catch {
    throw new RegistrationFailed(`${where}: the signature does not verify`);
  } finally {
    console.debug = debug;
  }
}

function jsonRpcEndpoint(card, agentOrigin, where) {
  const iface = (card.supportedInterfaces ?? []).find((i) => i && i.protocolBinding === "JSONRPC");
  if (!iface || typeof iface.url !== "string") throw new RegistrationFailed(`${where} advertises no JSONRPC interface`);
  if (originOf(iface.url) !== agentOrigin) {
    throw new RegistrationFailed(`${where} advertises its JSON-RPC endpoint ${iface.url} on another origin than ${agentOrigin}`);
  }
  return iface.url;
}

async function fetchJson(url, what) {
  let response;
  try {
    response = await fetch(url, { signal: AbortSignal.timeout(FETCH_TIMEOUT_MS), redirect: "error" });
  } catch (error) {
    throw new RegistrationFailed(`could not fetch ${what} at ${url}: ${error.cause?.code ?? error.cause?.message ?? error.message}`);
  }
  const text = await response.text();
  if (response.status !== 200) throw new RegistrationFailed(`${what} at ${url} answered HTTP ${response.status}: ${text.slice(0, 200)}`);
  try {
    return JSON.parse(text);
  } catch {
    throw new RegistrationFailed(`${what} at ${url} is not JSON`);
  }
}

/**
 * One JSON-RPC call with a gatekeeper token, `params` as given (name the
 * tenant in them), in a trace of its own unless `traceparent` is given;
 * resolves to the JSON-RPC reply (result or error). Throws when the agent
 * refused the token (HTTP 401), when the answer is no JSON-RPC reply, and when
 * `timeoutMs` passes first.
 * @param {string} endpoint
 * @param {string} token
 * @param {string} method
 * @param {Record<string, unknown>} params
 * @param {{ timeoutMs?: number, traceparent?: string }} [options]
 * @returns {Promise<import("../../src/testing/rpc-client.ts").JsonRpcReply>}
 */
export async function jsonRpc(endpoint, token, method, params, { timeoutMs = 15_000, traceparent = freshTraceparent() } = {}) {
  const { status, text, json, reply } = await postRpc(endpoint, rpcBody(method, params), { token, timeoutMs, headers: { [TRACEPARENT_HEADER]: traceparent } });
  if (status === 401) {
    const description = /** @type {{ error_description?: string } | undefined} */ (json)?.error_description;
    throw new Error(`${method}: the agent refused the gatekeeper's token (HTTP 401): ${description ?? text.slice(0, 300)}`);
  }
  if (!reply) throw new Error(`${method}: the agent answered HTTP ${status} with no JSON-RPC reply: ${text.slice(0, 300)}`);
  return reply;
}

/** What kind of StreamResponse a push is, which task it is about, and its dedupe key. */
function describePush(body) {
  if (body && typeof body === "object" && body.task && typeof body.task === "object") {
    const state = body.task.status?.state;
    return { kind: "task", taskId: body.task.id, state, dedupeKey: `${body.task.id}\ntask\n${state}` };
  }
  if (body && typeof body === "object" && body.statusUpdate && typeof body.statusUpdate === "object") {
    const update = body.statusUpdate;
    const state = update.status?.state;
    const marker = update.status?.message?.messageId ?? update.status?.timestamp ?? JSON.stringify(update.status ?? null);
    return { kind: "statusUpdate", taskId: update.taskId, state, dedupeKey: `${update.taskId}\nstatus\n${state}\n${marker}` };
  }
  return { kind: undefined, taskId: undefined, state: undefined, dedupeKey: "" };
}

function refusedJwt(error, pushUrl) {
  if (error instanceof joseErrors.JWTExpired) {
    return new PushRefused(
      error.claim === "iat" ? "iat" : "exp",
      error.claim === "iat" ? "the callback token was issued too long ago" : "the callback token has expired",
    );
  }
  if (error instanceof joseErrors.JWTClaimValidationFailed) {
    if (error.claim === "aud") return new PushRefused("aud", `the callback token's aud must be exactly ${pushUrl}`);
    return new PushRefused(error.claim === TASK_CLAIM ? "task" : error.claim, `the callback token's ${error.claim} claim is invalid: ${error.reason}`);
  }
  if (error instanceof joseErrors.JWSSignatureVerificationFailed) {
    return new PushRefused("signature", "the callback token's signature does not verify against the agent's pinned key");
  }
  if (error instanceof joseErrors.JOSEAlgNotAllowed) return new PushRefused("alg", "the callback token's alg must be EdDSA");
  return new PushRefused("signature", `the callback token could not be verified: ${error.message}`);
}

function originOf(value) {
  if (typeof value !== "string") return undefined;
  try {
    const origin = new URL(value).origin;
    return origin === "null" ? undefined : origin;
  } catch {
    return undefined;
  }
}

function describeMismatch({ origin, pinned, presented, changes, pinsFile, unpinHint }) {
  return [
    `REFUSED: the agent at ${origin} presents a card key other than the one this gatekeeper pinned on first use (${pinned.pinnedAt}).`,
    `  pinned:    kid ${pinned.kid}, key ${pinned.thumbprint}, jku ${pinned.jku}`,
    `  presented: kid ${presented.kid ?? "?"}, key ${presented.thumbprint ?? "(could not fetch it)"}, jku ${presented.jku ?? "?"}`,
    `  changed:   ${changes.join("; ")}`,
    "If you changed the agent's key yourself (for example by regenerating A2A_SIGNING_KEY in .dev.vars), forget the old pin so the new key is pinned on the next start:",
    `  ${unpinHint}     (or delete the ${JSON.stringify(origin)} entry in ${pinsFile})`,
    "Otherwise something other than your agent is answering there: do not trust it.",
  ].join("\n");
}
