import { invalidParams, unsupportedOperation } from "../a2a/errors.js";
import { HITL_TIMEOUT_TYPE } from "../a2a/wire.js";
import type { HitlWords } from "../agent/policy.js";
import type { MessageJson, TaskJson } from "../boundary/index.js";
import type { AgentDB } from "../db/agent-db.js";
import type { HitlRow } from "../db/hitl-store.js";
import { answerOf, answerProblem, requestParts, type HitlTarget, type RequestBody, type Settlement } from "../round/hitl.js";
import { writeStatus } from "./task-events.js";
import { agentMessage, taskOf, withState } from "./task-wire.js";
import { bodyOf } from "../round/loop.js";

// Human in the loop, on the object's side: a round that waits for a human
// parks its task here, answers and expiries settle the request (first one
// wins), and the turn's Workflow is told by an event (eventTypeOf).

/** The Workflow event that ends a wait for request `requestId`. */
export const eventTypeOf = (requestId: string) => `answer-${requestId}`;

/** A request's id: stable for the model's call (or approval) it asks about, so a re-run asks the same. */
export async function requestIdOf(taskId: string, target: HitlTarget): Promise<string> {
  const about = target.kind === "approval" ? target.approvalId : target.kind === "subtask" ? `subtask:${target.subtaskId}:${target.name}` : target.toolCallId;
  const digest = await crypto.subtle.digest("SHA-256", new TextEncoder().encode(`${taskId}\n${about}`));
  return [...new Uint8Array(digest).slice(0, 16)].map((b) => b.toString(16).padStart(2, "0")).join("");
}

/**
 * Parks a task on a request: the request row, and the task INPUT_REQUIRED
 * with the request as its status message (text and data parts), in the
 * history too. Idempotent for a re-run of the same round.
 */
export function park(
  db: AgentDB,
  task: TaskJson,
  request: { requestId: string; round: number; target: HitlTarget; body: RequestBody; expiresAt: number },
  words: HitlWords,
  now: number,
): void {
  const row = db.hitl.open({
    requestId: request.requestId,
    taskId: task.id,
    round: request.round,
    request: request.body,
    target: request.target,
    expiresAt: request.expiresAt,
  });
  if (row.status !== "open" || task.status.state === "TASK_STATE_INPUT_REQUIRED") return;
  const message = { ...agentMessage(task, ""), parts: requestParts(request.requestId, request.body, row.expiresAt, words) };
  const parked = withState(task, "TASK_STATE_INPUT_REQUIRED", now, message);
  parked.history = [...(task.history ?? []), message];
  writeStatus(db, parked, now);
}

/** What an answer did: settled the request (the Workflow must be woken), or nothing new (a repeat, a losing answer). */
export type AnswerVerdict = { kind: "answered"; task: TaskJson; request: HitlRow } | { kind: "unchanged"; task: TaskJson };

/**
 * A message naming a task that waits for a human (CONTRACT's multi-turn
 * rules): the answer to its open request, checked against it, first answer
 * wins; a repeat or a losing answer changes nothing. Throws the A2A error
 * for an answer that does not fit.
 */
export function answer(db: AgentDB, task: TaskJson, message: MessageJson, caller: { key: string; name?: string }, now: number): AnswerVerdict {
  const given = answerOf(message);
  const open = db.hitl.openOf(task.id);
  if (given.requestId && given.requestId !== open?.requestId) {
    const settled = db.hitl.get(given.requestId);
    if (settled?.taskId === task.id) return { kind: "unchanged", task };
    throw invalidParams(`params.message names the request ${JSON.stringify(given.requestId)}, which task ${JSON.stringify(task.id)} has not asked`);
  }
  if (!open) throw unsupportedOperation(`Task ${JSON.stringify(task.id)} is waiting for no request this message can answer`, { taskState: task.status.state });
  const problem = answerProblem(bodyOf(open), given);
  if (problem) throw invalidParams(`params.message does not answer request ${JSON.stringify(open.requestId)}: ${problem}`);
  const settlement: Settlement = {
    outcome: "answered",
    ...(given.optionId ? { optionId: given.optionId } : {}),
    ...(given.text ? { text: given.text } : {}),
    answeredBy: caller,
  };
  const settled = db.hitl.settle(open.requestId, "answered", settlement);
  if (settled.kind !== "settled") return { kind: "unchanged", task };
  const working = withState(task, "TASK_STATE_WORKING", now);
  working.history = [...(task.history ?? []), { ...message, taskId: task.id, contextId: task.contextId }];
  writeStatus(db, working, now);
  return { kind: "answered", task: working, request: settled.row };
}

/**
 * A request's expiry, by the object's own alarm: settled expired (unless
 * answered first) and the task back to WORKING with a status message that
 * says so (the `hitl/timeout` data part beside the agent's words).
 */
export function expire(db: AgentDB, requestId: string, words: HitlWords, now: number): HitlRow | undefined {
  const settled = db.hitl.settle(requestId, "expired", { outcome: "expired" } satisfies Settlement);
  if (settled.kind !== "settled") return undefined;
  const row = db.tasks.get(settled.row.taskId);
  if (row && row.state === "TASK_STATE_INPUT_REQUIRED") {
    const task = taskOf(row);
    const message = { ...agentMessage(task, ""), parts: [{ text: words.timedOut }, { data: { type: HITL_TIMEOUT_TYPE, requestId } }] };
    writeStatus(db, withState(task, "TASK_STATE_WORKING", now, message), now);
  }
  return settled.row;
}
