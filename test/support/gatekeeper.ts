import { GATEKEEPER_FIXTURE_JWK, fixtureKey, makeGatekeeperToken, type FixtureKey } from "@dynamicagents/core/testing";
import { exportJWK, generateKeyPair, type JWTPayload } from "jose";
import { ENDPOINT, GATEKEEPER, GATEKEEPER_JWKS, IDENTITY_CLAIM, TENANT_CLAIM } from "./constants.js";

type KeyPair = FixtureKey;

/** The simulated gatekeeper's current key: the harness's own fixture, so both agree with the edge's JWKS cache. */
export const gatekeeperKey = await fixtureKey(GATEKEEPER_FIXTURE_JWK);

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

const DEFAULT_IDENTITY = { key: "user-1", name: "Ada", kind: "user", workspaceId: "w1" };

/**
 * A token exactly as a gatekeeper mints it (through the harness's
 * `makeGatekeeperToken`); every field can be bent to make a bad one. The
 * fields named here win over the same claim in `claims`; `null` leaves one
 * out (where `claims` may still supply it). `iss` and `iat` are always the
 * options' own.
 */
export async function mintToken(options: MintOptions = {}): Promise<string> {
  const { iss: _iss, aud: _aud, iat: _iat, exp, [TENANT_CLAIM]: tenantClaim, [IDENTITY_CLAIM]: identityClaim, ...claims } = options.claims ?? {};
  const aud = options.aud ?? ENDPOINT;
  return makeGatekeeperToken({
    key: options.key ?? gatekeeperKey,
    gatekeeper: options.iss ?? GATEKEEPER,
    endpoint: typeof aud === "string" ? aud : ENDPOINT,
    tenant: options.tenant ?? "assistant",
    now: options.now,
    expiresIn: options.expiresIn ?? 300,
    header: { jku: options.jku === null ? undefined : (options.jku ?? GATEKEEPER_JWKS) },
    claims: {
      ...claims,
      ...(typeof aud === "string" ? {} : { aud }),
      [TENANT_CLAIM]: options.tenant === null ? tenantClaim : (options.tenant ?? "assistant"),
      [IDENTITY_CLAIM]: options.identity === null ? identityClaim : (options.identity ?? DEFAULT_IDENTITY),
      ...(options.expiresIn === null ? { exp } : {}),
    },
  });
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
