// The push schedule (docs/protocol.md "Events, streams and pushes"): a
// transient refusal is tried again after 2 s, then twice as long each time,
// at most 5 minutes apart, and no attempt starts more than an hour after the first.

const FIRST_WAIT_MS = 2_000;
const MAX_WAIT_MS = 5 * 60_000;
/** No attempt starts later than this after the first. */
const DELIVERY_WINDOW_MS = 60 * 60_000;

/** The wait after attempt `attempt` (1-based) before the next. */
export const waitAfter = (attempt: number): number => Math.min(MAX_WAIT_MS, FIRST_WAIT_MS * 2 ** (attempt - 1));

/** Whether an attempt made at `at`, `attempt`-th of a delivery begun at `first`, is followed by another. */
export const retriesAfter = (attempt: number, at: number, first: number): boolean => at + waitAfter(attempt) <= first + DELIVERY_WINDOW_MS;
