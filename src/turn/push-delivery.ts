import { signCallbackJwt } from "../a2a/callback-jwt.js";
import { pushTarget, validatePushConfig } from "../a2a/push-config.js";
import type { SigningKey } from "../a2a/signing-key.js";
import { DynamicAgentsError } from "../errors/index.js";
import { A2A_JSON, EVENT_SEQ_HEADER, NOTIFICATION_TOKEN_HEADER } from "../a2a/wire.js";
import type { StreamEventJson } from "../boundary/index.js";
const ATTEMPT_TIMEOUT_MS = 15_000;

/** A push answered with something other than 2xx. Names the target as origin + path only. */
export class PushRejected extends DynamicAgentsError {
  static override readonly code: string = "ERR_PUSH_REJECTED";
  constructor(
    readonly target: string,
    readonly status: number,
  ) {
    super(`push to ${target} answered HTTP ${status}`);
  }
}

/** A push that got no answer (network error, timeout). Names the target as origin + path only. */
export class PushUnreachable extends DynamicAgentsError {
  static override readonly code: string = "ERR_PUSH_UNREACHABLE";
  constructor(
    readonly target: string,
    reason: string,
  ) {
    super(`push to ${target} failed: ${reason}`);
  }
}

export type PushAttempt = { status: number } | { skipped: true };

/**
 * One delivery attempt of a StreamResponse to a push config. The config is
 * validated again against `allowlist` first, read at delivery time: an origin
 * an operator removed from `GATEKEEPER_ORIGINS` since the config was accepted
 * is never called (skipped, not retried, since a retry cannot change that).
 * Throws on a network error, a timeout or a non-2xx answer, so the durable
 * step around it retries with backoff: delivery is at least once.
 */
export async function deliverPush(options: {
  config: unknown;
  /** A v1.0 StreamResponse in wire JSON: `{task}` or `{statusUpdate}`. */
  body: StreamEventJson;
  /** The event's `seq` in its task. */
  seq: number;
  key: SigningKey;
  origin: string;
  /** The gatekeeper origins trusted now. */
  allowlist: ReadonlySet<string>;
  fetch?: typeof fetch;
}): Promise<PushAttempt> {
  const target = pushTarget(String((options.config as { url?: unknown } | null)?.url ?? ""));
  let config: ReturnType<typeof validatePushConfig>;
  try {
    config = validatePushConfig(options.config, options.allowlist, "the push config");
  } catch (error) {
    console.warn(`push to ${target} skipped: ${error instanceof Error ? error.message : String(error)}`);
    return { skipped: true };
  }
  const headers: Record<string, string> = { "Content-Type": A2A_JSON };
  // A2A §4.3.3: credentials the client asked for replace our own bearer token.
  if (config.authentication?.scheme) {
    headers.Authorization = `${config.authentication.scheme} ${config.authentication.credentials}`.trim();
  } else {
    headers.Authorization = `Bearer ${await signCallbackJwt({ key: options.key, issuer: options.origin, url: config.url })}`;
  }
  if (config.token) headers[NOTIFICATION_TOKEN_HEADER] = config.token;
  headers[EVENT_SEQ_HEADER] = String(options.seq);
  // Cleared when the attempt settles, unlike `AbortSignal.timeout`, which
  // stays armed for its full period and keeps the isolate busy.
  const controller = new AbortController();
  const timer = setTimeout(() => controller.abort(new DOMException("push timed out", "TimeoutError")), ATTEMPT_TIMEOUT_MS);
  let response: Response;
  try {
    response = await (options.fetch ?? fetch)(config.url, {
      method: "POST",
      headers,
      body: JSON.stringify(options.body),
      signal: controller.signal,
      redirect: "manual",
    });
    await response.body?.cancel();
  } catch (error) {
    // A fetch error may quote the URL it failed on, query and all: say what
    // happened without it (and without a `cause` that would carry it along).
    throw new PushUnreachable(target, withoutUrl(error, config.url, target));
  } finally {
    clearTimeout(timer);
  }
  if (response.status < 200 || response.status > 299) throw new PushRejected(target, response.status);
  return { status: response.status };
}

function withoutUrl(error: unknown, url: string, target: string): string {
  let text = error instanceof Error ? `${error.name}: ${error.message}` : String(error);
  const parsed = URL.canParse(url) ? new URL(url) : undefined;
  for (const whole of [url, parsed?.href]) if (whole) text = text.split(whole).join(target);
  for (const part of [parsed?.search, parsed?.hash]) if (part) text = text.split(part).join("");
  return text;
}
