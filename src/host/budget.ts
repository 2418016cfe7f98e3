import { quotaExceeded, type RpcError } from "../a2a/errors.js";
import { DAY_MS, tokensOf, type Usage } from "../db/usage-store.js";

/**
 * The refusal of a send by a caller whose model calls spent today's budget
 * (`limits.tokensPerCallerPerDay`), or `undefined` when there is room or no
 * cap. The budget counts input and output tokens; it frees at midnight UTC,
 * which is what `Retry-After` says. `today` is read only when there is a cap.
 */
export function dailyBudgetRefusal(today: () => Usage, cap: number | undefined, now: number): { error: RpcError; retryAfterSeconds: number } | undefined {
  if (cap === undefined) return undefined;
  const spent = tokensOf(today());
  if (spent < cap) return undefined;
  const retryAfterSeconds = Math.max(1, Math.ceil((DAY_MS - (now % DAY_MS)) / 1000));
  return {
    retryAfterSeconds,
    error: quotaExceeded({
      message: `This caller's model calls have spent ${spent} tokens today, its daily budget of ${cap}: send again after midnight UTC`,
      retryAfterSeconds,
      metadata: { limit: "tokensPerCallerPerDay", spent: String(spent), budget: String(cap) },
    }),
  };
}
