// A gatekeeper written only from docs/gatekeeper.md (the integrator's guide),
// for test/node/e2e/gatekeeper-guide.e2e.mjs. It deliberately re-implements
// what the project already has elsewhere: a strict JSON reader that refuses
// duplicate member names, an RFC 8785 (JCS) canonicaliser for JSON values,
// card verification over the served bytes, token minting, and push
// verification with jti replay refusal and de-duplication on task id + seq.
// It imports nothing of the package (not scripts/dev/gatekeeper.mjs, not
// src/testing/*, not src/a2a/*): only node: built-ins and jose for the JOSE
// operations. So it is exempt from the project's one-of-each rule: a second
// implementation is the point, since a test of the guide that shared the
// code it checks would prove nothing about the guide.
//
// Every rule below cites the guide section it follows ("Registering the
// agents", "Minting a token", "Calling", "Receiving pushes"). Nothing here
// knows the Worker's source.
import { createHash, createPublicKey, generateKeyPairSync, randomUUID, timingSafeEqual, verify as verifySignature } from "node:crypto";
import { createServer } from "node:http";
import { SignJWT, compactVerify, decodeJwt, decodeProtectedHeader } from "jose";

// ---------------------------------------------------------------------------
// JSON, strictly ("Registering the agents" §2: refuse duplicate member names)
// ---------------------------------------------------------------------------

const NUMBER = /-?(?:0|[1-9]\d*)(?:\.\d+)?(?:[eE][+-]?\d+)?/y;

/**
 * JSON.parse, but a text holding the same member name twice in one object
 * (or anything that is not one JSON value) throws.
 * @param {string} text
 * @returns {any}
 */
export function parseStrictJson(text) {
  let at = 0;
  const fail = (what) => {
    throw new SyntaxError(`${what} at offset ${at}`);
  };
  const space = () => {
    while (at < text.length && " \t\n\r".includes(text[at])) at++;
  };
  const string = () => {
    const start = at++;
    while (at < text.length && text[at] !== '"') {
      if (text.charCodeAt(at) < 0x20) fail("a control character in a string");
      at += text[at] === "\\" ? 2 : 1;
    }
    if (at >= text.length) fail("an unterminated string");
    at++;
    return JSON.parse(text.slice(start, at)); // the escapes, checked and decoded by the platform's own reader
  };
  /** @returns {any} */
  const value = () => {
    space();
    const c = text[at];
    if (c === "{") {
      at++;
      /** @type {Record<string, unknown>} */
      const object = {};
      const names = new Set();
      space();
      if (text[at] === "}") return (at++, object);
      for (;;) {
        space();
        if (text[at] !== '"') fail("a member name expected");
        const name = string();
        if (names.has(name)) fail(`the member name ${JSON.stringify(name)} twice in one object`);
        names.add(name);
        space();
        if (text[at] !== ":") fail("':' expected");
        at++;
        // defineProperty: a member named __proto__ stays a member.
        Object.defineProperty(object, name, { value: value(), enumerable: true, writable: true, configurable: true });
        space();
        if (text[at] === ",") {
          at++;
          continue;
        }
        if (text[at] === "}") return (at++, object);
        fail("',' or '}' expected");
      }
    }
    if (c === "[") {
      at++;
      const array = [];
      space();
      if (text[at] === "]") return (at++, array);
      for (;;) {
        array.push(value());
        space();
        if (text[at] === ",") {
          at++;
          continue;
        }
        if (text[at] === "]") return (at++, array);
        fail("',' or ']' expected");
      }
    }
    if (c === '"') return string();
    for (const [word, literal] of /** @type {const} */ ([
      ["true", true],
      ["false", false],
      ["null", null],
    ])) {
      if (text.startsWith(word, at)) return ((at += word.length), literal);
    }
    NUMBER.lastIndex = at;
    const number = NUMBER.exec(text);
    if (!number) fail("a JSON value expected");
    at += /** @type {RegExpExecArray} */ (number)[0].length;
    return Number(/** @type {RegExpExecArray} */ (number)[0]);
  };
  const result = value();
  space();
  if (at !== text.length) fail("text after the JSON value");
  return result;
}

// ---------------------------------------------------------------------------
// RFC 8785 ("Registering the agents" §2, step 3)
// ---------------------------------------------------------------------------

/**
 * The RFC 8785 (JCS) form of a JSON value: members sorted by their names'
 * UTF-16 code units, no whitespace, strings and numbers as ECMAScript's
 * JSON.stringify writes them (RFC 8785 §3.2.2.2, §3.2.2.3). Lone surrogates
 * and non-finite numbers are not I-JSON and are refused.
 * @param {unknown} value
 * @returns {string}
 */
export function canonicalize(value) {
  if (value === null || typeof value === "boolean") return JSON.stringify(value);
  if (typeof value === "number") {
    if (!Number.isFinite(value)) throw new TypeError(`${value} is not an I-JSON number`);
    return JSON.stringify(value); // Number.prototype.toString: the shortest form that reads back the same; -0 is "0"
  }
  if (typeof value === "string") {
    if (/[\uD800-\uDFFF]/u.test(value)) throw new TypeError("a lone surrogate is not I-JSON");
    return JSON.stringify(value); // escapes only ", \ and the controls; \b \t \n \f \r by name, the rest as \u00xx
  }
  if (Array.isArray(value)) return `[${value.map(canonicalize).join(",")}]`;
  if (typeof value === "object") {
    // Array.prototype.sort without a comparator compares UTF-16 code units: RFC 8785 §3.2.3.
    const names = Object.keys(value).sort();
    return `{${names.map((name) => `${canonicalize(name)}:${canonicalize(/** @type {any} */ (value)[name])}`).join(",")}}`;
  }
  throw new TypeError(`${typeof value} is not a JSON value`);
}

const b64url = (/** @type {string | Uint8Array} */ data) => Buffer.from(data).toString("base64url");
const unb64url = (/** @type {string} */ text) => {
  if (!/^[A-Za-z0-9_-]*$/.test(text)) throw new TypeError("not base64url");
  return Buffer.from(text, "base64url");
};

// ---------------------------------------------------------------------------
// Registering the agents
// ---------------------------------------------------------------------------

export class Refused extends Error {}

/** The agent's key set URL for an origin: "Names and numbers". */
export const jwksUrlFor = (/** @type {string} */ origin) => `${origin}/.well-known/jwks.json`;

/**
 * Fetches an agent's JWKS without following redirects and returns the
 * Ed25519 key with `kid` ("Registering the agents" §2 step 5: kty OKP, crv
 * Ed25519, no d).
 * @param {string} jku
 * @param {string} kid
 */
async function keyFromJwks(jku, kid) {
  const response = await fetch(jku, { redirect: "manual", signal: AbortSignal.timeout(10_000) });
  if (response.status !== 200) throw new Refused(`${jku} answered HTTP ${response.status}`);
  const jwks = parseStrictJson(await response.text());
  const key = (jwks.keys ?? []).find((/** @type {any} */ k) => k.kid === kid);
  if (!key) throw new Refused(`${jku} has no key ${kid}`);
  if (key.kty !== "OKP" || key.crv !== "Ed25519" || typeof key.x !== "string" || "d" in key) {
    throw new Refused(`${jku}'s key ${kid} is not a public Ed25519 JWK`);
  }
  return key;
}

/**
 * Verifies a card over the JSON as served ("Registering the agents" §2 and
 * §4): one flattened JWS with a detached payload, the protected header
 * `alg: EdDSA`, a `kid`, no `crit`, `jku` exactly `<cardOrigin>/.well-known/jwks.json`;
 * the payload the plain RFC 8785 form of the parsed card minus `signatures`;
 * the key the pinned one (or, on first sight, the JWKS's key for `kid`); the
 * JSON-RPC endpoint on the card's own origin. Throws Refused naming the check.
 * @param {string} served  the card's JSON text, as received
 * @param {string} cardOrigin  the origin it was fetched from
 * @param {{ jku: string, kid: string, x: string } | undefined} pin
 * @param {{ tenant?: string }} [expect]  for a tenant's card: the tenant its interface must name
 * @returns {Promise<{ card: any, header: any, key: { jku: string, kid: string, x: string } }>}
 */
export async function verifyCard(served, cardOrigin, pin, expect = {}) {
  let card;
  try {
    card = parseStrictJson(served);
  } catch (error) {
    throw new Refused(`the card is not strict JSON: ${error.message}`);
  }
  if (!card || typeof card !== "object" || Array.isArray(card)) throw new Refused("the card is not a JSON object");
  const signatures = card.signatures;
  if (!Array.isArray(signatures) || signatures.length !== 1) throw new Refused("the card does not hold exactly one signature");
  const [entry] = signatures;
  if (typeof entry?.protected !== "string" || typeof entry?.signature !== "string") throw new Refused("the signature has no protected header or signature");
  const extra = Object.keys(entry).filter((name) => name !== "protected" && name !== "signature");
  if (extra.length) throw new Refused(`the signature entry carries ${extra.join(", ")} (the guide: no payload, no unprotected header)`);
  let header;
  try {
    header = parseStrictJson(unb64url(entry.protected).toString("utf8"));
  } catch (error) {
    throw new Refused(`the protected header does not decode: ${error.message}`);
  }
  if (header.alg !== "EdDSA") throw new Refused(`alg is ${JSON.stringify(header.alg)}, not EdDSA`);
  if (typeof header.kid !== "string" || !header.kid) throw new Refused("the protected header has no kid");
  if ("crit" in header) throw new Refused("the protected header has a crit member");
  if (header.jku !== jwksUrlFor(cardOrigin)) throw new Refused(`jku ${JSON.stringify(header.jku)} is not ${jwksUrlFor(cardOrigin)}`);

  const { signatures: _left, ...body } = card;
  const payload = canonicalize(body);
  const signingInput = Buffer.from(`${entry.protected}.${b64url(Buffer.from(payload, "utf8"))}`, "ascii");
  let x;
  if (pin) {
    if (pin.jku !== header.jku || pin.kid !== header.kid)
      throw new Refused(`signed under ${header.kid} at ${header.jku}, not the pinned ${pin.kid} at ${pin.jku}`);
    x = pin.x;
  } else {
    x = (await keyFromJwks(header.jku, header.kid)).x;
  }
  const signature = unb64url(entry.signature);
  if (signature.length !== 64) throw new Refused("the signature is not 64 bytes");
  const publicKey = createPublicKey({ key: { kty: "OKP", crv: "Ed25519", x }, format: "jwk" });
  if (!verifySignature(null, signingInput, publicKey, signature)) throw new Refused("the signature does not verify over the card as served");

  const endpoint = (card.supportedInterfaces ?? []).find((/** @type {any} */ i) => i.protocolBinding === "JSONRPC");
  if (!endpoint || typeof endpoint.url !== "string") throw new Refused("the card has no JSONRPC interface");
  if (new URL(endpoint.url).origin !== cardOrigin) throw new Refused(`the endpoint ${endpoint.url} is not on ${cardOrigin}`);
  if (expect.tenant !== undefined && endpoint.tenant !== expect.tenant) {
    throw new Refused(`the card's interface names tenant ${JSON.stringify(endpoint.tenant)}, not ${JSON.stringify(expect.tenant)}`);
  }
  return { card, header, key: { jku: header.jku, kid: header.kid, x } };
}

// ---------------------------------------------------------------------------
// The gatekeeper: its key, its JWKS, its tokens, its calls, its pushes
// ---------------------------------------------------------------------------

const TENANT_CLAIM = "https://dynamicagents.dev/tenant";
const IDENTITY_CLAIM = "https://dynamicagents.dev/identity";
const TASK_CLAIM = "https://dynamicagents.dev/task";
/** "Receiving pushes", check 6: a few seconds of clock drift. */
const DRIFT_S = 5;

/** A fresh Ed25519 key pair and its public JWK under `kid` ("Your own key"). */
export function ed25519Key(/** @type {string} */ kid) {
  const { publicKey, privateKey } = generateKeyPairSync("ed25519");
  const jwk = /** @type {any} */ (publicKey.export({ format: "jwk" }));
  return { privateKey, publicJwk: { kty: "OKP", crv: "Ed25519", x: jwk.x, kid, alg: "EdDSA", use: "sig" } };
}

/**
 * Reads a text/event-stream body as it comes ("SendStreamingMessage"):
 * `events` grows with each `{id, data}`; `closed` resolves when the server
 * ends the stream.
 * @param {Response} response
 */
function readEvents(response) {
  /** @type {{ id: string | undefined, data: any }[]} */
  const events = [];
  const closed = (async () => {
    const reader = /** @type {ReadableStream<Uint8Array>} */ (response.body).getReader();
    const decoder = new TextDecoder();
    let buffer = "";
    for (;;) {
      const { value, done } = await reader.read();
      if (done) break;
      buffer += decoder.decode(value, { stream: true }).replaceAll("\r\n", "\n");
      let end;
      while ((end = buffer.indexOf("\n\n")) >= 0) {
        const block = buffer.slice(0, end);
        buffer = buffer.slice(end + 2);
        let id;
        const data = [];
        for (const line of block.split("\n")) {
          if (!line || line.startsWith(":")) continue;
          const colon = line.indexOf(":");
          const field = colon < 0 ? line : line.slice(0, colon);
          const content = colon < 0 ? "" : line.slice(colon + 1).replace(/^ /, "");
          if (field === "id") id = content;
          if (field === "data") data.push(content);
        }
        if (data.length) events.push({ id, data: parseStrictJson(data.join("\n")) });
      }
    }
  })();
  return { events, closed };
}

/**
 * The gatekeeper of the guide, on `http://127.0.0.1:<port>`: serves its
 * JWKS, mints a token per call, calls the agents, and takes pushes at
 * `/a2a/notifications`.
 * @param {{ port: number, identityKey: string }} options
 */
export async function startGuideGatekeeper({ port, identityKey }) {
  const origin = `http://127.0.0.1:${port}`;
  const pushUrl = `${origin}/a2a/notifications`;
  const own = ed25519Key(`gk-${randomUUID().slice(0, 8)}`);
  /** The agent deployment, once registered: its origin, endpoint and pinned key. */
  const agent = /** @type {{ origin: string, endpoint: string, pin: { jku: string, kid: string, x: string } | undefined }} */ ({
    origin: "",
    endpoint: "",
    pin: undefined,
  });

  // --- Minting a token -----------------------------------------------------
  /**
   * A token for one call ("Minting a token"). Defaults follow the guide;
   * `header`, `claims` (undefined deletes a claim), `key` and `lifetime`
   * override them, for the refusals.
   * @param {{ tenant: string, identity?: any, lifetime?: number, header?: Record<string, unknown>, claims?: Record<string, unknown>, key?: import("node:crypto").KeyObject }} options
   */
  const mint = async ({ tenant, identity, lifetime = 300, header = {}, claims = {}, key = own.privateKey }) => {
    const now = Math.floor(Date.now() / 1000);
    /** @type {Record<string, unknown>} */
    const payload = {
      iss: origin,
      aud: agent.endpoint,
      iat: now,
      exp: now + lifetime,
      [TENANT_CLAIM]: tenant,
      [IDENTITY_CLAIM]: identity ?? { key: identityKey, name: "Guide Test", kind: "user", workspaceId: "guide" },
    };
    for (const [name, value] of Object.entries(claims)) {
      if (value === undefined) delete payload[name];
      else payload[name] = value;
    }
    const protectedHeader = { alg: "EdDSA", typ: "JWT", kid: own.publicJwk.kid, jku: jwksUrlFor(origin), ...header };
    return new SignJWT(/** @type {import("jose").JWTPayload} */ (payload)).setProtectedHeader(/** @type {any} */ (protectedHeader)).sign(key);
  };

  // --- Calling -------------------------------------------------------------
  let nextId = 1;
  /**
   * One JSON-RPC POST ("Calling"), raw: the HTTP status, headers and body.
   * @param {string} method
   * @param {Record<string, unknown>} params  `tenant` included
   * `token: null` sends no Authorization; a header given as null is left out.
   * @param {{ token?: string | null, headers?: Record<string, string | null>, body?: string, identity?: any }} [options]
   */
  const post = async (method, params, { token, headers = {}, body, identity } = {}) => {
    const id = nextId++;
    const bearer = token === undefined ? await mint({ tenant: /** @type {string} */ (params.tenant), identity }) : token;
    /** @type {Record<string, string | null>} */
    const all = {
      ...(bearer === null ? {} : { Authorization: `Bearer ${bearer}` }),
      "A2A-Version": "1.0",
      "Content-Type": "application/json",
      ...headers,
    };
    const response = await fetch(agent.endpoint, {
      method: "POST",
      redirect: "manual",
      signal: AbortSignal.timeout(120_000),
      headers: /** @type {Record<string, string>} */ (Object.fromEntries(Object.entries(all).filter(([, value]) => value !== null))),
      body: body ?? JSON.stringify({ jsonrpc: "2.0", id, method, params }),
    });
    const text = await response.text();
    let json;
    try {
      json = parseStrictJson(text);
    } catch {
      json = undefined;
    }
    return { id, status: response.status, headers: response.headers, text, json };
  };
  /**
   * A JSON-RPC call whose result is returned; an error reply throws with its `error`.
   * @param {string} method
   * @param {Record<string, unknown>} params
   * @param {{ identity?: any }} [options]
   */
  const call = async (method, params, options = {}) => {
    const reply = await post(method, params, options);
    if (reply.status !== 200 || !reply.json || reply.json.jsonrpc !== "2.0" || reply.json.id !== reply.id) {
      throw new Error(`${method}: HTTP ${reply.status}: ${reply.text.slice(0, 500)}`);
    }
    if (reply.json.error) throw Object.assign(new Error(`${method}: ${JSON.stringify(reply.json.error)}`), { rpc: reply.json.error });
    return reply.json.result;
  };
  /**
   * A streaming call ("SendStreamingMessage", "SubscribeToTask"): the reply
   * as it comes. A refusal before the stream opened is a plain JSON-RPC reply
   * (`json`).
   * @param {string} method
   * @param {Record<string, unknown>} params
   * @param {{ headers?: Record<string, string>, timeoutMs?: number }} [options]
   */
  const stream = async (method, params, { headers = {}, timeoutMs = 120_000 } = {}) => {
    const id = nextId++;
    const response = await fetch(agent.endpoint, {
      method: "POST",
      redirect: "manual",
      signal: AbortSignal.timeout(timeoutMs),
      headers: {
        Authorization: `Bearer ${await mint({ tenant: /** @type {string} */ (params.tenant) })}`,
        "A2A-Version": "1.0",
        "Content-Type": "application/json",
        ...headers,
      },
      body: JSON.stringify({ jsonrpc: "2.0", id, method, params }),
    });
    const contentType = response.headers.get("content-type") ?? "";
    if (!/^text\/event-stream\b/i.test(contentType)) {
      return { id, status: response.status, contentType, json: parseStrictJson(await response.text()), events: [], closed: Promise.resolve() };
    }
    return { id, status: response.status, contentType, json: undefined, ...readEvents(response) };
  };

  // --- Registering the agents ----------------------------------------------
  /**
   * Registers the deployment at `agentOrigin` by its stub card, pinning the
   * key on first use ("Registering the agents" §1–§3); returns what it saw.
   * @param {string} agentOrigin
   */
  const register = async (agentOrigin) => {
    const response = await fetch(`${agentOrigin}/.well-known/agent-card.json`, { redirect: "manual", signal: AbortSignal.timeout(10_000) });
    const served = await response.text();
    if (response.status !== 200) throw new Refused(`the stub card: HTTP ${response.status}`);
    const verified = await verifyCard(served, agentOrigin, agent.pin);
    agent.origin = agentOrigin;
    agent.endpoint = verified.card.supportedInterfaces.find((/** @type {any} */ i) => i.protocolBinding === "JSONRPC").url;
    agent.pin ??= verified.key;
    return { response, served, ...verified };
  };
  /**
   * A tenant's own card, by GetExtendedAgentCard, verified against the pin ("Registering the agents" §4).
   * @param {string} tenant
   */
  const registerTenant = async (tenant) => {
    const reply = await post("GetExtendedAgentCard", { tenant });
    if (reply.status !== 200 || !reply.json?.result) throw new Refused(`GetExtendedAgentCard ${tenant}: HTTP ${reply.status} ${reply.text.slice(0, 300)}`);
    // The result member as it appeared: re-serialised from the strict parse, every member and value kept.
    const served = JSON.stringify(reply.json.result);
    return { served, ...(await verifyCard(served, agent.origin, agent.pin, { tenant })) };
  };

  // --- Receiving pushes ----------------------------------------------------
  const receiver = createPushReceiver({ agent, pushUrl });

  const server = createServer((req, res) => {
    const chunks = [];
    req.on("data", (chunk) => chunks.push(chunk));
    req.on("end", async () => {
      const url = new URL(req.url ?? "/", origin);
      const send = (/** @type {number} */ status, /** @type {unknown} */ body) => {
        res.writeHead(status, { "Content-Type": "application/json" });
        res.end(JSON.stringify(body));
      };
      try {
        if (req.method === "GET" && url.pathname === "/.well-known/jwks.json") return send(200, { keys: [own.publicJwk] });
        if (req.method === "POST" && url.pathname === "/a2a/notifications") {
          const { status, reason } = await receiver.receive({ headers: req.headers, body: Buffer.concat(chunks).toString("utf8") });
          return send(status, reason ? { error: reason } : { ok: true });
        }
        send(404, { error: "not_found" });
      } catch (error) {
        send(500, { error: String(error?.message ?? error) });
      }
    });
  });
  await new Promise((resolve, reject) => {
    server.once("error", reject);
    server.listen(port, "127.0.0.1", () => resolve(undefined));
  });

  return {
    origin,
    pushUrl,
    publicJwk: own.publicJwk,
    agent,
    mint,
    post,
    call,
    stream,
    register,
    registerTenant,
    receiver,
    /**
     * A notification token for a push config, remembered for the task it is
     * for ("Receiving pushes", check 8 and 10: bound to the task SendMessage
     * returns, or to the first push that passes).
     * @param {string} [taskId]
     */
    issueToken: (taskId) => receiver.issue(taskId),
    close: () => new Promise((resolve) => server.close(() => resolve(undefined))),
  };
}

/**
 * The push receiver of "Receiving pushes": checks 1–11 in order, then
 * de-duplication on task id + seq, then the answer `policy` chooses (200 by
 * default). Every request is logged with its verdict. `probe()` makes a
 * receiver with the same pin, tokens and applied events but a fresh jti
 * store (to show a later check refusing what the jti check would hide).
 * @param {{ agent: { origin: string, pin: { jku: string, kid: string, x: string } | undefined }, pushUrl: string }} options
 * @param {{ tokens?: Map<string, { taskId: string | undefined }>, applied?: Map<string, { seqs: Set<number>, lastSeq: number }>, log?: any[] }} [shared]
 */
function createPushReceiver({ agent, pushUrl }, shared = {}) {
  const tokens = shared.tokens ?? new Map();
  const applied = shared.applied ?? new Map();
  /** jti → exp ("Receiving pushes", check 7: kept until its exp). */
  const seenJtis = new Map();
  /** @type {any[]} */
  const log = shared.log ?? [];
  /** What to answer a verified, new push: by notification token; `attempt` counts this token's verified pushes, from 1. */
  /** @type {Map<string, (push: { attempt: number, seq: number, taskId: string }) => number>} */
  const policies = new Map();
  const attempts = new Map();
  const digest = (/** @type {string} */ text) => createHash("sha256").update(text, "utf8").digest();

  /**
   * @param {{ headers: Record<string, string | string[] | undefined>, body: string }} request
   * @returns {Promise<{ status: number, reason?: string, entry: any }>}
   */
  const receive = async ({ headers, body }) => {
    const header = (/** @type {string} */ name) => {
      const value = headers[name];
      return Array.isArray(value) ? value.join(", ") : value;
    };
    const entry = /** @type {any} */ ({ headers: { ...headers }, body, verdict: "pending", forged: header("x-test-forged") === "1" });
    log.push(entry);
    const refuse = (/** @type {string} */ reason) => {
      entry.verdict = "refused";
      entry.reason = reason;
      entry.answered = 401;
      return { status: 401, reason, entry };
    };
    // 1. Bearer, a compact JWS
    const authorization = header("authorization") ?? "";
    const bearer = /^Bearer ([A-Za-z0-9_-]+\.[A-Za-z0-9_-]+\.[A-Za-z0-9_-]+)$/.exec(authorization);
    if (!bearer) return refuse("1: Authorization is not Bearer <compact JWS>");
    const jwt = bearer[1];
    entry.jwt = jwt;
    const pin = agent.pin;
    if (!pin) return refuse("no agent registered");
    // 2. header: alg EdDSA, kid and jku as pinned
    let protectedHeader;
    let claims;
    try {
      protectedHeader = decodeProtectedHeader(jwt);
      claims = decodeJwt(jwt);
    } catch {
      return refuse("1: not a JWT");
    }
    entry.header = protectedHeader;
    entry.claims = claims;
    if (protectedHeader.alg !== "EdDSA") return refuse(`2: alg ${protectedHeader.alg}`);
    if (protectedHeader.kid !== pin.kid || protectedHeader.jku !== pin.jku) return refuse("2: kid or jku not the pinned ones");
    // 3. iss the registered agent's origin
    if (claims.iss !== agent.origin) return refuse(`3: iss ${claims.iss}`);
    // 4. the signature, with the pinned key: no fetch
    try {
      await compactVerify(jwt, createPublicKey({ key: { kty: "OKP", crv: "Ed25519", x: pin.x }, format: "jwk" }), { algorithms: ["EdDSA"] });
    } catch {
      return refuse("4: the signature does not verify with the pinned key");
    }
    // 5. aud: the push URL's origin and path
    const url = new URL(pushUrl);
    if (claims.aud !== `${url.origin}${url.pathname}`) return refuse(`5: aud ${JSON.stringify(claims.aud)}`);
    // 6. iat, exp
    const now = Date.now() / 1000;
    const { iat, exp, jti } = claims;
    if (typeof iat !== "number" || typeof exp !== "number") return refuse("6: no iat or exp");
    if (exp - iat > 300) return refuse(`6: exp - iat = ${exp - iat}`);
    if (exp <= now - DRIFT_S || iat > now + DRIFT_S) return refuse("6: expired, or issued in the future");
    // 7. jti, never seen before
    for (const [seen, until] of seenJtis) if (until < now - DRIFT_S) seenJtis.delete(seen);
    if (typeof jti !== "string" || !jti) return refuse("7: no jti");
    if (seenJtis.has(jti)) return refuse("7: jti replayed");
    seenJtis.set(jti, exp);
    // 8. the notification token, compared in constant time with the issued ones
    const token = header("x-a2a-notification-token");
    if (!token) return refuse("8: no x-a2a-notification-token");
    const presented = digest(token);
    let issued;
    for (const [candidate, binding] of tokens) if (timingSafeEqual(digest(candidate), presented)) issued = { token: candidate, binding };
    if (!issued) return refuse("8: a notification token never issued");
    entry.token = issued.token;
    // 9. Content-Type and body
    const contentType = (header("content-type") ?? "").split(";")[0].trim().toLowerCase();
    if (contentType !== "application/a2a+json") return refuse(`9: Content-Type ${contentType}`);
    let message;
    try {
      message = parseStrictJson(body);
    } catch {
      return refuse("9: the body is not JSON");
    }
    const kinds = Object.keys(message ?? {}).filter((k) => k === "task" || k === "statusUpdate");
    if (kinds.length !== 1 || Object.keys(message).length !== 1) return refuse("9: not exactly one of task or statusUpdate");
    entry.message = message;
    // 10. the task: the claim, the body, the token's binding
    const taskId = message.task?.id ?? message.statusUpdate?.taskId;
    if (typeof taskId !== "string" || taskId !== claims[TASK_CLAIM]) return refuse("10: the task claim is not the body's task");
    if (issued.binding.taskId !== undefined && issued.binding.taskId !== taskId) return refuse("10: the notification token was issued for another task");
    issued.binding.taskId ??= taskId;
    // 11. the seq
    const seqText = header("x-dynamicagents-event-seq") ?? "";
    if (!/^[1-9]\d*$/.test(seqText)) return refuse(`11: x-dynamicagents-event-seq ${JSON.stringify(seqText)}`);
    const seq = Number(seqText);
    Object.assign(entry, { taskId, seq, kind: kinds[0] });

    // De-duplicate on task id + seq ("What to answer"): a repeat gets 200 and is dropped.
    const state = applied.get(taskId) ?? { seqs: new Set(), lastSeq: 0 };
    applied.set(taskId, state);
    if (state.seqs.has(seq)) {
      entry.verdict = "duplicate";
      entry.answered = 200;
      return { status: 200, entry };
    }
    const attempt = (attempts.get(issued.token) ?? 0) + 1;
    attempts.set(issued.token, attempt);
    const status = policies.get(issued.token)?.({ attempt, seq, taskId }) ?? 200;
    entry.answered = status;
    if (status >= 200 && status < 300) {
      state.seqs.add(seq);
      // Applied only if newer than what was applied: a late earlier status must not undo a later one.
      entry.verdict = seq > state.lastSeq ? "applied" : "stale";
      state.lastSeq = Math.max(state.lastSeq, seq);
    } else {
      entry.verdict = "verified";
    }
    return { status, entry };
  };

  return {
    log,
    receive,
    /** @param {string} [taskId] */
    issue: (taskId) => {
      const token = `n-${randomUUID()}`;
      tokens.set(token, { taskId });
      return token;
    },
    /** Binds a token to the task SendMessage returned (check 10); refuses a rebinding. @param {string} token @param {string} taskId */
    bind: (token, taskId) => {
      const binding = tokens.get(token);
      if (!binding) throw new Error("bind: a token never issued");
      if (binding.taskId !== undefined && binding.taskId !== taskId) throw new Error(`bind: the token is bound to ${binding.taskId}, not ${taskId}`);
      binding.taskId = taskId;
    },
    /** @param {string} token @param {(push: { attempt: number, seq: number, taskId: string }) => number} policy */
    answer: (token, policy) => policies.set(token, policy),
    /** A receiver sharing pin, tokens, applied events and log, with a jti store of its own. */
    probe: () => createPushReceiver({ agent, pushUrl }, { tokens, applied, log: [] }),
  };
}
