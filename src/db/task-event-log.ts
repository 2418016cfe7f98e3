import { and, asc, count, desc, eq, gt, max, sql } from "drizzle-orm";
import type { DrizzleSqliteDODatabase } from "drizzle-orm/durable-sqlite";
import { onFirstUse } from "./on-first-use.js";
import { taskEvents } from "./schema.js";

export type TaskEventRow = typeof taskEvents.$inferSelect;

/**
 * An event to record, serialized by the caller. `progress`: a working status
 * sent only to streams and push configs that activated progress (docs/protocol.md "Progress").
 */
export interface NewTaskEvent {
  kind: "status" | "artifact" | "progress";
  json: string;
}

const taskId = sql.placeholder("taskId");

/** The events of this object's tasks, as rows: numbered per task, read in ranges. */
export class TaskEventLog {
  constructor(
    private readonly db: DrizzleSqliteDODatabase,
    private readonly now: () => number = Date.now,
  ) {}

  // Run on every event and every push: built once, on first use (drizzle's query building costs more than the read).
  readonly #lastSeq = onFirstUse(() =>
    this.db
      .select({ seq: max(taskEvents.seq) })
      .from(taskEvents)
      .where(eq(taskEvents.taskId, taskId))
      .prepare(),
  );
  // One statement: the next `seq` is read inside the insert's values (a scalar
  // subquery, not `insert … select`, which SQLite runs through a temporary table
  // when it reads the table it writes). Only the new numbers come back: the
  // caller holds the rest of the row.
  readonly #append = onFirstUse(() =>
    this.db
      .insert(taskEvents)
      .values({
        taskId,
        seq: sql`(select coalesce(max(${taskEvents.seq}), 0) + 1 from ${taskEvents} where ${eq(taskEvents.taskId, taskId)})`,
        kind: sql.placeholder("kind"),
        eventJson: sql.placeholder("eventJson"),
        createdAt: sql.placeholder("createdAt"),
      })
      .returning({ id: taskEvents.id, seq: taskEvents.seq })
      .prepare(),
  );
  readonly #after = onFirstUse(() =>
    this.db
      .select()
      .from(taskEvents)
      .where(and(eq(taskEvents.taskId, taskId), gt(taskEvents.seq, sql.placeholder("seq"))))
      .orderBy(asc(taskEvents.seq))
      .prepare(),
  );
  readonly #ofKind = onFirstUse(() =>
    this.db
      .select()
      .from(taskEvents)
      .where(and(eq(taskEvents.taskId, taskId), eq(taskEvents.kind, sql.placeholder("kind"))))
      .orderBy(asc(taskEvents.seq))
      .prepare(),
  );
  readonly #at = onFirstUse(() =>
    this.db
      .select()
      .from(taskEvents)
      .where(and(eq(taskEvents.taskId, taskId), eq(taskEvents.seq, sql.placeholder("seq"))))
      .prepare(),
  );
  readonly #latest = onFirstUse(() =>
    this.db
      .select()
      .from(taskEvents)
      .where(and(eq(taskEvents.taskId, taskId), eq(taskEvents.kind, sql.placeholder("kind"))))
      .orderBy(desc(taskEvents.seq))
      .limit(1)
      .prepare(),
  );

  /**
   * Appends the task's next event (`seq` one past its last, 1 for its first)
   * in one statement. Synchronous, so inside the object's input gate no other
   * append can take the same number. `undefined`: the task is gone (erased),
   * and the schema's guard kept the event out.
   */
  append(taskId: string, event: NewTaskEvent): TaskEventRow | undefined {
    const createdAt = this.now();
    const appended = this.#append().get({ taskId, kind: event.kind, eventJson: event.json, createdAt });
    return appended && { id: appended.id, taskId, seq: appended.seq, kind: event.kind, eventJson: event.json, createdAt };
  }

  /** The task's last `seq`; 0 before its first event. */
  lastSeq(taskId: string): number {
    return this.#lastSeq().get({ taskId })?.seq ?? 0;
  }

  /** The task's events after `seq`, in order. */
  after(taskId: string, seq: number): TaskEventRow[] {
    return this.#after().all({ taskId, seq });
  }

  /** The task's events of `kind`, in order: folding the artifacts gets only their rows back, not every status event's JSON. */
  ofKind(taskId: string, kind: NewTaskEvent["kind"]): TaskEventRow[] {
    return this.#ofKind().all({ taskId, kind });
  }

  /** The task's event `seq`. */
  at(taskId: string, seq: number): TaskEventRow | undefined {
    return this.#at().get({ taskId, seq });
  }

  /** How many events of `kind` the task has. */
  count(taskId: string, kind: NewTaskEvent["kind"]): number {
    return (
      this.db
        .select({ n: count() })
        .from(taskEvents)
        .where(and(eq(taskEvents.taskId, taskId), eq(taskEvents.kind, kind)))
        .get()?.n ?? 0
    );
  }

  /** The task's latest event of `kind`. */
  latest(taskId: string, kind: NewTaskEvent["kind"]): TaskEventRow | undefined {
    return this.#latest().get({ taskId, kind });
  }
}
