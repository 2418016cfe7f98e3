import type { TurnLedger } from "../db/turn-ledger.js";
import type { RecoveryPolicy } from "./recovery-policy.js";

/** What the schedules read of the object's open turns. */
export type OpenTurns = Pick<TurnLedger, "size" | "all">;

/** How often retention looks, once anything was accepted here. */
const RETENTION_EVERY_S = 3600;

/**
 * The SDK scheduler's calls the object's schedules are made of, each bound to
 * the object's own callback (the SDK calls methods by name).
 */
export interface ScheduleCalls {
  /** The reconcile pass on an interval (idempotent in the SDK). */
  reconcileEvery(seconds: number): Promise<unknown>;
  /** One reconcile pass at `at`. */
  reconcileAt(at: Date): Promise<unknown>;
  /** Whether a one-off reconcile pass is already pending. */
  reconcilePending(): Promise<boolean>;
  /** Cancels the interval reconcile schedules. */
  stopReconcileEvery(): Promise<void>;
  /** The retention pass on an interval (idempotent in the SDK). */
  retentionEvery(seconds: number): Promise<unknown>;
}

/**
 * When an object's reconcile and retention passes run: the interval while any
 * turn is open, a one-off pass at the moment the first open turn would count
 * as lost, the hourly retention. Arming is remembered per instance, so a
 * caller's turns back to back do not arm the same schedule again.
 */
export class TurnSchedules {
  #retentionArmed = false;
  #reconcileArmed = false;

  constructor(
    private readonly calls: ScheduleCalls,
    private readonly turns: OpenTurns,
    private readonly policy: () => RecoveryPolicy,
  ) {}

  /** The reconcile pass on its interval; armed by this instance and not stopped since, nothing to do. */
  async ensureReconciling(): Promise<void> {
    // scheduleEvery is idempotent, but not free.
    if (this.#reconcileArmed) return;
    this.#reconcileArmed = true;
    try {
      await this.calls.reconcileEvery(Math.max(1, Math.round(this.policy().reconcileEveryMs / 1000)));
    } catch (error) {
      this.#reconcileArmed = false;
      throw error;
    }
  }

  /** No turn is open: the interval goes, unless a turn opened meanwhile. */
  async stopReconciling(): Promise<void> {
    this.#reconcileArmed = false;
    await this.calls.stopReconcileEvery();
    // A turn opened while this ran (its call came in at an await) must keep a schedule: its
    // ensureReconciling may have found the old interval, which the loop above has just cancelled.
    if (this.turns.size > 0) {
      this.#reconcileArmed = false;
      await this.ensureReconciling();
    }
  }

  /**
   * A one-off pass at the moment the first open turn would count as lost
   * (its `expectedBy` plus the policy's grace), when that comes before the
   * interval's next pass: a turn cut off by a crash is re-driven then, not up
   * to a whole interval later. One such pass is pending at a time.
   */
  async armDueCheck(): Promise<void> {
    const { lostAfterMs, reconcileEveryMs } = this.policy();
    const rows = this.turns.all();
    if (rows.length === 0) return;
    const due = Math.min(...rows.map((row) => row.expectedBy)) + lostAfterMs + 1_000;
    const now = Date.now();
    // Overdue already (the object woke late): a pass in a second.
    const at = Math.max(due, now + 1_000);
    if (at - now >= reconcileEveryMs) return;
    if (!(await this.calls.reconcilePending())) await this.calls.reconcileAt(new Date(at));
  }

  /** Once per instance: the hourly retention pass (idempotent). */
  async armRetention(): Promise<void> {
    if (this.#retentionArmed) return;
    this.#retentionArmed = true;
    await this.calls.retentionEvery(RETENTION_EVERY_S);
  }
}
