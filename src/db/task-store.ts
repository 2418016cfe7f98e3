import { and, count, desc, eq, gte, lt, or, type SQL } from "drizzle-orm";
import type { DrizzleSqliteDODatabase } from "drizzle-orm/durable-sqlite";
import { decodeCursor, encodeCursor } from "./list-cursor.js";
import { pushConfigs, tasks } from "./schema.js";

export type TaskRow = typeof tasks.$inferSelect;

/** A task as it is written: its document and the columns filtered and ordered on. */
export interface TaskWrite {
  id: string;
  state: string;
  /** Epoch ms of the document's status. */
  statusAt: number;
  /** The whole task, serialized by the caller. */
  json: string;
}

export interface NewTask extends TaskWrite {
  /** The idempotency key of the call that created the task. */
  messageId: string;
  contextId: string;
}

/** A guarded write's verdict: written, or refused because the stored task is final or absent. */
export type WriteVerdict = { kind: "written" } | { kind: "final"; row: TaskRow } | { kind: "missing" };

export interface TaskPageQuery {
  contextId?: string;
  state?: string;
  /** Epoch ms; tasks whose status is at or after it. */
  statusAfter?: number;
  limit: number;
  /** A page token of an earlier page. */
  pageToken?: string;
}

export type TaskPage = { kind: "page"; rows: TaskRow[]; nextPageToken: string; total: number } | { kind: "bad-page-token" };

/**
 * The task table of one caller's Durable Object: rows and verdicts, no
 * protocol. Every method is synchronous SQLite work with no `await` inside,
 * so the object's input gate makes each one atomic: two concurrent calls with
 * one `messageId` cannot both insert.
 */
export class TaskStore {
  readonly #final: ReadonlySet<string>;

  constructor(
    private readonly db: DrizzleSqliteDODatabase,
    /** The states after which a task never changes again: a write over one is refused. */
    finalStates: readonly string[],
    private readonly now: () => number = Date.now,
  ) {
    this.#final = new Set(finalStates);
  }

  get(id: string): TaskRow | undefined {
    return this.db.select().from(tasks).where(eq(tasks.id, id)).get();
  }

  byMessageId(messageId: string): TaskRow | undefined {
    return this.db.select().from(tasks).where(eq(tasks.messageId, messageId)).get();
  }

  /** Inserts a new task, and its first push config if it has one, in one transaction. */
  insert(task: NewTask, pushConfig?: { id: string; json: string }): void {
    const at = this.now();
    this.db.transaction((tx) => {
      tx.insert(tasks)
        .values({
          id: task.id,
          messageId: task.messageId,
          contextId: task.contextId,
          state: task.state,
          statusAt: task.statusAt,
          createdAt: at,
          taskJson: task.json,
        })
        .run();
      if (pushConfig) tx.insert(pushConfigs).values({ taskId: task.id, id: pushConfig.id, configJson: pushConfig.json, createdAt: at }).run();
    });
  }

  /** Replaces a task's document unless the stored one is final: a final task never changes again. */
  write(task: TaskWrite): WriteVerdict {
    const row = this.get(task.id);
    if (!row) return { kind: "missing" };
    if (this.#final.has(row.state)) return { kind: "final", row };
    this.db.update(tasks).set({ state: task.state, statusAt: task.statusAt, taskJson: task.json }).where(eq(tasks.id, task.id)).run();
    return { kind: "written" };
  }

  isFinal(state: string): boolean {
    return this.#final.has(state);
  }

  /** One page, newest status first; the total counts every row the filters match. */
  page(query: TaskPageQuery): TaskPage {
    const filters: SQL[] = [];
    if (query.contextId) filters.push(eq(tasks.contextId, query.contextId));
    if (query.state !== undefined) filters.push(eq(tasks.state, query.state));
    if (query.statusAfter !== undefined) filters.push(gte(tasks.statusAt, query.statusAfter));
    const where = filters.length ? and(...filters) : undefined;

    const pageFilters = [...filters];
    if (query.pageToken) {
      const after = decodeCursor(query.pageToken);
      if (!after) return { kind: "bad-page-token" };
      pageFilters.push(or(lt(tasks.statusAt, after.statusAt), and(eq(tasks.statusAt, after.statusAt), lt(tasks.id, after.id)))!);
    }
    const rows = this.db
      .select()
      .from(tasks)
      .where(pageFilters.length ? and(...pageFilters) : undefined)
      .orderBy(desc(tasks.statusAt), desc(tasks.id))
      .limit(query.limit + 1)
      .all();
    const more = rows.length > query.limit;
    const page = more ? rows.slice(0, query.limit) : rows;
    const last = page.at(-1);
    const total = this.db.select({ n: count() }).from(tasks).where(where).get()?.n ?? 0;
    return { kind: "page", rows: page, nextPageToken: more && last ? encodeCursor({ statusAt: last.statusAt, id: last.id }) : "", total };
  }
}
