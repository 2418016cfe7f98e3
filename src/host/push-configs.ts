import { invalidParams } from "../a2a/errors.js";
import { MAX_PUSH_CONFIGS_PER_TASK } from "../a2a/push-config.js";
import type { PushConfigJson } from "../boundary/index.js";
import type { AgentDB } from "../db/agent-db.js";
import { pushConfigOf, withConfigIds } from "./push-config-ids.js";

// A task's push configs as the caller's object keeps them (docs/protocol.md
// "Push config rules"): what a retried send compares, and the per-task cap.

/** Every config of the task, oldest first. */
export function configsOf(db: AgentDB, taskId: string): PushConfigJson[] {
  return db.pushConfigs.all(taskId).map((row) => pushConfigOf(row.configJson));
}

/** Whether the task has this config already: the one with its id, or (without an id) one to the same URL with the same token and authentication. */
export function hasConfig(db: AgentDB, taskId: string, config: PushConfigJson): boolean {
  const same = (a: PushConfigJson, b: PushConfigJson) =>
    a.url === b.url && (a.token ?? "") === (b.token ?? "") && JSON.stringify(a.authentication ?? null) === JSON.stringify(b.authentication ?? null);
  return configsOf(db, taskId).some((stored) => (config.id ? stored.id === config.id && same(stored, config) : same(stored, config)));
}

/** Stores a config on a task (replacing one with its id); -32602 past the per-task cap. */
export function putConfig(db: AgentDB, taskId: string, config: PushConfigJson): PushConfigJson & { id: string } {
  const stored = withConfigIds(config, taskId);
  const put = db.pushConfigs.put(taskId, stored.id, JSON.stringify(stored), MAX_PUSH_CONFIGS_PER_TASK);
  if (put.kind === "full") {
    throw invalidParams(
      `Task ${JSON.stringify(taskId)} already has ${put.held} push configs, the most one task may have (${MAX_PUSH_CONFIGS_PER_TASK}): delete one or replace one by its id`,
    );
  }
  return stored;
}
