import type { ModelMessage } from "ai";
import { invalidParams, unsupportedOperation } from "../../a2a/errors.js";
import { HITL_RESPONSE_TYPE } from "../../a2a/wire.js";
import type { HitlWords } from "../../agent/policy.js";
import type { HumanAnswer, MessageJson, TaskJson } from "../../boundary/index.js";
import { withState } from "../../boundary/task-status.js";
import type { ConversationStore } from "../../db/conversation-store.js";
import type { HitlRow, HitlStore } from "../../db/hitl-store.js";
import { ASK_USER_TOOL, bodyOf, targetOf, type HitlTarget, type ModelTarget, type RequestBody } from "./request.js";

// Human in the loop, the answer: a message settles its task's open request
// (first answer wins), and the next run of the round takes it in — the
// model's as a tool result, a subagent's through its parent (parking.ts).

/** How a request was settled, as recorded. */
export type Settlement =
  | { outcome: "answered"; optionId?: string; text?: string; answeredBy: { key: string; name?: string } }
  | { outcome: "expired" }
  | { outcome: "canceled" };

export const settlementOf = (row: HitlRow): Settlement =>
  row.status === "answered" ? (JSON.parse(row.answerJson ?? "{}") as Settlement) : row.status === "expired" ? { outcome: "expired" } : { outcome: "canceled" };

/** A settled request's answer as a subagent's recipe receives it. */
export function humanAnswer(target: HitlTarget, settlement: Settlement): HumanAnswer {
  if (settlement.outcome !== "answered") return { answered: false, reason: settlement.outcome };
  const label = target.kind === "approval" ? undefined : target.choices?.find((c) => c.id === settlement.optionId)?.label;
  return {
    answered: true,
    ...(settlement.optionId ? { optionId: settlement.optionId } : {}),
    ...(label ? { label } : {}),
    ...(settlement.text ? { text: settlement.text } : {}),
  };
}

/** The message that puts a settled request's answer into the round, for the model to go on from. */
function resolution(target: ModelTarget, settlement: Settlement, words: HitlWords): ModelMessage {
  if (target.kind === "approval") {
    const approved = settlement.outcome === "answered" && settlement.optionId === "approve";
    const reason = approved
      ? undefined
      : settlement.outcome === "expired"
        ? words.expired
        : [words.denied, settlement.outcome === "answered" ? settlement.text : ""].filter(Boolean).join(" ");
    return { role: "tool", content: [{ type: "tool-approval-response", approvalId: target.approvalId, approved, ...(reason ? { reason } : {}) }] };
  }
  const value =
    settlement.outcome === "answered"
      ? {
          ...(settlement.optionId ? { optionId: settlement.optionId, label: target.choices?.find((c) => c.id === settlement.optionId)?.label } : {}),
          ...(settlement.text ? { answer: settlement.text } : {}),
        }
      : { expired: true, note: words.expired };
  return { role: "tool", content: [{ type: "tool-result", toolCallId: target.toolCallId, toolName: ASK_USER_TOOL, output: { type: "json", value } }] };
}

/** An answer as a message carries it: a `hitl/response` data part, or plain text (a question's answer). */
export type AnswerInput = { requestId?: string; optionId?: string; text?: string; plain: boolean };

export function answerOf(message: MessageJson): AnswerInput {
  for (const part of message.parts) {
    const data = part.data as { type?: unknown; requestId?: unknown; optionId?: unknown; text?: unknown } | undefined;
    if (data && typeof data === "object" && data.type === HITL_RESPONSE_TYPE) {
      return {
        requestId: typeof data.requestId === "string" ? data.requestId : undefined,
        optionId: typeof data.optionId === "string" ? data.optionId : undefined,
        text: typeof data.text === "string" ? data.text : undefined,
        plain: false,
      };
    }
  }
  const text = message.parts
    .map((p) => p.text ?? "")
    .join("")
    .trim();
  return { text: text || undefined, plain: true };
}

/** Why an answer does not fit its request (a `-32602`), or undefined when it does. */
function answerProblem(body: RequestBody, answer: AnswerInput): string | undefined {
  if (body.requestKind === "question") return answer.text ? undefined : "a question is answered with text";
  if (answer.plain) return `an ${body.requestKind} request is answered with a hitl/response data part naming an optionId, not plain text`;
  if (answer.optionId && body.options?.some((o) => o.id === answer.optionId)) return undefined;
  if (!answer.optionId && answer.text && body.allowFreeform) return undefined;
  return `optionId must be one of ${(body.options ?? []).map((o) => JSON.stringify(o.id)).join(", ")}`;
}

/** What an answer did: settled the request (its task, back to WORKING, is to be written; the turn woken), or nothing new (a repeat, a losing answer). */
export type AnswerVerdict = { kind: "answered"; task: TaskJson; request: HitlRow } | { kind: "unchanged"; task: TaskJson };

/**
 * A message naming a task that waits for a human (docs/protocol.md "Human in
 * the loop"): the answer to its open request, checked against it, first
 * answer wins; a repeat or a losing answer changes nothing. Throws the A2A
 * error for an answer that does not fit.
 */
export function answer(hitl: HitlStore, task: TaskJson, message: MessageJson, caller: { key: string; name?: string }, now: number): AnswerVerdict {
  const given = answerOf(message);
  const open = hitl.openOf(task.id);
  if (given.requestId && given.requestId !== open?.requestId) {
    const settled = hitl.get(given.requestId);
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
  const settled = hitl.settle(open.requestId, "answered", settlement);
  if (settled.kind !== "settled") return { kind: "unchanged", task };
  const working = withState(task, "TASK_STATE_WORKING", now);
  working.history = [...(task.history ?? []), { ...message, taskId: task.id, contextId: task.contextId }];
  return { kind: "answered", task: working, request: settled.row };
}

/** The conversation key of a settled request's answer: present once the round has taken it in. */
const resolutionKey = (taskId: string, requestId: string) => `${taskId}:hitl:${requestId}`;

/**
 * The answers that came since the round paused, into its conversation in the
 * order they were asked; a request still open is what the round waits on. A
 * subagent's question is answered to the subagent (parking.ts), never to the model.
 */
export function takeAnswers(
  hitl: HitlStore,
  conversation: { store: ConversationStore; id: string },
  taskId: string,
  round: number,
  words: HitlWords,
): { target: HitlTarget; body: RequestBody } | undefined {
  const { store, id } = conversation;
  for (const row of hitl.ofRound(taskId, round)) {
    const target = targetOf(row);
    if (target.kind === "subtask") continue;
    if (row.status === "open") return { target, body: bodyOf(row) };
    const key = resolutionKey(taskId, row.requestId);
    if (!store.has(key)) store.append(id, taskId, key, resolution(target, settlementOf(row), words));
  }
  return undefined;
}
