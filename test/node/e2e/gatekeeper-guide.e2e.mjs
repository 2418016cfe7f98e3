// A test of docs/gatekeeper.md (issue 15, item 4): a gatekeeper written ONLY
// against that guide (./support/guide-gatekeeper.mjs) runs the guide's own
// local commands and then does everything the guide tells a gatekeeper to do,
// against the real Worker under `wrangler dev --local`:
//   - registers the deployment by its stub card and each tenant by its own
//     card, verifying the signature over the served JSON with its own RFC 8785
//     canonicaliser, refusing tampered copies, checking the protected header
//     and pinning the key bytes;
//   - mints a token per call, calls every method the guide lists and checks
//     each result's shape, and meets one refusal of each kind it documents;
//   - receives the pushes on its own HTTP server and verifies each as the
//     guide says (pinned key, alg/kid/jku, iss, aud, iat/exp, unique jti, the
//     task claim, the notification token, de-duplication on task id + seq),
//     refuses forged ones, and sees each delivery class from the Worker: a 503
//     retried with a fresh JWT, a 404 dead-lettered and re-delivered once to a
//     new push config, a SendMessage retry that adds a push config, and a retry
//     with a changed message refused.
// It deliberately imports nothing of the package for minting, canonicalisation,
// card verification or push verification (not scripts/dev/gatekeeper.mjs, not
// src/testing/*, not src/a2a/*): a second, independent implementation is the
// point, so it is exempt from the project's one-of-each rule. The Worker and
// the stand-in model are started by the guide's own block ("Running it
// locally"), read from docs/gatekeeper.md and run as written by bash, in a
// process group of its own, with its variables set as a reader would set
// them: this run's ports (Worker 8887, model 8898, a free inspector port),
// its gatekeeper's origin (8897) and a temporary state folder, so it never
// touches another session. The last test stops it as Ctrl-C does. Nothing
// is asserted about time beyond generous timeouts.
import { spawn } from "node:child_process";
import { randomUUID } from "node:crypto";
import { createWriteStream, existsSync, mkdtempSync, readdirSync, readFileSync, rmSync, statSync } from "node:fs";
import { createServer } from "node:net";
import { tmpdir } from "node:os";
import { delimiter, join } from "node:path";
import { SignJWT, base64url, calculateJwkThumbprint } from "jose";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { Refused, canonicalize, ed25519Key, jwksUrlFor, parseStrictJson, startGuideGatekeeper, verifyCard } from "./support/guide-gatekeeper.mjs";

const ROOT = new URL("../../..", import.meta.url).pathname;
const BIN = join(ROOT, "node_modules", ".bin");
/** The line before the guide's block ("Running it locally"). */
const BLOCK_MARKER = "<!-- test/node/e2e/gatekeeper-guide.e2e.mjs runs this block as written -->";
const PORTS = { worker: 8887, gatekeeper: 8897, model: 8898 };
const WORKER = `http://127.0.0.1:${PORTS.worker}`;
const MODEL_BASE = `http://127.0.0.1:${PORTS.model}/v1`;
const MARK = "[offline stand-in model]";
const TENANT = "assistant";
const DEAD_LETTERS = "https://dynamicagents.dev/deadLetters";
const HITL_REQUEST = "https://dynamicagents.dev/hitl/request";
const TERMINAL = ["TASK_STATE_COMPLETED", "TASK_STATE_FAILED", "TASK_STATE_CANCELED", "TASK_STATE_REJECTED"];
const sleep = (ms) => new Promise((resolve) => setTimeout(resolve, ms));
const say = (line) => process.stderr.write(`[gatekeeper-guide] ${line}\n`);

const home = mkdtempSync(join(tmpdir(), "gatekeeper-guide-"));
const runId = randomUUID().slice(0, 8);
/** @type {{ kid: string, x: string }} */
let signingKey;
/** The guide's block: the stand-in model and the Worker, one process group. @type {ReturnType<typeof startGroup> | undefined} */
let worker;
const state = join(home, "state");
/** @type {Awaited<ReturnType<typeof startGuideGatekeeper>>} */
let gk;

// ---------------------------------------------------------------------------
// Processes
// ---------------------------------------------------------------------------

/**
 * Starts `command` in a process group of its own (so stopping it stops
 * everything it started, and nothing else), its output in `<home>/<name>.log`.
 * @param {string} name
 * @param {string} command
 * @param {string[]} args
 * @param {Record<string, string>} [env] the reader's variables; nothing else is set for them (the
 *   block exports what keeps wrangler offline, and npm puts the project's Node first on PATH)
 */
function startGroup(name, command, args, env = {}) {
  const logFile = join(home, `${name}.log`);
  const log = createWriteStream(logFile, { mode: 0o600 });
  const base = { ...process.env };
  // Offline by construction: whatever model the developer configured is not used, nor whatever
  // of the block's variables the shell running this test happens to hold.
  for (const variable of ["OPENAI_BASE_URL", "OPENAI_MODEL", "OPENAI_API_KEY", "OPENAI_FALLBACK_MODEL", "WRANGLER_ARGS"]) delete base[variable];
  // A shell as a reader has it: not vitest's PATH with this checkout's node_modules/.bin first.
  base.PATH = (process.env.PATH ?? "")
    .split(delimiter)
    .filter((dir) => dir !== BIN)
    .join(delimiter);
  const child = spawn(command, args, {
    cwd: ROOT,
    detached: true,
    stdio: ["ignore", "pipe", "pipe"],
    env: { ...base, NO_COLOR: "1", ...env },
  });
  const tail = [];
  const state = { reloads: 0, exited: /** @type {null | { code: number | null, signal: string | null }} */ (null), output: "" };
  const collect = (chunk) => {
    log.write(chunk);
    const text = chunk.toString();
    if (state.output.length < 20_000) state.output += text;
    for (const line of text.split("\n")) {
      if (/reloading local server/i.test(line)) state.reloads++;
      if (!line.trim() || /^\[wrangler:info\] (GET|POST) /.test(line)) continue;
      tail.push(line);
      if (tail.length > 40) tail.shift();
    }
  };
  child.stdout.on("data", collect);
  child.stderr.on("data", collect);
  const exited = new Promise((resolve) => child.once("exit", (code, signal) => resolve((state.exited = { code, signal }))));
  const pgid = /** @type {number} */ (child.pid);
  const alive = () => {
    try {
      process.kill(-pgid, 0);
      return true;
    } catch {
      return false;
    }
  };
  return {
    state,
    logFile,
    tail: () => tail.join("\n"),
    alive,
    /** `signal` (SIGTERM) to the group, SIGKILL if anything of it lingers; resolves to whether anything had to be killed. */
    stop: async (signal = "SIGTERM") => {
      try {
        process.kill(-pgid, signal);
      } catch {
        // gone already
      }
      await Promise.race([exited, sleep(5_000)]);
      for (let i = 0; i < 30 && alive(); i++) await sleep(100);
      const lingered = alive();
      if (lingered) {
        try {
          process.kill(-pgid, "SIGKILL");
        } catch {
          // gone meanwhile
        }
        for (let i = 0; i < 20 && alive(); i++) await sleep(100);
      }
      await new Promise((resolve) => log.end(resolve));
      return lingered;
    },
  };
}

/** Fails unless `port` can be listened on at 127.0.0.1 (`0`: returns a free one). */
function claimPort(port) {
  return new Promise((resolve, reject) => {
    const server = createServer();
    server.once("error", (error) => reject(new Error(`port ${port} on 127.0.0.1 is taken (${error.message}): this test needs ${JSON.stringify(PORTS)} free`)));
    server.listen(port, "127.0.0.1", () => {
      const address = /** @type {import("node:net").AddressInfo} */ (server.address());
      server.close(() => resolve(address.port));
    });
  });
}

/** Polls `find` until it returns something other than undefined, or fails naming `what`. */
async function until(find, ms, what) {
  const deadline = Date.now() + ms;
  let lastError;
  for (;;) {
    if (worker?.state.exited) throw new Error(`${what}: wrangler exited ${JSON.stringify(worker.state.exited)}; its log ends:\n${worker.tail()}`);
    try {
      const found = await find();
      if (found !== undefined) return found;
    } catch (error) {
      if (error.fatal) throw error;
      lastError = error;
    }
    if (Date.now() > deadline) {
      throw new Error(`${what}: not within ${ms / 1000} s${lastError ? ` (last error: ${lastError.message})` : ""}\nthe Worker's log ends:\n${worker?.tail()}`);
    }
    await sleep(200);
  }
}

beforeAll(async () => {
  for (const port of Object.values(PORTS)) await claimPort(port);
  const inspectorPort = await claimPort(0);

  // The gatekeeper first: the Worker fetches its JWKS on the first call.
  gk = await startGuideGatekeeper({ port: PORTS.gatekeeper, identityKey: `guide-${runId}` });

  // "Running it locally": the guide's block as written, its variables as a reader sets them.
  const guide = readFileSync(join(ROOT, "docs/gatekeeper.md"), "utf8");
  const marker = guide.indexOf(BLOCK_MARKER);
  const block = /```bash\n([\s\S]*?)```/.exec(guide.slice(marker))?.[1];
  if (marker === -1 || !block) throw new Error(`docs/gatekeeper.md has no bash block after ${BLOCK_MARKER}`);
  worker = startGroup("local", "bash", ["-c", block], {
    WORKER_PORT: String(PORTS.worker),
    MODEL_PORT: String(PORTS.model),
    INSPECTOR_PORT: String(inspectorPort),
    STATE: state,
    GATEKEEPER: gk.origin,
  });
  await until(
    async () => ((await fetch(`${MODEL_BASE}/models`, { signal: AbortSignal.timeout(2_000) })).status === 200 ? true : undefined),
    60_000,
    "the stand-in model",
  );
  // The block made the signing key (`npm run --silent keys`) into $STATE/worker.env, readable only by its owner.
  const envFile = join(state, "worker.env");
  const key = await until(() => /^A2A_SIGNING_KEY='(.+)'$/m.exec(existsSync(envFile) ? readFileSync(envFile, "utf8") : "")?.[1], 30_000, "the signing key");
  signingKey = JSON.parse(key);
  expect(statSync(envFile).mode & 0o777).toBe(0o600);
  await until(
    async () => {
      const response = await fetch(jwksUrlFor(WORKER), { signal: AbortSignal.timeout(2_000) });
      if (response.status !== 200) return undefined;
      const { keys } = /** @type {{ keys: Array<{ kid?: string, x?: string }> }} */ (await response.json());
      return keys.some((k) => k.kid === signingKey.kid && k.x === signingKey.x) ? true : undefined;
    },
    170_000,
    "the Worker serving this run's signing key",
  );
}, 240_000);

afterAll(async () => {
  await worker?.stop();
  await gk?.close();
  rmSync(home, { recursive: true, force: true });
});

// ---------------------------------------------------------------------------
// Helpers over the gatekeeper
// ---------------------------------------------------------------------------

const message = (text, extra = {}) => ({ messageId: `m-${randomUUID()}`, role: "ROLE_USER", parts: [{ text }], ...extra });

/** The JSON-RPC error a call answers with (fails if it succeeds). */
async function errorOf(promise) {
  try {
    const result = await promise;
    throw new Error(`expected a JSON-RPC error, got ${JSON.stringify(result).slice(0, 300)}`);
  } catch (error) {
    if (error.rpc) return error.rpc;
    throw error;
  }
}

const errorInfo = (reason, domain = "a2a-protocol.org") => ({ "@type": "type.googleapis.com/google.rpc.ErrorInfo", reason, domain });
const answerText = (task) =>
  task?.artifacts
    ?.find((a) => a.artifactId === "answer")
    ?.parts?.map((p) => p.text ?? "")
    .join("") ?? "";
const deadLettersOf = (task) => task?.metadata?.[DEAD_LETTERS];
/** What the Worker pushed (not the requests this test forged itself). */
const genuine = () => gk.receiver.log.filter((e) => !e.forged);
const pushesFor = (token) => genuine().filter((e) => e.token === token);
const getTask = (id) => gk.call("GetTask", { tenant: TENANT, id });

/**
 * SendMessage as a gatekeeper sends it ("Calling"): returnImmediately and a
 * push config with a fresh notification token, bound to the task returned.
 * `policy` chooses what the receiver answers this config's verified pushes.
 * @param {string} text
 * @param {{ configId?: string, policy?: (push: { attempt: number, seq: number, taskId: string }) => number }} [options]
 */
async function sendWithPush(text, { configId, policy } = {}) {
  const token = gk.issueToken();
  if (policy) gk.receiver.answer(token, policy);
  const sent = message(text);
  const config = { url: gk.pushUrl, token, ...(configId ? { id: configId } : {}) };
  const result = await gk.call("SendMessage", {
    tenant: TENANT,
    message: sent,
    configuration: { returnImmediately: true, taskPushNotificationConfig: config },
  });
  expect(result.task?.status?.state, "an immediate send returns the submitted task").toBe("TASK_STATE_SUBMITTED");
  gk.receiver.bind(token, result.task.id);
  return { task: result.task, token, message: sent, config };
}

/**
 * The first push to `token` (of `kind`, if given) the receiver verified and answered `status`, awaited.
 * @param {string} token
 * @param {number} status
 * @param {string} what
 * @param {number} [ms]
 * @param {"task" | "statusUpdate"} [kind]
 */
const pushAnswered = (token, status, what, ms = 90_000, kind) =>
  until(
    () => {
      // A push from the Worker that failed verification was answered 401 (and dead-lettered): say which check, at once.
      const refused = genuine().find((e) => e.verdict === "refused");
      if (refused) throw Object.assign(new Error(`${what}: a push from the Worker failed check ${refused.reason}`), { fatal: true });
      return pushesFor(token).find((e) => e.answered === status && (kind === undefined || e.kind === kind));
    },
    ms,
    what,
  );

/** Every genuine push verified: a refusal names the check that failed. */
function expectVerified(entries) {
  for (const entry of entries) expect.soft(entry.reason, `a push from the Worker failed verification (${entry.kind ?? "?"}, seq ${entry.seq})`).toBeUndefined();
}

// ---------------------------------------------------------------------------
// The tests
// ---------------------------------------------------------------------------

describe("the gatekeeper of docs/gatekeeper.md", () => {
  it("canonicalises with RFC 8785 and reads JSON strictly (its own implementation)", () => {
    // RFC 8785 §3.2.2's example, and §3.2.3's sorting example.
    const input = String.raw`{"numbers":[333333333.33333329,1E30,4.50,2e-3,0.000000000000000000000000001],"string":"\u20ac$\u000F\u000aA'\u0042\u0022\u005c\\\"\/","literals":[null,true,false]}`;
    expect(canonicalize(parseStrictJson(input))).toBe(
      String.raw`{"literals":[null,true,false],"numbers":[333333333.3333333,1e+30,4.5,0.002,1e-27],"string":"€$\u000f\nA'B\"\\\\\"/"}`,
    );
    const sorted = canonicalize(
      parseStrictJson(
        String.raw`{"\u20ac":"Euro Sign","\r":"Carriage Return","\ufb33":"Hebrew Letter Dalet With Dagesh","1":"One","\ud83d\ude00":"Emoji: Grinning Face","\u0080":"Control","\u00f6":"Latin Small Letter O With Diaeresis"}`,
      ),
    );
    expect([...sorted.matchAll(/:"([^"]*)"/g)].map((m) => m[1])).toEqual([
      "Carriage Return",
      "One",
      "Control",
      "Latin Small Letter O With Diaeresis",
      "Euro Sign",
      "Emoji: Grinning Face",
      "Hebrew Letter Dalet With Dagesh",
    ]);
    expect(() => parseStrictJson('{"a":1,"b":{"a":2},"a":3}')).toThrow(/twice/);
    expect(parseStrictJson('{"a":1,"b":{"a":2}}')).toEqual({ a: 1, b: { a: 2 } });
    expect(() => parseStrictJson('{"a":1} x')).toThrow();
  });

  it("registers the deployment: the stub card verifies over its served bytes, tampered copies do not, the key is pinned", async () => {
    // The stand-in announced itself as the guide shows ("Running it locally").
    expect.soft(worker?.state.output ?? "").toContain(`offline stand-in model  ${MODEL_BASE}`);
    const seen = await gk.register(WORKER);
    const { card, header, served, response } = seen;
    const pin = /** @type {{ jku: string, kid: string, x: string }} */ (gk.agent.pin);

    // "Registering the agents" §1: the stub card and its caching.
    expect.soft(response.headers.get("content-type") ?? "").toMatch(/^application\/json/);
    expect.soft(response.headers.get("cache-control")).toBe("public, max-age=300");
    const etag = response.headers.get("etag");
    expect.soft(etag).toBeTruthy();
    expect.soft(response.headers.get("last-modified")).toBeTruthy();
    const again = await fetch(`${WORKER}/.well-known/agent-card.json`, { redirect: "manual", headers: { "If-None-Match": etag ?? "" } });
    expect.soft(again.status, "a conditional GET with the ETag").toBe(304);
    expect.soft(card.supportedInterfaces).toEqual([
      { url: `${WORKER}/a2a`, protocolBinding: "JSONRPC", protocolVersion: "1.0" },
      { url: `${WORKER}/a2a/rest`, protocolBinding: "HTTP+JSON", protocolVersion: "1.0" },
    ]);
    expect.soft(card.capabilities).toEqual({
      streaming: true,
      pushNotifications: true,
      extendedAgentCard: true,
      extensions: [
        {
          uri: "https://a2a-protocol.org/extensions/task-progress/v1",
          description: expect.stringContaining("progress"),
          params: { maxTrackers: 20, maxMessageChars: 512, maxIdChars: 128, recommendedMaxUpdatesPerSecond: 2 },
        },
        { uri: "https://dynamicagents.dev/ext/erasure/v1" },
      ],
    });
    expect.soft(card.securitySchemes).toEqual({ gatekeeperJwt: { httpAuthSecurityScheme: { scheme: "Bearer", bearerFormat: "JWT" } } });
    expect.soft(typeof card.name === "string" && typeof card.description === "string" && typeof card.version === "string").toBe(true);

    // §2: the protected header.
    expect(header).toEqual({ alg: "EdDSA", typ: "JOSE", kid: signingKey.kid, jku: `${WORKER}/.well-known/jwks.json` });
    // §3: the pin holds the key bytes; compared out of band with the key this run made, and its kid's thumbprint.
    expect(pin).toEqual({ jku: `${WORKER}/.well-known/jwks.json`, kid: signingKey.kid, x: signingKey.x });
    const thumbprint = Buffer.from(base64url.decode(await calculateJwkThumbprint({ kty: "OKP", crv: "Ed25519", x: pin.x }, "sha256")));
    expect.soft(pin.kid).toBe(`a2a-${pin.kid.slice(4, 14)}-${thumbprint.subarray(0, 4).toString("hex")}`);
    expect.soft(pin.kid).toMatch(/^a2a-\d{4}-\d{2}-\d{2}-[0-9a-f]{8}$/);

    // The same served bytes verify again against the pin.
    await expect(verifyCard(served, WORKER, pin)).resolves.toMatchObject({ key: pin });
    // Tampered copies are refused, whatever a normalising verifier would say.
    const injected = JSON.stringify({ ...card, "x-injected": "a member the signer never saw" });
    await expect(verifyCard(injected, WORKER, pin), "an injected unknown member").rejects.toThrow(/does not verify/);
    const emptied = JSON.stringify({ ...card, capabilities: { ...card.capabilities, extensions: [] } });
    await expect(verifyCard(emptied, WORKER, pin), "an injected empty array").rejects.toThrow(/does not verify/);
    const reworded = JSON.stringify({ ...card, description: `${card.description} (now with extra powers)` });
    await expect(verifyCard(reworded, WORKER, pin), "a changed description").rejects.toThrow(/does not verify/);
    await expect(verifyCard(served.replace(/^\{/, '{"name":"impostor",'), WORKER, pin), "a duplicate member name").rejects.toThrow(/twice/);
    // The jku rule: the card names the origin it was fetched from, compared as a string.
    await expect(verifyCard(served, `http://localhost:${PORTS.worker}`, undefined), "another origin's jku").rejects.toThrow(/jku/);
    // Another key under the same kid and jku: the pin, not the JWKS, decides.
    await expect(verifyCard(served, WORKER, { ...pin, x: ed25519Key("other").publicJwk.x }), "a key other than the pinned one").rejects.toThrow(Refused);
    await expect(verifyCard(served, WORKER, { ...pin, kid: "a2a-2000-01-01-00000000" }), "another pinned kid").rejects.toThrow(/pinned/);
  });

  it("registers each tenant by its own card from GetExtendedAgentCard, against the same pin", async () => {
    for (const tenant of ["assistant", "researcher"]) {
      const { card, header, key, served } = await gk.registerTenant(tenant);
      expect(key, `${tenant}'s card is signed by the pinned key`).toEqual(gk.agent.pin);
      expect.soft(header.jku).toBe(`${WORKER}/.well-known/jwks.json`);
      expect.soft(card.supportedInterfaces?.[0]).toMatchObject({ url: `${WORKER}/a2a`, protocolBinding: "JSONRPC", tenant });
      expect.soft(card.defaultInputModes).toContain("text/plain");
      const tampered = JSON.stringify({ ...parseStrictJson(served), "x-injected": true });
      await expect(verifyCard(tampered, WORKER, gk.agent.pin, { tenant }), `a tampered ${tenant} card`).rejects.toThrow(/does not verify/);
      await expect(verifyCard(served, WORKER, gk.agent.pin, { tenant: "somebody-else" }), `${tenant}'s card for another tenant`).rejects.toThrow(/tenant/);
    }
  });

  it("meets the refusals of the guide's table in their documented shapes", async () => {
    const params = { tenant: TENANT };
    const expect401 = async (what, reply, check) => {
      expect.soft(reply.status, `${what}: HTTP status`).toBe(401);
      expect.soft(reply.json, `${what}: body`).toMatchObject({ error: "invalid_token", check });
      expect.soft(typeof reply.json?.error_description, `${what}: error_description`).toBe("string");
      expect.soft(reply.json?.jsonrpc, `${what}: not a JSON-RPC body`).toBeUndefined();
      return reply;
    };
    const bare = await expect401("no Authorization", await gk.post("GetExtendedAgentCard", params, { token: null }), "bearer");
    expect.soft(bare.headers.get("www-authenticate"), "no Authorization: a bare challenge").toBe('Bearer realm="a2a"');
    const otherKey = await expect401(
      "a token signed by another key",
      await gk.post("GetExtendedAgentCard", params, { token: await gk.mint({ tenant: TENANT, key: ed25519Key("x").privateKey }) }),
      "signature",
    );
    expect.soft(otherKey.headers.get("www-authenticate") ?? "").toMatch(/^Bearer error="invalid_token"/);
    await expect401(
      "a jku on another origin",
      await gk.post("GetExtendedAgentCard", params, { token: await gk.mint({ tenant: TENANT, header: { jku: "http://127.0.0.1:9/.well-known/jwks.json" } }) }),
      "jku-allowlisted",
    );
    await expect401(
      "a jku with a query",
      await gk.post("GetExtendedAgentCard", params, { token: await gk.mint({ tenant: TENANT, header: { jku: `${jwksUrlFor(gk.origin)}?v=2` } }) }),
      "jku-allowlisted",
    );
    await expect401(
      "no jku",
      await gk.post("GetExtendedAgentCard", params, { token: await gk.mint({ tenant: TENANT, header: { jku: undefined } }) }),
      "jku-present",
    );
    await expect401(
      "iss on another origin than jku",
      await gk.post("GetExtendedAgentCard", params, { token: await gk.mint({ tenant: TENANT, claims: { iss: `http://localhost:${PORTS.gatekeeper}` } }) }),
      "iss-matches-jku",
    );
    await expect401(
      "aud with a trailing slash",
      await gk.post("GetExtendedAgentCard", params, { token: await gk.mint({ tenant: TENANT, claims: { aud: `${WORKER}/a2a/` } }) }),
      "signature",
    );
    // "Minting a token": exp at most 3,600 s ahead.
    await expect401(
      "exp over an hour ahead",
      await gk.post("GetExtendedAgentCard", params, { token: await gk.mint({ tenant: TENANT, lifetime: 3_700 }) }),
      "signature",
    );
    const withinHour = await gk.post("GetExtendedAgentCard", params, { token: await gk.mint({ tenant: TENANT, lifetime: 3_500 }) });
    expect.soft(withinHour.status, "exp 3,500 s ahead is accepted").toBe(200);
    await expect401(
      "no exp",
      await gk.post("GetExtendedAgentCard", params, { token: await gk.mint({ tenant: TENANT, claims: { exp: undefined } }) }),
      "signature",
    );
    await expect401(
      "a tenant claim other than params.tenant",
      await gk.post("GetExtendedAgentCard", params, { token: await gk.mint({ tenant: "researcher" }) }),
      "tenant-claim",
    );
    await expect401(
      "an identity without a key",
      await gk.post("GetExtendedAgentCard", params, { token: await gk.mint({ tenant: TENANT, identity: { name: "nobody" } }) }),
      "identity-claim",
    );

    // Unknown tenant: HTTP 404, -32602 without data, naming the tenants served.
    const unknown = await gk.post("GetExtendedAgentCard", { tenant: "no-such-tenant" });
    expect.soft(unknown.status, "an unknown tenant: HTTP 404").toBe(404);
    expect.soft(unknown.json?.jsonrpc).toBe("2.0");
    expect.soft(unknown.json?.error?.code).toBe(-32602);
    expect.soft(unknown.json?.error?.data, "JSON-RPC's own codes carry no data").toBeUndefined();
    expect.soft(unknown.json?.error?.message ?? "").toContain("assistant");

    const plain = await gk.post("GetExtendedAgentCard", params, { headers: { "Content-Type": "text/plain" } });
    expect.soft(plain.status, "Content-Type text/plain: HTTP 415").toBe(415);
    expect.soft(plain.json).toMatchObject({ jsonrpc: "2.0", id: null, error: { code: -32005, data: [errorInfo("CONTENT_TYPE_NOT_SUPPORTED")] } });
    const noVersion = await gk.post("GetExtendedAgentCard", params, { headers: { "A2A-Version": null } });
    expect.soft(noVersion.status, "no A2A-Version: HTTP 200").toBe(200);
    expect.soft(noVersion.json?.error).toMatchObject({ code: -32009, data: [errorInfo("VERSION_NOT_SUPPORTED")] });
    const notJson = await gk.post("GetTask", params, { body: "{not json" });
    expect.soft(notJson.status, "a body that is not JSON: HTTP 400").toBe(400);
    expect.soft(notJson.json?.error?.code).toBe(-32700);
    const noMethod = await gk.post("NoSuchMethod", params);
    expect.soft(noMethod.status).toBe(200);
    expect.soft(noMethod.json?.error?.code).toBe(-32601);
    const get = await fetch(`${WORKER}/a2a`, { redirect: "manual" });
    expect.soft(get.status, "GET /a2a: HTTP 405").toBe(405);
    expect.soft(get.headers.get("allow")).toBe("POST");
    expect.soft(await get.json()).toMatchObject({ error: "method_not_allowed" });
    const elsewhere = await fetch(`${WORKER}/elsewhere`, { redirect: "manual" });
    expect.soft(elsewhere.status, "another path: HTTP 404").toBe(404);
    expect.soft(await elsewhere.json()).toMatchObject({ error: "not_found" });

    const missing = await errorOf(getTask("no-such-task"));
    expect.soft(missing).toMatchObject({ code: -32001, data: [errorInfo("TASK_NOT_FOUND")] });
  });

  /** Tasks of the method tests, kept for the later ones. */
  const tasks = /** @type {Record<string, any>} */ ({});

  it("calls SendMessage held and immediate, SendStreamingMessage, SubscribeToTask, GetTask, ListTasks", async () => {
    // Held (the default): the completed task, its answer in the `answer` artifact.
    const heldMessage = message("what time is it?");
    const held = await gk.call("SendMessage", { tenant: TENANT, message: heldMessage });
    const task = held.task;
    expect(task?.status?.state).toBe("TASK_STATE_COMPLETED");
    expect.soft(typeof task.id === "string" && typeof task.contextId === "string").toBe(true);
    expect.soft(answerText(task).startsWith(MARK), "the answer artifact").toBe(true);
    expect.soft(task.status.message?.role).toBe("ROLE_AGENT");
    expect.soft(task.history?.some((m) => m.messageId === heldMessage.messageId)).toBe(true);
    tasks.held = task;
    // A held retry of the same messageId: the same task, at once.
    const retried = await gk.call("SendMessage", { tenant: TENANT, message: heldMessage });
    expect.soft(retried.task?.id).toBe(task.id);
    expect.soft(retried.task?.status?.state).toBe("TASK_STATE_COMPLETED");

    // Immediate, no push config: submitted at once, then read by GetTask.
    const immediate = await gk.call("SendMessage", {
      tenant: TENANT,
      message: message("hello", { contextId: task.contextId }),
      configuration: { returnImmediately: true },
    });
    expect(immediate.task?.status?.state).toBe("TASK_STATE_SUBMITTED");
    expect.soft(immediate.task.contextId, "the conversation continues").toBe(task.contextId);
    const finished = await until(
      async () => {
        const t = await getTask(immediate.task.id);
        return TERMINAL.includes(t.status?.state) ? t : undefined;
      },
      90_000,
      "the immediate task finishing",
    );
    expect.soft(finished.status.state).toBe("TASK_STATE_COMPLETED");
    expect.soft(answerText(finished).startsWith(MARK)).toBe(true);

    // Streaming: the snapshot, then every event in order, the answer as chunks, closing at the end.
    const streamed = await gk.stream("SendStreamingMessage", { tenant: TENANT, message: message("tell me the time, streamed") });
    expect(streamed.contentType).toMatch(/^text\/event-stream/);
    await streamed.closed;
    const events = streamed.events;
    expect(events.length).toBeGreaterThan(1);
    for (const event of events) {
      expect.soft(event.data).toMatchObject({ jsonrpc: "2.0", id: streamed.id });
      expect.soft(event.id ?? "", "each event's id: is its seq").toMatch(/^\d+$/);
    }
    const first = events[0].data.result;
    expect.soft(Object.keys(first), "the stream starts with the task").toEqual(["task"]);
    expect.soft(events[0].id, "a new task's snapshot stands for event 1").toBe("1");
    const streamTaskId = first.task?.id;
    const seqs = events.map((e) => Number(e.id));
    expect
      .soft(
        seqs.every((s, i) => i === 0 || s > seqs[i - 1]),
        `ids increase: ${seqs}`,
      )
      .toBe(true);
    const chunks = events.filter((e) => e.data.result.artifactUpdate);
    expect.soft(chunks.length, "the answer arrives as artifact chunks").toBeGreaterThan(0);
    expect
      .soft(chunks.every((e) => e.data.result.artifactUpdate.artifact?.artifactId === "answer" && e.data.result.artifactUpdate.taskId === streamTaskId))
      .toBe(true);
    expect.soft(chunks.at(-1)?.data.result.artifactUpdate.lastChunk, "the last chunk says so").toBe(true);
    const last = events.at(-1)?.data.result;
    expect.soft(last?.statusUpdate?.status?.state, "the stream closes after the terminal event").toBe("TASK_STATE_COMPLETED");
    expect.soft(last?.statusUpdate?.taskId).toBe(streamTaskId);
    tasks.streamed = { id: streamTaskId, seqs };

    // SubscribeToTask with Last-Event-ID: 0 on the finished task: the snapshot, the replay, then it closes.
    const replay = await gk.stream("SubscribeToTask", { tenant: TENANT, id: streamTaskId }, { headers: { "Last-Event-ID": "0" } });
    expect(replay.contentType).toMatch(/^text\/event-stream/);
    await replay.closed;
    expect.soft(Object.keys(replay.events[0]?.data.result ?? {})).toEqual(["task"]);
    expect.soft(replay.events[0]?.data.result.task?.status?.state).toBe("TASK_STATE_COMPLETED");
    // docs/protocol.md "Stream ids": after Last-Event-ID n the snapshot's id is n, so no id on the stream ever goes down.
    expect.soft(replay.events[0]?.id, "the snapshot's id is the Last-Event-ID sent").toBe("0");
    const ids = replay.events.map((e) => Number(e.id));
    expect
      .soft(
        ids.every((id, i) => i === 0 || id >= ids[i - 1]),
        `ids never go down: ${ids}`,
      )
      .toBe(true);
    const replayed = replay.events.slice(1).map((e) => Number(e.id));
    for (const seq of seqs.slice(1)) expect.soft(replayed, `the replay holds event ${seq}`).toContain(seq);
    expect.soft(replay.events.at(-1)?.data.result.statusUpdate?.status?.state).toBe("TASK_STATE_COMPLETED");
    // Without Last-Event-ID, a terminal task is -32004; a Last-Event-ID that is no integer is -32602.
    const terminal = await gk.stream("SubscribeToTask", { tenant: TENANT, id: streamTaskId });
    expect.soft(terminal.json?.error).toMatchObject({ code: -32004, data: [errorInfo("UNSUPPORTED_OPERATION")] });
    const badHeader = await gk.stream("SubscribeToTask", { tenant: TENANT, id: streamTaskId }, { headers: { "Last-Event-ID": "abc" } });
    expect.soft(badHeader.json?.error?.code).toBe(-32602);

    // GetTask: the task itself, artifacts included; historyLength shapes it.
    const got = await gk.call("GetTask", { tenant: TENANT, id: task.id, historyLength: 0 });
    expect.soft(got.id).toBe(task.id);
    expect.soft(got.status?.state).toBe("TASK_STATE_COMPLETED");
    expect.soft(answerText(got)).toBe(answerText(task));
    expect.soft(got.history ?? [], "historyLength 0 keeps no message").toEqual([]);
    // Another caller's task does not exist for this one.
    const foreign = await errorOf(gk.call("GetTask", { tenant: TENANT, id: task.id }, { identity: { key: `someone-else-${runId}` } }));
    expect.soft(foreign).toMatchObject({ code: -32001, data: [errorInfo("TASK_NOT_FOUND")] });

    // ListTasks: the caller's own, newest status first, paged.
    const all = await gk.call("ListTasks", { tenant: TENANT });
    expect.soft(Object.keys(all).sort()).toEqual(["nextPageToken", "pageSize", "tasks", "totalSize"]);
    expect.soft(all.nextPageToken, "the last page").toBe("");
    expect.soft(all.totalSize).toBe(3);
    expect.soft(all.tasks?.map((t) => t.id).sort()).toEqual([task.id, immediate.task.id, streamTaskId].sort());
    expect
      .soft(
        all.tasks?.every((t) => t.artifacts === undefined),
        "no artifacts without includeArtifacts",
      )
      .toBe(true);
    const stamps = (all.tasks ?? []).map((t) => Date.parse(t.status.timestamp));
    expect
      .soft(
        stamps.every((s, i) => i === 0 || s <= stamps[i - 1]),
        "newest status first",
      )
      .toBe(true);
    const page1 = await gk.call("ListTasks", { tenant: TENANT, pageSize: 1 });
    expect.soft(page1.tasks?.length).toBe(1);
    expect.soft(page1.nextPageToken).toBeTruthy();
    const page2 = await gk.call("ListTasks", { tenant: TENANT, pageSize: 1, pageToken: page1.nextPageToken });
    expect.soft(page2.tasks?.length).toBe(1);
    expect.soft(page2.tasks?.[0]?.id).not.toBe(page1.tasks?.[0]?.id);
    const inContext = await gk.call("ListTasks", { tenant: TENANT, contextId: task.contextId, includeArtifacts: true });
    expect.soft(inContext.tasks?.map((t) => t.id).sort()).toEqual([task.id, immediate.task.id].sort());
    expect.soft(inContext.tasks?.every((t) => answerText(t).startsWith(MARK))).toBe(true);
    const completed = await gk.call("ListTasks", { tenant: TENANT, status: "TASK_STATE_COMPLETED" });
    expect.soft(completed.tasks?.length).toBe(3);
    const badSize = await errorOf(gk.call("ListTasks", { tenant: TENANT, pageSize: 1000 }));
    expect.soft(badSize.code).toBe(-32602);
  });

  it("takes a request for input by push, follows it with SubscribeToTask, and answers it as the same caller", async () => {
    const { task, token } = await sendWithPush("ask me a question about my trip");
    const waiting = await pushAnswered(token, 200, "the input-required push", 90_000, "statusUpdate");
    expect(waiting.kind).toBe("statusUpdate");
    const status = waiting.message.statusUpdate.status;
    expect(status.state).toBe("TASK_STATE_INPUT_REQUIRED");
    expect.soft(waiting.message.statusUpdate.taskId).toBe(task.id);
    const request = status.message?.parts?.find((p) => p.data?.type === HITL_REQUEST)?.data;
    expect(request, "the hitl/request data part").toBeTruthy();
    expect.soft(request.requestId).toMatch(/^[0-9a-f]{32}$/);
    expect.soft(request.requestKind).toBe("question");
    expect.soft(typeof request.prompt).toBe("string");
    expect.soft(request.expiresAt).toMatch(/^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}(\.\d+)?Z$/);
    expect.soft(status.message.parts.some((p) => typeof p.text === "string")).toBe(true);
    expect.soft((await getTask(task.id)).status?.state).toBe("TASK_STATE_INPUT_REQUIRED");

    // SubscribeToTask on the waiting task stays open through the answer.
    const follow = await gk.stream("SubscribeToTask", { tenant: TENANT, id: task.id });
    expect(follow.contentType).toMatch(/^text\/event-stream/);
    await until(() => (follow.events.length ? true : undefined), 30_000, "the subscription's snapshot");
    expect.soft(follow.events[0].data.result.task?.status?.state).toBe("TASK_STATE_INPUT_REQUIRED");
    expect.soft(follow.events[0].id, "the snapshot's id is the latest seq").toBe(String(waiting.seq));

    const answered = await gk.call("SendMessage", {
      tenant: TENANT,
      message: message("Lisbon, in May", { taskId: task.id, contextId: task.contextId }),
      configuration: { returnImmediately: true },
    });
    expect.soft(answered.task?.id).toBe(task.id);
    expect.soft(answered.task?.status?.state, "the answered task is back at work").toBe("TASK_STATE_WORKING");
    await follow.closed;
    expect.soft(follow.events.at(-1)?.data.result.statusUpdate?.status?.state, "the subscription closes on the end").toBe("TASK_STATE_COMPLETED");

    const done = await pushAnswered(token, 200, "the terminal push", 90_000, "task");
    expect(done.message.task.status.state).toBe("TASK_STATE_COMPLETED");
    expect.soft(done.seq, "the terminal push comes after the request").toBeGreaterThan(waiting.seq);
    expect.soft(done.verdict).toBe("applied");
    expect.soft(answerText(done.message.task)).toContain("Lisbon");
    expectVerified(pushesFor(token));
  });

  it("refuses plain text to a choice, and cancels a waiting task (CancelTask), whose canceled task is pushed", async () => {
    const { task, token } = await sendWithPush("ask me how much detail you should give");
    const waiting = await pushAnswered(token, 200, "the choice's input-required push", 90_000, "statusUpdate");
    const request = waiting.message.statusUpdate?.status?.message?.parts?.find((p) => p.data?.type === HITL_REQUEST)?.data;
    expect(request?.requestKind).toBe("choice");
    expect.soft(request.options?.length).toBeGreaterThan(0);
    const plain = await errorOf(
      gk.call("SendMessage", {
        tenant: TENANT,
        message: message("whatever you like", { taskId: task.id, contextId: task.contextId }),
        configuration: { returnImmediately: true },
      }),
    );
    expect.soft(plain.code, "plain text to a choice").toBe(-32602);
    const otherContext = await errorOf(
      gk.call("SendMessage", {
        tenant: TENANT,
        message: message("x", { taskId: task.id, contextId: `other-${runId}` }),
        configuration: { returnImmediately: true },
      }),
    );
    expect.soft(otherContext.code, "a contextId other than the task's").toBe(-32602);

    const canceled = await gk.call("CancelTask", { tenant: TENANT, id: task.id });
    expect(canceled.id).toBe(task.id);
    expect(canceled.status?.state).toBe("TASK_STATE_CANCELED");
    const twice = await gk.call("CancelTask", { tenant: TENANT, id: task.id });
    expect.soft(twice.status?.state, "canceling a canceled task returns it").toBe("TASK_STATE_CANCELED");
    const pushed = await pushAnswered(token, 200, "the canceled task's push", 90_000, "task");
    expect.soft(pushed.message.task.status.state).toBe("TASK_STATE_CANCELED");
    expect.soft((await getTask(task.id)).status?.state).toBe("TASK_STATE_CANCELED");
    const toTerminal = await errorOf(
      gk.call("SendMessage", {
        tenant: TENANT,
        message: message("hello?", { taskId: task.id, contextId: task.contextId }),
        configuration: { returnImmediately: true },
      }),
    );
    expect.soft(toTerminal).toMatchObject({ code: -32004, data: [errorInfo("UNSUPPORTED_OPERATION")] });

    const notCancelable = await errorOf(gk.call("CancelTask", { tenant: TENANT, id: tasks.held.id }));
    expect.soft(notCancelable).toMatchObject({ code: -32002, data: [errorInfo("TASK_NOT_CANCELABLE")] });
    expect.soft(notCancelable.data?.[0]?.metadata?.taskState ?? "").toMatch(/COMPLETED/i);
    expectVerified(pushesFor(token));
  });

  it("sees a 503 retried with a fresh callback JWT and then delivered, leaving no dead letter", async () => {
    const { task, token } = await sendWithPush("what time is it now?", { configId: "gk-503", policy: ({ attempt }) => (attempt === 1 ? 503 : 200) });
    const delivered = await pushAnswered(token, 200, "the retried push delivered");
    const attempts = pushesFor(token);
    expectVerified(attempts);
    expect(
      attempts.map((e) => e.answered),
      "one 503, then the 200",
    ).toEqual([503, 200]);
    expect(delivered.kind).toBe("task");
    expect.soft(delivered.message.task.id).toBe(task.id);
    expect.soft(delivered.message.task.status.state).toBe("TASK_STATE_COMPLETED");
    expect.soft(attempts[0].seq, "the retry carries the same event").toBe(delivered.seq);
    expect.soft(attempts[0].jwt, "a new JWT each attempt").not.toBe(delivered.jwt);
    expect.soft(attempts[0].claims.jti, "a new jti each attempt").not.toBe(delivered.claims.jti);
    // The push's seq is the terminal status event's (SubscribeToTask replays it).
    const replay = await gk.stream("SubscribeToTask", { tenant: TENANT, id: task.id }, { headers: { "Last-Event-ID": "0" } });
    await replay.closed;
    const terminalEvent = replay.events.filter((e) => e.data.result.statusUpdate?.status?.state === "TASK_STATE_COMPLETED").at(-1);
    expect.soft(terminalEvent?.id, "the {task} push's seq is the terminal status event's").toBe(String(delivered.seq));
    const after = await getTask(task.id);
    expect.soft(deadLettersOf(after), "a delivered push leaves no dead letter").toBeUndefined();
    tasks.retried = { task, delivered };
  });

  it("sees a 404 dead-lettered in the task's metadata, and re-delivered once to a new push config", async () => {
    const { task, token } = await sendWithPush("what time is it, for the dead letter?", { configId: "gk-404", policy: () => 404 });
    const refused = await pushAnswered(token, 404, "the push answered 404");
    expect(refused.kind).toBe("task");
    const withLetter = await until(
      async () => {
        const t = await getTask(task.id);
        return deadLettersOf(t)?.length ? t : undefined;
      },
      90_000,
      "the dead letter in GetTask's metadata",
    );
    const letters = deadLettersOf(withLetter);
    expect(letters).toEqual([{ configId: "gk-404", seq: refused.seq, status: 404, at: expect.any(String) }]);
    expect.soft(Number.isNaN(Date.parse(letters[0].at)), "at is an RFC 3339 time").toBe(false);
    expect.soft(pushesFor(token).length, "a permanent answer is not retried").toBe(1);

    const againToken = gk.issueToken(task.id);
    const created = await gk.call("CreateTaskPushNotificationConfig", {
      tenant: TENANT,
      taskId: task.id,
      id: "gk-404-again",
      url: gk.pushUrl,
      token: againToken,
    });
    expect.soft(created).toMatchObject({ taskId: task.id, id: "gk-404-again", url: gk.pushUrl, token: againToken });
    const redelivered = await pushAnswered(againToken, 200, "the dead letter re-delivered to the new config");
    expect(redelivered.kind).toBe("task");
    expect.soft(redelivered.seq, "re-delivered with its original seq").toBe(refused.seq);
    expect.soft(redelivered.message.task.id).toBe(task.id);
    expect.soft(redelivered.message.task.status.state).toBe("TASK_STATE_COMPLETED");
    expect.soft(redelivered.verdict, "new to this gatekeeper: applied").toBe("applied");
    const cleared = await until(
      async () => {
        const t = await getTask(task.id);
        return deadLettersOf(t)?.length ? undefined : t;
      },
      60_000,
      "the dead letter removed after re-delivery",
    );
    expect.soft(deadLettersOf(cleared) ?? []).toEqual([]);
    expectVerified([...pushesFor(token), ...pushesFor(againToken)]);
    tasks.deadLettered = { task, token, againToken };
  });

  it("refuses a SendMessage retry with a changed message; a retry with a new push config adds it and gets the dead letter", async () => {
    const sent = await sendWithPush("what time is it, for the retries?", { configId: "gk-retry-a", policy: () => 404 });
    const { task } = sent;
    const refused = await pushAnswered(sent.token, 404, "the first config's push answered 404");
    await until(async () => (deadLettersOf(await getTask(task.id))?.length ? true : undefined), 90_000, "the dead letter of the first config");

    // The same messageId with other text: -32602, nothing changes.
    const changed = { ...sent.message, parts: [{ text: "something else entirely" }] };
    const refusedRetry = await errorOf(
      gk.call("SendMessage", { tenant: TENANT, message: changed, configuration: { returnImmediately: true, taskPushNotificationConfig: sent.config } }),
    );
    expect.soft(refusedRetry.code, "a retried messageId with a different message").toBe(-32602);
    expect.soft(refusedRetry.data, "JSON-RPC's own codes carry no data").toBeUndefined();

    // The same message with a push config the task lacks: the same task, the config added, the dead letter re-delivered there.
    const newToken = gk.issueToken(task.id);
    const newConfig = { id: "gk-retry-b", url: gk.pushUrl, token: newToken };
    const retried = await gk.call("SendMessage", {
      tenant: TENANT,
      message: sent.message,
      configuration: { returnImmediately: true, taskPushNotificationConfig: newConfig },
    });
    expect.soft(retried.task?.id, "the retry names the same task").toBe(task.id);
    const listed = await gk.call("ListTaskPushNotificationConfigs", { tenant: TENANT, taskId: task.id });
    expect.soft(listed.nextPageToken).toBe("");
    expect.soft(listed.configs?.map((c) => c.id).sort()).toEqual(["gk-retry-a", "gk-retry-b"]);
    expect.soft(listed.configs?.find((c) => c.id === "gk-retry-b")).toMatchObject({ taskId: task.id, url: gk.pushUrl, token: newToken });
    const redelivered = await pushAnswered(newToken, 200, "the dead letter re-delivered to the config the retry added");
    expect.soft(redelivered.seq).toBe(refused.seq);
    expect.soft(redelivered.message.task?.id).toBe(task.id);
    await until(
      async () => (deadLettersOf(await getTask(task.id))?.length ? undefined : true),
      60_000,
      "the dead letter removed after the retry's re-delivery",
    );
    expect.soft(pushesFor(sent.token).length, "the first config got one attempt only").toBe(1);
    expectVerified([...pushesFor(sent.token), ...pushesFor(newToken)]);
    tasks.retries = { task, newToken, message: sent.message };
  });

  it("gets, lists and deletes push configs", async () => {
    const { task, newToken } = tasks.retries;
    const got = await gk.call("GetTaskPushNotificationConfig", { tenant: TENANT, taskId: task.id, id: "gk-retry-b" });
    expect.soft(got).toMatchObject({ taskId: task.id, id: "gk-retry-b", url: gk.pushUrl, token: newToken });
    const deleted = await gk.call("DeleteTaskPushNotificationConfig", { tenant: TENANT, taskId: task.id, id: "gk-retry-a" });
    expect.soft(deleted, "DeleteTaskPushNotificationConfig answers null").toBeNull();
    const gone = await errorOf(gk.call("GetTaskPushNotificationConfig", { tenant: TENANT, taskId: task.id, id: "gk-retry-a" }));
    expect.soft(gone).toMatchObject({ code: -32001, data: [errorInfo("TASK_NOT_FOUND")] });
    const again = await gk.call("DeleteTaskPushNotificationConfig", { tenant: TENANT, taskId: task.id, id: "gk-retry-a" });
    expect.soft(again, "deleting a missing config succeeds").toBeNull();
    const listed = await gk.call("ListTaskPushNotificationConfigs", { tenant: TENANT, taskId: task.id });
    expect.soft(listed.configs?.map((c) => c.id)).toEqual(["gk-retry-b"]);
    // A retry carrying a config under a held id but with another token replaces that config ("Retries by messageId").
    const newer = gk.issueToken(task.id);
    const replacing = await gk.call("SendMessage", {
      tenant: TENANT,
      message: tasks.retries.message,
      configuration: { returnImmediately: true, taskPushNotificationConfig: { id: "gk-retry-b", url: gk.pushUrl, token: newer } },
    });
    expect.soft(replacing.task?.id).toBe(task.id);
    const replaced = await gk.call("GetTaskPushNotificationConfig", { tenant: TENANT, taskId: task.id, id: "gk-retry-b" });
    expect.soft(replaced.token, "the config under that id now carries the retry's token").toBe(newer);
    const relisted = await gk.call("ListTaskPushNotificationConfigs", { tenant: TENANT, taskId: task.id });
    expect
      .soft(
        relisted.configs?.map((c) => c.id),
        "replaced, not added",
      )
      .toEqual(["gk-retry-b"]);
    const tooLong = await errorOf(
      gk.call("CreateTaskPushNotificationConfig", { tenant: TENANT, taskId: task.id, id: "x".repeat(129), url: gk.pushUrl, token: gk.issueToken(task.id) }),
    );
    expect.soft(tooLong.code, "a config id over 128 characters").toBe(-32602);
    const offOrigin = await errorOf(
      gk.call("CreateTaskPushNotificationConfig", {
        tenant: TENANT,
        taskId: task.id,
        url: `http://localhost:${PORTS.gatekeeper}/a2a/notifications`,
        token: "n-x",
      }),
    );
    expect.soft(offOrigin.code, "a push URL off the allowlisted origin").toBe(-32602);
  });

  it("refuses forged pushes: another key, a replayed JWT, a wrong task claim, a token for another task; de-duplicates on task id + seq", async () => {
    // The newest genuine delivery (its JWT still well within its five minutes), and another task's.
    const a = genuine().findLast((e) => e.kind === "task" && e.answered === 200);
    expect(a, "a genuine delivered push").toBeTruthy();
    const b = genuine().find((e) => e.kind === "task" && e.answered === 200 && e.taskId !== a.taskId);
    expect(b, "a second task's genuine push").toBeTruthy();
    const forward = (headers, body) =>
      fetch(gk.pushUrl, {
        method: "POST",
        headers: {
          "content-type": headers["content-type"],
          authorization: headers.authorization,
          "x-a2a-notification-token": headers["x-a2a-notification-token"],
          "x-dynamicagents-event-seq": headers["x-dynamicagents-event-seq"],
          "x-test-forged": "1",
        },
        body,
      });
    const lastForged = () => gk.receiver.log.filter((e) => e.forged).at(-1);

    // A JWT like the Worker's, fresh jti, signed by another key: refused at the signature.
    const forgedJwt = await new SignJWT({ ...a.claims, jti: randomUUID() }).setProtectedHeader(a.header).sign(ed25519Key("forger").privateKey);
    const otherKey = await forward({ ...a.headers, authorization: `Bearer ${forgedJwt}` }, a.body);
    expect.soft(otherKey.status, "signed by another key").toBe(401);
    expect.soft(lastForged()?.reason).toMatch(/^4:/);
    // The genuine request, replayed as it was: refused by its jti.
    const replayed = await forward(a.headers, a.body);
    expect.soft(replayed.status, "a replayed JWT").toBe(401);
    expect.soft(lastForged()?.reason).toMatch(/^7: jti replayed/);
    // An HMAC token under the pinned kid and jku: refused by its alg.
    const hmac = await new SignJWT({ ...a.claims, jti: randomUUID() }).setProtectedHeader({ ...a.header, alg: "HS256" }).sign(new Uint8Array(32).fill(7));
    const hs = await forward({ ...a.headers, authorization: `Bearer ${hmac}` }, a.body);
    expect.soft(hs.status, "alg HS256").toBe(401);
    expect.soft(lastForged()?.reason).toMatch(/^2:/);

    // A receiver with a fresh jti store (the same pin, tokens and applied events) shows the later checks.
    const probe = gk.receiver.probe();
    const wrongTask = await probe.receive({ headers: a.headers, body: b.body });
    expect.soft(wrongTask.status, "a genuine JWT over another task's body").toBe(401);
    expect.soft(wrongTask.reason).toMatch(/^10: the task claim/);
    const wrongToken = await gk.receiver
      .probe()
      .receive({ headers: { ...a.headers, "x-a2a-notification-token": b.headers["x-a2a-notification-token"] }, body: a.body });
    expect.soft(wrongToken.status, "a notification token issued for another task").toBe(401);
    expect.soft(wrongToken.reason).toMatch(/^10: the notification token/);
    const unknownToken = await gk.receiver.probe().receive({ headers: { ...a.headers, "x-a2a-notification-token": "n-never-issued" }, body: a.body });
    expect.soft(unknownToken.reason).toMatch(/^8:/);
    const noToken = await gk.receiver.probe().receive({ headers: { ...a.headers, "x-a2a-notification-token": undefined }, body: a.body });
    expect.soft(noToken.reason).toMatch(/^8:/);
    const duplicate = await gk.receiver.probe().receive({ headers: a.headers, body: a.body });
    expect.soft(duplicate.status, "a repeat of an applied event is answered 200").toBe(200);
    expect.soft(duplicate.entry.verdict, "and dropped by task id + seq").toBe("duplicate");
  });

  it("verified every push the Worker sent, and no two deliveries shared a callback JWT or jti", () => {
    const pushes = genuine();
    expect(pushes.length).toBeGreaterThan(0);
    expectVerified(pushes);
    for (const push of pushes) {
      expect.soft(push.header, "the callback JWT's header").toEqual({ alg: "EdDSA", typ: "JWT", kid: signingKey.kid, jku: `${WORKER}/.well-known/jwks.json` });
      expect.soft(push.claims.iss).toBe(WORKER);
      expect.soft(push.claims.aud).toBe(gk.pushUrl);
      expect.soft(push.claims.exp - push.claims.iat, "exp = iat + 300 s").toBe(300);
      expect.soft(push.claims["https://dynamicagents.dev/task"]).toBe(push.taskId);
      expect
        .soft(Object.keys(push.claims).sort(), "the callback JWT carries no other claims")
        .toEqual(["aud", "exp", "https://dynamicagents.dev/task", "iat", "iss", "jti"]);
    }
    const jwts = pushes.map((p) => p.jwt);
    expect(new Set(jwts).size, "no two deliveries share a callback JWT").toBe(jwts.length);
    const jtis = pushes.map((p) => p.claims?.jti);
    expect(new Set(jtis).size, "no two deliveries share a jti").toBe(jtis.length);
    // Each config that got its push once got it once: no surprise re-deliveries.
    const { againToken } = tasks.deadLettered;
    expect.soft(pushesFor(againToken).length, "the dead letter was re-delivered once").toBe(1);
    expect.soft(pushesFor(tasks.deadLettered.token).length, "the 404 was tried once").toBe(1);
    say(`${pushes.length} pushes from the Worker verified; ${gk.receiver.log.length - pushes.length} forged ones sent to the receiver`);
    expect.soft(worker?.state.reloads, "wrangler reloaded the Worker mid-run (a source file changed): rerun on a quiet tree").toBe(0);
  });

  it("kept everything in the block's state folder, and stops, stand-in and all, at Ctrl-C", async () => {
    // The Worker's storage went to $STATE/wrangler ("What still lands in the repository").
    expect(readdirSync(join(state, "wrangler")).length).toBeGreaterThan(0);
    // Ctrl-C is SIGINT to the terminal's foreground group: wrangler stops, and the block's trap stops the stand-in.
    const lingered = await worker?.stop("SIGINT");
    expect(lingered, `something of the block outlived Ctrl-C; its log ends:\n${worker?.tail()}`).toBe(false);
    expect(readFileSync(/** @type {string} */ (worker?.logFile), "utf8")).toContain("stopped the stand-in model");
  });
});
