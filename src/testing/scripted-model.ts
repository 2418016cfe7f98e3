import { chatCompletionBody, chatCompletionReply } from "./chat-completion.js";

/** One message of a chat-completion request, as the agent sent it. */
export interface ChatMessage {
  role: string;
  content: unknown;
  tool_calls?: Array<{ id?: string; function: { name: string; arguments: string } }>;
  tool_call_id?: string;
}

/** One request the agent sent the model: what a spec reads back. */
export interface ModelRequest {
  model: string;
  messages: ChatMessage[];
  /** The names of the tools offered, in order. */
  tools: string[];
  /** Each offered tool's description, by name. */
  toolDescriptions: Record<string, string>;
  /** The system prompt (the soul, with what the turn's tools added). */
  instructions: string;
  /** The tool results this request carries, oldest first, each with the name of the tool that made it. */
  toolResults: Array<{ toolName: string | undefined; content: string }>;
  /** Whether it asked for a streamed answer. */
  stream: boolean;
  /** The request's signal: aborted when the agent gave up on it (a cancel). */
  signal: AbortSignal;
}

/**
 * What the model answers to one request: text, tool calls (`args` as the
 * tool's input), both, or a whole `Response` (an error status, say).
 */
export type ChatScriptReply = string | { text?: string; toolCalls?: Array<{ name: string; args?: unknown }> } | Response;

export type ModelScript = ChatScriptReply[] | ((request: ModelRequest, index: number) => ChatScriptReply | Promise<ChatScriptReply>);

export interface ScriptedChatModel {
  /** Every request it answered, in order. */
  readonly requests: ModelRequest[];
  /** Answers a chat-completion request; anything else is `undefined` (for `interceptGatekeeper`'s `respond`). */
  respond(request: Request): Promise<Response | undefined>;
}

interface ChatBody {
  model: string;
  stream?: boolean;
  messages: ChatMessage[];
  tools?: Array<{ function: { name: string; description?: string } }>;
}

const textOf = (content: unknown) => (typeof content === "string" ? content : JSON.stringify(content ?? null));

/** Reads a request as an OpenAI-compatible model sees it; `undefined` when it is not a chat completion. */
export async function readChatRequest(request: Request): Promise<ModelRequest | undefined> {
  if (request.method !== "POST" || !new URL(request.url).pathname.endsWith("/chat/completions")) return undefined;
  const body = (await request.json()) as ChatBody;
  const tools = body.tools ?? [];
  // A tool result names its call; the call, in an earlier assistant message, names the tool.
  const calls = new Map<string, string>();
  for (const message of body.messages) for (const call of message.tool_calls ?? []) if (call.id) calls.set(call.id, call.function.name);
  return {
    model: body.model,
    messages: body.messages,
    tools: tools.map((t) => t.function.name),
    toolDescriptions: Object.fromEntries(tools.map((t) => [t.function.name, t.function.description ?? ""])),
    instructions: body.messages
      .filter((m) => m.role === "system")
      .map((m) => textOf(m.content))
      .join("\n\n"),
    toolResults: body.messages
      .filter((m) => m.role === "tool")
      .map((m) => ({ toolName: m.tool_call_id ? calls.get(m.tool_call_id) : undefined, content: textOf(m.content) })),
    stream: body.stream === true,
    signal: request.signal,
  };
}

/** A reply in the form the request asked for: JSON, or (`stream: true`) server-sent events. */
export function chatResponse(reply: Exclude<ChatScriptReply, Response>, model: string, stream: boolean): Response {
  const spec =
    typeof reply === "string"
      ? { content: reply }
      : { content: reply.text, toolCalls: reply.toolCalls?.map((c) => ({ name: c.name, arguments: c.args ?? {} })) };
  const answer = chatCompletionReply(chatCompletionBody(spec, model), stream);
  return new Response(answer.body, { headers: { "Content-Type": answer.contentType } });
}

/**
 * A scripted model for a spec: the agent's OpenAI-compatible calls (the
 * Worker's `OPENAI_BASE_URL`) are answered from `script` — each request the
 * next reply (the last one repeats), or what a function of the request
 * returns — and every request is kept in `requests`, so a spec can assert
 * which tools were offered, which were called and what their results were.
 * Hand it to the harness's `interceptGatekeeper({ model })`.
 */
export function scriptedChatModel(script: ModelScript): ScriptedChatModel {
  const requests: ModelRequest[] = [];
  return {
    requests,
    async respond(request) {
      const read = await readChatRequest(request);
      if (!read) return undefined;
      const index = requests.push(read) - 1;
      const reply = typeof script === "function" ? await script(read, index) : script[Math.min(index, script.length - 1)];
      if (reply === undefined) throw new Error("scriptedChatModel: the script is empty");
      return reply instanceof Response ? reply : chatResponse(reply, read.model, read.stream);
    },
  };
}
