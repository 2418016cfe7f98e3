import { SignJWT } from "jose";
import { CALLBACK_TTL_SECONDS, JWKS_PATH } from "./wire.js";
import type { SigningKey } from "./signing-key.js";

// Reused while it has this long left, so a burst of pushes to one URL costs one signature.
const REUSE_MARGIN_SECONDS = 60;

const cache = new Map<string, { token: string; exp: number }>();

/**
 * The bearer token of a push: proves "the agent you called is calling you
 * back". It carries no claims beyond who signed it (`iss`, `jku`) and whom it
 * is for (`aud` = the push URL's origin + path, so a token captured at one
 * webhook is useless at another).
 */
export async function signCallbackJwt(options: {
  key: SigningKey;
  /** This deployment's origin. */
  issuer: string;
  /** The push URL; its query and fragment are not part of the audience. */
  url: string;
  now?: () => number;
}): Promise<string> {
  const target = new URL(options.url);
  const audience = `${target.origin}${target.pathname}`;
  const now = Math.floor((options.now ?? Date.now)() / 1000);
  const cacheKey = JSON.stringify([options.key.kid, options.key.publicJwk.x, options.issuer, audience]);
  const cached = cache.get(cacheKey);
  if (cached && cached.exp - now > REUSE_MARGIN_SECONDS) return cached.token;

  const exp = now + CALLBACK_TTL_SECONDS;
  const token = await new SignJWT({})
    .setProtectedHeader({ alg: "EdDSA", typ: "JWT", kid: options.key.kid, jku: `${options.issuer}${JWKS_PATH}` })
    .setIssuer(options.issuer)
    .setAudience(audience)
    .setIssuedAt(now)
    .setExpirationTime(exp)
    .sign(options.key.privateKey);
  cache.set(cacheKey, { token, exp });
  return token;
}
