// The one gatekeeper-token minter of this repository: the harness, the specs'
// support, the dev gatekeeper of `npm start`, the benches and the e2e tests all
// mint through it. It imports only `jose` and the wire constants (with their
// `.ts` extension), so Node loads it as it is (Node strips the types).
import { SignJWT, type JWTPayload } from "jose";
import { IDENTITY_CLAIM, TENANT_CLAIM, jwksUrlOf } from "../a2a/wire.ts";

/** What signs a token: a `FixtureKey` (jwk-fixtures.ts) is one, and so is any `{ kid, privateKey }`. */
interface GatekeeperSigningKey {
  kid: string;
  privateKey: CryptoKey;
}

export interface GatekeeperTokenOptions {
  key: GatekeeperSigningKey;
  /** The gatekeeper's origin: `iss`, and the origin of `jku`. */
  gatekeeper: string;
  /** The agent's endpoint, `<origin>/a2a` (`endpointOf`): the exact `aud`. */
  endpoint: string;
  tenant: string;
  identity?: { key: string; name?: string; kind?: string; workspaceId?: string };
  /** Seconds until `exp` (negative: already expired). Default 300. */
  expiresIn?: number;
  /** The minting clock in milliseconds, as `Date.now()` gives it: `iat`, and the base of `exp`. Default now. */
  now?: number;
  /** Bend any claim to build a bad token (`undefined` removes it). Applied last. */
  claims?: Partial<Record<string, unknown>>;
  /** Bend the protected header, or add to it (`jku: undefined` removes it). Applied last. */
  header?: Partial<Record<string, unknown>>;
}

/**
 * A token exactly as a gatekeeper mints one (docs/protocol.md "The gatekeeper
 * token"): EdDSA, `typ: JWT`, `kid`, `jku` on the gatekeeper's origin, `iss`,
 * the endpoint as `aud`, `iat`, `exp`, the tenant and identity claims. Every
 * part can be overridden to build the bad tokens a spec needs.
 */
export async function makeGatekeeperToken(options: GatekeeperTokenOptions): Promise<string> {
  const now = Math.floor((options.now ?? Date.now()) / 1000);
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
    jku: jwksUrlOf(options.gatekeeper),
    ...options.header,
  };
  for (const [name, value] of Object.entries(header)) if (value === undefined) delete header[name];
  return new SignJWT(claims).setProtectedHeader(header as { alg: string }).sign(options.key.privateKey);
}
