import { createOpenAICompatible } from "@ai-sdk/openai-compatible";
import type { LanguageModel } from "ai";
import { ConfigError } from "../errors/index.js";
import { createWorkersAI } from "workers-ai-provider";
import type { ModelConfig, ModelEnv } from "./model-config.js";

export interface ModelChoice {
  /** Provider-qualified id, for logs and replies ("openai-compatible:llama3.2"). */
  label: string;
  model: LanguageModel;
}

/**
 * The primary and fallback models for this environment. When
 * `OPENAI_BASE_URL` is set every call goes to that OpenAI-compatible
 * endpoint (`OPENAI_MODEL`, then `OPENAI_FALLBACK_MODEL`); otherwise to
 * Workers AI through the `AI` binding with the agent's configured ids.
 */
export function chooseModels(env: ModelEnv, config: ModelConfig): ModelChoice[] {
  if (env.OPENAI_BASE_URL) {
    const provider = createOpenAICompatible({
      name: "openai-compatible",
      baseURL: env.OPENAI_BASE_URL,
      apiKey: env.OPENAI_API_KEY,
    });
    const ids = [env.OPENAI_MODEL || config.chatModelId, env.OPENAI_FALLBACK_MODEL].filter((id): id is string => Boolean(id));
    return ids.map((id) => ({ label: `openai-compatible:${id}`, model: provider.chatModel(id) }));
  }
  if (!env.AI) {
    throw new ConfigError(
      { kind: "binding", name: "AI" },
      "No model provider: set OPENAI_BASE_URL (an OpenAI-compatible endpoint) or bind Workers AI as `AI`",
      {
        code: ConfigError.MISSING,
      },
    );
  }
  const workersai = createWorkersAI({ binding: env.AI });
  const ids = [config.chatModelId, config.fallbackChatModelId].filter((id): id is string => Boolean(id));
  return ids.map((id) => ({ label: `workers-ai:${id}`, model: workersai(id as Parameters<typeof workersai>[0]) }));
}
