import type { TurnLedger } from "./turn-ledger.js";

/** A report this soon after the last plain one written here is not written again (a heartbeat comes at least a second apart). */
const REPORT_AGAIN_AFTER_MS = 500;

/**
 * The turns' reports: a turn's Workflow reported in, so it is expected again
 * within the policy's window (plus `moreMs`). When this instance last wrote
 * each open turn's expectation is remembered, so a report right after it
 * writes nothing.
 */
export class TurnReports {
  readonly #at = new Map<string, number>();

  constructor(
    private readonly turns: TurnLedger,
    /** How soon a turn that reported must report again (the recovery policy's `reportWithinMs`). */
    private readonly reportWithinMs: () => number,
  ) {}

  reported(taskId: string, moreMs = 0): void {
    const now = Date.now();
    // Reported a moment ago by this instance (the accept, the start): the record already promises about as long.
    if (moreMs === 0 && now - (this.#at.get(taskId) ?? Number.NEGATIVE_INFINITY) < REPORT_AGAIN_AFTER_MS) return;
    this.turns.progress(taskId, this.reportWithinMs() + moreMs);
    // A longer promise (a wait, a backoff) is not one the next plain report may leave standing: that one is written.
    if (moreMs > 0) {
      this.#at.delete(taskId);
      return;
    }
    // Only the last moments matter: a turn that ended another way leaves no lasting entry.
    if (this.#at.size >= 1_000) this.#at.clear();
    this.#at.set(taskId, now);
  }

  /** A new task's turn record was just written, promising a report within the window from now. */
  accepted(taskId: string): void {
    this.#at.set(taskId, Date.now());
  }

  /** The turn's record closed. */
  closed(taskId: string): void {
    this.#at.delete(taskId);
  }
}
