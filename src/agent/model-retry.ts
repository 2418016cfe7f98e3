import { APICallError, wrapLanguageModel, type LanguageModel } from "ai";
import { TRACEPARENT_HEADER, type TurnTrace } from "../a2a/trace-context.js";

/** How a model call that failed for a passing reason is tried again. */
export interface RetryPolicy {
  /** Retries after the first attempt, per model. */
  retries: number;
  /** The first retry's delay; each next one doubles, up to {@link MAX_RETRY_DELAY_MS}. */
  baseDelayMs: number;
}

/** No wait between two attempts is longer, whatever a `Retry-After` asks. */
const MAX_RETRY_DELAY_MS = 4_000;

/** Counts the model requests a turn made, retries included: each is one exchange. */
export interface ExchangeCounter {
  exchanges: number;
}

/** How deep a wrapped error's `cause` chain is read for a lost connection. */
const MAX_CAUSES = 4;

/**
 * A connection that failed under the request, as the runtime reports it.
 * workerd raises a plain `Error`, not a `TypeError`, when a connection is
 * refused, reset, or closed before or while the answer is read (a keep-alive
 * connection the far end dropped): "Network connection lost.", flagged
 * `retryable` (README.md, "Model calls go through `ai`"). Its other errors (an
 * "internal error; reference = …" for a host that does not resolve, say) are
 * not flagged, nor is an overload, which a retry would only worsen.
 */
function isConnectionLoss(error: Error): boolean {
  const flags = error as Error & { retryable?: unknown; overloaded?: unknown };
  if (flags.overloaded === true) return false;
  return flags.retryable === true || error.message === "Network connection lost.";
}

/**
 * A failure worth trying again: HTTP 408, 429 or 5xx, or the request never
 * got a whole answer (a network error, a connection lost, also one the SDK
 * wrapped as the `cause` of its own error). A timeout of ours, a 4xx or a
 * malformed answer is not: the same request would fail the same way.
 */
export function isTransient(error: unknown): boolean {
  let cause: unknown = error;
  for (let depth = 0; cause instanceof Error && depth <= MAX_CAUSES; depth++, cause = cause.cause) {
    if (isConnectionLoss(cause)) return true;
  }
  if (APICallError.isInstance(error)) {
    const status = error.statusCode;
    if (status === undefined) return error.isRetryable;
    return status === 408 || status === 429 || status >= 500;
  }
  // fetch rejects with a TypeError when the connection fails (outside workerd).
  return error instanceof TypeError;
}

function delayOf(error: unknown, attempt: number, policy: RetryPolicy): number {
  const retryAfter = APICallError.isInstance(error) ? Number(error.responseHeaders?.["retry-after"]) : Number.NaN;
  const backoff = policy.baseDelayMs * 2 ** (attempt - 1);
  return Math.min(MAX_RETRY_DELAY_MS, Number.isFinite(retryAfter) && retryAfter >= 0 ? retryAfter * 1000 : backoff);
}

function sleep(ms: number, signal: AbortSignal | undefined): Promise<void> {
  return new Promise((resolve, reject) => {
    if (signal?.aborted) return reject(signal.reason);
    const timer = setTimeout(() => {
      signal?.removeEventListener("abort", onAbort);
      resolve();
    }, ms);
    const onAbort = () => {
      clearTimeout(timer);
      reject(signal?.reason);
    };
    signal?.addEventListener("abort", onAbort, { once: true });
  });
}

/**
 * The model with transient failures of each request retried, with bounded
 * backoff, before the caller falls back to another model. Per request, not
 * per turn: a retry repeats one model step, never the tools that ran before
 * it. Every attempt is counted in `counter`.
 */
export function withRetries(model: LanguageModel, policy: RetryPolicy, counter: ExchangeCounter): LanguageModel {
  if (typeof model === "string") return model;
  async function attempts<T>(call: () => PromiseLike<T>, signal: AbortSignal | undefined): Promise<T> {
    for (let attempt = 1; ; attempt++) {
      counter.exchanges++;
      try {
        return await call();
      } catch (error) {
        if (attempt > policy.retries || !isTransient(error) || signal?.aborted) throw error;
        await sleep(delayOf(error, attempt, policy), signal);
      }
    }
  }
  return wrapLanguageModel({
    model,
    middleware: {
      wrapGenerate: ({ doGenerate, params }) => attempts(doGenerate, params.abortSignal),
      // A stream is retried while it has not started (the HTTP answer was an error); once it
      // streams, a failure mid-way is the step's, and the fallback model takes over.
      wrapStream: ({ doStream, params }) => attempts(doStream, params.abortSignal),
    },
  });
}

/**
 * The model with each request it makes naming a new span of `trace` in its
 * `traceparent` (docs/telemetry.md "Trace context"): inside {@link withRetries},
 * so a retry is a request, and a span, of its own. An HTTP provider sends the
 * header; a binding (Workers AI) has none to send.
 */
export function traced(model: LanguageModel, trace: TurnTrace): LanguageModel {
  if (typeof model === "string") return model;
  return wrapLanguageModel({
    model,
    middleware: { transformParams: async ({ params }) => ({ ...params, headers: { ...params.headers, [TRACEPARENT_HEADER]: trace.traceparent() } }) },
  });
}
