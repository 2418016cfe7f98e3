// The body of an OpenAI-compatible `/chat/completions` answer, for the fake
// models of specs, benches and the e2e tests. Imports nothing, so the Node
// tooling loads it directly.

export interface ChatToolCall {
  name: string;
  /** The tool's arguments; sent JSON-encoded, as the API does. */
  arguments: unknown;
}

export interface ChatReply {
  /** The answer's text; `null` or absent with tool calls only. */
  content?: string | null;
  toolCalls?: ChatToolCall[];
  /**
   * What the completion says it cost; default 1 input and 1 output token. Of
   * them, cached input and reasoning tokens are reported as OpenAI's API does
   * (`prompt_tokens_details`, `completion_tokens_details`) when given.
   */
  usage?: { inputTokens: number; outputTokens: number; cachedInputTokens?: number; reasoningTokens?: number };
}

/** A non-streamed completion: one choice, `tool_calls` when the reply calls tools, token counts of 1 unless the reply says. */
export function chatCompletionBody(reply: ChatReply, model: string) {
  const calls = reply.toolCalls ?? [];
  const {
    inputTokens: input,
    outputTokens: output,
    cachedInputTokens: cached,
    reasoningTokens: reasoning,
  } = reply.usage ?? { inputTokens: 1, outputTokens: 1 };
  const message = {
    role: "assistant",
    content: reply.content ?? null,
    ...(calls.length
      ? {
          tool_calls: calls.map((call, i) => ({
            id: `call_${i}_${crypto.randomUUID().slice(0, 8)}`,
            type: "function",
            function: { name: call.name, arguments: JSON.stringify(call.arguments) },
          })),
        }
      : {}),
  };
  return {
    id: `chatcmpl-${crypto.randomUUID()}`,
    object: "chat.completion",
    created: Math.floor(Date.now() / 1000),
    model,
    choices: [{ index: 0, message, finish_reason: calls.length ? "tool_calls" : "stop" }],
    usage: {
      prompt_tokens: input,
      completion_tokens: output,
      total_tokens: input + output,
      ...(cached === undefined ? {} : { prompt_tokens_details: { cached_tokens: cached } }),
      ...(reasoning === undefined ? {} : { completion_tokens_details: { reasoning_tokens: reasoning } }),
    },
  };
}

type Completion = ReturnType<typeof chatCompletionBody>;

/**
 * The same completion as `stream: true` answers it: server-sent
 * `chat.completion.chunk` events, the text a few words per event (so a
 * stream of the answer shows it being written), tool calls whole, then the
 * finish reason, the usage, and `[DONE]`.
 */
export function chatCompletionEvents(completion: Completion): string {
  const { id, created, model } = completion;
  const choice = completion.choices[0]!;
  const event = (choices: unknown[], extra: Record<string, unknown> = {}) =>
    `data: ${JSON.stringify({ id, object: "chat.completion.chunk", created, model, choices, ...extra })}\n\n`;
  const message = choice.message as { content: string | null; tool_calls?: Array<Record<string, unknown>> };
  let out = "";
  if (message.tool_calls?.length) {
    out += event([
      { index: 0, delta: { role: "assistant", content: null, tool_calls: message.tool_calls.map((call, index) => ({ index, ...call })) }, finish_reason: null },
    ]);
  } else {
    const words = (message.content ?? "").match(/\S+\s*|\s+/g) ?? [""];
    for (let i = 0; i < words.length; i += 2)
      out += event([{ index: 0, delta: { ...(i === 0 ? { role: "assistant" } : {}), content: words.slice(i, i + 2).join("") }, finish_reason: null }]);
  }
  out += event([{ index: 0, delta: {}, finish_reason: choice.finish_reason }]);
  out += event([], { usage: completion.usage });
  return `${out}data: [DONE]\n\n`;
}

/** A completion as the request asked for it: JSON, or (`stream: true`) server-sent events. */
export function chatCompletionReply(completion: Completion, stream: boolean): { contentType: string; body: string } {
  return stream
    ? { contentType: "text/event-stream", body: chatCompletionEvents(completion) }
    : { contentType: "application/json", body: JSON.stringify(completion) };
}
