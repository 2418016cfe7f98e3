// A stand-in for the Worker's public side, in Node: it serves a stub card and a
// JWKS, answers GetExtendedAgentCard, and signs callback tokens — all with the
// core's own code (buildCardWire, signCard, signCallbackJwt), so what the dev
// gatekeeper is tested against is byte for byte what the Worker produces. Its
// key can be swapped mid-test to play an agent whose key changed.
import { createServer } from "node:http";
import { buildCardWire, loadSigningKey, signCallbackJwt, signCard } from "@dynamicagents/core/a2a";
import { exportJWK, generateKeyPair } from "jose";
import { A2A_PATH, CARD_PATH, JWKS_PATH, endpointOf } from "../../../src/a2a/wire.ts";
import { closeServer, listen } from "../../../scripts/dev/http.mjs";

const MANIFEST = {
  name: "Fake agent",
  description: "A test double of the reference deployment's public side.",
  version: "0.0.1",
  skills: [{ id: "echo", name: "Echo", description: "Says it back.", tags: ["test"] }],
};

/** A private signing JWK as `npm run keys` prints it. */
export async function freshAgentJwk(kid = "a2a-test-1") {
  const { privateKey } = await generateKeyPair("EdDSA", { crv: "Ed25519", extractable: true });
  const jwk = await exportJWK(privateKey);
  return JSON.stringify({ kty: jwk.kty, crv: jwk.crv, x: jwk.x, d: jwk.d, kid });
}

export async function startFakeAgent({ tenants = ["assistant"] } = {}) {
  let secret = await freshAgentJwk();
  /** Applied to every card just before it is served: lets a test tamper after signing. */
  let tamper = (card) => card;
  const server = createServer(async (req, res) => {
    const key = await loadSigningKey(secret);
    const path = new URL(req.url ?? "/", origin).pathname;
    const send = (status, body) => {
      res.writeHead(status, { "Content-Type": "application/json" });
      res.end(JSON.stringify(body));
    };
    if (path === JWKS_PATH) return send(200, { keys: [key.publicJwk] });
    if (path === CARD_PATH) {
      return send(200, tamper(await signCard(buildCardWire(MANIFEST, { endpoint: endpointOf(origin) }), key, origin)));
    }
    if (path === A2A_PATH && req.method === "POST") {
      const chunks = [];
      for await (const chunk of req) chunks.push(chunk);
      const call = JSON.parse(Buffer.concat(chunks).toString("utf8"));
      const tenant = call.params?.tenant;
      if (call.method !== "GetExtendedAgentCard" || !tenants.includes(tenant)) {
        return send(200, { jsonrpc: "2.0", id: call.id, error: { code: -32601, message: "not in this fake" } });
      }
      const card = await signCard(buildCardWire({ ...MANIFEST, name: `Fake ${tenant}` }, { endpoint: endpointOf(origin), tenant }), key, origin);
      return send(200, { jsonrpc: "2.0", id: call.id, result: tamper(card) });
    }
    return send(404, { error: "not_found" });
  });
  const origin = `http://127.0.0.1:${await listen(server, 0, "the fake agent", "")}`;

  return {
    origin,
    get secret() {
      return secret;
    },
    key: () => loadSigningKey(secret),
    /** From now on the agent signs with `jwk` (a private JWK as JSON). */
    useKey: (jwk) => {
      secret = jwk;
    },
    tamperWith: (fn) => {
      tamper = fn;
    },
    /** A callback token exactly as the Worker's push delivery signs it. */
    callbackToken: async (url, taskId = "task-1") => signCallbackJwt({ key: await loadSigningKey(secret), issuer: origin, url, taskId }),
    close: () => closeServer(server),
  };
}
