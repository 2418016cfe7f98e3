import { and, asc, eq, inArray, lt, sql } from "drizzle-orm";
import type { DrizzleSqliteDODatabase } from "drizzle-orm/durable-sqlite";
import { onFirstUse } from "./on-first-use.js";
import { rounds, subtasks } from "./schema.js";

export type SubtaskRow = typeof subtasks.$inferSelect;
/**
 * `waiting`: its recipe asked the human a question and runs on once it is answered.
 * `unstarted`: final, as `failed`, but no subagent could be made for it (its class is not among the Worker's exports, say).
 */
export type SubtaskStatus = "pending" | "running" | "waiting" | "done" | "failed" | "unstarted" | "canceled";
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

// A round's row, as both its answer and its delegation write it.
const roundRow = {
  taskId: sql.placeholder("taskId"),
  round: sql.placeholder("round"),
  decisionJson: sql.placeholder("decisionJson"),
  createdAt: sql.placeholder("at"),
};

/** The rounds and subtasks of this caller's delegating turns. */
export class SubtaskStore {
  constructor(
    private readonly db: DrizzleSqliteDODatabase,
    private readonly now: () => number = Date.now,
  ) {}

  // Read several times a round: built once, on first use (drizzle's query building costs more than the read).
  readonly #decision = onFirstUse(() =>
    this.db
      .select()
      .from(rounds)
      .where(and(eq(rounds.taskId, sql.placeholder("taskId")), eq(rounds.round, sql.placeholder("round"))))
      .prepare(),
  );
  readonly #decideAnswer = onFirstUse(() =>
    this.db.insert(rounds).values(roundRow).onConflictDoNothing().returning({ decisionJson: rounds.decisionJson }).prepare(),
  );
  readonly #delegateRound = onFirstUse(() =>
    this.db
      .insert(rounds)
      .values(roundRow)
      .onConflictDoUpdate({ target: [rounds.taskId, rounds.round], set: { decisionJson: sql`${sql.placeholder("decisionJson")}` } })
      .prepare(),
  );
  readonly #insertSubtask = onFirstUse(() =>
    this.db
      .insert(subtasks)
      .values({
        id: sql.placeholder("id"),
        taskId: sql.placeholder("taskId"),
        round: sql.placeholder("round"),
        ordinal: sql.placeholder("ordinal"),
        type: sql.placeholder("type"),
        paramsJson: sql.placeholder("paramsJson"),
        fingerprint: sql.placeholder("fingerprint"),
        status: "pending",
        createdAt: sql.placeholder("at"),
        updatedAt: sql.placeholder("at"),
      })
      .prepare(),
  );
  readonly #ofRound = onFirstUse(() =>
    this.db
      .select()
      .from(subtasks)
      .where(and(eq(subtasks.taskId, sql.placeholder("taskId")), eq(subtasks.round, sql.placeholder("round"))))
      .orderBy(asc(subtasks.ordinal))
      .prepare(),
  );
  readonly #before = onFirstUse(() =>
    this.db
      .select()
      .from(subtasks)
      .where(and(eq(subtasks.taskId, sql.placeholder("taskId")), lt(subtasks.round, sql.placeholder("round"))))
      .orderBy(asc(subtasks.round), asc(subtasks.ordinal))
      .prepare(),
  );
  readonly #unfinished = onFirstUse(() =>
    this.db
      .select()
      .from(subtasks)
      .where(and(eq(subtasks.taskId, sql.placeholder("taskId")), inArray(subtasks.status, UNFINISHED)))
      .prepare(),
  );
  readonly #get = onFirstUse(() =>
    this.db
      .select()
      .from(subtasks)
      .where(eq(subtasks.id, sql.placeholder("id")))
      .prepare(),
  );
  readonly #touch = onFirstUse(() =>
    this.db
      .update(subtasks)
      .set({ updatedAt: sql`${sql.placeholder("at")}` })
      .where(eq(subtasks.id, sql.placeholder("id")))
      .prepare(),
  );

  decision(taskId: string, round: number): RoundDecision | undefined {
    const row = this.#decision().get({ taskId, round });
    return row ? (JSON.parse(row.decisionJson) as RoundDecision) : undefined;
  }

  /** Records an answer as the round's decision (first writer wins). */
  decideAnswer(taskId: string, round: number, text: string): RoundDecision {
    const decisionJson = JSON.stringify({ kind: "answer", text });
    // Inserted: this is the decision; an earlier writer's is read instead.
    if (this.#decideAnswer().get({ taskId, round, decisionJson, at: this.now() })) return { kind: "answer", text };
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
    return this.db.transaction((): DelegateVerdict => {
      const existing = this.#decision().get({ taskId, round });
      const decision = existing ? (JSON.parse(existing.decisionJson) as RoundDecision) : undefined;
      const before = decision?.kind === "delegate" ? decision.count : 0;
      const count = before + created.length;
      if (count > maxPerRound) return { recorded: false, existing: before, max: maxPerRound };
      this.#delegateRound().run({ taskId, round, decisionJson: JSON.stringify({ kind: "delegate", count }), at });
      for (const [i, subtask] of created.entries()) {
        this.#insertSubtask().run({
          id: subtask.id,
          taskId,
          round,
          ordinal: before + i,
          type: subtask.type,
          paramsJson: JSON.stringify(subtask.params),
          fingerprint: subtask.fingerprint,
          at,
        });
      }
      return { recorded: true, count };
    });
  }

  ofRound(taskId: string, round: number): SubtaskRow[] {
    return this.#ofRound().all({ taskId, round });
  }

  /** Finished subtasks of the rounds before `round`: what the next round is told. */
  before(taskId: string, round: number): SubtaskRow[] {
    return this.#before().all({ taskId, round });
  }

  /** Subtasks of a task that have not finished. */
  unfinished(taskId: string): SubtaskRow[] {
    return this.#unfinished().all({ taskId });
  }

  get(id: string): SubtaskRow | undefined {
    return this.#get().get({ id });
  }

  /** Marks the first `modelCalls` of the subtask's model calls counted in the usage (`AgentDB.countSubtaskCalls`). */
  countCalls(id: string, modelCalls: number): void {
    this.db.update(subtasks).set({ modelCalls }).where(eq(subtasks.id, id)).run();
  }

  /** A running subtask's heartbeat. */
  touch(id: string): void {
    this.#touch().run({ id, at: this.now() });
  }

  /**
   * Moves a subtask on; a final one (done, failed, unstarted, canceled) never changes
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
