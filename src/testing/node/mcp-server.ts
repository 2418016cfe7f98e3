// A small MCP server for specs and local work: tools given as plain
// definitions (a name, a description, a zod or JSON Schema, and a function),
// served over streamable HTTP (the web-standard transport of
// @modelcontextprotocol/server: a `Request` in, a `Response` out) with real
// sessions. An author's vitest config answers an agent's MCP server with it in
// the pool's `outboundService`; this repository's spec fixture
// (test/support/mcp-fixture.mjs) and `npm start`'s dev tools
// (scripts/dev/mcp-devtools.mjs) are built on it too.
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
import {
  McpServer,
  WebStandardStreamableHTTPServerTransport,
  fromJsonSchema,
  type CallToolResult,
  type JsonSchemaType,
  type ServerContext,
  type StandardSchemaWithJSON,
} from "@modelcontextprotocol/server";

/** What a tool's function gets besides its arguments. */
export interface McpToolExtra {
  /** Aborts when the client cancels the call (or its session or HTTP exchange goes away). */
  signal: AbortSignal;
  /** The HTTP request that carried the call (its headers: a bearer token, say). */
  request?: Request;
  sessionId?: string;
  /**
   * Tells the client how far the call got (`notifications/progress`), when
   * the client asked for progress (a `progressToken`); resolves to whether it
   * was sent. `total` and `message` are optional.
   */
  progress(progress: number, details?: { total?: number; message?: string }): Promise<boolean>;
}

/** One tool of the server. */
export interface McpTool {
  name: string;
  description: string;
  /** A zod object (anything with `~standard`) or the JSON Schema of an object; none takes no arguments. */
  inputSchema?: StandardSchemaWithJSON | JsonSchemaType;
  /**
   * The tool itself. A string is one text block; a `CallToolResult` goes out
   * as it is (`isError: true` is a tool error the model reads, not a protocol
   * error); a thrown error is a tool error with its message (the SDK's own handling).
   */
  handler: (args: Record<string, any>, extra: McpToolExtra) => string | CallToolResult | Promise<string | CallToolResult>;
}

/** `sessions` open now, `sessionsOpened` since the start, `calls` per tool, `cancelled` calls whose signal aborted before they settled. */
export interface McpStats {
  sessions: number;
  sessionsOpened: number;
  calls: Record<string, number>;
  cancelled: number;
}

export interface McpTestServer {
  /** One HTTP exchange of the streamable-HTTP transport (POST, GET, DELETE on the endpoint), whatever its URL. */
  handle(request: Request): Promise<Response>;
  /** Forgets every session, as a restart would: each one's next request gets 404. Calls still running are ended. */
  dropSessions(): Promise<number>;
  /** A snapshot. */
  readonly stats: McpStats;
}

/** JSON-RPC error codes of the transport's own refusals, reused so clients read them as they read the SDK's. */
const NOT_INITIALIZED = -32000;
const SESSION_NOT_FOUND = -32001;

/** An MCP server of `tools`, one McpServer and transport per session. */
export function createMcpServer({ name, version = "0.1.0", tools }: { name: string; version?: string; tools: McpTool[] }): McpTestServer {
  const sessions = new Map<string, { transport: WebStandardStreamableHTTPServerTransport; server: McpServer }>();
  const counters = { sessionsOpened: 0, cancelled: 0, calls: {} as Record<string, number> };

  /** A fresh McpServer with every tool registered: each session has its own (the SDK binds one server to one transport). */
  function serverWithTools(): McpServer {
    const server = new McpServer({ name, version });
    for (const tool of tools) {
      server.registerTool(tool.name, { description: tool.description, inputSchema: schemaOf(tool.inputSchema) }, async (args, ctx) => {
        counters.calls[tool.name] = (counters.calls[tool.name] ?? 0) + 1;
        const request = ctx.http?.req;
        // Cancelled either way: the client's `notifications/cancelled`, or the HTTP exchange carrying the call going away.
        const signal = request ? AbortSignal.any([ctx.mcpReq.signal, request.signal]) : ctx.mcpReq.signal;
        try {
          const result = await tool.handler((args ?? {}) as Record<string, any>, { signal, request, sessionId: ctx.sessionId, progress: progressOf(ctx) });
          return typeof result === "string" ? { content: [{ type: "text", text: result }] } : result;
        } finally {
          if (signal.aborted) counters.cancelled++;
        }
      });
    }
    return server;
  }

  async function handle(request: Request): Promise<Response> {
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
    let body: unknown;
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

  async function dropSessions(): Promise<number> {
    const dropped = [...sessions.values()];
    sessions.clear();
    await Promise.allSettled(dropped.map(({ server }) => server.close()));
    return dropped.length;
  }

  return {
    handle,
    dropSessions,
    get stats() {
      return { sessions: sessions.size, sessionsOpened: counters.sessionsOpened, calls: { ...counters.calls }, cancelled: counters.cancelled };
    },
  };
}

/** The call's progress reporter: MCP sends progress only for a request that carried a `progressToken`. */
function progressOf(ctx: ServerContext): McpToolExtra["progress"] {
  return async (progress, details = {}) => {
    const progressToken = ctx.mcpReq._meta?.progressToken;
    if (progressToken === undefined) return false;
    await ctx.mcpReq.notify({ method: "notifications/progress", params: { progressToken, progress, ...details } });
    return true;
  };
}

const isStandardSchema = (schema: object): schema is StandardSchemaWithJSON => "~standard" in schema;

/** A zod schema passes as it is; a JSON Schema goes through the SDK's adapter; none is the empty object. */
function schemaOf(schema: McpTool["inputSchema"]): StandardSchemaWithJSON {
  if (schema && isStandardSchema(schema)) return schema;
  return fromJsonSchema(schema ?? { type: "object", properties: {} });
}

/** `initialize` alone, or first in a batch (as the 2025 protocol allows). */
function isInitialize(body: unknown): boolean {
  const first: unknown = Array.isArray(body) ? body[0] : body;
  return first !== null && typeof first === "object" && "method" in first && first.method === "initialize";
}

/** A JSON-RPC error answer with its HTTP status, as the SDK's transport words its own. */
function rpcError(status: number, code: number, message: string): Response {
  return Response.json({ jsonrpc: "2.0", error: { code, message }, id: null }, { status });
}
