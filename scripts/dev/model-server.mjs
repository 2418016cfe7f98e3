// The stand-in model over HTTP: an OpenAI-compatible chat-completions endpoint
// on loopback that the Worker reaches as OPENAI_BASE_URL, exactly as it would
// reach Ollama or any hosted endpoint. What it answers is standin-model.mjs.
// It also serves small deterministic pages at /pages/<name>, so that an agent
// told to read a page (the researcher's subtasks) can do so offline.
import { chatCompletionEvents } from "../../src/testing/chat-completion.ts";
import { randomUUID } from "node:crypto";
import { createServer } from "node:http";
import { BodyTooLarge, closeServer, listen, readBody, sendJson } from "./http.mjs";
import { STANDIN_MODEL_ID, roughTokens, standInReply, textOf } from "./standin-model.mjs";

// Message text is limited to 256 KiB at the edge; a conversation with tool
// results can be a few times that.
const MAX_BODY = 8 * 1024 * 1024;

/**
 * Starts the stand-in model on 127.0.0.1:`port` (0 for any free port).
 * `delayMs` holds every answer that long (the answer itself does not change):
 * time to watch progress or try /cancel offline. `portHint`: how to choose
 * another port, said when `port` is taken.
 * @param {{ port: number, delayMs?: number, portHint?: string, onCall?: (call: { model: string, stream: boolean, tools: number, finishReason: string }) => void }} options
 */
export async function startStandInModel({ port, delayMs = 0, portHint = "choose another with --model-port", onCall }) {
  let calls = 0;
  let origin = "";
  const server = createServer((req, res) => {
    handle(req, res).catch((error) => {
      if (!res.headersSent) sendJson(res, 500, openAiError(`stand-in model failed: ${error.message}`, "server_error"));
      else res.destroy();
    });
  });

  async function handle(req, res) {
    const path = new URL(req.url ?? "/", "http://x").pathname.replace(/\/+$/, "");
    if (req.method === "GET" && (path === "/v1/models" || path === "/models")) {
      return sendJson(res, 200, { object: "list", data: [{ id: STANDIN_MODEL_ID, object: "model", created: 0, owned_by: "dynamicagents-dev" }] });
    }
    if (req.method === "GET" && path.startsWith("/pages/")) return sendPage(res, decodeURIComponent(path.slice("/pages/".length)));
    if (path !== "/v1/chat/completions" && path !== "/chat/completions") {
      return sendJson(res, 404, openAiError(`no route for ${req.method} ${path}: this stand-in serves POST /v1/chat/completions`, "invalid_request_error"));
    }
    if (req.method !== "POST") return sendJson(res, 405, openAiError("use POST", "invalid_request_error"), { Allow: "POST" });

    let request;
    try {
      request = JSON.parse(await readBody(req, MAX_BODY));
    } catch (error) {
      const tooLarge = error instanceof BodyTooLarge;
      return sendJson(res, tooLarge ? 413 : 400, openAiError(tooLarge ? error.message : "the body is not JSON", "invalid_request_error"), {
        Connection: "close",
      });
    }
    let reply;
    try {
      reply = standInReply(request, { pageOrigin: origin });
    } catch (error) {
      return sendJson(res, 400, openAiError(error.message, "invalid_request_error"));
    }
    calls++;
    if (delayMs > 0) await new Promise((resolve) => setTimeout(resolve, delayMs));
    const model = typeof request.model === "string" && request.model ? request.model : STANDIN_MODEL_ID;
    const id = `chatcmpl-standin-${randomUUID()}`;
    const created = Math.floor(Date.now() / 1000);
    const promptTokens = request.messages.reduce((sum, m) => sum + roughTokens(textOf(m.content)), 0);
    const usage = { prompt_tokens: promptTokens, completion_tokens: roughTokens(reply.content), total_tokens: promptTokens + roughTokens(reply.content) };
    onCall?.({ model, stream: request.stream === true, tools: Array.isArray(request.tools) ? request.tools.length : 0, finishReason: reply.finishReason });

    const message = { role: "assistant", content: reply.content, ...(reply.toolCalls.length ? { tool_calls: reply.toolCalls } : {}) };
    const completion = {
      id,
      object: "chat.completion",
      created,
      model,
      choices: [{ index: 0, message, finish_reason: reply.finishReason, logprobs: null }],
      usage,
    };
    if (request.stream !== true) return sendJson(res, 200, completion);
    // `stream: true`: the same answer as server-sent events, a few words at a time, so the chat shows it being written.
    res.writeHead(200, { "Content-Type": "text/event-stream", "Cache-Control": "no-cache", Connection: "keep-alive" });
    res.end(chatCompletionEvents(completion));
  }

  const bound = await listen(server, port, "the stand-in model", portHint);
  origin = `http://127.0.0.1:${bound}`;
  return {
    port: bound,
    origin,
    /** What the Worker gets as OPENAI_BASE_URL; pages are at `${origin}/pages/<name>`. */
    baseUrl: `${origin}/v1`,
    model: STANDIN_MODEL_ID,
    calls: () => calls,
    close: () => closeServer(server),
  };
}

/** A page that says, in so many words, that it is a stand-in. */
function sendPage(res, name) {
  const topic = name.replace(/[-_]+/g, " ").trim() || "this page";
  const safe = topic.replace(/[<>&"]/g, "");
  const html = `<!doctype html><html><head><title>${safe}</title></head><body><h1>${safe}</h1><p>This page is served by the offline stand-in of npm start so that page-reading subtasks can run without a network. It holds no real information about ${safe}.</p></body></html>`;
  res.writeHead(200, { "Content-Type": "text/html; charset=utf-8", "Content-Length": Buffer.byteLength(html) });
  res.end(html);
}

function openAiError(message, type) {
  return { error: { message, type, param: null, code: null } };
}
