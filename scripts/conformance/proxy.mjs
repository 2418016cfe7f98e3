// The conformance proxy: lets the public A2A conformance suite, which speaks
// plain A2A (no gatekeeper token, no tenant, no push config, the same
// message ids again and again), run against a deployment of this platform
// (docs/conformance.md). On loopback it plays a gatekeeper:
//
//   - it has an Ed25519 key of its own for the run and serves the public half
//     at exactly <its origin>/.well-known/jwks.json, so its origin can be
//     listed in the deployment's GATEKEEPER_ORIGINS;
//   - it mints a token for every call (the project's one minter), with the
//     tenant claim `conformance` and one identity for the run;
//   - it serves the conformance tenant's card at its own well-known URL, its
//     interface pointing at itself, re-signed with its own key;
//   - it forwards each JSON-RPC call (on `/a2a` or `/a2a/`, as clients write
//     the interface URL) with `params.tenant` set, and each HTTP+JSON call
//     (under `/a2a/rest`) with the tenant put in its path; every sent
//     message's id made unique (its prefix, which picks the scenario, kept)
//     and, on a send without one, a push config pointing at itself, where it
//     takes pushes and logs them;
//   - it moves a push URL the suite gives (its own receiver on `localhost`)
//     onto its own origin, the token's `iss`, where the deployment may call,
//     and relays what arrives there to that receiver as it came (a receiver
//     off this machine only gets the push taken and logged);
//   - it relays replies, server-sent event streams included, unchanged, and
//     forwards a body it cannot read as a request unchanged, so the edge's
//     own refusals (-32005, -32700, -32600, -32009, and HTTP+JSON's 404 and
//     405) reach the suite.
import { createHash, randomBytes, randomUUID } from "node:crypto";
import { createServer } from "node:http";
import { FlattenedSign, exportJWK, generateKeyPair } from "jose";
import { jcs } from "../../src/a2a/jcs.ts";
import { matchRestRoute } from "../../src/a2a/rest-routes.ts";
import { A2A_PATH, A2A_REST_PATH, CARD_PATH, JWKS_PATH, endpointOf, isJsonMediaType, jwksUrlOf, restEndpointOf } from "../../src/a2a/wire.ts";
import { makeGatekeeperToken } from "../../src/testing/gatekeeper-token.ts";
import { rpcCall } from "../../src/testing/rpc-client.ts";
import { closeServer, listen, sendJson } from "../dev/http.mjs";

/** Where the proxy takes pushes: the `url` of every push config it adds. */
const NOTIFY_PATH = "/a2a/notifications";
/** Where a push for a push URL the suite gave arrives: this, then the URL as base64url. */
const RELAY_PATH = "/a2a/relay/";
/** The push-config methods whose results carry a config's `url`: given back as the suite sent it. */
const CONFIG_RESULTS = new Set(["CreateTaskPushNotificationConfig", "GetTaskPushNotificationConfig", "ListTaskPushNotificationConfigs"]);
/** Hosts the proxy relays pushes to: the suite's receiver runs on this machine; nothing goes further. */
const LOOPBACK_HOSTS = new Set(["localhost", "127.0.0.1", "[::1]"]);
/** Request headers of one hop, not relayed to the suite's receiver. */
const HOP_REQUEST = new Set(["host", "connection", "keep-alive", "transfer-encoding", "content-length", "expect", "upgrade"]);
/** The tenant the suite is run against (reference/tenants.ts, served with CONFORMANCE=1). */
export const CONFORMANCE_TENANT = "conformance";
/** A body larger than the edge takes (2 MiB) is still forwarded, for the edge to refuse; this is the proxy's own bound. */
const MAX_BODY = 16 * 1024 * 1024;
/** The pushes kept for `pushes` (and a test to read). */
const PUSHES_KEPT = 1000;
/** The methods that send a message: their message id is made unique, and they get a push config. */
const SENDS = new Set(["SendMessage", "SendStreamingMessage"]);
/** Request headers that travel to the deployment as the client sent them. */
const FORWARDED = ["content-type", "a2a-version", "a2a-extensions", "accept", "last-event-id"];
/** Response headers that belong to one hop (the proxy's own connection sets them). */
const HOP_BY_HOP = new Set(["connection", "keep-alive", "transfer-encoding", "content-length", "content-encoding"]);

/**
 * Starts the proxy on 127.0.0.1:`port` (0 for any free port), forwarding to
 * the deployment at `upstream` (its origin; the token's audience is
 * `<upstream>/a2a`).
 * @param {{ upstream: string, port?: number, log?: (line: string) => void }} options
 */
export async function startConformanceProxy({ upstream, port = 0, log = () => {} }) {
  const upstreamOrigin = new URL(upstream).origin;
  const endpoint = endpointOf(upstreamOrigin);
  const { privateKey, publicKey } = await generateKeyPair("EdDSA", { crv: "Ed25519", extractable: true });
  const kid = `conformance-proxy-${randomBytes(4).toString("hex")}`;
  const publicJwk = { ...(await exportJWK(publicKey)), kid, alg: "EdDSA", use: "sig" };
  const key = { kid, privateKey };
  // One caller for the run: its tasks are in one object, apart from any other run's.
  const identity = { key: `a2a-tck-${randomUUID()}`, name: "A2A conformance suite (via npm run conformance-proxy)", kind: "agent" };
  // The notification token of every push config the proxy adds: a push carrying it came from a config it made.
  const notificationToken = randomBytes(16).toString("hex");
  /** @type {Array<{ at: string, kind: string, taskId?: string, state?: string, seq?: string, tokenMatches: boolean }>} */
  const pushes = [];

  const startedAt = new Date(Math.floor(Date.now() / 1000) * 1000).toUTCString();
  const server = createServer((req, res) => {
    route(req, res).catch((error) => {
      log(`! ${req.method} ${req.url}: ${error.message}`);
      if (!res.headersSent) sendJson(res, 502, { error: "bad_gateway", error_description: error.message });
      else res.destroy();
    });
  });
  const bound = await listen(server, port, "the conformance proxy", "choose another with --port");
  const origin = `http://127.0.0.1:${bound}`;
  const pushUrl = `${origin}${NOTIFY_PATH}`;

  // A `jti` of its own makes each call's token a distinct one even within the same second.
  const token = () => makeGatekeeperToken({ key, gatekeeper: origin, endpoint, tenant: CONFORMANCE_TENANT, identity, claims: { jti: randomUUID() } });

  /** @param {import("node:http").IncomingMessage} req @param {import("node:http").ServerResponse} res */
  async function route(req, res) {
    const path = new URL(req.url ?? "/", origin).pathname;
    if (path === JWKS_PATH && req.method === "GET") return sendJson(res, 200, { keys: [publicJwk] }, { "Cache-Control": "max-age=60" });
    if (path === CARD_PATH && req.method === "GET") return serveCard(req, res);
    if (path === NOTIFY_PATH && req.method === "POST") return takePush(req, res);
    if (path.startsWith(RELAY_PATH) && req.method === "POST") return relayPush(req, res, path.slice(RELAY_PATH.length));
    if ((path === A2A_PATH || path === `${A2A_PATH}/`) && req.method === "POST") return forward(req, res);
    if (path === A2A_REST_PATH || path.startsWith(`${A2A_REST_PATH}/`)) return forwardRest(req, res, path);
    return sendJson(res, 404, { error: "not_found", error_description: `No route for ${req.method} ${path}` });
  }

  /**
   * The card with the validators the deployment's own card route has
   * (docs/protocol.md "Wire": a strong ETag that is a hash of the body, and
   * Last-Modified): the deployment's, since the card changes when it does.
   * A matching If-None-Match, or else a If-Modified-Since not before it, is 304.
   */
  async function serveCard(req, res) {
    const [body, lastModified] = await Promise.all([card(), upstreamLastModified()]);
    const text = JSON.stringify(body);
    const etag = `"${createHash("sha256").update(text).digest("hex").slice(0, 32)}"`;
    const validators = { ETag: etag, "Last-Modified": lastModified, "Cache-Control": "public, max-age=300" };
    if (notModified(req, etag, lastModified)) {
      res.writeHead(304, validators);
      return res.end();
    }
    res.writeHead(200, { "Content-Type": "application/json", "Content-Length": Buffer.byteLength(text), ...validators });
    res.end(text);
  }

  /** The deployment's stub card's Last-Modified (its version's upload time), or the proxy's start when it has none. */
  async function upstreamLastModified() {
    try {
      const reply = await fetch(`${upstreamOrigin}${CARD_PATH}`, { redirect: "manual" });
      await reply.arrayBuffer();
      const value = reply.headers.get("last-modified");
      if (value && Number.isFinite(Date.parse(value))) return value;
    } catch {
      // The card call reports an unreachable deployment; the date is not worth a second error.
    }
    return startedAt;
  }

  /** The conformance tenant's card, asked of the deployment and rewritten to name this proxy. */
  async function card() {
    const answer = await rpcCall(endpoint, "GetExtendedAgentCard", {}, { tenant: CONFORMANCE_TENANT, token: await token() });
    const upstreamCard = answer.reply?.result;
    if (!upstreamCard || typeof upstreamCard !== "object") {
      throw new Error(
        `the deployment at ${upstreamOrigin} did not give the conformance tenant's card (HTTP ${answer.status}: ${answer.text.slice(0, 300)}); ` +
          `is it running with CONFORMANCE=1, and is ${origin} in its GATEKEEPER_ORIGINS?`,
      );
    }
    return rewriteCard(upstreamCard);
  }

  /**
   * The card as the proxy serves it: every interface at the proxy's own
   * endpoint of its binding (tenant kept), no security scheme (the proxy
   * asks its client for no credentials: it supplies them), and signed again
   * by the proxy, since the deployment's signature covers the URLs it replaced.
   */
  async function rewriteCard(upstreamCard) {
    const { signatures: _signatures, securitySchemes: _schemes, securityRequirements: _requirements, ...rest } = upstreamCard;
    const card = {
      ...rest,
      supportedInterfaces: (rest.supportedInterfaces ?? []).map((i) => ({
        ...i,
        url: i.protocolBinding === "HTTP+JSON" ? restEndpointOf(origin) : endpointOf(origin),
      })),
    };
    // The deployment's cards are their own proto-JSON image with no empty field (docs/protocol.md
    // "Card signatures"), and the rewrite keeps them so: plain JCS is their canonical form.
    const header = { alg: "EdDSA", typ: "JOSE", kid, jku: jwksUrlOf(origin) };
    const jws = await new FlattenedSign(new TextEncoder().encode(jcs(card))).setProtectedHeader(header).sign(privateKey);
    return { ...card, signatures: [{ protected: jws.protected, signature: jws.signature }] };
  }

  /** A push from the deployment: taken (200) and logged; the proxy is a sink, it does not check the callback token. */
  async function takePush(req, res) {
    noted(req, await readRaw(req));
    sendJson(res, 200, { ok: true });
  }

  /** A push from the deployment, kept in {@link pushes} and logged. */
  function noted(req, raw, relayedTo) {
    let body;
    try {
      body = JSON.parse(raw?.toString("utf8") ?? "");
    } catch {
      body = {};
    }
    const task = body?.task ?? body?.statusUpdate;
    const entry = {
      at: new Date().toISOString(),
      kind: body?.task ? "task" : body?.statusUpdate ? "statusUpdate" : "other",
      taskId: body?.task?.id ?? body?.statusUpdate?.taskId,
      state: task?.status?.state,
      seq: header(req, "x-dynamicagents-event-seq"),
      tokenMatches: header(req, "x-a2a-notification-token") === notificationToken,
      ...(relayedTo ? { relayedTo } : {}),
    };
    pushes.push(entry);
    if (pushes.length > PUSHES_KEPT) pushes.shift();
    log(`  push ${entry.kind} ${entry.taskId ?? "?"} ${entry.state ?? ""} (seq ${entry.seq ?? "?"})${relayedTo ? ` → ${relayedTo}` : ""}`);
    return entry;
  }

  /**
   * A push for a push URL the suite gave: relayed to it, headers and body as
   * they came, and its status answered, when it is on this machine (the
   * suite's receiver); taken (200) when it is not, so no push leaves the machine.
   */
  async function relayPush(req, res, encoded) {
    const raw = await readRaw(req);
    const target = relayTarget(encoded);
    if (!target) return sendJson(res, 404, { error: "not_found", error_description: "not a relay URL this proxy made" });
    if (!LOOPBACK_HOSTS.has(new URL(target).hostname)) {
      noted(req, raw, `${new URL(target).origin} (not relayed: off this machine)`);
      return sendJson(res, 200, { ok: true });
    }
    noted(req, raw, target);
    const headers = {};
    for (const [name, value] of Object.entries(req.headers))
      if (!HOP_REQUEST.has(name) && value !== undefined) headers[name] = Array.isArray(value) ? value.join(", ") : value;
    let reply;
    try {
      reply = await fetch(target, { method: "POST", headers, body: raw, redirect: "manual", signal: AbortSignal.timeout(10_000) });
    } catch (error) {
      // The receiver is gone (the suite ended): a transient failure for the deployment, which retries.
      return sendJson(res, 502, { error: "bad_gateway", error_description: `${target}: ${error.cause?.code ?? error.message}` });
    }
    const body = Buffer.from(await reply.arrayBuffer());
    res.writeHead(reply.status, { "Content-Type": reply.headers.get("content-type") ?? "text/plain", "Content-Length": body.length });
    res.end(body);
  }

  /** The push URL a relay path stands for, or undefined when it is none the proxy made. */
  function relayTarget(encoded) {
    const url = Buffer.from(encoded, "base64url").toString("utf8");
    return URL.canParse(url) && /^https?:$/.test(new URL(url).protocol) && Buffer.from(url).toString("base64url") === encoded ? url : undefined;
  }

  /** A push config with its URL on the proxy's origin (a relay path) unless it is there already. */
  function relayed(config) {
    if (!isObject(config) || typeof config.url !== "string" || !URL.canParse(config.url)) return config;
    if (new URL(config.url).origin === origin) return config;
    return { ...config, url: `${origin}${RELAY_PATH}${Buffer.from(config.url).toString("base64url")}` };
  }

  /** A config as the deployment gives it back, its URL as the suite sent it. */
  function unrelayed(config) {
    if (!isObject(config) || typeof config.url !== "string" || !config.url.startsWith(`${origin}${RELAY_PATH}`)) return config;
    const target = relayTarget(config.url.slice(`${origin}${RELAY_PATH}`.length));
    return target ? { ...config, url: target } : config;
  }

  /** One JSON-RPC call: rewritten if it can be read as one, else as it came; the reply relayed as it comes. */
  async function forward(req, res) {
    const raw = await readRaw(req);
    if (raw === undefined) {
      return sendJson(
        res,
        413,
        { jsonrpc: "2.0", id: null, error: { code: -32600, message: `Request body exceeds ${MAX_BODY} bytes` } },
        { Connection: "close" },
      );
    }
    const rewritten = rewriteCall(req, raw);
    const upstreamReply = await send(req, res, endpoint, "POST", rewritten?.body ?? raw);
    log(`→ ${rewritten?.method ?? "(unread body)"}${rewritten?.messageId ? ` ${rewritten.messageId}` : ""} → HTTP ${upstreamReply.reply.status}`);
    // A JSON-RPC reply carries its result in `result`.
    return relay(
      res,
      upstreamReply,
      rewritten?.method,
      (reply) => reply?.result,
      (reply, result) => ({ ...reply, result }),
    );
  }

  /**
   * One HTTP+JSON call: to the same path upstream under the tenant's
   * `/{tenant}` (the suite writes its routes without one), its JSON body
   * rewritten as a JSON-RPC call's params are when it can be read as one;
   * the reply relayed as it comes.
   */
  async function forwardRest(req, res, path) {
    const raw = await readRaw(req);
    if (raw === undefined) {
      const message = `Request body exceeds ${MAX_BODY} bytes`;
      return sendJson(res, 413, { error: { code: 413, status: "INVALID_ARGUMENT", message, details: [] } }, { Connection: "close" });
    }
    const below = path.slice(A2A_REST_PATH.length);
    const routed = below.startsWith(`/${CONFORMANCE_TENANT}/`) ? below : `/${CONFORMANCE_TENANT}${below}`;
    const route = matchRestRoute(req.method ?? "", routed);
    const method = route.kind === "route" ? route.method : undefined;
    const rewritten = raw.length > 0 && method ? rewriteBody(req, raw, method) : undefined;
    const { search } = new URL(req.url ?? "/", origin);
    const upstreamReply = await send(
      req,
      res,
      `${upstreamOrigin}${A2A_REST_PATH}${routed}${search}`,
      req.method ?? "GET",
      raw.length > 0 ? (rewritten?.body ?? raw) : undefined,
    );
    log(`→ ${req.method} ${A2A_REST_PATH}${routed}${rewritten?.messageId ? ` ${rewritten.messageId}` : ""} → HTTP ${upstreamReply.reply.status}`);
    // An HTTP+JSON reply is its result.
    return relay(
      res,
      upstreamReply,
      method,
      (reply) => reply,
      (_reply, result) => result,
    );
  }

  /** Sends a call upstream with a token of the proxy's and the headers the client sent that travel; a client that hangs up hangs up upstream too. */
  async function send(req, res, url, method, body) {
    const headers = { authorization: `Bearer ${await token()}` };
    for (const name of FORWARDED) {
      const value = header(req, name);
      if (value !== undefined) headers[name] = value;
    }
    const abort = new AbortController();
    // So the deployment frees a stream its client is done with.
    res.on("close", () => abort.abort());
    const reply = await fetch(url, { method, headers, body, signal: abort.signal, redirect: "manual" });
    return { reply, aborted: () => abort.signal.aborted };
  }

  /**
   * The deployment's reply, relayed: the extended card as the one the proxy
   * serves, a push config's URL as the suite sent it, anything else (a
   * stream included) as it comes. `resultOf` and `withResult` read and write
   * the result in the binding's reply.
   */
  async function relay(res, { reply: upstreamReply, aborted }, method, resultOf, withResult) {
    const replyHeaders = {};
    for (const [name, value] of upstreamReply.headers) if (!HOP_BY_HOP.has(name)) replyHeaders[name] = value;
    const rewrite = method === "GetExtendedAgentCard" || CONFIG_RESULTS.has(method);
    if (rewrite && upstreamReply.ok && isJsonMediaType(upstreamReply.headers.get("content-type"))) {
      const reply = JSON.parse(await upstreamReply.text());
      const result = resultOf(reply);
      if (!isObject(result)) return sendJson(res, upstreamReply.status, reply, replyHeaders);
      // The extended card is the one the proxy serves: the same interfaces, the same signature;
      // a config's URL is the suite's, not the relay path the deployment stored.
      const rewritten =
        method === "GetExtendedAgentCard"
          ? await rewriteCard(result)
          : Array.isArray(result.configs)
            ? { ...result, configs: result.configs.map(unrelayed) }
            : unrelayed(result);
      return sendJson(res, upstreamReply.status, withResult(reply, rewritten), replyHeaders);
    }
    res.writeHead(upstreamReply.status, replyHeaders);
    if (!upstreamReply.body) return res.end();
    try {
      for await (const chunk of upstreamReply.body) res.write(chunk);
      res.end();
    } catch (error) {
      // The client went away (the abort), or the deployment did mid-stream: nothing more to relay.
      if (!aborted()) log(`! stream of ${method ?? "a call"} broke off: ${error.message}`);
      res.destroy();
    }
  }

  /**
   * The call with what the platform needs and the suite does not send, or
   * undefined for a body that is not one JSON-RPC request object with object
   * (or no) params, in a JSON content type: that one goes as it came.
   */
  function rewriteCall(req, raw) {
    const call = readJson(req, raw);
    if (!isObject(call) || (call.params !== undefined && !isObject(call.params))) return undefined;
    const method = typeof call.method === "string" ? call.method : undefined;
    const { params, messageId } = rewriteParams(method, { ...call.params, tenant: CONFORMANCE_TENANT });
    return { method, messageId, body: JSON.stringify({ ...call, params }) };
  }

  /** An HTTP+JSON body (a JSON object in a JSON content type) rewritten as a call's params are; undefined for any other, which goes as it came. */
  function rewriteBody(req, raw, method) {
    const body = readJson(req, raw);
    if (!isObject(body)) return undefined;
    // The path names the tenant; a body naming another would be refused as the token is.
    const { params, messageId } = rewriteParams(method, Object.hasOwn(body, "tenant") ? { ...body, tenant: CONFORMANCE_TENANT } : body);
    return { messageId, body: JSON.stringify(params) };
  }

  /** The body as JSON when its content type says JSON and it parses; otherwise undefined. */
  function readJson(req, raw) {
    if (!isJsonMediaType(header(req, "content-type"))) return undefined;
    try {
      return JSON.parse(raw.toString("utf8"));
    } catch {
      return undefined;
    }
  }

  /**
   * A method's params (a JSON-RPC call's, an HTTP+JSON body) with what the
   * platform needs: on a send, a fresh message id and a push config; a push
   * config's URL on the proxy's origin.
   */
  function rewriteParams(method, given) {
    let params = { ...given };
    let messageId;
    // Fields are read by either proto-JSON name and left under the name they came with: the deployment reads both.
    if (method && SENDS.has(method)) {
      // A fresh id per send, its prefix (the scenario) kept: the suite sends the same id in many tests and runs,
      // and the platform treats a repeated messageId as a retry of the first send.
      const idKey = isObject(params.message) ? namesIn(params.message, "messageId", "message_id")[0] : undefined;
      if (idKey && typeof params.message[idKey] === "string") {
        messageId = `${params.message[idKey]}-${randomUUID()}`;
        params.message = { ...params.message, [idKey]: messageId };
      }
      if (params.configuration === undefined || isObject(params.configuration)) {
        const configuration = params.configuration ?? {};
        const given = namesIn(configuration, "taskPushNotificationConfig", "task_push_notification_config");
        params.configuration = given.length
          ? { ...configuration, ...Object.fromEntries(given.map((name) => [name, relayed(configuration[name])])) }
          : { ...configuration, taskPushNotificationConfig: { url: pushUrl, token: notificationToken } };
      }
    }
    if (method === "CreateTaskPushNotificationConfig") params = relayed(params);
    return { params, messageId };
  }

  return {
    origin,
    /** The deployment's endpoint the proxy forwards to. */
    endpoint,
    jwksUrl: jwksUrlOf(origin),
    pushUrl,
    kid,
    /** The identity every token of this run names. */
    identity,
    notificationToken,
    /** The pushes taken so far (the last {@link PUSHES_KEPT}). */
    pushes,
    close: () => closeServer(server),
  };
}

/** RFC 9110 §13.1: If-None-Match decides when present (weak comparison); otherwise If-Modified-Since. */
function notModified(req, etag, lastModified) {
  const ifNoneMatch = header(req, "if-none-match");
  if (ifNoneMatch !== undefined) {
    const tags = ifNoneMatch.split(",").map((t) => t.trim().replace(/^W\//, ""));
    return tags.includes("*") || tags.includes(etag);
  }
  const since = Date.parse(header(req, "if-modified-since") ?? "");
  return Number.isFinite(since) && Date.parse(lastModified) <= since;
}

const isObject = (value) => value !== null && typeof value === "object" && !Array.isArray(value);

/** The names a field is given under in `object`: its JSON name, its proto name, both (which the deployment refuses) or none. */
const namesIn = (object, ...names) => names.filter((name) => Object.hasOwn(object, name));

/** A request header as one string (Node joins repeated ones), or undefined. */
function header(req, name) {
  const value = req.headers[name];
  return Array.isArray(value) ? value.join(", ") : value;
}

/**
 * The request body as the bytes that came, or undefined past {@link MAX_BODY}.
 * @param {import("node:http").IncomingMessage} req
 * @returns {Promise<Buffer | undefined>}
 */
async function readRaw(req) {
  const chunks = [];
  let size = 0;
  // Read to the end either way (the reply needs the connection), keeping nothing past the bound.
  for await (const chunk of req) {
    size += chunk.length;
    if (size <= MAX_BODY) chunks.push(chunk);
  }
  return size > MAX_BODY ? undefined : Buffer.concat(chunks);
}
