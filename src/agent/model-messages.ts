import type { ModelMessage, StopCondition, ToolSet } from "ai";
import { isCompactionMessage, type SessionMessage } from "./session.js";

/** Stops the tool loop once a turn has spent its token budget. */
export const tokenBudgetSpent =
  (maxTokens: number): StopCondition<ToolSet> =>
  ({ steps }) =>
    steps.reduce((sum, step) => sum + (step.usage.totalTokens ?? 0), 0) >= maxTokens;

/** The session as model messages: text only; a compaction summary under the agent's `summaryHeading`. */
export function toModelMessages(history: SessionMessage[], summaryHeading: string): ModelMessage[] {
  const messages: ModelMessage[] = [];
  for (const message of history) {
    const text = message.parts.flatMap((p) => (p.type === "text" && p.text ? [p.text] : [])).join("\n");
    if (!text) continue;
    if (isCompactionMessage(message)) {
      messages.push({ role: "user", content: `${summaryHeading}\n${text}` });
    } else if (message.role === "assistant") {
      messages.push({ role: "assistant", content: text });
    } else {
      messages.push({ role: "user", content: text });
    }
  }
  return messages;
}
