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
}

/** A non-streamed completion: one choice, `tool_calls` when the reply calls tools, token counts of 1. */
export function chatCompletionBody(reply: ChatReply, model: string) {
  const calls = reply.toolCalls ?? [];
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
    usage: { prompt_tokens: 1, completion_tokens: 1, total_tokens: 2 },
  };
}
