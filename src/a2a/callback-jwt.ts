import { SignJWT } from "jose";
import { CALLBACK_TTL_SECONDS, JWKS_PATH, TASK_CLAIM } from "./wire.js";
import type { SigningKey } from "./signing-key.js";

/**
 * The bearer token of one push attempt: proves "the agent you called is
 * calling you back" about one task. `aud` is the push URL's origin + path (a
 * token captured at one webhook is useless at another), the task claim binds
 * it to the task the body is about, and a fresh `jti` on every attempt lets a
 * gatekeeper refuse a replayed token (docs/protocol.md "Events, streams and pushes").
 */
export async function signCallbackJwt(options: {
  key: SigningKey;
  /** This deployment's origin. */
  issuer: string;
  /** The push URL; its query and fragment are not part of the audience. */
  url: string;
  /** The task the push is about. */
  taskId: string;
  now?: () => number;
}): Promise<string> {
  const target = new URL(options.url);
  const now = Math.floor((options.now ?? Date.now)() / 1000);
  return new SignJWT({ [TASK_CLAIM]: options.taskId })
    .setProtectedHeader({ alg: "EdDSA", typ: "JWT", kid: options.key.kid, jku: `${options.issuer}${JWKS_PATH}` })
    .setIssuer(options.issuer)
    .setAudience(`${target.origin}${target.pathname}`)
    .setIssuedAt(now)
    .setExpirationTime(now + CALLBACK_TTL_SECONDS)
    .setJti(crypto.randomUUID())
    .sign(options.key.privateKey);
}
