/** How hard the caller's Durable Object works to finish every turn it accepted. */
export interface TurnPolicy {
  /** How often the alarm looks at unfinished turns. */
  reconcileEveryMs: number;
  /** A turn whose Workflow has not reported for this long is re-driven. */
  stallAfterMs: number;
  /**
   * A turn whose Workflow says "running" but which is not running its model
   * work in this object, with nothing reported for this long, was lost.
   */
  runGraceMs: number;
  /** Re-drives before the task is failed and that failure announced. */
  maxRedrives: number;
}

export const DEFAULT_TURN_POLICY: TurnPolicy = {
  reconcileEveryMs: 30_000,
  stallAfterMs: 10 * 60_000,
  runGraceMs: 60_000,
  maxRedrives: 3,
};

/** The readable end of a turn nothing could finish. */
export const TURN_ABANDONED_MESSAGE =
  "Sorry, this request could not be completed: the agent failed to finish it after several attempts. Please send it again.";
