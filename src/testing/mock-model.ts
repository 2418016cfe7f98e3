import type { ModelChoice } from "../agent/providers.js";
import { MockLanguageModelV4 } from "ai/test";

/** One scripted model reply: text, tool calls, or both. */
export type ScriptedReply = string | { text?: string; toolCalls?: Array<{ toolName: string; input: unknown }>; tokens?: number } | Error;

let callIds = 0;

function toResult(reply: Exclude<ScriptedReply, Error>) {
  const spec = typeof reply === "string" ? { text: reply } : reply;
  const content = [
    ...(spec.text ? [{ type: "text" as const, text: spec.text }] : []),
    ...(spec.toolCalls ?? []).map((call) => ({
      type: "tool-call" as const,
      toolCallId: `call-${++callIds}`,
      toolName: call.toolName,
      input: JSON.stringify(call.input),
    })),
  ];
  const tokens = spec.tokens ?? 10;
  return {
    content,
    finishReason: { unified: spec.toolCalls?.length ? ("tool-calls" as const) : ("stop" as const), raw: undefined },
    usage: {
      inputTokens: { total: tokens / 2, noCache: undefined, cacheRead: undefined, cacheWrite: undefined },
      outputTokens: { total: tokens / 2, text: undefined, reasoning: undefined },
    },
    warnings: [],
  };
}

/** A result as the model streams it: the text in word-sized deltas, then the tool calls, then the finish. */
function toStream(result: ReturnType<typeof toResult>) {
  const parts: unknown[] = [{ type: "stream-start", warnings: [] }];
  for (const [i, item] of result.content.entries()) {
    if (item.type === "text") {
      const id = `text-${i}`;
      parts.push({ type: "text-start", id });
      for (const word of item.text.match(/\S+\s*|\s+/g) ?? []) parts.push({ type: "text-delta", id, delta: word });
      parts.push({ type: "text-end", id });
    } else parts.push(item);
  }
  parts.push({ type: "finish", finishReason: result.finishReason, usage: result.usage });
  return {
    stream: new ReadableStream({
      start(controller) {
        for (const part of parts) controller.enqueue(part);
        controller.close();
      },
    }),
  };
}

/**
 * A scripted `LanguageModel`: each call takes the next reply (the last one
 * repeats), generated or streamed. Calls are recorded in `model.doStreamCalls`
 * (the agents stream) and `model.doGenerateCalls`; {@link callsOf} reads both.
 * An `Error` reply makes that call fail, for fallback paths.
 */
export function mockModel(replies: ScriptedReply[] | ((call: number) => ScriptedReply), modelId = "scripted"): MockLanguageModelV4 {
  let calls = 0;
  const next = () => {
    const index = calls++;
    const reply = typeof replies === "function" ? replies(index) : replies[Math.min(index, replies.length - 1)]!;
    if (reply instanceof Error) throw reply;
    return toResult(reply);
  };
  return new MockLanguageModelV4({
    modelId,
    doGenerate: async () => next() as never,
    doStream: async () => toStream(next()) as never,
  });
}

/** Every call a scripted model got, streamed or not, in order. */
export const callsOf = (model: MockLanguageModelV4) => [...model.doGenerateCalls, ...model.doStreamCalls];

/** The model list a turn takes (`models` / `modelChoices()`), from scripted models. */
export const scriptedChoices = (...models: MockLanguageModelV4[]): ModelChoice[] =>
  models.map((model, i) => ({ label: `scripted:${model.modelId}#${i}`, model }));
