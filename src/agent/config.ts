import { z } from "zod";

/**
 * What an agent may configure, with the values core uses when it does not.
 * Core ships the shape and safe defaults; the values are the agent's.
 */
const configSchema = z.strictObject({
  model: z
    .object({
      chatModelId: z.string().min(1).default("@cf/meta/llama-3.3-70b-instruct-fp8-fast"),
      fallbackChatModelId: z.string().min(1).optional(),
      timeoutMs: z.number().int().min(1_000).max(600_000).default(60_000),
    })
    .prefault({}),
  turn: z
    .object({
      /** Model steps (tool round trips) one turn may take. */
      maxSteps: z.number().int().min(1).max(64).default(8),
      /** Total tokens (input + output) one turn may spend before it must stop. */
      maxTokensPerTurn: z.number().int().min(256).default(32_000),
    })
    .prefault({}),
  history: z
    .object({
      /** Compaction folds older messages into a summary once history passes this estimate. */
      compactAfterTokens: z.number().int().min(512).default(24_000),
      /** The recent tail kept verbatim by a compaction. */
      keepRecentTokens: z.number().int().min(128).default(6_000),
    })
    .prefault({}),
  rounds: z
    .strictObject({
      /** Rounds a delegating turn may take; the last one must answer. */
      maxRounds: z.number().int().min(1).max(32).default(4),
      /** Subtasks run at once. */
      maxParallel: z.number().int().min(1).max(64).default(4),
      /** Subtasks one round may create, however many delegate calls it makes. */
      maxSubtasksPerRound: z.number().int().min(1).max(128).default(16),
    })
    .prefault({}),
  workspace: z
    .object({
      maxFiles: z.number().int().min(1).default(256),
      maxFileBytes: z.number().int().min(1).default(1024 * 1024),
      maxTotalBytes: z.number().int().min(1).default(16 * 1024 * 1024),
    })
    .prefault({}),
});

export type AgentConfig = z.output<typeof configSchema>;
export type AgentConfigInput = z.input<typeof configSchema>;

/**
 * Validates an agent's overrides and fills in the defaults. Throws one
 * sentence naming every offending field, so a typo in `agentConfig()` is
 * read at start-up rather than guessed at from a failed turn.
 */
export function resolveConfig(input: AgentConfigInput = {}): AgentConfig {
  const result = configSchema.safeParse(input);
  if (result.success) {
    const config = result.data;
    if (config.history.keepRecentTokens >= config.history.compactAfterTokens) {
      throw new Error(
        `agentConfig(): history.keepRecentTokens (${config.history.keepRecentTokens}) must be below history.compactAfterTokens (${config.history.compactAfterTokens}), or compaction could never shorten anything`,
      );
    }
    return config;
  }
  const problems = result.error.issues.map((issue) => `${issue.path.join(".") || "(root)"}: ${issue.message}`);
  throw new Error(`agentConfig() is invalid: ${problems.join("; ")}`);
}
