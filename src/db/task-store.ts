import { and, asc, count, desc, eq, gte, inArray, isNull, lt, notInArray, or, sql, sum, type SQL } from "drizzle-orm";
import type { DrizzleSqliteDODatabase } from "drizzle-orm/durable-sqlite";
import { idSlices } from "./id-slices.js";
import { decodeCursor, encodeCursor } from "./list-cursor.js";
import { onFirstUse } from "./on-first-use.js";
import {
  acceptedMessages,
  hitlRequests,
  pushConfigs,
  redeliveries,
  rounds,
  subtasks,
  taskCounts,
  taskEvents,
  taskTotals,
  tasks,
  toolCalls,
  turns,
} from "./schema.js";

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
  /** A digest of the message, kept with its `messageId` so a retry that differs is told apart. */
  fingerprint?: string;
}

/** A task's first push config: its id, its document, and whether the request that set it activated progress. */
export interface NewPushConfig {
  id: string;
  json: string;
  progress?: boolean;
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

const messageId = sql.placeholder("messageId");

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

  // Read and written several times a turn: built once, on first use (drizzle's query building costs more than the query).
  readonly #byId = onFirstUse(() =>
    this.db
      .select()
      .from(tasks)
      .where(eq(tasks.id, sql.placeholder("id")))
      .prepare(),
  );
  // The guard is the statement's own: one statement for a write that goes through, a read only to tell a refusal's kind.
  readonly #rewrite = onFirstUse(() =>
    this.db
      .update(tasks)
      .set({ state: sql`${sql.placeholder("state")}`, statusAt: sql`${sql.placeholder("statusAt")}`, taskJson: sql`${sql.placeholder("json")}` })
      .where(and(eq(tasks.id, sql.placeholder("id")), notInArray(tasks.state, [...this.#final])))
      .returning({ id: tasks.id })
      .prepare(),
  );
  readonly #restate = onFirstUse(() =>
    this.db
      .update(tasks)
      .set({ statusAt: sql`${sql.placeholder("statusAt")}`, taskJson: sql`${sql.placeholder("json")}` })
      .where(and(eq(tasks.id, sql.placeholder("id")), eq(tasks.state, sql.placeholder("state"))))
      .returning({ id: tasks.id })
      .prepare(),
  );
  readonly #annotate = onFirstUse(() =>
    this.db
      .update(tasks)
      .set({ taskJson: sql`${sql.placeholder("json")}`, deadLetterAt: sql`${sql.placeholder("deadLetterAt")}` })
      .where(eq(tasks.id, sql.placeholder("id")))
      .prepare(),
  );
  readonly #insertTask = onFirstUse(() =>
    this.db
      .insert(tasks)
      .values({
        id: sql.placeholder("id"),
        messageId: sql.placeholder("messageId"),
        contextId: sql.placeholder("contextId"),
        state: sql.placeholder("state"),
        statusAt: sql.placeholder("statusAt"),
        createdAt: sql.placeholder("createdAt"),
        taskJson: sql.placeholder("json"),
      })
      .prepare(),
  );
  readonly #accept = onFirstUse(() =>
    this.db
      .insert(acceptedMessages)
      .values({
        messageId,
        taskId: sql.placeholder("taskId"),
        acceptedAt: sql.placeholder("at"),
        fingerprint: sql.placeholder("fingerprint"),
        // In the same statement: the task's context, for a context's erasure after retention took the task.
        contextId: sql`(select ${tasks.contextId} from ${tasks} where ${tasks.id} = ${sql.placeholder("taskId")})`,
      })
      .onConflictDoNothing()
      .prepare(),
  );
  readonly #insertPushConfig = onFirstUse(() =>
    this.db
      .insert(pushConfigs)
      .values({
        taskId: sql.placeholder("taskId"),
        id: sql.placeholder("id"),
        configJson: sql.placeholder("json"),
        createdAt: sql.placeholder("at"),
        progress: sql.placeholder("progress"),
      })
      .prepare(),
  );

  get(id: string): TaskRow | undefined {
    return this.#byId().get({ id });
  }

  /** A follow-up message taken into a task: a retry of it finds the task. */
  recordMessage(messageId: string, taskId: string, fingerprint?: string): void {
    this.#accept().run({ messageId, taskId, at: this.now(), fingerprint: fingerprint ?? null });
  }

  /** Inserts a new task, its `messageId` record, and its first push config if it has one, in one transaction. */
  insert(task: NewTask, pushConfig?: NewPushConfig): void {
    const at = this.now();
    this.db.transaction(() => {
      this.#insertTask().run({
        id: task.id,
        messageId: task.messageId,
        contextId: task.contextId,
        state: task.state,
        statusAt: task.statusAt,
        createdAt: at,
        json: task.json,
      });
      this.#accept().run({ messageId: task.messageId, taskId: task.id, at, fingerprint: task.fingerprint ?? null });
      if (pushConfig) this.#insertPushConfig().run({ taskId: task.id, id: pushConfig.id, json: pushConfig.json, at, progress: pushConfig.progress ? 1 : 0 });
    });
  }

  /** Replaces a task's document unless the stored one is final: a final task never changes again. */
  write(task: TaskWrite): WriteVerdict {
    if (this.#rewrite().get({ id: task.id, state: task.state, statusAt: task.statusAt, json: task.json })) return { kind: "written" };
    const row = this.get(task.id);
    return row ? { kind: "final", row } : { kind: "missing" };
  }

  /** Replaces the document of a task still in `task.state` (its status news, the state unchanged); false when it is not (any more). */
  restate(task: TaskWrite): boolean {
    return this.#restate().get({ id: task.id, state: task.state, statusAt: task.statusAt, json: task.json }) !== undefined;
  }

  /**
   * Rewrites a task's document without a status change, final or not: what
   * is recorded about its deliveries (`deadLetterAt`: when one was last given
   * up, which retention keeps the task a day past).
   */
  annotate(id: string, json: string, deadLetterAt: number | null): boolean {
    if (!this.get(id)) return false;
    this.#annotate().run({ id, json, deadLetterAt });
    return true;
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
    return {
      kind: "page",
      rows: page,
      nextPageToken: more && last ? encodeCursor({ statusAt: last.statusAt, id: last.id }) : "",
      total: this.#total(query, where),
    };
  }

  /**
   * The filters' total: a sum over the trigger-kept counts (a context's rows,
   * or a row per state without one), unless a time filter needs the index.
   */
  #total(query: TaskPageQuery, where: SQL | undefined): number {
    if (query.statusAfter !== undefined) return this.db.select({ n: count() }).from(tasks).where(where).get()?.n ?? 0;
    if (!query.contextId) {
      const all = this.db
        .select({ n: sum(taskTotals.n) })
        .from(taskTotals)
        .where(query.state === undefined ? undefined : eq(taskTotals.state, query.state))
        .get()?.n;
      return Number(all ?? 0);
    }
    const filters: SQL[] = [eq(taskCounts.contextId, query.contextId)];
    if (query.state !== undefined) filters.push(eq(taskCounts.state, query.state));
    const total = this.db
      .select({ n: sum(taskCounts.n) })
      .from(taskCounts)
      .where(and(...filters))
      .get()?.n;
    return Number(total ?? 0);
  }

  /**
   * Retention: deletes up to `limit` final tasks whose status is older than
   * `before`, with everything hanging off them, but never one whose turn is
   * still open (a delivery pending) nor one whose delivery was given up at
   * or after `deadLettersSince`. Their `messageId` records stay. Returns how many went.
   */
  deleteFinished(before: number, limit: number, deadLettersSince: number): { tasks: number; subtaskIds: string[] } {
    const ids = this.db
      .select({ id: tasks.id })
      .from(tasks)
      .where(
        and(
          inArray(tasks.state, [...this.#final]),
          lt(tasks.statusAt, before),
          notInArray(tasks.id, this.db.select({ id: turns.taskId }).from(turns)),
          or(isNull(tasks.deadLetterAt), lt(tasks.deadLetterAt, deadLettersSince)),
        ),
      )
      .orderBy(asc(tasks.statusAt))
      .limit(limit)
      .all()
      .map((row) => row.id);
    if (ids.length === 0) return { tasks: 0, subtaskIds: [] };
    const subtaskIds = idSlices(ids).flatMap((slice) =>
      this.db
        .select({ id: subtasks.id })
        .from(subtasks)
        .where(inArray(subtasks.taskId, slice))
        .all()
        .map((row) => row.id),
    );
    this.db.transaction((tx) => {
      for (const slice of idSlices(ids)) {
        tx.delete(subtasks).where(inArray(subtasks.taskId, slice)).run();
        tx.delete(rounds).where(inArray(rounds.taskId, slice)).run();
        tx.delete(toolCalls).where(inArray(toolCalls.taskId, slice)).run();
        tx.delete(hitlRequests).where(inArray(hitlRequests.taskId, slice)).run();
        tx.delete(pushConfigs).where(inArray(pushConfigs.taskId, slice)).run();
        tx.delete(redeliveries).where(inArray(redeliveries.taskId, slice)).run();
        tx.delete(taskEvents).where(inArray(taskEvents.taskId, slice)).run();
        tx.delete(tasks).where(inArray(tasks.id, slice)).run();
      }
    });
    return { tasks: ids.length, subtaskIds };
  }

  /** Forgets up to `limit` `messageId` records older than `before` whose task is gone. Returns how many. */
  forgetMessages(before: number, limit: number): number {
    const ids = this.db
      .select({ id: acceptedMessages.messageId })
      .from(acceptedMessages)
      .where(and(lt(acceptedMessages.acceptedAt, before), notInArray(acceptedMessages.taskId, this.db.select({ id: tasks.id }).from(tasks))))
      .orderBy(asc(acceptedMessages.acceptedAt))
      .limit(limit)
      .all()
      .map((row) => row.id);
    for (const slice of idSlices(ids)) this.db.delete(acceptedMessages).where(inArray(acceptedMessages.messageId, slice)).run();
    return ids.length;
  }
}
