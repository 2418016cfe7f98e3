import { generateText, streamText, type ModelMessage, type LanguageModelUsage, type StepResult, type StopCondition, type ToolSet } from "ai";
import type { TurnTrace } from "../a2a/trace-context.js";
import type { ModelConfig, ModelEnv } from "./model-config.js";
import { traced, withRetries, type ExchangeCounter } from "./model-retry.js";
import { chooseModels, type ModelChoice } from "./providers.js";
import type { EventCatalogue } from "../telemetry/catalogue.js";

export interface GenerateRequest {
  env: ModelEnv;
  config: ModelConfig;
  instructions?: string;
  messages: ModelMessage[];
  /** The tools, or a factory of them, called once per model tried (fresh per attempt, as a journal keyed by call order needs). */
  tools?: ToolSet | (() => ToolSet);
  /**
   * The tools whose schemas a step is sent, given the exchange's steps so
   * far; every tool stays registered (an approved call resumed runs through
   * it). Unset: every tool, every step.
   */
  activeTools?: (steps: readonly StepResult<ToolSet>[]) => string[];
  /** Default: one step. */
  stopWhen?: StopCondition<ToolSet> | Array<StopCondition<ToolSet>>;
  /** Overrides the environment's choice (tests hand in a scripted model here). */
  models?: ModelChoice[];
  /** The turn's: aborting it (a cancel) stops the model call and the tools, and tries no other model. */
  signal?: AbortSignal;
  /** The turn's trace: each request to the model (every step, retry and fallback) carries a `traceparent` naming a new span of it. */
  trace?: TurnTrace;
  /**
   * Hears the answer: each step (of each model tried) starts it over, then its
   * text deltas as they are written; a call not streamed starts it once, then
   * the whole answer (the last step's text) once it is in.
   */
  onText?: (event: { kind: "restart" } | { kind: "delta"; text: string }) => void;
  /**
   * Whether the model streams its answer, asked as each model is tried. Unset:
   * it does when `onText` is set. A call made in one request costs the isolate
   * far less than a stream (bench/README.md "Floor"), so a turn nobody reads
   * live is not streamed.
   */
  stream?: () => boolean;
}

/** What one model's exchange came to, streamed or not. */
interface Exchange {
  text: string;
  steps: StepResult<ToolSet>[];
  usage: LanguageModelUsage;
  responseMessages: ModelMessage[];
}

export type GenerateResult =
  | {
      ok: true;
      text: string;
      model: string;
      fellBack: boolean;
      steps: number;
      totalTokens: number;
      inputTokens: number;
      outputTokens: number;
      /** Of the input tokens, those the provider served from its cache; of the output tokens, those spent reasoning (0 when it says nothing). */
      cachedInputTokens: number;
      reasoningTokens: number;
      exchanges: number;
      /** Every message the exchange added (the model's, and the tool results), in the model's form. */
      responseMessages: ModelMessage[];
      /** The last step, to see what it left pending (an approval, a question to the user). */
      lastStep: StepResult<ToolSet> | undefined;
    }
  /** Every model failed, or the turn's signal aborted it; `errors` says how, one line per model, for the operator's logs. */
  | { ok: false; errors: string[]; exchanges: number; aborted: boolean /** The last model tried. */; model: string };

/** What one exchange came to: its `model.call` event without the place the caller adds (docs/telemetry.md). */
export type ExchangeReport = Omit<EventCatalogue["model.call"], "round" | "subtaskId">;

/** The report of an exchange that took `durationMs`: requests past one per step are retries (the fallback's included). */
export function exchangeReport(result: GenerateResult, durationMs: number): ExchangeReport {
  return result.ok
    ? {
        model: result.model,
        fallback: result.fellBack,
        retries: Math.max(0, result.exchanges - result.steps),
        outcome: "ok",
        steps: result.steps,
        inputTokens: result.inputTokens,
        outputTokens: result.outputTokens,
        ...(result.cachedInputTokens ? { cachedInputTokens: result.cachedInputTokens } : {}),
        ...(result.reasoningTokens ? { reasoningTokens: result.reasoningTokens } : {}),
        durationMs,
      }
    : {
        model: result.model,
        fallback: result.errors.length > 1,
        retries: Math.max(0, result.exchanges - 1),
        outcome: result.aborted ? "aborted" : "error",
        steps: 0,
        inputTokens: 0,
        outputTokens: 0,
        durationMs,
      };
}

const DEFAULT_TIMEOUT_MS = 60_000;
const DEFAULT_RETRIES = 2;
const DEFAULT_RETRY_DELAY_MS = 250;

/**
 * One model exchange with fallback: the primary, then the fallback when the
 * primary errors or exceeds the timeout. Failure is a value, so a turn can
 * end `failed` with the agent's own sentence rather than a retried exception.
 */
export async function generateWithFallback(request: GenerateRequest): Promise<GenerateResult> {
  const errors: string[] = [];
  const counter: ExchangeCounter = { exchanges: 0 };
  const retry = { retries: request.config.retries ?? DEFAULT_RETRIES, baseDelayMs: request.config.retryDelayMs ?? DEFAULT_RETRY_DELAY_MS };
  const choices = request.models ?? chooseModels(request.env, request.config);
  const active = request.activeTools;
  for (const [index, choice] of choices.entries()) {
    // A timer of our own, cleared when the call settles: `AbortSignal.timeout`
    // would stay armed for the full period and keep the Durable Object busy.
    const controller = new AbortController();
    const timer = setTimeout(() => controller.abort(new DOMException("model call timed out", "TimeoutError")), request.config.timeoutMs ?? DEFAULT_TIMEOUT_MS);
    try {
      const call = {
        model: withRetries(request.trace ? traced(choice.model, request.trace) : choice.model, retry, counter),
        instructions: request.instructions,
        messages: request.messages,
        tools: typeof request.tools === "function" ? request.tools() : request.tools,
        stopWhen: request.stopWhen,
        prepareStep: active ? ({ steps }: { steps: StepResult<ToolSet>[] }) => ({ activeTools: active(steps) }) : undefined,
        // The fallback and the durable step are the retry policy; the SDK's own
        // retries would only delay the fallback.
        maxRetries: 0,
        abortSignal: request.signal ? AbortSignal.any([controller.signal, request.signal]) : controller.signal,
      };
      const streamed = request.stream ? request.stream() : request.onText !== undefined;
      const { text, steps, usage, responseMessages } = streamed ? await streamedExchange(call, request, controller) : await wholeExchange(call, request);
      return {
        ok: true,
        text,
        model: choice.label,
        fellBack: index > 0,
        steps: steps.length,
        totalTokens: usage.totalTokens ?? 0,
        inputTokens: usage.inputTokens ?? 0,
        outputTokens: usage.outputTokens ?? 0,
        cachedInputTokens: usage.inputTokenDetails?.cacheReadTokens ?? 0,
        reasoningTokens: usage.outputTokenDetails?.reasoningTokens ?? 0,
        exchanges: counter.exchanges,
        responseMessages,
        lastStep: steps.at(-1),
      };
    } catch (error) {
      errors.push(`${choice.label}: ${describe(error)}`);
      // Canceled: no other model is asked.
      if (request.signal?.aborted) return { ok: false, errors, exchanges: counter.exchanges, aborted: true, model: choice.label };
    } finally {
      clearTimeout(timer);
    }
  }
  return { ok: false, errors, exchanges: counter.exchanges, aborted: false, model: choices.at(-1)?.label ?? "" };
}

type ExchangeCall = Parameters<typeof generateText>[0] & Parameters<typeof streamText>[0];

/** The exchange in one request; `onText` hears the answer once it is in. */
async function wholeExchange(call: ExchangeCall, request: GenerateRequest): Promise<Exchange> {
  const result = await generateText(call);
  request.onText?.({ kind: "restart" });
  if (result.text) request.onText?.({ kind: "delta", text: result.text });
  return { text: result.text, steps: result.steps, usage: result.usage, responseMessages: result.responseMessages };
}

/** The exchange streamed: `onText` hears each step start and each text delta as it comes. */
async function streamedExchange(call: ExchangeCall, request: GenerateRequest, controller: AbortController): Promise<Exchange> {
  // Failures are read from the stream below; the SDK would also log them.
  const result = streamText({ ...call, onError: () => {} });
  let failure: unknown;
  for await (const part of result.stream) {
    // The answer is the last step's text: each step starts it over.
    if (part.type === "start-step") request.onText?.({ kind: "restart" });
    else if (part.type === "text-delta") request.onText?.({ kind: "delta", text: part.text });
    else if (part.type === "error") failure ??= part.error;
    else if (part.type === "abort") failure ??= request.signal?.reason ?? controller.signal.reason ?? new DOMException("aborted", "AbortError");
  }
  if (failure !== undefined) throw failure;
  const [text, steps, usage, responseMessages] = await Promise.all([result.text, result.steps, result.totalUsage, result.responseMessages]);
  return { text, steps, usage, responseMessages };
}

function describe(error: unknown): string {
  if (!(error instanceof Error)) return String(error);
  if (error.name === "TimeoutError" || error.name === "AbortError") return "timed out";
  const status = (error as { statusCode?: number }).statusCode;
  return [error.name, status ? `HTTP ${status}` : "", error.message].filter(Boolean).join(" ");
}
