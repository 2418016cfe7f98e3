/** How hard the caller's Durable Object works to finish every turn it accepted. */
export interface RecoveryPolicy {
  /** How often the object looks at its unfinished turns while any is open. */
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

export const DEFAULT_RECOVERY_POLICY: RecoveryPolicy = {
  reconcileEveryMs: 30_000,
  stallAfterMs: 10 * 60_000,
  runGraceMs: 60_000,
  maxRedrives: 3,
};
