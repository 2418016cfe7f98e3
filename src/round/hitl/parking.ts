import type { HitlWords } from "../../agent/policy.js";
import type { HumanAnswer, SubtaskQuestion, TaskJson } from "../../boundary/index.js";
import { agentMessage, withState } from "../../boundary/task-status.js";
import type { HitlStore } from "../../db/hitl-store.js";
import { humanAnswer, settlementOf } from "./answer.js";
import { parkingParts, targetOf, type HitlTarget, type RequestBody } from "./request.js";

// Human in the loop, parking: a round that waits for a human parks its task
// on the request (a subagent's question parks its parent's task too), and
// the status change comes back as data for the object to write.

/** A subagent's question as the parent's task announces it. */
export function subtaskRequest(subtaskId: string, question: SubtaskQuestion): { target: HitlTarget; body: RequestBody } {
  const choices = question.choices?.length ? question.choices : undefined;
  return {
    target: { kind: "subtask", subtaskId, name: question.name, choices, allowFreeform: question.allowFreeform },
    body: choices
      ? { requestKind: "choice", prompt: question.question, options: choices, allowFreeform: question.allowFreeform === true }
      : { requestKind: "question", prompt: question.question, allowFreeform: true },
  };
}

/**
 * Parks a task on a request: the request row, and the task INPUT_REQUIRED
 * with the request as its status message (text and data parts), in the
 * history too, returned to be written; nothing when the request was settled
 * already or the task waits on it (a re-run of the same round).
 */
export function park(
  hitl: HitlStore,
  task: TaskJson,
  request: { requestId: string; round: number; target: HitlTarget; body: RequestBody; expiresAt: number },
  words: HitlWords,
  now: number,
): TaskJson | undefined {
  const row = hitl.open({
    requestId: request.requestId,
    taskId: task.id,
    round: request.round,
    request: request.body,
    target: request.target,
    expiresAt: request.expiresAt,
  });
  if (row?.status !== "open" || task.status.state === "TASK_STATE_INPUT_REQUIRED") return undefined;
  const message = { ...agentMessage(task, ""), parts: parkingParts(request.requestId, request.body, row.expiresAt, words) };
  const parked = withState(task, "TASK_STATE_INPUT_REQUIRED", now, message);
  parked.history = [...(task.history ?? []), message];
  return parked;
}

/** A subtask's question waiting for the human. */
export interface SubtaskAsk {
  subtaskId: string;
  question: SubtaskQuestion;
}

/** The human's answer to a subtask's question, for its subagent. */
export interface SubtaskAnswer {
  subtaskId: string;
  name: string;
  answer: HumanAnswer;
}

/** The settled answers to a round's subagent questions. */
export function subtaskAnswers(hitl: HitlStore, taskId: string, round: number): SubtaskAnswer[] {
  const answers: SubtaskAnswer[] = [];
  for (const row of hitl.ofRound(taskId, round)) {
    const target = targetOf(row);
    if (target.kind !== "subtask" || row.status === "open") continue;
    answers.push({ subtaskId: target.subtaskId, name: target.name, answer: humanAnswer(target, settlementOf(row)) });
  }
  return answers;
}
