import { signCallbackJwt } from "./callback-jwt.js";
import { pushTarget, validatePushConfig } from "./push-config.js";
import type { SigningKey } from "./signing-key.js";
import { TRACEPARENT_HEADER, TRACESTATE_HEADER, childTraceparent, type TraceContext } from "./trace-context.js";
import { A2A_JSON, EVENT_SEQ_HEADER, NOTIFICATION_TOKEN_HEADER } from "./wire.js";
const ATTEMPT_TIMEOUT_MS = 15_000;

/**
 * What one attempt came to (docs/protocol.md "Events, streams and pushes"):
 * 2xx delivered; 408, 425, 429, 5xx and no answer (status 0) transient,
 * worth another attempt; any other status permanent (a 3xx too: redirects
 * are not followed); skipped when the config may no longer be called.
 */
export type PushAttempt =
  | { kind: "delivered"; status: number }
  | { kind: "transient"; status: number }
  | { kind: "permanent"; status: number }
  | { kind: "skipped" };

const TRANSIENT = new Set([408, 425, 429]);

/** The class of an HTTP status a push was answered with. */
export function classifyPushStatus(status: number): "delivered" | "transient" | "permanent" {
  if (status >= 200 && status <= 299) return "delivered";
  if (status === 0 || TRANSIENT.has(status) || (status >= 500 && status <= 599)) return "transient";
  return "permanent";
}

/**
 * One delivery attempt of a StreamResponse to a push config. The config is
 * validated again against `allowlist` first, read at delivery time: an origin
 * an operator removed from `GATEKEEPER_ORIGINS` since the config was accepted
 * is never called (skipped, not retried, since a retry cannot change that).
 * Never throws for the gatekeeper's answer: the caller schedules what comes
 * next from the attempt's class. Logs name the target by origin and path only.
 */
export async function deliverPush(options: {
  config: unknown;
  /** A v1.0 StreamResponse in wire JSON: `{task}` or `{statusUpdate}`. */
  body: object;
  /** The event's `seq` in its task. */
  seq: number;
  key: SigningKey;
  origin: string;
  /** The gatekeeper origins trusted now. */
  allowlist: ReadonlySet<string>;
  /** The task the push is about: the callback JWT's task claim. */
  taskId: string;
  /** The turn's trace: each attempt is a new span of it, with the caller's `tracestate` (the gatekeeper is the one who sent it). */
  trace?: TraceContext;
  fetch?: typeof fetch;
}): Promise<PushAttempt> {
  const target = pushTarget(String((options.config as { url?: unknown } | null)?.url ?? ""));
  // Each log line ends naming the turn's trace (docs/telemetry.md "Trace context").
  const trace = options.trace ? ` (trace ${options.trace.traceId})` : "";
  let config: ReturnType<typeof validatePushConfig>;
  try {
    config = validatePushConfig(options.config, options.allowlist, "the push config");
  } catch (error) {
    console.warn(`push to ${target} skipped: ${error instanceof Error ? error.message : String(error)}${trace}`);
    return { kind: "skipped" };
  }
  const headers: Record<string, string> = { "Content-Type": A2A_JSON };
  // A2A §4.3.3: credentials the client asked for replace our own bearer token.
  if (config.authentication?.scheme) {
    headers.Authorization = `${config.authentication.scheme} ${config.authentication.credentials}`.trim();
  } else {
    headers.Authorization = `Bearer ${await signCallbackJwt({ key: options.key, issuer: options.origin, url: config.url, taskId: options.taskId })}`;
  }
  if (config.token) headers[NOTIFICATION_TOKEN_HEADER] = config.token;
  headers[EVENT_SEQ_HEADER] = String(options.seq);
  if (options.trace) {
    headers[TRACEPARENT_HEADER] = childTraceparent(options.trace);
    if (options.trace.state) headers[TRACESTATE_HEADER] = options.trace.state;
  }
  // Cleared when the attempt settles, unlike `AbortSignal.timeout`, which
  // stays armed for its full period and keeps the isolate busy.
  const controller = new AbortController();
  const timer = setTimeout(() => controller.abort(new DOMException("push timed out", "TimeoutError")), ATTEMPT_TIMEOUT_MS);
  let status: number;
  try {
    const response = await (options.fetch ?? fetch)(config.url, {
      method: "POST",
      headers,
      body: JSON.stringify(options.body),
      signal: controller.signal,
      redirect: "manual",
    });
    status = response.status;
    await response.body?.cancel();
  } catch (error) {
    // A fetch error may quote the URL it failed on, query and all: say what
    // happened without it.
    console.warn(`push to ${target} got no answer: ${withoutUrl(error, config.url, target)}${trace}`);
    return { kind: "transient", status: 0 };
  } finally {
    clearTimeout(timer);
  }
  const kind = classifyPushStatus(status);
  if (kind !== "delivered") console.warn(`push to ${target} answered HTTP ${status} (${kind})${trace}`);
  return { kind, status };
}

function withoutUrl(error: unknown, url: string, target: string): string {
  let text = error instanceof Error ? `${error.name}: ${error.message}` : String(error);
  const parsed = URL.canParse(url) ? new URL(url) : undefined;
  for (const whole of [url, parsed?.href]) if (whole) text = text.split(whole).join(target);
  for (const part of [parsed?.search, parsed?.hash]) if (part) text = text.split(part).join("");
  return text;
}
