import { and, asc, eq, inArray, lt, sql } from "drizzle-orm";
import type { DrizzleSqliteDODatabase } from "drizzle-orm/durable-sqlite";
import { rounds, subtasks } from "./schema.js";

export type SubtaskRow = typeof subtasks.$inferSelect;
/** `waiting`: its recipe asked the human a question and runs on once it is answered. */
export type SubtaskStatus = "pending" | "running" | "waiting" | "done" | "failed" | "canceled";
const UNFINISHED: SubtaskStatus[] = ["pending", "running", "waiting"];

export type RoundDecision = { kind: "delegate"; count: number } | { kind: "answer"; text: string };

/** Whether a delegation was recorded; when not, what the round already holds and its cap. */
export type DelegateVerdict = { recorded: true; count: number } | { recorded: false; existing: number; max: number };

export interface NewSubtask {
  id: string;
  type: string;
  params: unknown;
  fingerprint: string;
}

/** The rounds and subtasks of this caller's delegating turns. */
export class SubtaskStore {
  constructor(
    private readonly db: DrizzleSqliteDODatabase,
    private readonly now: () => number = Date.now,
  ) {
    this.#decision = db
      .select()
      .from(rounds)
      .where(and(eq(rounds.taskId, sql.placeholder("taskId")), eq(rounds.round, sql.placeholder("round"))))
      .prepare();
  }

  /** Read several times a round: built once (drizzle's query building costs more than the read). */
  readonly #decision;

  decision(taskId: string, round: number): RoundDecision | undefined {
    const row = this.#decision.get({ taskId, round });
    return row ? (JSON.parse(row.decisionJson) as RoundDecision) : undefined;
  }

  /** Records an answer as the round's decision (first writer wins). */
  decideAnswer(taskId: string, round: number, text: string): RoundDecision {
    this.db
      .insert(rounds)
      .values({ taskId, round, decisionJson: JSON.stringify({ kind: "answer", text }), createdAt: this.now() })
      .onConflictDoNothing()
      .run();
    return this.decision(taskId, round)!;
  }

  /**
   * Records a delegation and its subtasks together, before any of them runs.
   * A second delegation in the same round adds to it (the model may delegate
   * in more than one call, even in parallel calls of one step), but the round
   * as a whole holds at most `maxPerRound`: a delegation that would pass it
   * records nothing, and the verdict says how many the round already has.
   * The count is read inside the same synchronous transaction as the writes,
   * so no two delegations can both see room for themselves.
   */
  delegate(taskId: string, round: number, created: NewSubtask[], maxPerRound: number): DelegateVerdict {
    const at = this.now();
    return this.db.transaction((tx): DelegateVerdict => {
      const existing = tx
        .select()
        .from(rounds)
        .where(and(eq(rounds.taskId, taskId), eq(rounds.round, round)))
        .get();
      const decision = existing ? (JSON.parse(existing.decisionJson) as RoundDecision) : undefined;
      const before = decision?.kind === "delegate" ? decision.count : 0;
      const count = before + created.length;
      if (count > maxPerRound) return { recorded: false, existing: before, max: maxPerRound };
      tx.insert(rounds)
        .values({ taskId, round, decisionJson: JSON.stringify({ kind: "delegate", count }), createdAt: at })
        .onConflictDoUpdate({ target: [rounds.taskId, rounds.round], set: { decisionJson: JSON.stringify({ kind: "delegate", count }) } })
        .run();
      for (const [i, subtask] of created.entries()) {
        tx.insert(subtasks)
          .values({
            id: subtask.id,
            taskId,
            round,
            ordinal: before + i,
            type: subtask.type,
            paramsJson: JSON.stringify(subtask.params),
            fingerprint: subtask.fingerprint,
            status: "pending",
            createdAt: at,
            updatedAt: at,
          })
          .run();
      }
      return { recorded: true, count };
    });
  }

  ofRound(taskId: string, round: number): SubtaskRow[] {
    return this.db
      .select()
      .from(subtasks)
      .where(and(eq(subtasks.taskId, taskId), eq(subtasks.round, round)))
      .orderBy(asc(subtasks.ordinal))
      .all();
  }

  /** Finished subtasks of the rounds before `round`: what the next round is told. */
  before(taskId: string, round: number): SubtaskRow[] {
    return this.db
      .select()
      .from(subtasks)
      .where(and(eq(subtasks.taskId, taskId), lt(subtasks.round, round)))
      .orderBy(asc(subtasks.round), asc(subtasks.ordinal))
      .all();
  }

  /** Subtasks of a task that have not finished. */
  unfinished(taskId: string): SubtaskRow[] {
    return this.db
      .select()
      .from(subtasks)
      .where(and(eq(subtasks.taskId, taskId), inArray(subtasks.status, UNFINISHED)))
      .all();
  }

  get(id: string): SubtaskRow | undefined {
    return this.db.select().from(subtasks).where(eq(subtasks.id, id)).get();
  }

  /** A running subtask's heartbeat. */
  touch(id: string): void {
    this.db.update(subtasks).set({ updatedAt: this.now() }).where(eq(subtasks.id, id)).run();
  }

  /**
   * Moves a subtask on; a final one (done, failed, canceled) never changes
   * again, so a second run's late failure cannot overwrite `done`. Returns
   * whether it moved.
   */
  mark(id: string, status: SubtaskStatus, outcome: { result?: unknown; error?: string } = {}): boolean {
    const moved = this.db
      .update(subtasks)
      .set({
        status,
        resultJson: outcome.result === undefined ? undefined : JSON.stringify(outcome.result),
        error: outcome.error,
        updatedAt: this.now(),
      })
      .where(and(eq(subtasks.id, id), inArray(subtasks.status, UNFINISHED)))
      .returning({ id: subtasks.id })
      .all();
    return moved.length > 0;
  }
}
