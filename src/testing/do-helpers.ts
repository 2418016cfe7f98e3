import { runInDurableObject } from "cloudflare:test";
import { TERMINAL_STATE_NAMES } from "../a2a/wire.js";
import { AgentDB } from "../db/agent-db.js";

/**
 * Helpers for specs about an agent's own tables: `withDb` runs a body inside a
 * fresh instance of the namespace's Durable Object (its real SQLite, migrated
 * by the object's constructor) with the core `AgentDB` over it.
 */
export function makeDoHelpers(namespace: DurableObjectNamespace) {
  return {
    async withDb<T>(name: string, body: (db: AgentDB, state: DurableObjectState) => T | Promise<T>): Promise<T> {
      const stub = namespace.get(namespace.idFromName(`${name}:${crypto.randomUUID()}`));
      return runInDurableObject(stub, (_instance, state) => body(new AgentDB(state.storage, TERMINAL_STATE_NAMES), state));
    },
  };
}
