import { and, asc, desc, eq, gt, max, sql } from "drizzle-orm";
import type { DrizzleSqliteDODatabase } from "drizzle-orm/durable-sqlite";
import { onFirstUse } from "./on-first-use.js";
import { taskEvents } from "./schema.js";

export type TaskEventRow = typeof taskEvents.$inferSelect;

/** An event to record, serialized by the caller. */
export interface NewTaskEvent {
  kind: "status" | "artifact";
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
  // One statement: the next `seq` is read and taken together (an aggregate without `group by` yields its one row even for a task with no events).
  readonly #append = onFirstUse(() =>
    this.db
      .insert(taskEvents)
      .select(
        this.db
          .select({
            id: sql<number | null>`null`.as("id"),
            taskId: sql<string>`${taskId}`.as("task_id"),
            seq: sql<number>`coalesce(max(${taskEvents.seq}), 0) + 1`.as("seq"),
            kind: sql<string>`${sql.placeholder("kind")}`.as("kind"),
            eventJson: sql<string>`${sql.placeholder("eventJson")}`.as("event_json"),
            createdAt: sql<number>`${sql.placeholder("createdAt")}`.as("created_at"),
          })
          .from(taskEvents)
          .where(eq(taskEvents.taskId, taskId)),
      )
      .returning()
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
   * append can take the same number.
   */
  append(taskId: string, event: NewTaskEvent): TaskEventRow {
    return this.#append().get({ taskId, kind: event.kind, eventJson: event.json, createdAt: this.now() });
  }

  /** The task's last `seq`; 0 before its first event. */
  lastSeq(taskId: string): number {
    return this.#lastSeq().get({ taskId })?.seq ?? 0;
  }

  /** The task's events after `seq`, in order. */
  after(taskId: string, seq: number): TaskEventRow[] {
    return this.#after().all({ taskId, seq });
  }

  /** The task's event `seq`. */
  at(taskId: string, seq: number): TaskEventRow | undefined {
    return this.#at().get({ taskId, seq });
  }

  /** The task's latest event of `kind`. */
  latest(taskId: string, kind: NewTaskEvent["kind"]): TaskEventRow | undefined {
    return this.#latest().get({ taskId, kind });
  }
}
