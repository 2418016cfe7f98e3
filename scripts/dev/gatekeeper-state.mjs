// What the dev gatekeeper keeps on disk, in its state folder (`.dev/gatekeeper/`
// by default, git-ignored): its own signing key, the agents it pinned on first
// use, and the notification tokens it handed out. Each is a small JSON file,
// written whole through a temporary file and a rename, readable only by you.
import { createHash, randomBytes } from "node:crypto";
import { existsSync, mkdirSync, readFileSync, renameSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { calculateJwkThumbprint, exportJWK, generateKeyPair, importJWK } from "jose";

const TOKEN_LIFETIME_MS = 7 * 24 * 60 * 60 * 1000;

export function ensureDir(dir) {
  mkdirSync(dir, { recursive: true, mode: 0o700 });
  return dir;
}

function readJson(file, fallback) {
  if (!existsSync(file)) return fallback;
  const text = readFileSync(file, "utf8");
  try {
    return JSON.parse(text);
  } catch {
    throw new Error(`${file} is not valid JSON: fix it or delete it (the dev gatekeeper recreates what it needs)`);
  }
}

function writeJson(file, value) {
  const tmp = `${file}.${process.pid}.tmp`;
  writeFileSync(tmp, `${JSON.stringify(value, null, 2)}\n`, { mode: 0o600 });
  renameSync(tmp, file);
}

/**
 * The gatekeeper's own Ed25519 key: created on first run, reused afterwards,
 * so tokens and the JWKS the Worker caches stay valid across restarts.
 * @returns {Promise<{ kid: string, privateKey: CryptoKey, publicJwk: Record<string, string>, created: boolean, file: string }>}
 */
export async function loadOrCreateGatekeeperKey(dir) {
  const file = join(ensureDir(dir), "gatekeeper-key.json");
  let jwk = readJson(file, undefined);
  let created = false;
  if (jwk === undefined) {
    const { privateKey } = await generateKeyPair("EdDSA", { crv: "Ed25519", extractable: true });
    const exported = await exportJWK(privateKey);
    const kid = `dev-gatekeeper-${new Date().toISOString().slice(0, 10)}-${randomBytes(3).toString("hex")}`;
    jwk = { kty: exported.kty, crv: exported.crv, x: exported.x, d: exported.d, kid };
    writeJson(file, jwk);
    created = true;
  }
  if (jwk.kty !== "OKP" || jwk.crv !== "Ed25519" || typeof jwk.d !== "string" || typeof jwk.kid !== "string") {
    throw new Error(`${file} is not a private Ed25519 JWK with a kid: delete it and a new gatekeeper key is made on the next start`);
  }
  const privateKey = /** @type {CryptoKey} */ (await importJWK({ ...jwk, alg: "EdDSA" }, "EdDSA", { extractable: true }));
  const derived = await exportJWK(privateKey);
  const publicJwk = { kty: "OKP", crv: "Ed25519", x: /** @type {string} */ (derived.x), kid: jwk.kid, alg: "EdDSA", use: "sig" };
  return { kid: jwk.kid, privateKey, publicJwk, created, file };
}

/**
 * @typedef {{ origin: string, jku: string, kid: string, x: string, thumbprint: string, pinnedAt: string, name?: string }} Pin
 */

/** Trust on first use: the key each agent origin presented the first time it was registered. */
export class PinStore {
  /** @param {string} dir */
  constructor(dir) {
    this.file = join(ensureDir(dir), "pins.json");
    /** @type {Record<string, Pin>} */
    this.pins = readJson(this.file, {});
  }

  /** @returns {Pin | undefined} */
  get(origin) {
    return Object.hasOwn(this.pins, origin) ? this.pins[origin] : undefined;
  }

  /** @param {Pin} pin */
  set(pin) {
    this.pins[pin.origin] = pin;
    writeJson(this.file, this.pins);
  }

  /** @returns {boolean} whether there was a pin to forget */
  delete(origin) {
    if (!Object.hasOwn(this.pins, origin)) return false;
    delete this.pins[origin];
    writeJson(this.file, this.pins);
    return true;
  }
}

/** The public key of a pin, ready for jose. */
export function pinnedKey(pin) {
  return importJWK({ kty: "OKP", crv: "Ed25519", x: pin.x, alg: "EdDSA" }, "EdDSA");
}

/** RFC 7638 thumbprint of an Ed25519 public key, as shown to people. */
export function thumbprintOf(x) {
  return calculateJwkThumbprint({ kty: "OKP", crv: "Ed25519", x });
}

/**
 * @typedef {{ agent: string, tenant: string, identityKey: string, messageId: string, taskId?: string, createdAt: number }} TokenRecord
 */

/**
 * The notification tokens this gatekeeper put into push configs. A push must
 * echo one, from the agent it was given to; the first push for a token binds
 * it to that task and later pushes for other tasks are refused. Stored by
 * SHA-256, so the file holds no token a reader could replay, and kept for a
 * week so a turn that outlived a restart can still be delivered.
 */
export class NotificationTokens {
  /** @param {string} dir */
  constructor(dir, now = Date.now) {
    this.file = join(ensureDir(dir), "notification-tokens.json");
    this.now = now;
    /** @type {Record<string, TokenRecord>} */
    this.records = readJson(this.file, {});
    const cutoff = now() - TOKEN_LIFETIME_MS;
    const before = Object.keys(this.records).length;
    for (const [hash, record] of Object.entries(this.records)) if (!(record.createdAt >= cutoff)) delete this.records[hash];
    if (Object.keys(this.records).length !== before) writeJson(this.file, this.records);
  }

  /** A fresh token for one SendMessage. */
  issue({ agent, tenant, identityKey, messageId }) {
    const token = randomBytes(32).toString("base64url");
    this.records[hash(token)] = { agent, tenant, identityKey, messageId, createdAt: this.now() };
    writeJson(this.file, this.records);
    return token;
  }

  /** @returns {TokenRecord | undefined} */
  lookup(token) {
    const key = hash(token);
    return Object.hasOwn(this.records, key) ? this.records[key] : undefined;
  }

  /**
   * Binds a token to the task it was used for. False when it is unknown or
   * already bound to another task (a token is good for one task only).
   */
  bind(token, taskId) {
    const record = this.lookup(token);
    if (!record) return false;
    if (record.taskId !== undefined) return record.taskId === taskId;
    record.taskId = taskId;
    writeJson(this.file, this.records);
    return true;
  }
}

function hash(token) {
  return createHash("sha256").update(token).digest("base64url");
}
