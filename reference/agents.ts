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

/** The `assistant` tenant's Durable Object: one instance per verified caller, one inference per turn. */
export class AssistantAgent extends TaskAgent<Env> {
  protected override async handleTurn(turn: TurnContext): Promise<TurnOutcome> {
    const result = await generateWithFallback({
      env: this.env,
      config: ASSISTANT_MODELS,
      instructions: ASSISTANT_SOUL,
      messages: [{ role: "user", content: turn.text }],
    });
    if (!result.ok) {
      console.error("assistant turn failed", result.errors);
      return { state: "TASK_STATE_FAILED", text: result.message };
    }
    return { state: "TASK_STATE_COMPLETED", text: result.text };
  }
}

/** The `researcher` tenant's Durable Object: one instance per verified caller. */
export class ResearcherAgent extends TaskAgent<Env> {}
