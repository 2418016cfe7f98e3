import { SignJWT } from "jose";
import type { SigningKey } from "./signing-key.js";
import { IDENTITY_CLAIM, JWKS_PATH, TENANT_CLAIM, endpointOf } from "./wire.js";

export interface CallerTokenOptions {
  key: SigningKey;
  /**
   * This deployment's origin: it becomes `iss` and `jku` is derived from it,
   * so the two agree by construction. Inside a Durable Object it is
   * `requireSelfOrigin()`, never configuration.
   */
  issuer: string;
  /**
   * The agent the token is for: its endpoint (`https://peer.example/a2a`) or
   * its origin. `aud` is always that origin's exact endpoint `<origin>/a2a`,
   * which is what an edge like ours compares `aud` to, byte for byte
   * (docs/protocol.md "The gatekeeper token"); a query or another path would
   * be a 401 on every call with nothing to point at it.
   */
  audience: string;
  identity: Record<string, unknown>;
  tenant: string;
  /** Default 120 s. */
  ttlSeconds?: number;
}

/**
 * A short-lived token presenting this agent as a caller to another agent that
 * trusts its JWKS. Unlike the callback token it asserts who the agent is and
 * which tenant it speaks for. This deployment's own edge refuses it: it is for
 * calling out, never in.
 */
export async function signCallerToken(options: CallerTokenOptions): Promise<string> {
  let origin: string;
  try {
    origin = new URL(options.audience).origin;
  } catch {
    throw new TypeError(`signCallerToken: audience ${JSON.stringify(options.audience)} is not an absolute URL`);
  }
  if (origin === "null") throw new TypeError(`signCallerToken: audience ${JSON.stringify(options.audience)} has no origin`);
  const issuer = new URL(options.issuer).origin;
  return new SignJWT({ [TENANT_CLAIM]: options.tenant, [IDENTITY_CLAIM]: options.identity })
    .setProtectedHeader({ alg: "EdDSA", typ: "JWT", kid: options.key.kid, jku: `${issuer}${JWKS_PATH}` })
    .setIssuer(issuer)
    .setAudience(endpointOf(origin))
    .setIssuedAt()
    .setExpirationTime(`${options.ttlSeconds ?? 120}s`)
    .sign(options.key.privateKey);
}
