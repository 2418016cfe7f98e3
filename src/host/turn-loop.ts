import { stepCountIs, type ModelMessage, type StopCondition, type ToolSet } from "ai";
import type { AgentConfig } from "../agent/config.js";
import { generateWithFallback } from "../agent/generate.js";
import type { ModelEnv } from "../agent/model-config.js";
import { toModelMessages, tokenBudgetSpent } from "../agent/model-messages.js";
import type { AgentPolicy } from "../agent/policy.js";
import type { ModelChoice } from "../agent/providers.js";
import type { SessionLike } from "../agent/session.js";
import type { SubtaskStore } from "../db/subtask-store.js";
import type { AgentRuntime } from "../plugin/runtime.js";
import { DELEGATE_TOOL, createDelegateTool } from "../subtasks/delegate-tool.js";
import { redactSubtaskRows, renderSubtaskResults } from "../subtasks/results.js";

export interface RoundInput {
  taskId: string;
  round: number;
  /** The user's request. */
  text: string;
  /** This deployment's origin, for the tools. */
  origin: string;
  /** The system prompt. */
  soul: string;
  config: AgentConfig;
  policy: AgentPolicy;
  runtime: AgentRuntime;
  session: SessionLike;
  /** Where each round's decision and its subtasks are recorded. */
  rounds: SubtaskStore;
  /** Whether the agent runs delegated subtasks; without, the delegate tool is never offered. */
  delegates: boolean;
  env: ModelEnv;
  models?: ModelChoice[];
}

export type RoundResult =
  /** The turn's answer; empty text when a plugin's gate declined the turn. */
  | { kind: "answer"; state: "TASK_STATE_COMPLETED" | "TASK_STATE_FAILED"; text: string }
  /** The round delegated subtasks: they run, and the next round sees their results. */
  | { kind: "delegated" };

/**
 * One round of a turn, the same for every agent: the plugins' gates (first
 * round), the user's message into the session, the tool loop over the
 * conversation (and the results of earlier rounds' subtasks) with the
 * fallback model, bounded in steps and tokens; then either an answer, into
 * the session, or a delegation. A single-inference agent is this loop with one
 * round and no subtask types. What a round decided is recorded, so a re-run
 * of its durable step neither asks the model again nor writes twice; message
 * ids derive from the task for the same reason.
 */
export async function runRound(input: RoundInput): Promise<RoundResult> {
  const { taskId, round, rounds } = input;
  let decision = rounds.decision(taskId, round);
  if (!decision && round === 1 && !(await input.runtime.shouldHandleTurn({ text: input.text, taskId }))) {
    // Declined: the turn completes with no reply and leaves no trace in the conversation.
    decision = rounds.decideAnswer(taskId, round, "");
  }
  if (!decision) {
    if (round === 1) await input.session.append({ id: `${taskId}:user`, role: "user", parts: [{ type: "text", text: input.text }] });
    const result = await ask(input);
    if (!result.ok) {
      console.error(`round ${round} of ${taskId} failed on every model`, result.errors);
      return { kind: "answer", state: "TASK_STATE_FAILED", text: input.policy.messages.failure };
    }
    decision = rounds.decision(taskId, round) ?? rounds.decideAnswer(taskId, round, result.text.trim() || input.policy.messages.emptyAnswer);
  }
  if (decision.kind === "delegate") return { kind: "delegated" };
  if (decision.text) await input.session.append({ id: `${taskId}:agent`, role: "assistant", parts: [{ type: "text", text: decision.text }] });
  return { kind: "answer", state: "TASK_STATE_COMPLETED", text: decision.text };
}

/** The round's model exchange: the tools, the delegate tool while rounds remain, and earlier results. */
async function ask(input: RoundInput) {
  const { taskId, round, rounds, runtime, config, policy } = input;
  const words = input.delegates ? policy.rounds : undefined;
  const lastRound = round >= config.rounds.maxRounds;
  const tools: ToolSet = { ...runtime.tools({ taskId, origin: input.origin }) };
  if (words && !lastRound && runtime.subtaskTypes.size > 0) {
    tools[DELEGATE_TOOL] = createDelegateTool({
      types: runtime.subtaskTypes,
      maxSubtasks: config.rounds.maxSubtasksPerRound,
      words: words.delegate,
      record: (delegations) => rounds.delegate(taskId, round, delegations, config.rounds.maxSubtasksPerRound),
    });
  }
  const messages: ModelMessage[] = toModelMessages(await input.session.history(), policy.messages.summaryHeading);
  if (words) {
    const earlier = await redactSubtaskRows(rounds.before(taskId, round), (event) => runtime.redact(event));
    if (earlier.length) messages.push({ role: "user", content: `${words.resultsHeader}\n\n${renderSubtaskResults(earlier)}` });
  }
  const delegated: StopCondition<ToolSet> = () => rounds.decision(taskId, round)?.kind === "delegate";
  return generateWithFallback({
    env: input.env,
    config: config.model,
    instructions: [input.soul, words?.contract ?? "", words && lastRound ? words.lastRoundNote : ""].filter(Boolean).join("\n\n"),
    messages,
    tools,
    stopWhen: [delegated, stepCountIs(config.turn.maxSteps), tokenBudgetSpent(config.turn.maxTokensPerTurn)],
    models: input.models,
  });
}
