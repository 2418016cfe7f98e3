import { createServer } from "node:http";
import { performance } from "node:perf_hooks";
import { SignJWT, exportJWK, generateKeyPair } from "jose";
import { freePort } from "./net.mjs";

export const TENANT = "assistant";
const TENANT_CLAIM = "https://dynamicagents.dev/tenant";
const IDENTITY_CLAIM = "https://dynamicagents.dev/identity";
const JWKS_PATH = "/.well-known/jwks.json";
const NOTIFY_PATH = "/a2a/notifications";
const MAX_BODY = 1024 * 1024;
/**
 * How a measured turn's user text names it, so its model request can be
 * matched to it (see turns.mjs). A request carries the caller's whole
 * conversation, so the turn's own tag is the last one in it.
 */
const TURN_TAG = /bench-turn ([0-9a-z]+-[0-9]+)/g;
const lastTag = (body) => [...body.matchAll(TURN_TAG)].at(-1)?.[1];

/**
 * The bench's own gatekeeper: a loopback HTTP server that publishes its JWKS
 * (which the Worker fetches to verify our tokens), accepts push notifications,
 * and answers OpenAI-style chat completions so that a turn, should one run,
 * never leaves the machine. The model answers at once: nothing it does waits.
 * It counts what it serves: the JWKS count shows whether the edge caches keys,
 * the rest shows background traffic that could disturb a measurement.
 * Observers (`observe`) see each model call and push with its timestamps
 * (`performance.now()` of this process), which is how turns are timed.
 */
export async function startGatekeeper() {
  const { privateKey, publicKey } = await generateKeyPair("EdDSA", { crv: "Ed25519", extractable: true });
  const kid = `bench-gatekeeper-${Date.now()}`;
  const jwks = JSON.stringify({ keys: [{ ...(await exportJWK(publicKey)), kid, alg: "EdDSA", use: "sig" }] });
  const counts = { jwks: 0, notifications: 0, completions: 0, other: 0 };
  const observers = new Set();
  /** When each JWKS fetch came (ISO): a burst says which part of the run missed the cache. */
  const jwksFetchedAt = [];

  const server = createServer((req, res) => handle(req, res, { jwks, counts, observers, jwksFetchedAt }));
  server.keepAliveTimeout = 30_000;
  const port = await freePort();
  await new Promise((resolve, reject) => {
    server.once("error", reject);
    server.listen(port, "127.0.0.1", resolve);
  });

  const origin = `http://127.0.0.1:${port}`;
  return {
    origin,
    counts,
    jwksFetchedAt,
    /** Requests a running turn makes (model calls and pushes): background work that competes with the measured requests. */
    turnTraffic: () => counts.notifications + counts.completions,
    pushUrl: `${origin}${NOTIFY_PATH}`,
    modelBaseUrl: `${origin}/v1`,
    /** A trivial endpoint: the cost of a loopback HTTP round trip itself, with no workerd in the way. */
    pingUrl: `${origin}/ping`,
    /** One token per caller, reused for every call: minting is not what is measured. */
    mint: (audience, identityKey, ttlSeconds) => mint({ privateKey, kid, origin, audience, identityKey, ttlSeconds }),
    /**
     * Calls `observer.onModel({tag, t2, read, t3, bytes})` for every model
     * call (t2: its request's headers reached this server, read: its body
     * had too, t3: the reply was handed to the kernel; `tag` from TURN_TAG,
     * or undefined; `bytes` of the request body) and `observer.onPush({url, headers,
     * body, t4})` for every push (t4: its body had fully arrived). Returns
     * the function that stops it.
     */
    observe: (observer) => {
      observers.add(observer);
      return () => observers.delete(observer);
    },
    close: () =>
      new Promise((resolve) => {
        server.closeAllConnections();
        server.close(() => resolve());
      }),
  };
}

function mint({ privateKey, kid, origin, audience, identityKey, ttlSeconds }) {
  const now = Math.floor(Date.now() / 1000);
  return new SignJWT({ [TENANT_CLAIM]: TENANT, [IDENTITY_CLAIM]: { key: identityKey, kind: "user" } })
    .setProtectedHeader({ alg: "EdDSA", kid, typ: "JWT", jku: `${origin}${JWKS_PATH}` })
    .setIssuer(origin)
    .setAudience(audience)
    .setIssuedAt(now)
    .setExpirationTime(now + ttlSeconds)
    .sign(privateKey);
}

function handle(req, res, { jwks, counts, observers, jwksFetchedAt }) {
  const arrived = performance.now();
  const url = new URL(req.url, "http://x");
  const path = url.pathname;
  if (req.method === "GET" && path === "/ping") return reply(res, 200, "{}");
  if (req.method === "GET" && path === JWKS_PATH) {
    counts.jwks++;
    jwksFetchedAt.push(new Date().toISOString());
    return reply(res, 200, jwks);
  }
  if (req.method === "POST" && path === NOTIFY_PATH) {
    counts.notifications++;
    return readBody(req, (body) => {
      const t4 = performance.now();
      reply(res, 200, "{}");
      for (const o of observers) o.onPush?.({ url, headers: req.headers, body, t4 });
    });
  }
  if (req.method === "POST" && path === "/v1/chat/completions") {
    counts.completions++;
    return readBody(req, (body) => {
      const read = performance.now();
      const tag = lastTag(body);
      // Zero latency: the reply goes out as soon as the request is read. It
      // names the turn, so a push can be checked to carry this very answer.
      reply(res, 200, completion(tag ? `ok ${tag}` : "ok"), () => {
        const t3 = performance.now();
        for (const o of observers) o.onModel?.({ tag, t2: arrived, read, t3, bytes: Buffer.byteLength(body) });
      });
    });
  }
  counts.other++;
  return reply(res, 404, JSON.stringify({ error: "not_found" }));
}

/** Reads a request body as text, bounded so a runaway sender cannot fill memory. */
function readBody(req, done) {
  const chunks = [];
  let size = 0;
  req.on("data", (chunk) => {
    size += chunk.length;
    if (size > MAX_BODY) return req.destroy();
    chunks.push(chunk);
  });
  req.on("end", () => done(Buffer.concat(chunks).toString("utf8")));
  req.on("error", () => {});
}

/** `written`, if given, runs once the reply has been handed to the kernel. */
function reply(res, status, body, written) {
  res.writeHead(status, { "Content-Type": "application/json", "Content-Length": Buffer.byteLength(body) });
  res.end(body, written);
}

function completion(content) {
  return JSON.stringify({
    id: "bench",
    object: "chat.completion",
    created: Math.floor(Date.now() / 1000),
    model: "bench",
    choices: [{ index: 0, finish_reason: "stop", message: { role: "assistant", content } }],
    usage: { prompt_tokens: 1, completion_tokens: 1, total_tokens: 2 },
  });
}
