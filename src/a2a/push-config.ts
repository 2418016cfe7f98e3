import { TaskPushNotificationConfig } from "@a2a-js/sdk";
import { z } from "zod";
import { invalidParams } from "./errors.js";

/** A config id names Workflow steps (`push <id> <attempt>`) and a row: short enough for both. */
export const MAX_PUSH_CONFIG_ID_CHARS = 128;
/** Generous for a signed callback URL, small enough that configs cannot bloat a task's row. */
export const MAX_PUSH_URL_CHARS = 4_096;
/** `x-a2a-notification-token`: an opaque value, not a document. */
export const MAX_PUSH_TOKEN_BYTES = 1_024;
/** `authentication.scheme`: registered schemes are a handful of letters. */
export const MAX_AUTH_SCHEME_BYTES = 64;
/** `authentication.credentials`: room for a JWT bearer token. */
export const MAX_AUTH_CREDENTIALS_BYTES = 4_096;
/** Push configs one task may hold; every one is called at every announcement. */
export const MAX_PUSH_CONFIGS_PER_TASK = 16;

// RFC 9110 §5.5: a field value must not carry CR, LF, NUL or other controls;
// they would split or corrupt the header this value is sent in. Only ASCII,
// so the character caps below are byte caps too.
// Empty is allowed: it is the proto default for "none".
const VISIBLE_ASCII = /^[\x21-\x7e]*$/;
const VISIBLE_ASCII_WITH_INNER_SPACES = /^(?:[\x21-\x7e](?:[\x20-\x7e]*[\x21-\x7e])?)?$/;
// RFC 9110 §5.6.2 `token`, the grammar of an auth-scheme (§11.1).
const HTTP_TOKEN = /^[!#$%&'*+\-.^_`|~0-9A-Za-z]+$/;

const pushConfigShape = z.looseObject({
  id: z.string().max(MAX_PUSH_CONFIG_ID_CHARS, `must be at most ${MAX_PUSH_CONFIG_ID_CHARS} characters`).nullish(),
  url: z.string().min(1, "is required").max(MAX_PUSH_URL_CHARS, `must be at most ${MAX_PUSH_URL_CHARS} characters`),
  token: z
    .string()
    .max(MAX_PUSH_TOKEN_BYTES, `must be at most ${MAX_PUSH_TOKEN_BYTES} bytes`)
    .regex(VISIBLE_ASCII, "must be visible ASCII characters only (no spaces, line breaks or control characters)")
    .nullish(),
  authentication: z
    .object({
      scheme: z
        .string()
        .max(MAX_AUTH_SCHEME_BYTES, `must be at most ${MAX_AUTH_SCHEME_BYTES} bytes`)
        .regex(HTTP_TOKEN, "must be an HTTP authentication scheme name (an RFC 9110 token such as Bearer or Basic)"),
      credentials: z
        .string()
        .max(MAX_AUTH_CREDENTIALS_BYTES, `must be at most ${MAX_AUTH_CREDENTIALS_BYTES} bytes`)
        .regex(VISIBLE_ASCII_WITH_INNER_SPACES, "must be visible ASCII characters, with spaces only between them (no line breaks or control characters)")
        .nullish(),
    })
    .nullish(),
});

/** Where a send's push config sits: how its errors name the field. */
const SEND_PUSH_CONFIG = "params.configuration.taskPushNotificationConfig";

/**
 * Validates a push config a caller hands in (a send's, or
 * `CreateTaskPushNotificationConfig`'s), before anything is stored: what
 * {@link validatePushConfig} checks, and its URL on the caller's own
 * gatekeeper, the origin of the verified token's `iss` (docs/protocol.md
 * "Push config rules"). Another allowlisted gatekeeper is still someone else:
 * it must never receive signed pushes about this caller's task.
 */
export function validateCallerPushConfig(
  raw: unknown,
  caller: { allowlist: ReadonlySet<string>; gatekeeper: string },
  where = SEND_PUSH_CONFIG,
): TaskPushNotificationConfig {
  return checkPushConfig(raw, caller.allowlist, where, caller.gatekeeper);
}

/**
 * Validates a stored push config again, at delivery: the origin must still be
 * on the allowlist, read then (an operator may have removed it since).
 */
export function validatePushConfig(raw: unknown, allowlist: ReadonlySet<string>, where = SEND_PUSH_CONFIG): TaskPushNotificationConfig {
  return checkPushConfig(raw, allowlist, where);
}

/**
 * The rules of both: the agent only ever calls back a gatekeeper it already
 * trusts (exact origin match, so `localhost` and `127.0.0.1` differ): anything
 * else would let a caller aim this Worker's signed requests at an arbitrary
 * host (SSRF). Values that travel in headers must be header-safe. Messages
 * name the field and never repeat a token, credentials or the URL's query.
 */
function checkPushConfig(raw: unknown, allowlist: ReadonlySet<string>, where: string, gatekeeper?: string): TaskPushNotificationConfig {
  if (raw === null || typeof raw !== "object" || Array.isArray(raw)) {
    throw invalidParams(`${where} must be an object with a "url"`);
  }
  const shape = pushConfigShape.safeParse(raw, { error: typeMessage });
  if (!shape.success) {
    const issue = shape.error.issues[0]!;
    throw invalidParams(`${[where, ...issue.path].join(".")} ${issue.message}`);
  }
  const config = TaskPushNotificationConfig.fromJSON(raw);
  let url: URL;
  try {
    url = new URL(config.url);
  } catch {
    throw invalidParams(`${where}.url is not an absolute URL`);
  }
  // A `blob:` (or any other) URL can name an allowlisted origin and still not be a webhook.
  if (url.protocol !== "https:" && url.protocol !== "http:") throw invalidParams(`${where}.url must be an http(s) URL`);
  if (url.username || url.password) throw invalidParams(`${where}.url must not carry credentials`);
  if (gatekeeper !== undefined && (url.origin !== gatekeeper || !allowlist.has(url.origin))) {
    throw invalidParams(
      `${where}.url must be on the caller's own gatekeeper, the origin of the token's iss (${JSON.stringify(gatekeeper)}); ${JSON.stringify(url.origin)} is not it`,
    );
  }
  if (!allowlist.has(url.origin)) {
    throw invalidParams(`${where}.url must be on an allowlisted gatekeeper origin; ${JSON.stringify(url.origin)} is not one`);
  }
  return config;
}

/** Wrong or missing types, worded to follow the field's name (the other messages are the schema's own). */
function typeMessage(issue: { code?: string; input?: unknown; expected?: unknown }): string | undefined {
  if (issue.code !== "invalid_type") return undefined;
  if (issue.input === undefined) return "is required";
  return issue.expected === "object" ? "must be an object" : `must be a ${String(issue.expected)}`;
}

/**
 * How logs and errors name a push URL: origin and path only. The query may
 * carry a secret of the gatekeeper's (a signed URL), so it is never written down.
 */
export function pushTarget(url: string): string {
  try {
    const parsed = new URL(url);
    return `${parsed.origin}${parsed.pathname}`;
  } catch {
    return "(a push URL that does not parse)";
  }
}
