import { generateWithFallback, type ModelConfig } from "@dynamicagents/core/agent";
import { TaskAgent, type TurnContext } from "@dynamicagents/core/host";
import type { TurnOutcome } from "@dynamicagents/core/turn";
import type { Env } from "./env.js";

const ASSISTANT_MODELS: ModelConfig = {
  chatModelId: "@cf/meta/llama-3.3-70b-instruct-fp8-fast",
  fallbackChatModelId: "@cf/meta/llama-3.1-8b-instruct-fast",
};

const ASSISTANT_SOUL =
  "You are Assistant, a helpful agent reached over the A2A protocol. Answer the request directly and concisely.";

const RESEARCHER_SOUL =
  "You are Researcher, an agent reached over the A2A protocol. Answer with a short, well-structured research summary.";

/** One inference with fallback; a failure on both models ends the task with the readable message. */
async function singleInference(env: Env, soul: string, turn: TurnContext): Promise<TurnOutcome> {
  const result = await generateWithFallback({
    env,
    config: ASSISTANT_MODELS,
    instructions: soul,
    messages: [{ role: "user", content: turn.text }],
  });
  if (!result.ok) {
    console.error("turn failed on every model", result.errors);
    return { state: "TASK_STATE_FAILED", text: result.message };
  }
  return { state: "TASK_STATE_COMPLETED", text: result.text };
}

/** The `assistant` tenant's Durable Object: one instance per verified caller, one inference per turn. */
export class AssistantAgent extends TaskAgent<Env> {
  protected override handleTurn(turn: TurnContext): Promise<TurnOutcome> {
    return singleInference(this.env, ASSISTANT_SOUL, turn);
  }
}

/**
 * The `researcher` tenant's Durable Object. Until the delegating round loop
 * lands it answers in a single inference like the assistant, with its own
 * instructions.
 */
export class ResearcherAgent extends TaskAgent<Env> {
  protected override handleTurn(turn: TurnContext): Promise<TurnOutcome> {
    return singleInference(this.env, RESEARCHER_SOUL, turn);
  }
}
