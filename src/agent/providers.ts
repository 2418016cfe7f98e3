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
  // Built once per environment and choice: a provider per turn was a measurable share of a turn (bench/README.md "Profiling").
  const key = JSON.stringify([
    env.OPENAI_BASE_URL,
    env.OPENAI_API_KEY,
    env.OPENAI_MODEL,
    env.OPENAI_FALLBACK_MODEL,
    config.chatModelId,
    config.fallbackChatModelId,
  ]);
  let chosen = built.get(env);
  if (!chosen) built.set(env, (chosen = new Map()));
  const known = chosen.get(key);
  if (known) return known;
  const choices = buildChoices(env, config);
  chosen.set(key, choices);
  return choices;
}

/** By environment (a Worker's `env` lives as long as its isolate), then by what the choice reads of it. */
const built = new WeakMap<ModelEnv, Map<string, ModelChoice[]>>();

function buildChoices(env: ModelEnv, config: ModelConfig): ModelChoice[] {
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
