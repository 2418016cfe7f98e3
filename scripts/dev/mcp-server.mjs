// A small MCP server for local work and tests: tools given as plain
// definitions, served over streamable HTTP (the web-standard transport of
// @modelcontextprotocol/server: a `Request` in, a `Response` out) with real
// sessions. `npm start` serves the dev tools with it (mcp-devtools.mjs), the
// workerd specs' fixture builds on it (test/support/mcp-fixture.mjs).
//
// Sessions are what make a server's restart visible: each `initialize` opens
// one (its id in `Mcp-Session-Id`), a request naming a session the server
// does not know gets 404, and the client must initialize again. `dropSessions`
// forgets them all, as a restart would.
//
// It speaks the 2025 protocol only (initialize and sessions): a client that
// probes for a newer one first (`server/discover`, as the agents SDK does)
// gets 400 "not initialized", worded as the SDK's transport words it, and
// falls back to `initialize`.
import { randomUUID } from "node:crypto";
import { createServer } from "node:http";
import { Readable } from "node:stream";
import {
  McpServer,
  WebStandardStreamableHTTPServerTransport,
  fromJsonSchema,
  hostHeaderValidationResponse,
  localhostAllowedHostnames,
} from "@modelcontextprotocol/server";
import { closeServer, listen } from "./http.mjs";

/**
 * @typedef {{ signal: AbortSignal, request?: Request, sessionId?: string }} ToolExtra
 *   `signal` aborts when the client cancels the call (or the session goes away); `request` is the HTTP request that carried the call
 * @typedef {import("@modelcontextprotocol/server").CallToolResult} ToolResult
 * @typedef {{
 *   name: string,
 *   description: string,
 *   inputSchema?: object,
 *   handler: (args: Record<string, any>, extra: ToolExtra) => string | ToolResult | Promise<string | ToolResult>,
 * }} ToolDefinition
 *   `inputSchema`: a JSON Schema of an object, or a zod object (anything with `~standard`); none takes no arguments.
 *   `handler`: a string is one text block; a ToolResult goes out as it is (`isError: true` is a tool error, not a protocol one).
 * @typedef {{ sessions: number, sessionsOpened: number, calls: Record<string, number>, cancelled: number }} McpStats
 *   `sessions` open now, `sessionsOpened` since the start, `calls` per tool, `cancelled` calls whose signal aborted before they settled
 */

/** JSON-RPC error codes of the transport's own refusals, reused so clients read them as they read the SDK's. */
const NOT_INITIALIZED = -32000;
const SESSION_NOT_FOUND = -32001;

/**
 * An MCP server of `tools`, one McpServer and transport per session.
 * @param {{ name: string, version?: string, tools: ToolDefinition[] }} options
 */
export function createMcpServer({ name, version = "0.1.0", tools }) {
  /** @type {Map<string, { transport: WebStandardStreamableHTTPServerTransport, server: McpServer }>} */
  const sessions = new Map();
  const counters = { sessionsOpened: 0, cancelled: 0, /** @type {Record<string, number>} */ calls: {} };

  /** A fresh McpServer with every tool registered: each session has its own (the SDK binds one server to one transport). */
  function serverWithTools() {
    const server = new McpServer({ name, version });
    for (const tool of tools) {
      const config = { description: tool.description, inputSchema: schemaOf(tool.inputSchema) };
      server.registerTool(tool.name, config, async (/** @type {any} */ args, /** @type {any} */ ctx) => {
        counters.calls[tool.name] = (counters.calls[tool.name] ?? 0) + 1;
        /** @type {Request | undefined} */
        const request = ctx.http?.req;
        // Cancelled either way: the client's `notifications/cancelled`, or the HTTP exchange carrying the call going away.
        const signal =
          request?.signal instanceof AbortSignal ? AbortSignal.any([ctx.mcpReq.signal, request.signal]) : /** @type {AbortSignal} */ (ctx.mcpReq.signal);
        try {
          const result = await tool.handler(args ?? {}, { signal, request, sessionId: ctx.sessionId });
          /** @type {ToolResult} */
          const sent = typeof result === "string" ? { content: [{ type: "text", text: result }] } : result;
          return sent;
        } finally {
          if (signal.aborted) counters.cancelled++;
        }
      });
    }
    return server;
  }

  /**
   * One HTTP exchange of the streamable-HTTP transport (POST, GET, DELETE on the endpoint).
   * @param {Request} request
   * @returns {Promise<Response>}
   */
  async function handle(request) {
    const sessionId = request.headers.get("mcp-session-id");
    // No standalone stream: the tools send nothing unasked, and a GET held open would outlive a dropped session.
    if (request.method === "GET") return new Response(null, { status: 405, headers: { Allow: "POST, DELETE" } });
    if (sessionId) {
      const session = sessions.get(sessionId);
      if (!session) return rpcError(404, SESSION_NOT_FOUND, "Session not found: initialize again");
      return session.transport.handleRequest(request);
    }
    // Without a session only `initialize` is taken; the transport itself would refuse the rest (400), but only after a server was built for it.
    if (request.method !== "POST") return rpcError(400, NOT_INITIALIZED, "Bad Request: no session (send initialize first)");
    let body;
    try {
      body = await request.json();
    } catch {
      return rpcError(400, -32700, "Parse error: the body is not JSON");
    }
    if (!isInitialize(body)) return rpcError(400, NOT_INITIALIZED, "Bad Request: Server not initialized");
    const server = serverWithTools();
    const transport = new WebStandardStreamableHTTPServerTransport({
      sessionIdGenerator: () => randomUUID(),
      onsessioninitialized: (id) => {
        sessions.set(id, { transport, server });
        counters.sessionsOpened++;
      },
      onsessionclosed: (id) => void sessions.delete(id),
    });
    await server.connect(transport);
    return transport.handleRequest(request, { parsedBody: body });
  }

  /** Forgets every session, as a restart would: each one's next request gets 404. Calls still running are ended. */
  async function dropSessions() {
    const dropped = [...sessions.values()];
    sessions.clear();
    await Promise.allSettled(dropped.map(({ server }) => server.close()));
    return dropped.length;
  }

  return {
    handle,
    dropSessions,
    /** @returns {McpStats} a snapshot */
    get stats() {
      return { sessions: sessions.size, sessionsOpened: counters.sessionsOpened, calls: { ...counters.calls }, cancelled: counters.cancelled };
    },
  };
}

/** A zod schema passes as it is; a JSON Schema goes through the SDK's adapter; none is the empty object. */
function schemaOf(schema) {
  if (schema && typeof schema === "object" && "~standard" in schema) return /** @type {any} */ (schema);
  return fromJsonSchema(/** @type {any} */ (schema ?? { type: "object", properties: {} }));
}

/** `initialize` alone, or first in a batch (as the 2025 protocol allows). */
function isInitialize(body) {
  const first = Array.isArray(body) ? body[0] : body;
  return first !== null && typeof first === "object" && first.method === "initialize";
}

/** A JSON-RPC error answer with its HTTP status, as the SDK's transport words its own. */
function rpcError(status, code, message) {
  return Response.json({ jsonrpc: "2.0", error: { code, message }, id: null }, { status });
}

/**
 * A Node `http` request listener for a fetch-style handler: IncomingMessage →
 * Request (the body streamed, the signal aborted when the client goes away)
 * and Response → ServerResponse (the body written as it comes, so an SSE
 * answer reaches the client event by event).
 * @param {(request: Request) => Promise<Response>} handle
 * @returns {(req: import("node:http").IncomingMessage, res: import("node:http").ServerResponse) => void}
 */
export function nodeListener(handle) {
  return (req, res) => {
    const aborted = new AbortController();
    res.on("close", () => {
      if (!res.writableFinished) aborted.abort();
    });
    respond(handle, toRequest(req, aborted.signal), res, aborted.signal).catch(() => {
      if (!res.headersSent) res.writeHead(500, { "Content-Type": "text/plain" }).end("the MCP server failed");
      else res.destroy();
    });
  };
}

/** @param {import("node:http").IncomingMessage} req @param {AbortSignal} signal */
function toRequest(req, signal) {
  const headers = new Headers();
  for (const [name, value] of Object.entries(req.headers)) {
    if (value !== undefined) headers.set(name, Array.isArray(value) ? value.join(", ") : value);
  }
  const url = new URL(req.url ?? "/", `http://${req.headers.host ?? "127.0.0.1"}`);
  const hasBody = req.method !== "GET" && req.method !== "HEAD";
  return new Request(url, {
    method: req.method,
    headers,
    signal,
    ...(hasBody ? { body: /** @type {any} */ (Readable.toWeb(req)), duplex: "half" } : {}),
  });
}

/**
 * @param {(request: Request) => Promise<Response>} handle
 * @param {Request} request
 * @param {import("node:http").ServerResponse} res
 * @param {AbortSignal} signal
 */
async function respond(handle, request, res, signal) {
  const response = await handle(request);
  /** @type {Record<string, string | string[]>} */
  const headers = {};
  response.headers.forEach((value, name) => {
    if (name !== "set-cookie") headers[name] = value;
  });
  const cookies = response.headers.getSetCookie();
  if (cookies.length) headers["set-cookie"] = cookies;
  res.writeHead(response.status, headers);
  if (!response.body) return void res.end();
  // Headers go out now: an SSE client waits on them before the first event.
  res.flushHeaders();
  const reader = response.body.getReader();
  signal.addEventListener("abort", () => void reader.cancel().catch(() => {}), { once: true });
  for (;;) {
    const { done, value } = await reader.read();
    if (done) break;
    if (!res.write(value)) await new Promise((resolve) => res.once("drain", resolve));
  }
  res.end();
}

/**
 * Serves `mcp` on 127.0.0.1:`port` (0 for any free port) at `path`, for
 * loopback callers only: a Host other than a loopback name is refused (the
 * SDK's check), so a web page cannot reach it through DNS rebinding.
 * @param {{ handle: (request: Request) => Promise<Response> }} mcp
 * @param {{ port: number, path?: string, what?: string, portHint?: string }} options
 */
export async function serveMcp(mcp, { port, path = "/mcp", what = "the dev MCP server", portHint = "choose another port" }) {
  const loopback = localhostAllowedHostnames();
  const listener = nodeListener(async (request) => {
    const refused = hostHeaderValidationResponse(request, loopback);
    if (refused) return refused;
    if (new URL(request.url).pathname !== path) return new Response(`no MCP endpoint here: it is at ${path}`, { status: 404 });
    return mcp.handle(request);
  });
  const server = createServer(listener);
  const bound = await listen(server, port, what, portHint);
  const origin = `http://127.0.0.1:${bound}`;
  return { port: bound, origin, url: `${origin}${path}`, close: () => closeServer(server) };
}
