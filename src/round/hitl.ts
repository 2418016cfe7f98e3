import { tool, type ModelMessage, type StepResult, type Tool, type ToolSet } from "ai";
import { z } from "zod";
import { HITL_REQUEST_TYPE, HITL_RESPONSE_TYPE } from "../a2a/wire.js";
import type { HitlOption, HitlWords } from "../agent/policy.js";
import type { HumanAnswer, MessageJson, PartJson, SubtaskQuestion } from "../boundary/index.js";

/** The control tool the model asks the user with; it has no `execute`: the turn pauses until they answer. */
export const ASK_USER_TOOL = "ask_user";

export function askUserTool(words: HitlWords): Tool {
  return tool({ description: words.askUserDescription, inputSchema: askUserInput });
}

// Once per isolate: a schema object is converted to JSON Schema once (tool-schemas.ts).
const askUserInput = z.object({
  question: z.string().min(1).describe("the question, in the user's language"),
  choices: z
    .array(z.object({ id: z.string().min(1), label: z.string().min(1) }))
    .optional()
    .describe("the options to pick from, when there are a few clear ones"),
  allowFreeform: z.boolean().optional().describe("with choices: whether the user may answer in their own words instead"),
});

type RequestKind = "approval" | "choice" | "question";

/** What a request's answer resolves inside the round. */
export type HitlTarget =
  | { kind: "approval"; approvalId: string; toolCallId: string; toolName: string; input: unknown }
  | { kind: "ask"; toolCallId: string; choices?: HitlOption[]; allowFreeform?: boolean }
  /** A subagent's question (`RecipeContext.ask`): its answer goes to the subagent, not to the model. */
  | { kind: "subtask"; subtaskId: string; name: string; choices?: HitlOption[]; allowFreeform?: boolean };

/** What the model's own exchange can wait on: an approval or its question. */
export type ModelTarget = Exclude<HitlTarget, { kind: "subtask" }>;

/** A request as announced (the `hitl/request` data part), without its id and expiry. */
export interface RequestBody {
  requestKind: RequestKind;
  prompt: string;
  options?: HitlOption[];
  allowFreeform?: boolean;
}

/** What the last step of an exchange left for a human: an approval the SDK asked for, or a question. */
export function pendingTarget(step: StepResult<ToolSet> | undefined): ModelTarget | undefined {
  if (!step) return undefined;
  for (const part of step.content) {
    if (part.type === "tool-approval-request") {
      return {
        kind: "approval",
        approvalId: part.approvalId,
        toolCallId: part.toolCall.toolCallId,
        toolName: part.toolCall.toolName,
        input: part.toolCall.input,
      };
    }
  }
  const answered = new Set(step.toolResults.map((r) => r.toolCallId));
  for (const call of step.toolCalls) {
    if (call.toolName !== ASK_USER_TOOL || answered.has(call.toolCallId)) continue;
    const input = (call.input ?? {}) as { question?: string; choices?: HitlOption[]; allowFreeform?: boolean };
    return { kind: "ask", toolCallId: call.toolCallId, choices: input.choices?.length ? input.choices : undefined, allowFreeform: input.allowFreeform };
  }
  return undefined;
}

/** The request a target asks, in the agent's words. */
export function requestBody(target: ModelTarget, step: StepResult<ToolSet> | undefined, words: HitlWords): RequestBody {
  if (target.kind === "approval") {
    return {
      requestKind: "approval",
      prompt: words.approvalPrompt({ toolName: target.toolName, input: target.input }),
      options: [
        { id: "approve", label: words.approve },
        { id: "reject", label: words.reject },
      ],
    };
  }
  const call = step?.toolCalls.find((c) => c.toolCallId === target.toolCallId);
  const question = String((call?.input as { question?: unknown } | undefined)?.question ?? "");
  return target.choices
    ? { requestKind: "choice", prompt: question, options: target.choices, allowFreeform: target.allowFreeform === true }
    : { requestKind: "question", prompt: question, allowFreeform: true };
}

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

/** How a request was settled, as recorded. */
export type Settlement =
  | { outcome: "answered"; optionId?: string; text?: string; answeredBy: { key: string; name?: string } }
  | { outcome: "expired" }
  | { outcome: "canceled" };

/** The message that puts a settled request's answer into the round, for the model to go on from. */
export function resolution(target: ModelTarget, settlement: Settlement, words: HitlWords): ModelMessage {
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

/** The parts of the message that parks a task: the request as data, and the agent's words saying the same. */
export function requestParts(requestId: string, body: RequestBody, expiresAt: number, words: HitlWords): PartJson[] {
  return [
    { text: words.requestText({ requestKind: body.requestKind, prompt: body.prompt, options: body.options }) },
    { data: { type: HITL_REQUEST_TYPE, requestId, ...body, expiresAt: new Date(expiresAt).toISOString() } },
  ];
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
export function answerProblem(body: RequestBody, answer: AnswerInput): string | undefined {
  if (body.requestKind === "question") return answer.text ? undefined : "a question is answered with text";
  if (answer.plain) return `an ${body.requestKind} request is answered with a hitl/response data part naming an optionId, not plain text`;
  if (answer.optionId && body.options?.some((o) => o.id === answer.optionId)) return undefined;
  if (!answer.optionId && answer.text && body.allowFreeform) return undefined;
  return `optionId must be one of ${(body.options ?? []).map((o) => JSON.stringify(o.id)).join(", ")}`;
}
