import { invalidParams, taskNotFound } from "../a2a/errors.js";
import { MAX_PUSH_CONFIGS_PER_TASK } from "../a2a/push-config.js";
import { settle, type PushConfigFrom, type PushConfigJson, type Verdict } from "../boundary/index.js";
import type { AgentDB } from "../db/agent-db.js";
import { queueRedelivery } from "./deliveries.js";
import type { ObjectParts } from "./lifecycle.js";
import { configsOf, pushConfigOf, withConfigIds } from "./push-config-ids.js";
import { redeliver } from "./turn-workflows.js";

// A task's push configs as the caller's object keeps them (docs/protocol.md
// "Push config rules"): what a retried send compares, and the per-task cap.

/** Whether the task has this config already: the one with its id, or (without an id) one to the same URL with the same token and authentication. */
export function hasConfig(db: AgentDB, taskId: string, config: PushConfigJson): boolean {
  const same = (a: PushConfigJson, b: PushConfigJson) =>
    a.url === b.url && (a.token ?? "") === (b.token ?? "") && JSON.stringify(a.authentication ?? null) === JSON.stringify(b.authentication ?? null);
  return configsOf(db, taskId).some((stored) => (config.id ? stored.id === config.id && same(stored, config) : same(stored, config)));
}

/** Stores a config on a task (replacing one with its id; `progress`: it is sent progress events); -32602 past the per-task cap. */
export function putConfig(db: AgentDB, taskId: string, config: PushConfigJson, progress?: boolean): PushConfigJson & { id: string } {
  const stored = withConfigIds(config, taskId);
  const put = db.pushConfigs.put(taskId, stored.id, JSON.stringify(stored), MAX_PUSH_CONFIGS_PER_TASK, progress);
  if (put.kind === "full") {
    throw invalidParams(
      `Task ${JSON.stringify(taskId)} already has ${put.held} push configs, the most one task may have (${MAX_PUSH_CONFIGS_PER_TASK}): delete one or replace one by its id`,
    );
  }
  return stored;
}

/** The push-config methods: a config set on a task with dead letters has them re-delivered. */
export class PushConfigs {
  constructor(private readonly parts: ObjectParts) {}

  async put(taskId: string, config: PushConfigJson, from: PushConfigFrom): Promise<Verdict<PushConfigJson>> {
    const { db, origin, agent } = this.parts;
    origin.learn(from.origin);
    let queued = false;
    const verdict = this.#onTask(taskId, () => {
      const stored = putConfig(db, taskId, config, from.progress);
      queued = queueRedelivery(db, taskId, stored.id);
      return stored;
    });
    if (queued) await redeliver(this.parts, taskId, { tenant: from.tenant, agentId: agent.agentId(), origin: from.origin });
    return verdict;
  }

  get(taskId: string, configId: string): Verdict<PushConfigJson> {
    return this.#onTask(taskId, () => {
      const row = this.parts.db.pushConfigs.get(taskId, configId);
      if (!row) throw taskNotFound(`${taskId}/pushNotificationConfigs/${configId}`);
      return pushConfigOf(row.configJson);
    });
  }

  list(taskId: string): Verdict<PushConfigJson[]> {
    return this.#onTask(taskId, () => configsOf(this.parts.db, taskId));
  }

  /** Idempotent: deleting a config that is not there succeeds. */
  delete(taskId: string, configId: string): Verdict<null> {
    return this.#onTask(taskId, () => {
      this.parts.db.pushConfigs.delete(taskId, configId);
      return null;
    });
  }

  /** `work` on an existing task, as a verdict: -32001 for a task this caller does not have. */
  #onTask<T>(taskId: string, work: () => T): Verdict<T> {
    return settle(() => {
      if (!this.parts.db.tasks.get(taskId)) throw taskNotFound(taskId);
      return work();
    });
  }
}
