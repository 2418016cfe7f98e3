import { decodeJwt, decodeProtectedHeader, errors, jwtVerify, type JWTPayload } from "jose";
import { DynamicAgentsError } from "../errors/index.js";
import type { GatekeeperIdentity } from "./claims.js";
import { IDENTITY_CLAIM, JWKS_PATH, MAX_TOKEN_LIFETIME_SECONDS, TENANT_CLAIM } from "./wire.js";
import { GatekeeperJwksUnavailable, type GatekeeperJwks } from "./gatekeeper-jwks.js";

/** Which check refused a token; the order of this list is the order they run in. */
export type TokenCheck = "bearer" | "jku-present" | "jku-allowlisted" | "iss-matches-jku" | "signature" | "tenant-claim" | "identity-claim";

/** The stable code of each check's refusal. */
const CHECK_CODES = {
  bearer: "ERR_TOKEN_BEARER",
  "jku-present": "ERR_TOKEN_JKU_PRESENT",
  "jku-allowlisted": "ERR_TOKEN_JKU_ALLOWLISTED",
  "iss-matches-jku": "ERR_TOKEN_ISS_MATCHES_JKU",
  signature: "ERR_TOKEN_SIGNATURE",
  "tenant-claim": "ERR_TOKEN_TENANT_CLAIM",
  "identity-claim": "ERR_TOKEN_IDENTITY_CLAIM",
} as const satisfies Record<TokenCheck, string>;

/** Every code a refused token carries, one per check: one closed union, so `switch (error.code)` over them is checked by the compiler. */
export type TokenRefusedCode = (typeof CHECK_CODES)[TokenCheck];

/**
 * A token (or its absence) refused: `check` names the check that failed,
 * `code` is that check's stable code. The edge answers every one of them the
 * same way, a 401 (docs/protocol.md "The edge, in order", step 2).
 */
export class TokenRefused extends DynamicAgentsError {
  static override readonly code: string = "ERR_TOKEN_REFUSED";
  declare readonly code: TokenRefusedCode;

  constructor(
    readonly check: TokenCheck,
    message: string,
  ) {
    super(message, { code: CHECK_CODES[check] });
  }
}

export interface VerifiedCaller {
  tenant: string;
  identity: GatekeeperIdentity;
  /** `iss`: exactly one of the allowlisted gatekeeper origins. */
  issuer: string;
  claims: JWTPayload;
}

export interface VerifyOptions {
  /** Exact gatekeeper origins (see `loadGatekeeperOrigins`). */
  allowlist: ReadonlySet<string>;
  /**
   * The exact endpoint this token must be minted for: `<origin>/a2a`, this
   * deployment's own. Its origin is never a gatekeeper's, whatever the allowlist says.
   */
  audience: string;
  jwks: GatekeeperJwks;
  /** The clock for `exp`, in milliseconds; injected by tests. */
  now?: () => number;
}

/**
 * Verifies a gatekeeper JWT. The four checks run in this order and none is
 * optional; the allowlist is consulted before anything is fetched, so a token
 * pointing `jku` at an attacker's JWKS costs zero outbound requests.
 */
export async function verifyGatekeeperToken(token: string, options: VerifyOptions): Promise<VerifiedCaller> {
  let header: ReturnType<typeof decodeProtectedHeader>;
  let unverified: JWTPayload;
  try {
    header = decodeProtectedHeader(token);
    unverified = decodeJwt(token);
  } catch {
    throw new TokenRefused("bearer", "the bearer token is not a well-formed JWT");
  }

  // 1. RFC 7515 §4.1.2: the key must be named by URL, so it can be allowlisted.
  if (typeof header.jku !== "string" || header.jku === "") {
    throw new TokenRefused("jku-present", "the token's protected header has no `jku`");
  }

  // 2. Before any fetch, and as a raw string: any other path, query or
  // fragment on a gatekeeper origin would otherwise cost a fetch each.
  const jkuOrigin = originOf(header.jku);
  if (jkuOrigin === undefined || !options.allowlist.has(jkuOrigin) || header.jku !== `${jkuOrigin}${JWKS_PATH}`) {
    throw new TokenRefused("jku-allowlisted", `the token's \`jku\` must be exactly <origin>${JWKS_PATH} for an allowlisted gatekeeper origin`);
  }
  // Our own key set signs the caller tokens this deployment sends to other
  // agents (`signCallerToken`): one replayed back at us is never a
  // gatekeeper's word, even with our origin put in GATEKEEPER_ORIGINS.
  if (jkuOrigin === originOf(options.audience)) {
    throw new TokenRefused(
      "jku-allowlisted",
      "the token's `jku` is this deployment's own JWKS: its caller tokens are for calling other agents, never this edge",
    );
  }

  // 3. One allowlisted gatekeeper must not mint tokens in another's name.
  const issOrigin = typeof unverified.iss === "string" ? originOf(unverified.iss) : undefined;
  if (issOrigin !== jkuOrigin) {
    throw new TokenRefused("iss-matches-jku", "the token's `iss` origin differs from its `jku` origin");
  }

  // 4. Signature, algorithm pinned. Checked up front as well so a token with
  // `alg: none` or HS256 never causes a JWKS fetch.
  if (header.alg !== "EdDSA") {
    throw new TokenRefused("signature", `the token's alg must be EdDSA, got ${JSON.stringify(header.alg)}`);
  }
  const now = (options.now ?? Date.now)();
  let payload: JWTPayload;
  try {
    ({ payload } = await jwtVerify(token, options.jwks.forOrigin(jkuOrigin), {
      algorithms: ["EdDSA"],
      issuer: [...options.allowlist],
      audience: options.audience,
      requiredClaims: ["exp", "iss", "aud"],
      clockTolerance: 0,
      currentDate: new Date(now),
    }));
  } catch (error) {
    throw new TokenRefused("signature", describeJoseError(error, options.audience));
  }
  // A leaked long-lived token would be a standing credential; per-call tokens need minutes.
  if (payload.exp! - now / 1000 > MAX_TOKEN_LIFETIME_SECONDS) {
    throw new TokenRefused(
      "signature",
      `the token's \`exp\` is more than ${MAX_TOKEN_LIFETIME_SECONDS} s ahead: gatekeeper tokens are minted per call and live at most one hour`,
    );
  }

  const tenant = payload[TENANT_CLAIM];
  if (typeof tenant !== "string" || tenant === "") {
    throw new TokenRefused("tenant-claim", `the token has no \`${TENANT_CLAIM}\` claim: a token without it is never a wildcard`);
  }
  const identity = payload[IDENTITY_CLAIM] as Partial<GatekeeperIdentity> | undefined;
  if (identity === null || typeof identity !== "object" || typeof identity.key !== "string" || identity.key === "") {
    throw new TokenRefused("identity-claim", `the token's \`${IDENTITY_CLAIM}\` claim must be an object with a non-empty \`key\``);
  }
  return { tenant, identity: identity as GatekeeperIdentity, issuer: payload.iss as string, claims: payload };
}

function originOf(value: string): string | undefined {
  try {
    return new URL(value).origin;
  } catch {
    return undefined;
  }
}

function describeJoseError(error: unknown, audience: string): string {
  if (error instanceof errors.JWTExpired) return "the token has expired";
  if (error instanceof errors.JWTClaimValidationFailed) {
    if (error.claim === "aud") return `the token's \`aud\` must be exactly ${audience}`;
    return `the token's \`${error.claim}\` claim is invalid: ${error.reason}`;
  }
  if (error instanceof errors.JWKSNoMatchingKey) return "no key in the gatekeeper's JWKS matches the token's `kid`";
  if (error instanceof GatekeeperJwksUnavailable) return `the gatekeeper's JWKS could not be used: ${error.message}`;
  if (error instanceof errors.JWKSTimeout || error instanceof errors.JWKSInvalid) {
    return "the gatekeeper's JWKS could not be fetched or read";
  }
  if (error instanceof errors.JWSSignatureVerificationFailed) return "the token's signature does not verify";
  if (error instanceof errors.JOSEAlgNotAllowed) return "the token's alg must be EdDSA";
  if (error instanceof errors.JOSEError) return `the token could not be verified (${error.code})`;
  return "the gatekeeper's JWKS could not be fetched";
}
