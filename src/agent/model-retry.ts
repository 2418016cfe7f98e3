import { APICallError, wrapLanguageModel, type LanguageModel } from "ai";

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

/**
 * A failure worth trying again: HTTP 408, 429 or 5xx, or the request never
 * got an answer (a network error). A timeout of ours, a 4xx or a malformed
 * answer is not: the same request would fail the same way.
 */
export function isTransient(error: unknown): boolean {
  if (APICallError.isInstance(error)) {
    const status = error.statusCode;
    if (status === undefined) return error.isRetryable;
    return status === 408 || status === 429 || status >= 500;
  }
  // fetch rejects with a TypeError when the connection fails.
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
