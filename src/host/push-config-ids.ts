import type { PushConfigJson } from "../boundary/index.js";

/** A push config as stored and announced: its own id (assigned when absent) and its task's. */
export function withConfigIds(config: PushConfigJson, taskId: string): PushConfigJson & { id: string } {
  const { tenant: _tenant, ...rest } = config;
  return { ...rest, id: config.id || crypto.randomUUID(), taskId };
}

export const pushConfigOf = (json: string) => JSON.parse(json) as PushConfigJson;
