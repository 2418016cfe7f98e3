import { runInDurableObject } from "cloudflare:test";
import { TERMINAL_STATE_NAMES } from "@dynamicagents/core/a2a";
import { AgentDB } from "@dynamicagents/core/db";

/**
 * The instance id of the task's open turn, as the caller's object recorded it: what a spec that plays the
 * turn's Workflow passes to `runTurn` and `turnDelivered`, which act for that instance only.
 */
export async function openTurnOf(stub: DurableObjectStub<Rpc.DurableObjectBranded & object>, taskId: string): Promise<string> {
  return runInDurableObject(stub, (_instance, state) => {
    const row = new AgentDB(state.storage, TERMINAL_STATE_NAMES).turns.get(taskId);
    if (!row) throw new Error(`task ${taskId} has no open turn`);
    return row.instanceId;
  });
}
