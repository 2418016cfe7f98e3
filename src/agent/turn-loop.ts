import { stepCountIs, type ModelMessage, type StopCondition, type ToolSet } from "ai";
import type { AgentConfig } from "./config.js";
import { generateWithFallback } from "./generate.js";
import type { ModelEnv } from "./model-config.js";
import type { ModelChoice } from "./providers.js";
import { isCompactionMessage, type SessionLike, type SessionMessage } from "./session.js";

export interface SessionTurnInput {
  session: SessionLike;
  config: AgentConfig;
  env: ModelEnv;
  /** The agent's system prompt for this turn. */
  soul: string;
  tools: ToolSet;
  taskId: string;
  /** The user's text. */
  text: string;
  /** Whether the turn should run at all (the plugins' AND-ed gates). */
  shouldHandle: () => Promise<boolean>;
  models?: ModelChoice[];
}

export type SessionTurnResult =
  | { kind: "declined" }
  | { kind: "answered"; text: string; steps: number; model: string }
  | { kind: "failed"; message: string; errors: string[] };

/** Stops the tool loop once a turn has spent its token budget. */
export const tokenBudgetSpent =
  (maxTokens: number): StopCondition<ToolSet> =>
  ({ steps }) =>
    steps.reduce((sum, step) => sum + (step.usage.totalTokens ?? 0), 0) >= maxTokens;

/**
 * One turn of the continuous conversation: the gate, then the user's message
 * into the session, the tool loop over the whole history (bounded in steps
 * and tokens, with the fallback model), and the answer into the session.
 * Message ids derive from the task, so a re-run of the turn's durable step
 * does not write the exchange twice.
 */
export async function runSessionTurn(input: SessionTurnInput): Promise<SessionTurnResult> {
  if (!(await input.shouldHandle())) return { kind: "declined" };
  await input.session.append({ id: `${input.taskId}:user`, role: "user", parts: [{ type: "text", text: input.text }] });
  const history = await input.session.history();
  const result = await generateWithFallback({
    env: input.env,
    config: input.config.model,
    instructions: input.soul,
    messages: toModelMessages(history),
    tools: input.tools,
    stopWhen: [stepCountIs(input.config.turn.maxSteps), tokenBudgetSpent(input.config.turn.maxTokensPerTurn)],
    models: input.models,
  });
  if (!result.ok) return { kind: "failed", message: result.message, errors: result.errors };
  const text = result.text.trim() || "I ran out of steps for this request before I could write an answer. Please narrow it down and ask again.";
  await input.session.append({ id: `${input.taskId}:agent`, role: "assistant", parts: [{ type: "text", text }] });
  return { kind: "answered", text, steps: result.steps, model: result.model };
}

/** The session as model messages: text only; a compaction summary is labelled as one. */
export function toModelMessages(history: SessionMessage[]): ModelMessage[] {
  const messages: ModelMessage[] = [];
  for (const message of history) {
    const text = message.parts.flatMap((p) => (p.type === "text" && p.text ? [p.text] : [])).join("\n");
    if (!text) continue;
    if (isCompactionMessage(message)) {
      messages.push({ role: "user", content: `Summary of the earlier conversation:\n${text}` });
    } else if (message.role === "assistant") {
      messages.push({ role: "assistant", content: text });
    } else {
      messages.push({ role: "user", content: text });
    }
  }
  return messages;
}
