import type { PushConfigJson, TaskJson } from "../db/task-store.js";

/** What a turn Workflow instance is created with. Everything else it reads from the caller's Durable Object. */
export interface TurnParams {
  tenant: string;
  /** `DurableObjectId.toString()` of the caller's object. */
  agentId: string;
  taskId: string;
  messageId: string;
  /** This deployment's origin, as the edge saw it: the `iss` of callback tokens. */
  origin: string;
}

/** How a turn ended, as the tenant's turn function reports it. */
export interface TurnOutcome {
  state: "TASK_STATE_COMPLETED" | "TASK_STATE_FAILED" | "TASK_STATE_REJECTED";
  /** The reply (or, for a failure, a sentence the user can read); empty when the agent chose not to answer. */
  text: string;
}

/** One round of a turn: the end of it, or progress and another round to come. */
export type TurnStep =
  | { kind: "done"; outcome: TurnOutcome }
  /** `text` is what a gatekeeper can show while the turn goes on ("round 2: 3 subtasks done"). */
  | { kind: "continue"; text: string };

export type TurnStart = { proceed: true } | { proceed: false; state: string };

/**
 * What the turn Workflow calls on the caller's Durable Object, one durable
 * step each. Declared here, implemented by the host, so the Workflow never
 * imports an agent's class and data flows one way: edge → DO → Workflow.
 */
export interface TurnAgentRpc {
  /** Marks the task working unless it is terminal (canceled meanwhile). */
  turnStarted(taskId: string, origin: string): Promise<TurnStart>;
  /**
   * Runs round `round` of the tenant's turn (one round for a single-inference
   * agent), or returns what a previous run recorded. `null` when the task is
   * terminal.
   */
  runTurn(taskId: string, origin: string, round: number): Promise<TurnStep | null>;
  /** The guarded terminal write; the verdict names the state the task ended in. */
  finishTurn(taskId: string, outcome: TurnOutcome): Promise<{ saved: boolean; state: string }>;
  /** The task as it is to be announced, and every push config it has. */
  deliveryOf(taskId: string): Promise<{ task: TaskJson; configs: PushConfigJson[] } | null>;
  /** A delivery attempt is under way (keeps the reconciler from calling it stalled). */
  turnProgress(taskId: string): Promise<void>;
  turnDelivered(taskId: string): Promise<void>;
}

/**
 * The Workflow instance id of a turn: derived from the caller's object and the
 * message id, so a retried SendMessage names the same instance and starts
 * nothing new. Hex of SHA-256 keeps it within the id alphabet and length.
 */
export async function turnInstanceId(agentId: string, messageId: string): Promise<string> {
  const digest = await crypto.subtle.digest("SHA-256", new TextEncoder().encode(`${agentId}\n${messageId}`));
  return `turn-${[...new Uint8Array(digest)].map((b) => b.toString(16).padStart(2, "0")).join("").slice(0, 48)}`;
}
