import { tool, type StepResult, type Tool, type ToolSet } from "ai";
import { z } from "zod";
import { HITL_REQUEST_TYPE } from "../../a2a/wire.js";
import type { HitlOption, HitlWords } from "../../agent/policy.js";
import type { PartJson } from "../../boundary/index.js";
import type { HitlRow } from "../../db/hitl-store.js";

// Human in the loop, the request: what a round waits on (an approval the
// model's tool call needs, its question, a subagent's question), as the task
// announces it (docs/protocol.md "Human in the loop").

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

/** The parts of the message that parks a task: the request as data, and the agent's words saying the same. */
export function parkingParts(requestId: string, body: RequestBody, expiresAt: number, words: HitlWords): PartJson[] {
  return [
    { text: words.requestText({ requestKind: body.requestKind, prompt: body.prompt, options: body.options }) },
    { data: { type: HITL_REQUEST_TYPE, requestId, ...body, expiresAt: new Date(expiresAt).toISOString() } },
  ];
}

/** A request's id: stable for the model's call (or approval) it asks about, so a re-run asks the same. */
export async function requestIdOf(taskId: string, target: HitlTarget): Promise<string> {
  const about = target.kind === "approval" ? target.approvalId : target.kind === "subtask" ? `subtask:${target.subtaskId}:${target.name}` : target.toolCallId;
  const digest = await crypto.subtle.digest("SHA-256", new TextEncoder().encode(`${taskId}\n${about}`));
  return [...new Uint8Array(digest).slice(0, 16)].map((b) => b.toString(16).padStart(2, "0")).join("");
}

/** A request row's parts, as the loop reads them. */
export const targetOf = (row: HitlRow) => JSON.parse(row.targetJson) as HitlTarget;
export const bodyOf = (row: HitlRow) => JSON.parse(row.requestJson) as RequestBody;
