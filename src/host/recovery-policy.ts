/** How hard the caller's Durable Object works to finish every turn it accepted. */
export interface RecoveryPolicy {
  /** How often the object looks at its open turns while any is open (and at every wake). */
  reconcileEveryMs: number;
  /** How soon after a step the turn's Workflow must report again; a model call heartbeats well within it. */
  reportWithinMs: number;
  /** A turn silent this long past what its last report promised was lost, and is re-driven. */
  lostAfterMs: number;
  /** Re-drives before the task is failed and that failure announced. */
  maxRedrives: number;
}

/**
 * A turn cut off by a crash is found at the object's next wake (its schedule
 * fires at least every 30 s): silent for 60 s past its promise, it is
 * re-driven within about 90 s of the wake, under the two minutes a gatekeeper
 * is promised.
 */
export const DEFAULT_RECOVERY_POLICY: RecoveryPolicy = {
  reconcileEveryMs: 30_000,
  reportWithinMs: 60_000,
  lostAfterMs: 30_000,
  maxRedrives: 3,
};
