import { Message, Task, TaskPushNotificationConfig, TaskState } from "@a2a-js/sdk";
import { and, count, desc, eq, gte, lt, or, type SQL } from "drizzle-orm";
import type { DrizzleSqliteDODatabase } from "drizzle-orm/durable-sqlite";
import { ErrorCode, RpcError, invalidParams, taskNotCancelable, taskNotFound, unsupportedOperation } from "../a2a/errors.js";
import { isTerminal, stateName } from "../a2a/task-state.js";
import { decodeCursor, encodeCursor } from "./list-cursor.js";
import { shapeTask as shape } from "./task-shape.js";
import { pushConfigs, tasks } from "./schema.js";

/** A task as it crosses Durable Object RPC: its A2A wire JSON. */
export type TaskJson = { id: string; contextId: string; [field: string]: unknown };
/** A push config as it crosses Durable Object RPC: its A2A wire JSON. */
export type PushConfigJson = { url: string; [field: string]: unknown };

export interface BeginTaskInput {
  /** The accepted user message (wire JSON); its `messageId` is the idempotency key. */
  message: unknown;
  /** The already-validated push config of the `SendMessage` call (wire JSON). */
  pushConfig: PushConfigJson;
}

export interface BeginTaskResult {
  task: TaskJson;
  /** False when a task already existed for this `messageId` (a retried SendMessage). */
  created: boolean;
}

export type SaveVerdict =
  | { saved: true; task: TaskJson }
  /** The stored task is terminal: it never changes again, and this is what it is. */
  | { saved: false; reason: "terminal"; task: TaskJson }
  | { saved: false; reason: "not-found" };

export interface ListTasksQuery {
  contextId?: string;
  state?: TaskState;
  /** Epoch ms; tasks whose status timestamp is at or after it. */
  statusAfter?: number;
  pageSize: number;
  pageToken?: string;
  historyLength?: number;
  includeArtifacts: boolean;
}

export interface ListTasksPage {
  tasks: TaskJson[];
  nextPageToken: string;
  pageSize: number;
  totalSize: number;
}

const toJson = (task: Task) => Task.toJSON(task) as TaskJson;

/**
 * The task table of one caller's Durable Object. Every method is synchronous
 * SQLite work with no `await` inside, so the Durable Object's input gate makes
 * each one atomic: two concurrent SendMessage calls with one `messageId`
 * cannot both insert.
 */
export class TaskStore {
  constructor(
    private readonly db: DrizzleSqliteDODatabase,
    private readonly now: () => number = Date.now,
  ) {}

  begin(input: BeginTaskInput): BeginTaskResult {
    const message = Message.fromJSON(input.message);
    const existing = this.db.select().from(tasks).where(eq(tasks.messageId, message.messageId)).get();
    if (existing) return { task: JSON.parse(existing.taskJson) as TaskJson, created: false };
    if (message.taskId) this.#refuseContinuation(message.taskId);

    const at = this.now();
    const id = crypto.randomUUID();
    const contextId = message.contextId || crypto.randomUUID();
    const task: Task = {
      id,
      contextId,
      status: { state: TaskState.TASK_STATE_SUBMITTED, message: undefined, timestamp: new Date(at).toISOString() },
      artifacts: [],
      history: [{ ...message, taskId: id, contextId }],
      metadata: undefined,
    };
    const config = TaskPushNotificationConfig.fromJSON(input.pushConfig);
    const stored: TaskPushNotificationConfig = { ...config, id: config.id || crypto.randomUUID(), taskId: id };
    this.db.transaction((tx) => {
      tx.insert(tasks)
        .values({
          id,
          messageId: message.messageId,
          contextId,
          state: stateName(task.status!.state),
          statusAt: at,
          createdAt: at,
          taskJson: JSON.stringify(toJson(task)),
        })
        .run();
      tx.insert(pushConfigs)
        .values({ taskId: id, id: stored.id, configJson: JSON.stringify(TaskPushNotificationConfig.toJSON(stored)), createdAt: at })
        .run();
    });
    return { task: toJson(task), created: true };
  }

  /** A message that names a task continues it; no task here waits for input yet. */
  #refuseContinuation(taskId: string): never {
    const row = this.db.select({ state: tasks.state }).from(tasks).where(eq(tasks.id, taskId)).get();
    if (!row) throw taskNotFound(taskId);
    throw unsupportedOperation(
      `Task ${JSON.stringify(taskId)} is ${row.state} and is not waiting for input: send a new message without taskId to start a new task`,
    );
  }

  get(taskId: string, historyLength?: number): TaskJson | null {
    const row = this.db.select({ taskJson: tasks.taskJson }).from(tasks).where(eq(tasks.id, taskId)).get();
    return row ? shape(JSON.parse(row.taskJson) as TaskJson, { historyLength, includeArtifacts: true }) : null;
  }

  /**
   * Replaces a task, unless the stored one is terminal: a terminal task never
   * changes again (a canceled task must not become completed), and the verdict
   * says so instead of throwing so a caller reads it rather than probing.
   */
  save(taskJson: unknown): SaveVerdict {
    const task = Task.fromJSON(taskJson);
    const row = this.db.select({ taskJson: tasks.taskJson, state: tasks.state }).from(tasks).where(eq(tasks.id, task.id)).get();
    if (!row) return { saved: false, reason: "not-found" };
    const current = Task.fromJSON(JSON.parse(row.taskJson));
    if (isTerminal(current.status!.state)) return { saved: false, reason: "terminal", task: toJson(current) };
    const state = task.status?.state ?? TaskState.TASK_STATE_UNSPECIFIED;
    if (state === TaskState.TASK_STATE_UNSPECIFIED || state === TaskState.UNRECOGNIZED) {
      throw new RpcError(ErrorCode.INTERNAL_ERROR, `saveTask: task ${task.id} has no valid status`);
    }
    const at = this.now();
    const saved: Task = {
      ...task,
      contextId: current.contextId,
      status: { ...task.status!, timestamp: task.status!.timestamp ?? new Date(at).toISOString() },
    };
    this.db
      .update(tasks)
      .set({ state: stateName(state), statusAt: Date.parse(saved.status!.timestamp!) || at, taskJson: JSON.stringify(toJson(saved)) })
      .where(eq(tasks.id, task.id))
      .run();
    return { saved: true, task: toJson(saved) };
  }

  /** Marks a non-terminal task canceled, with `message` as the agent's last word. Throws TaskNotFound / TaskNotCancelable. */
  cancel(taskId: string, message?: string): TaskJson {
    const row = this.db.select({ taskJson: tasks.taskJson }).from(tasks).where(eq(tasks.id, taskId)).get();
    if (!row) throw taskNotFound(taskId);
    const task = Task.fromJSON(JSON.parse(row.taskJson));
    if (isTerminal(task.status!.state)) throw taskNotCancelable(taskId, stateName(task.status!.state));
    const status: Record<string, unknown> = { state: "TASK_STATE_CANCELED", timestamp: new Date(this.now()).toISOString() };
    if (message) {
      status.message = { messageId: crypto.randomUUID(), role: "ROLE_AGENT", taskId, contextId: task.contextId, parts: [{ text: message }] };
    }
    const verdict = this.save({ ...toJson(task), status });
    if (!verdict.saved) throw taskNotFound(taskId);
    return verdict.task;
  }

  list(query: ListTasksQuery): ListTasksPage {
    if (!Number.isInteger(query.pageSize) || query.pageSize < 1 || query.pageSize > 100) {
      throw invalidParams(`pageSize must be an integer from 1 to 100, got ${query.pageSize}`);
    }
    const filters: SQL[] = [];
    if (query.contextId) filters.push(eq(tasks.contextId, query.contextId));
    if (query.state !== undefined) filters.push(eq(tasks.state, stateName(query.state)));
    if (query.statusAfter !== undefined) filters.push(gte(tasks.statusAt, query.statusAfter));
    const where = filters.length ? and(...filters) : undefined;

    const pageFilters = [...filters];
    if (query.pageToken) {
      const after = decodeCursor(query.pageToken);
      pageFilters.push(or(lt(tasks.statusAt, after.statusAt), and(eq(tasks.statusAt, after.statusAt), lt(tasks.id, after.id)))!);
    }
    const rows = this.db
      .select({ id: tasks.id, statusAt: tasks.statusAt, taskJson: tasks.taskJson })
      .from(tasks)
      .where(pageFilters.length ? and(...pageFilters) : undefined)
      .orderBy(desc(tasks.statusAt), desc(tasks.id))
      .limit(query.pageSize + 1)
      .all();
    const more = rows.length > query.pageSize;
    const page = more ? rows.slice(0, query.pageSize) : rows;
    const last = page.at(-1);
    const total = this.db.select({ n: count() }).from(tasks).where(where).get()?.n ?? 0;
    return {
      tasks: page.map((row) => shape(JSON.parse(row.taskJson) as TaskJson, query)),
      nextPageToken: more && last ? encodeCursor({ statusAt: last.statusAt, id: last.id }) : "",
      pageSize: query.pageSize,
      totalSize: total,
    };
  }
}
