import { SignJWT } from "jose";
import { JWKS_PATH } from "./card-signing.js";
import { IDENTITY_CLAIM, TENANT_CLAIM } from "./claims.js";
import type { SigningKey } from "./signing-key.js";

export interface CallerTokenOptions {
  key: SigningKey;
  /**
   * This deployment's origin: it becomes `iss` and `jku` is derived from it,
   * so the two agree by construction. Inside a Durable Object it is
   * `requireSelfOrigin()`, never configuration.
   */
  issuer: string;
  /**
   * Whom the token is for. Normalised to a bare origin: verifiers compare
   * `aud` byte for byte, and a stray path or trailing slash would be a 401 on
   * every call with nothing to point at it.
   */
  audience: string;
  identity: Record<string, unknown>;
  tenant: string;
  /** Default 120 s. */
  ttlSeconds?: number;
}

/**
 * A short-lived token presenting this agent as a caller to any service that
 * trusts its JWKS. Unlike the callback token it asserts who the agent is and
 * which tenant it speaks for.
 */
export async function signCallerToken(options: CallerTokenOptions): Promise<string> {
  let audience: string;
  try {
    audience = new URL(options.audience).origin;
  } catch {
    throw new TypeError(`signCallerToken: audience ${JSON.stringify(options.audience)} is not an absolute URL`);
  }
  if (audience === "null") throw new TypeError(`signCallerToken: audience ${JSON.stringify(options.audience)} has no origin`);
  const issuer = new URL(options.issuer).origin;
  return new SignJWT({ [TENANT_CLAIM]: options.tenant, [IDENTITY_CLAIM]: options.identity })
    .setProtectedHeader({ alg: "EdDSA", typ: "JWT", kid: options.key.kid, jku: `${issuer}${JWKS_PATH}` })
    .setIssuer(issuer)
    .setAudience(audience)
    .setIssuedAt()
    .setExpirationTime(`${options.ttlSeconds ?? 120}s`)
    .sign(options.key.privateKey);
}
