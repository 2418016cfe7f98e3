import { GATEKEEPER_FIXTURE_JWK } from "@dynamicagents/core/testing";
import { SignJWT, exportJWK, generateKeyPair, importJWK, type JWK, type JWTPayload } from "jose";
import { ENDPOINT, GATEKEEPER, GATEKEEPER_JWKS, IDENTITY_CLAIM, TENANT_CLAIM } from "./constants.js";

interface KeyPair {
  kid: string;
  privateKey: CryptoKey;
  publicJwk: JWK;
}

async function fromPrivateJwk(jwk: JWK): Promise<KeyPair> {
  const privateKey = (await importJWK({ ...jwk, alg: "EdDSA" }, "EdDSA")) as CryptoKey;
  const { d: _d, ...publicJwk } = jwk;
  return { kid: jwk.kid!, privateKey, publicJwk: { ...publicJwk, alg: "EdDSA", use: "sig" } };
}

/** The simulated gatekeeper's current key: the harness's own fixture, so both agree with the edge's JWKS cache. */
export const gatekeeperKey = await fromPrivateJwk(GATEKEEPER_FIXTURE_JWK);

export async function freshKeyPair(kid: string): Promise<KeyPair> {
  const { privateKey, publicKey } = await generateKeyPair("EdDSA", { crv: "Ed25519", extractable: true });
  return { kid, privateKey, publicJwk: { ...(await exportJWK(publicKey)), kid, alg: "EdDSA", use: "sig" } };
}

export interface MintOptions {
  tenant?: string | null;
  identity?: Record<string, unknown> | null;
  iss?: string;
  aud?: string | string[];
  jku?: string | null;
  /** Seconds from now; negative for an expired token. `null` omits `exp`. */
  expiresIn?: number | null;
  key?: KeyPair;
  claims?: JWTPayload;
  /** The minting clock in milliseconds (`iat`, and the base of `expiresIn`); default now. */
  now?: number;
}

/** A token exactly as a gatekeeper mints it; every field can be bent to make a bad one. */
export async function mintToken(options: MintOptions = {}): Promise<string> {
  const key = options.key ?? gatekeeperKey;
  const payload: JWTPayload = { ...options.claims };
  if (options.tenant !== null) payload[TENANT_CLAIM] = options.tenant ?? "assistant";
  if (options.identity !== null) {
    payload[IDENTITY_CLAIM] = options.identity ?? { key: "user-1", name: "Ada", kind: "user", workspaceId: "w1" };
  }
  const header: Record<string, unknown> = { alg: "EdDSA", kid: key.kid, typ: "JWT" };
  if (options.jku !== null) header.jku = options.jku ?? GATEKEEPER_JWKS;
  const jwt = new SignJWT(payload)
    .setProtectedHeader(header as { alg: string })
    .setIssuer(options.iss ?? GATEKEEPER)
    .setAudience(options.aud ?? ENDPOINT);
  const now = Math.floor((options.now ?? Date.now()) / 1000);
  jwt.setIssuedAt(now);
  if (options.expiresIn !== null) jwt.setExpirationTime(now + (options.expiresIn ?? 300));
  return jwt.sign(key.privateKey);
}

/** An unsigned token with arbitrary header and payload (for `alg: none` and friends). */
export function rawToken(header: Record<string, unknown>, payload: Record<string, unknown>, signature = ""): string {
  const b64 = (v: unknown) => btoa(JSON.stringify(v)).replace(/\+/g, "-").replace(/\//g, "_").replace(/=+$/, "");
  return `${b64(header)}.${b64(payload)}.${signature}`;
}

export function standardClaims(overrides: Record<string, unknown> = {}): Record<string, unknown> {
  const now = Math.floor(Date.now() / 1000);
  return {
    iss: GATEKEEPER,
    aud: ENDPOINT,
    iat: now,
    exp: now + 300,
    [TENANT_CLAIM]: "assistant",
    [IDENTITY_CLAIM]: { key: "user-1" },
    ...overrides,
  };
}
