import { createServer } from "node:http";
import { SignJWT, exportJWK, generateKeyPair } from "jose";
import { freePort } from "./net.mjs";

export const TENANT = "assistant";
const TENANT_CLAIM = "https://dynamicagents.dev/tenant";
const IDENTITY_CLAIM = "https://dynamicagents.dev/identity";
const JWKS_PATH = "/.well-known/jwks.json";
const NOTIFY_PATH = "/a2a/notifications";
const MAX_BODY = 1024 * 1024;

/**
 * The bench's own gatekeeper: a loopback HTTP server that publishes its JWKS
 * (which the Worker fetches to verify our tokens), accepts push notifications,
 * and answers OpenAI-style chat completions so that a turn, should one run,
 * never leaves the machine. It counts what it serves: the JWKS count shows
 * whether the edge caches keys, the rest shows background traffic that could
 * disturb a measurement.
 */
export async function startGatekeeper() {
  const { privateKey, publicKey } = await generateKeyPair("EdDSA", { crv: "Ed25519", extractable: true });
  const kid = `bench-gatekeeper-${Date.now()}`;
  const jwks = JSON.stringify({ keys: [{ ...(await exportJWK(publicKey)), kid, alg: "EdDSA", use: "sig" }] });
  const counts = { jwks: 0, notifications: 0, completions: 0, other: 0 };

  const server = createServer((req, res) => handle(req, res, { jwks, counts }));
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
    /** Requests a running turn makes (model calls and pushes): background work that competes with the measured requests. */
    turnTraffic: () => counts.notifications + counts.completions,
    pushUrl: `${origin}${NOTIFY_PATH}`,
    modelBaseUrl: `${origin}/v1`,
    /** A trivial endpoint: the cost of a loopback HTTP round trip itself, with no workerd in the way. */
    pingUrl: `${origin}/ping`,
    /** One token per caller, reused for every call: minting is not what is measured. */
    mint: (audience, identityKey, ttlSeconds) => mint({ privateKey, kid, origin, audience, identityKey, ttlSeconds }),
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

function handle(req, res, { jwks, counts }) {
  const path = new URL(req.url, "http://x").pathname;
  if (req.method === "GET" && path === "/ping") return reply(res, 200, "{}");
  if (req.method === "GET" && path === JWKS_PATH) {
    counts.jwks++;
    return reply(res, 200, jwks);
  }
  if (req.method === "POST" && path === NOTIFY_PATH) {
    counts.notifications++;
    return drain(req, () => reply(res, 200, "{}"));
  }
  if (req.method === "POST" && path === "/v1/chat/completions") {
    counts.completions++;
    return drain(req, () => reply(res, 200, completion()));
  }
  counts.other++;
  return reply(res, 404, JSON.stringify({ error: "not_found" }));
}

/** Reads and discards a request body, bounded so a runaway sender cannot fill memory. */
function drain(req, done) {
  let size = 0;
  req.on("data", (chunk) => {
    size += chunk.length;
    if (size > MAX_BODY) req.destroy();
  });
  req.on("end", done);
  req.on("error", () => {});
}

function reply(res, status, body) {
  res.writeHead(status, { "Content-Type": "application/json", "Content-Length": Buffer.byteLength(body) });
  res.end(body);
}

function completion() {
  return JSON.stringify({
    id: "bench",
    object: "chat.completion",
    created: Math.floor(Date.now() / 1000),
    model: "bench",
    choices: [{ index: 0, finish_reason: "stop", message: { role: "assistant", content: "ok" } }],
    usage: { prompt_tokens: 1, completion_tokens: 1, total_tokens: 2 },
  });
}
