import { SignJWT, type JWTPayload } from "jose";
import { IDENTITY_CLAIM, TENANT_CLAIM } from "../a2a/wire.js";
import type { FixtureKey } from "./jwk-fixtures.js";

export interface GatekeeperTokenOptions {
  key: FixtureKey;
  /** The gatekeeper's origin: `iss`, and the origin of `jku`. */
  gatekeeper: string;
  /** The agent's endpoint, `<origin>/a2a`: the exact `aud`. */
  endpoint: string;
  tenant: string;
  identity?: { key: string; name?: string; kind?: string; workspaceId?: string };
  /** Seconds until `exp` (negative: already expired). Default 300. */
  expiresIn?: number;
  /** Bend any claim to build a bad token (`undefined` removes it). */
  claims?: Partial<Record<string, unknown>>;
  /** Bend the protected header (`jku: undefined` removes it). */
  header?: Partial<Record<string, unknown>>;
}

/**
 * A token exactly as a gatekeeper mints one (CONTRACT.md "The gatekeeper
 * token"): EdDSA, `jku` on the gatekeeper's origin, `iss`, the endpoint as
 * `aud`, `exp`, the tenant and identity claims. Every part can be overridden
 * to build the bad tokens a spec needs.
 */
export async function makeGatekeeperToken(options: GatekeeperTokenOptions): Promise<string> {
  const now = Math.floor(Date.now() / 1000);
  const claims: JWTPayload = {
    iss: options.gatekeeper,
    aud: options.endpoint,
    iat: now,
    exp: now + (options.expiresIn ?? 300),
    [TENANT_CLAIM]: options.tenant,
    [IDENTITY_CLAIM]: options.identity ?? { key: "test-user", name: "Test User", kind: "user", workspaceId: "test-workspace" },
    ...options.claims,
  };
  for (const [name, value] of Object.entries(claims)) if (value === undefined) delete claims[name];
  const header: Record<string, unknown> = {
    alg: "EdDSA",
    typ: "JWT",
    kid: options.key.kid,
    jku: `${options.gatekeeper}/.well-known/jwks.json`,
    ...options.header,
  };
  for (const [name, value] of Object.entries(header)) if (value === undefined) delete header[name];
  return new SignJWT(claims).setProtectedHeader(header as { alg: string }).sign(options.key.privateKey);
}
