import type { Agent } from "agents";
import type { AgentConfig } from "../agent/config.js";
import type { ToolContext } from "../plugin/contract.js";
import type { EventCatalogue } from "../telemetry/index.js";
import { withCallTrace } from "./call-trace.js";

/** The `agents` SDK's MCP client of the object these servers are reached from (one connection per server per object). */
export type McpClient = Agent["mcp"];
export type McpServerConfig = AgentConfig["mcp"]["servers"][number];
/** A tool as its server lists it. */
export type McpToolListing = ReturnType<McpClient["listTools"]>[number];
type CallResult = Awaited<ReturnType<McpClient["callTool"]>>;
type ServerEvent = EventCatalogue["mcp.server"];

interface ServerState {
  config: McpServerConfig;
  status: "idle" | "ready" | "unavailable";
  /** The connection being made, and when it began: a turn waits for it at most `connectTimeoutMs` from then. */
  attempt?: { done: Promise<void>; startedAt: number };
  /** Failures in a row, for the back-off before the next attempt. */
  failures: number;
  retryAt: number;
}

const MAX_BACKOFF_MS = 30_000;

/**
 * The MCP servers an agent's config lists, as one object reaches them. Each
 * connects on first use and is reconnected after it dropped; a turn waits for
 * a connection at most `connectTimeoutMs`, so a server down or slow never
 * holds up a turn (its tools are absent from it, and the attempt goes on).
 *
 * Connections are made with the SDK client's `connect`, which keeps nothing
 * on disk: `registerServer` would store the transport options and restore
 * them on the next wake without this fetch, i.e. without the credentials and
 * the allowlist guard.
 */
export class McpServers {
  readonly #client: McpClient;
  readonly #states = new Map<string, ServerState>();
  readonly #options: McpServersOptions;

  constructor(client: McpClient, options: McpServersOptions) {
    this.#client = client;
    this.#options = options;
    for (const config of options.config.servers) this.#states.set(config.name, { config, status: "idle", failures: 0, retryAt: 0 });
  }

  /** Every server, connected if it can be within the connect timeout: the ready ones' tools and the names of the rest. */
  async forTurn(): Promise<{ ready: { server: McpServerConfig; tools: McpToolListing[] }[]; unavailable: string[] }> {
    const states = [...this.#states.values()];
    await Promise.all(states.map((state) => this.#await(state)));
    const ready: { server: McpServerConfig; tools: McpToolListing[] }[] = [];
    const unavailable: string[] = [];
    for (const state of states) {
      if (state.status === "ready") ready.push({ server: state.config, tools: this.#listed(state) });
      else unavailable.push(state.config.name);
    }
    return { ready, unavailable };
  }

  /**
   * Calls one tool. A session the server no longer knows (404: it never ran
   * the request) reconnects and sends the call once more; any other failure
   * of the connection marks it dropped, for the next turn to reconnect. With
   * `onProgress` the call asks for the server's progress notifications
   * (MCP's `progressToken`), each handed on as it comes; with `trace` its
   * requests are spans of the turn's trace (docs/telemetry.md "Trace context").
   */
  async call(
    server: string,
    tool: string,
    args: Record<string, unknown>,
    signal: AbortSignal | undefined,
    turn: { onProgress?: (progress: { progress: number; total?: number; message?: string }) => void; trace?: ToolContext["trace"] } = {},
  ): Promise<CallResult> {
    const state = this.#states.get(server);
    if (!state) throw new Error(`no MCP server ${server}`);
    if (state.status !== "ready") await this.#await(state);
    if (state.status !== "ready") throw new McpUnavailable(server);
    const { onProgress, trace } = turn;
    const options = { signal, timeout: this.#options.config.callTimeoutMs, ...(onProgress ? { onprogress: onProgress } : {}) };
    // Its requests carry the turn's trace (credentialedFetch reads it from the call's async context).
    const send = () => withCallTrace(trace, () => this.#client.callTool({ serverId: server, name: tool, arguments: args }, options));
    try {
      return await send();
    } catch (error) {
      if (signal?.aborted || !isTransportFailure(error)) throw error;
      this.#drop(state, sessionLost(error) ? "session-lost" : "transport");
      if (!sessionLost(error)) throw error;
      await this.#await(state);
      if (state.status !== "ready") throw new McpUnavailable(server);
      return await send();
    }
  }

  /**
   * Ends every session with the servers (the SDK's close asks a server to
   * forget its session): the caller was erased. The next turn connects anew.
   */
  async close(): Promise<void> {
    for (const state of this.#states.values()) {
      if (state.status === "ready") await this.#client.closeConnection(state.config.name).catch(() => undefined);
      state.status = "idle";
      state.retryAt = 0;
    }
  }

  /** Waits for the server's connection (starting one if it is due) no longer than the connect timeout from the attempt's start. */
  async #await(state: ServerState): Promise<void> {
    if (state.status === "ready") return;
    if (!state.attempt) {
      if (Date.now() < state.retryAt) return;
      const startedAt = Date.now();
      state.attempt = { startedAt, done: this.#connect(state, startedAt).finally(() => (state.attempt = undefined)) };
    }
    const attempt = state.attempt;
    const left = attempt.startedAt + this.#options.config.connectTimeoutMs - Date.now();
    if (left <= 0) return;
    let timer: ReturnType<typeof setTimeout> | null = null;
    const timedOut = new Promise<"timeout">((resolve) => {
      timer = setTimeout(() => resolve("timeout"), left);
    });
    const outcome = await Promise.race([attempt.done, timedOut]);
    clearTimeout(timer);
    if (outcome === "timeout" && state.status !== "unavailable") {
      state.status = "unavailable";
      this.#report(state, { status: "unavailable", tools: 0, durationMs: Date.now() - attempt.startedAt, reason: "timeout" });
    }
  }

  async #connect(state: ServerState, startedAt: number): Promise<void> {
    const { name, url } = state.config;
    try {
      await this.#client.connect(url, { reconnect: { id: name }, transport: { type: "streamable-http", fetch: this.#options.fetch(state.config) } });
      state.status = "ready";
      state.failures = 0;
      this.#report(state, { status: "ready", tools: this.#listed(state).length, durationMs: Date.now() - startedAt });
    } catch (error) {
      state.failures += 1;
      state.retryAt = Date.now() + Math.min(MAX_BACKOFF_MS, 500 * 2 ** state.failures);
      // Reported once per outage: a timeout may have said it already.
      if (state.status !== "unavailable") {
        state.status = "unavailable";
        this.#report(state, { status: "unavailable", tools: 0, durationMs: Date.now() - startedAt, reason: failureReason(error) });
      }
    }
  }

  /** The server's tools this agent takes: all, or those its config's `tools` names. */
  #listed(state: ServerState): McpToolListing[] {
    const only = state.config.tools;
    return this.#client.listTools({ serverId: state.config.name }).filter((tool) => !only || only.includes(tool.name));
  }

  #drop(state: ServerState, reason: string): void {
    state.status = "idle";
    state.retryAt = 0;
    this.#report(state, { status: "dropped", tools: 0, durationMs: 0, reason });
  }

  #report(state: ServerState, event: Omit<ServerEvent, "server">): void {
    this.#options.report({ server: state.config.name, ...event });
  }
}

export interface McpServersOptions {
  config: AgentConfig["mcp"];
  /** The fetch one server's transport uses: its credentials added, its allowlist held. */
  fetch: (server: McpServerConfig) => typeof fetch;
  report: (event: ServerEvent) => void;
}

/** A server the turn could not reach: the model gets this as the call's error. */
class McpUnavailable extends Error {
  constructor(server: string) {
    super(`MCP server ${server} is unavailable`);
    this.name = "McpUnavailable";
  }
}

const statusOf = (error: unknown): number | undefined =>
  typeof error === "object" && error !== null && "status" in error && typeof error.status === "number" ? error.status : undefined;
const sessionLost = (error: unknown) => statusOf(error) === 404;
/** An HTTP failure of the transport (the SDK's errors carry `status`), or a fetch that never got an answer. */
const isTransportFailure = (error: unknown) => statusOf(error) !== undefined || error instanceof TypeError;
/** A short code for the event, never the error's text (which may quote a server's answer). */
function failureReason(error: unknown): string {
  const status = statusOf(error);
  if (status !== undefined) return `http-${status}`;
  if (error instanceof McpRefused) return "not-allowlisted";
  return "connect-failed";
}

/** A request off the allowlist (a redirect, an endpoint the server named elsewhere): never sent. */
export class McpRefused extends TypeError {
  constructor(origin: string) {
    super(`MCP request to ${origin} refused: not on mcp.allowlist`);
    this.name = "McpRefused";
  }
}
