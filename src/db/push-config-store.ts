import { TaskPushNotificationConfig } from "@a2a-js/sdk";
import { and, asc, count, eq } from "drizzle-orm";
import type { DrizzleSqliteDODatabase } from "drizzle-orm/durable-sqlite";
import { invalidParams, taskNotFound } from "../a2a/errors.js";
import { MAX_PUSH_CONFIGS_PER_TASK } from "../a2a/push-config.js";
import { pushConfigs, tasks } from "./schema.js";
import type { PushConfigJson } from "./task-store.js";

/**
 * The push configs of this caller's tasks (A2A §9). Every method first
 * proves the task exists here: a task of another caller is not in this
 * object, so it is TaskNotFound like any unknown id.
 */
export class PushConfigStore {
  constructor(
    private readonly db: DrizzleSqliteDODatabase,
    private readonly now: () => number = Date.now,
  ) {}

  #requireTask(taskId: string): void {
    if (!this.db.select({ id: tasks.id }).from(tasks).where(eq(tasks.id, taskId)).get()) throw taskNotFound(taskId);
  }

  /**
   * Adds or replaces (same id) a config; the caller validated it. A new id
   * beyond {@link MAX_PUSH_CONFIGS_PER_TASK} is refused. No `await` from the
   * count to the insert, so the object's input gate keeps them together.
   */
  put(taskId: string, configJson: PushConfigJson): PushConfigJson {
    this.#requireTask(taskId);
    const config = TaskPushNotificationConfig.fromJSON(configJson);
    const id = config.id || crypto.randomUUID();
    const replaces = this.db
      .select({ id: pushConfigs.id })
      .from(pushConfigs)
      .where(and(eq(pushConfigs.taskId, taskId), eq(pushConfigs.id, id)))
      .get();
    if (!replaces) {
      const held = this.db.select({ n: count() }).from(pushConfigs).where(eq(pushConfigs.taskId, taskId)).get()?.n ?? 0;
      if (held >= MAX_PUSH_CONFIGS_PER_TASK) {
        throw invalidParams(
          `Task ${JSON.stringify(taskId)} already has ${held} push configs, the most one task may have (${MAX_PUSH_CONFIGS_PER_TASK}): delete one or replace one by its id`,
        );
      }
    }
    const stored = TaskPushNotificationConfig.toJSON({ ...config, id, taskId, tenant: "" }) as PushConfigJson;
    this.db
      .insert(pushConfigs)
      .values({ taskId, id: stored.id as string, configJson: JSON.stringify(stored), createdAt: this.now() })
      .onConflictDoUpdate({ target: [pushConfigs.taskId, pushConfigs.id], set: { configJson: JSON.stringify(stored) } })
      .run();
    return stored;
  }

  get(taskId: string, id: string): PushConfigJson {
    this.#requireTask(taskId);
    const row = this.db
      .select({ configJson: pushConfigs.configJson })
      .from(pushConfigs)
      .where(and(eq(pushConfigs.taskId, taskId), eq(pushConfigs.id, id)))
      .get();
    if (!row) throw taskNotFound(`${taskId}/pushNotificationConfigs/${id}`);
    return JSON.parse(row.configJson) as PushConfigJson;
  }

  list(taskId: string): PushConfigJson[] {
    this.#requireTask(taskId);
    return this.all(taskId);
  }

  /** Idempotent: deleting a config that is not there succeeds. */
  delete(taskId: string, id: string): void {
    this.#requireTask(taskId);
    this.db.delete(pushConfigs).where(and(eq(pushConfigs.taskId, taskId), eq(pushConfigs.id, id))).run();
  }

  /** Every config of a task, oldest first, without the existence check (for delivery). */
  all(taskId: string): PushConfigJson[] {
    return this.db
      .select({ configJson: pushConfigs.configJson })
      .from(pushConfigs)
      .where(eq(pushConfigs.taskId, taskId))
      .orderBy(asc(pushConfigs.createdAt), asc(pushConfigs.id))
      .all()
      .map((row) => JSON.parse(row.configJson) as PushConfigJson);
  }
}
