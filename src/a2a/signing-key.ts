import { exportJWK, importJWK, type JWK } from "jose";
import { ConfigError } from "../errors/index.js";

/** The deployment's card key: the private half for signing, the public half for `/.well-known/jwks.json`. */
export interface SigningKey {
  kid: string;
  privateKey: CryptoKey;
  /** `kty`, `crv`, `x`, `kid`, `alg`, `use` — never `d`. */
  publicJwk: PublicSigningJwk;
}

export interface PublicSigningJwk {
  kty: "OKP";
  crv: "Ed25519";
  x: string;
  kid: string;
  alg: "EdDSA";
  use: "sig";
}

const SECRET = { kind: "secret", name: "A2A_SIGNING_KEY" } as const;
// Every message below names the secret and what is wrong with it, never its value.
const refuse = (message: string) => new ConfigError(SECRET, message);

// One import per distinct secret value per isolate: importing and deriving the
// public half costs a few hundred microseconds that no request should pay twice.
const cache = new Map<string, Promise<SigningKey>>();

/** Parses `A2A_SIGNING_KEY` (a private Ed25519 JWK with `kid`) once per isolate. */
export function loadSigningKey(secret: string | undefined): Promise<SigningKey> {
  if (secret === undefined || secret.trim() === "") {
    return Promise.reject(
      new ConfigError(SECRET, "A2A_SIGNING_KEY is not set: generate one with `npm run keys` and set it as a secret", {
        code: ConfigError.MISSING,
      }),
    );
  }
  let key = cache.get(secret);
  if (!key) {
    key = parseSigningKey(secret);
    // A rejected parse stays cached too: the secret cannot fix itself.
    cache.set(secret, key);
  }
  return key;
}

async function parseSigningKey(secret: string): Promise<SigningKey> {
  let jwk: JWK;
  try {
    jwk = JSON.parse(secret) as JWK;
  } catch {
    throw refuse("A2A_SIGNING_KEY is not JSON: it must be the private Ed25519 JWK that `npm run keys` prints");
  }
  if (jwk === null || typeof jwk !== "object" || Array.isArray(jwk)) {
    throw refuse("A2A_SIGNING_KEY must be a JSON object (a private Ed25519 JWK)");
  }
  if (jwk.kty !== "OKP" || jwk.crv !== "Ed25519") {
    throw refuse(`A2A_SIGNING_KEY must be an Ed25519 key (kty "OKP", crv "Ed25519"), got kty ${JSON.stringify(jwk.kty)} crv ${JSON.stringify(jwk.crv)}`);
  }
  if (typeof jwk.d !== "string" || jwk.d === "") {
    throw refuse("A2A_SIGNING_KEY has no private part (`d`): set the private JWK, not the public one");
  }
  if (typeof jwk.kid !== "string" || jwk.kid === "") {
    throw refuse("A2A_SIGNING_KEY has no `kid`: verifiers pick the key by it, so it is required");
  }
  let privateKey: CryptoKey;
  try {
    privateKey = (await importJWK({ ...jwk, alg: "EdDSA", ext: true }, "EdDSA", { extractable: true })) as CryptoKey;
  } catch (error) {
    throw refuse(`A2A_SIGNING_KEY could not be imported as an Ed25519 private key: ${(error as Error).message}`);
  }
  // The public half is derived from the private key by the runtime rather than
  // trusted from the secret's `x`, so a hand-edited secret cannot publish a key
  // that does not verify what this deployment signs.
  const derived = await exportJWK(privateKey);
  if (typeof derived.x !== "string") throw refuse("A2A_SIGNING_KEY: the runtime did not derive a public key");
  if (jwk.x !== undefined && jwk.x !== derived.x) {
    throw refuse("A2A_SIGNING_KEY is inconsistent: its `x` is not the public half of its `d`");
  }
  return {
    kid: jwk.kid,
    privateKey,
    publicJwk: { kty: "OKP", crv: "Ed25519", x: derived.x, kid: jwk.kid, alg: "EdDSA", use: "sig" },
  };
}
