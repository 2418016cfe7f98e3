import { runInDurableObject } from "cloudflare:test";
import { TERMINAL_STATE_NAMES } from "@dynamicagents/core/a2a";
import type { TurnObject } from "@dynamicagents/core/boundary";
import { AgentDB } from "@dynamicagents/core/db";
import type { DynamicAgent } from "@dynamicagents/core/host";

/** The turn's start and terminal write on their own: the object's, named by no contract (the Workflow makes both inside `runTurn`). */
type OwnTurnParts = Pick<DynamicAgent, "turnStarted" | "finishTurn">;

/** The caller's object as a spec that drives a turn by hand sees it: the turn Workflow's contract, and {@link OwnTurnParts}. */
export type DrivenObject = TurnObject & OwnTurnParts;

/** A stub (or the object itself) typed by the contracts, seen with {@link OwnTurnParts} too. */
export const driven = <S extends object>(stub: S) => stub as S & OwnTurnParts;

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
