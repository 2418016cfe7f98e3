import type { PushConfigJson } from "../boundary/index.js";
import type { AgentDB } from "../db/agent-db.js";

/** A push config as stored and announced: its own id (assigned when absent) and its task's. */
export function withConfigIds(config: PushConfigJson, taskId: string): PushConfigJson & { id: string } {
  const { tenant: _tenant, ...rest } = config;
  return { ...rest, id: config.id || crypto.randomUUID(), taskId };
}

export const pushConfigOf = (json: string) => JSON.parse(json) as PushConfigJson;

/** Every config of the task, oldest first. */
export function configsOf(db: AgentDB, taskId: string): PushConfigJson[] {
  return db.pushConfigs.all(taskId).map((row) => pushConfigOf(row.configJson));
}
