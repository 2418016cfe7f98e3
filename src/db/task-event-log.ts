import { and, asc, desc, eq, gt, max, sql } from "drizzle-orm";
import type { DrizzleSqliteDODatabase } from "drizzle-orm/durable-sqlite";
import { taskEvents } from "./schema.js";

export type TaskEventRow = typeof taskEvents.$inferSelect;

/** An event to record, serialized by the caller. */
export interface NewTaskEvent {
  kind: "status" | "artifact";
  json: string;
}

/** The events of this object's tasks, as rows: numbered per task, read in ranges. */
export class TaskEventLog {
  constructor(
    private readonly db: DrizzleSqliteDODatabase,
    private readonly now: () => number = Date.now,
  ) {
    const taskId = sql.placeholder("taskId");
    this.#lastSeq = db
      .select({ seq: max(taskEvents.seq) })
      .from(taskEvents)
      .where(eq(taskEvents.taskId, taskId))
      .prepare();
    this.#append = db
      .insert(taskEvents)
      .values({
        taskId,
        seq: sql.placeholder("seq"),
        kind: sql.placeholder("kind"),
        eventJson: sql.placeholder("eventJson"),
        createdAt: sql.placeholder("createdAt"),
      })
      .returning()
      .prepare();
    this.#latest = db
      .select()
      .from(taskEvents)
      .where(and(eq(taskEvents.taskId, taskId), eq(taskEvents.kind, sql.placeholder("kind"))))
      .orderBy(desc(taskEvents.seq))
      .limit(1)
      .prepare();
  }

  // Run on every event and every push: built once (drizzle's query building costs more than the read).
  readonly #lastSeq;
  readonly #append;
  readonly #latest;

  /**
   * Appends the task's next event (`seq` one past its last). Synchronous, so
   * inside the object's input gate no other append can take the same number.
   */
  append(taskId: string, event: NewTaskEvent): TaskEventRow {
    const seq = this.lastSeq(taskId) + 1;
    return this.#append.get({ taskId, seq, kind: event.kind, eventJson: event.json, createdAt: this.now() });
  }

  /** The task's last `seq`; 0 before its first event. */
  lastSeq(taskId: string): number {
    return this.#lastSeq.get({ taskId })?.seq ?? 0;
  }

  /** The task's events after `seq`, in order. */
  after(taskId: string, seq: number): TaskEventRow[] {
    return this.db
      .select()
      .from(taskEvents)
      .where(and(eq(taskEvents.taskId, taskId), gt(taskEvents.seq, seq)))
      .orderBy(asc(taskEvents.seq))
      .all();
  }

  /** The task's event `seq`. */
  at(taskId: string, seq: number): TaskEventRow | undefined {
    return this.db
      .select()
      .from(taskEvents)
      .where(and(eq(taskEvents.taskId, taskId), eq(taskEvents.seq, seq)))
      .get();
  }

  /** The task's latest event of `kind`. */
  latest(taskId: string, kind: NewTaskEvent["kind"]): TaskEventRow | undefined {
    return this.#latest.get({ taskId, kind });
  }
}
