/** Which models a turn uses. Ids are the provider's own (`@cf/…` for Workers AI). */
export interface ModelConfig {
  chatModelId: string;
  /** Tried once when the primary errors or times out. */
  fallbackChatModelId?: string;
  /** Per model, retries included; a model that takes longer counts as failed. Default 60 s. */
  timeoutMs?: number;
  /** Retries of a request that failed for a passing reason (HTTP 408, 429, 5xx, network) before the fallback. Default 2. */
  retries?: number;
  /** The first retry's delay, doubling after. Default 250 ms. */
  retryDelayMs?: number;
}

/** The bindings and variables model selection reads (docs/protocol.md "Operator surface"). */
export interface ModelEnv {
  AI?: Ai;
  OPENAI_BASE_URL?: string;
  OPENAI_API_KEY?: string;
  OPENAI_MODEL?: string;
  /** Fallback model on the OpenAI-compatible endpoint; defaults to none. */
  OPENAI_FALLBACK_MODEL?: string;
}
