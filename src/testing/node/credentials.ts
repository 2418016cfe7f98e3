// What counts as a credential in recorded HTTP, so that a cassette committed to
// the repository never carries one. Deliberately broad: stripping a harmless
// header costs nothing, recording a key costs a rotation.

/** Credential-bearing headers named exactly (request or response side). */
const CREDENTIAL_HEADERS = new Set([
  "authorization",
  "proxy-authorization",
  "cookie",
  "set-cookie",
  "x-api-key",
  "api-key",
  "cf-aig-authorization",
  "x-goog-api-key",
  "openai-organization",
  "openai-project",
]);

/** Anything else whose name says it carries a secret (x-auth-…, x-csrf-token, x-amz-security-token…). */
const CREDENTIAL_HEADER_PATTERN = /auth|cookie|api[-_]?key|secret|token|session|signature|credential|password/i;

/** Query keys whose value is a secret (compared case-insensitively). */
const CREDENTIAL_QUERY_KEYS = new Set([
  "key",
  "api_key",
  "apikey",
  "api-key",
  "token",
  "access_token",
  "refresh_token",
  "id_token",
  "auth",
  "sig",
  "signature",
  "secret",
  "client_secret",
  "password",
  "passwd",
  "pwd",
  "code",
  "jwt",
]);

/** Query keys that name a credential in a longer form (x-amz-signature, x-goog-credential, session_token…). */
const CREDENTIAL_QUERY_PATTERN = /auth|api[-_]?key|secret|token|session|signature|credential|password/i;

/** What a credential's value is replaced by in a recorded URL. */
const REDACTED = "REDACTED";

export function isCredentialHeader(name: string): boolean {
  const lower = name.toLowerCase();
  return CREDENTIAL_HEADERS.has(lower) || CREDENTIAL_HEADER_PATTERN.test(lower);
}

function isCredentialQueryKey(rawKey: string): boolean {
  let key = rawKey;
  try {
    key = decodeURIComponent(rawKey.replace(/\+/g, " "));
  } catch {
    // A malformed escape: judge the raw text.
  }
  const lower = key.trim().toLowerCase();
  return CREDENTIAL_QUERY_KEYS.has(lower) || CREDENTIAL_QUERY_PATTERN.test(lower);
}

/**
 * `url` with the value of every credential query parameter replaced by
 * {@link REDACTED}. Everything else is kept byte for byte (no re-encoding), so
 * a URL without credentials is returned unchanged and recorded URLs still
 * match; the same function runs on record and on replay.
 */
export function redactUrl(url: string): string {
  const queryAt = url.indexOf("?");
  if (queryAt < 0) return url;
  const hashAt = url.indexOf("#", queryAt);
  const end = hashAt < 0 ? url.length : hashAt;
  const pairs = url.slice(queryAt + 1, end).split("&");
  const redacted = pairs.map((pair) => {
    const eq = pair.indexOf("=");
    const rawKey = eq < 0 ? pair : pair.slice(0, eq);
    // A bare `?token` (no `=`) is left alone: it has no value to hide.
    return eq >= 0 && isCredentialQueryKey(rawKey) ? `${rawKey}=${REDACTED}` : pair;
  });
  return `${url.slice(0, queryAt)}?${redacted.join("&")}${url.slice(end)}`;
}
