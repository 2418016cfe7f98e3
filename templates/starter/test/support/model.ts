import { chatCompletionBody, chatCompletionReply } from "@dynamicagents/core/testing";

type ChatRequest = { model: string; stream?: boolean; messages: Array<{ role: string; content: unknown }>; tools?: Array<{ function: { name: string } }> };

/**
 * A fake of the OpenAI-compatible model vitest.config.ts points the agents at:
 * it calls `tool` with `input` once, then answers with what the tool returned,
 * so a spec proves the tool ran and its result reached the answer. Anything
 * but a model call falls through (`undefined`).
 */
export function callsTool(tool: string, input: unknown) {
  return async (request: Request): Promise<Response | undefined> => {
    if (request.method !== "POST" || !request.url.endsWith("/chat/completions")) return undefined;
    const body = (await request.json()) as ChatRequest;
    const result = body.messages.findLast((m) => m.role === "tool");
    const offered = body.tools?.some((t) => t.function.name === tool);
    const reply = result
      ? { content: `${tool} returned ${String(result.content)}` }
      : offered
        ? { toolCalls: [{ name: tool, arguments: input }] }
        : { content: `no tool named ${tool} was offered` };
    const answer = chatCompletionReply(chatCompletionBody(reply, body.model), body.stream === true);
    return new Response(answer.body, { headers: { "Content-Type": answer.contentType } });
  };
}
