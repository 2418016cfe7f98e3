// The one JSON-RPC client of this repository's tooling: how a gatekeeper calls
// an agent (docs/protocol.md "Wire"). The harness, the specs' support, the dev
// gatekeeper of `npm start`, the benches and the e2e tests build their requests
// and read the replies here, and each keeps its own policy on what to throw.
// It imports only the wire constants (with their `.ts` extension), so Node
// loads it as it is (Node strips the types); it needs nothing but `fetch`.
import { A2A_VERSION, A2A_VERSION_HEADER, INTERRUPTED_STATE_NAMES, TERMINAL_STATE_NAMES } from "../a2a/wire.ts";
import { sseFrames } from "./sse-frames.ts";

type RpcId = string | number;

interface JsonRpcError {
  code: number;
  message: string;
  data?: unknown;
}

/** A JSON-RPC reply: `result` or `error`. */
export interface JsonRpcReply<Result = any> {
  jsonrpc?: string;
  id?: RpcId | null;
  result?: Result;
  error?: JsonRpcError;
}

/** Something that answers a Request: global `fetch`, `exports.default.fetch`, a Worker's handler with its env. */
type RpcFetch = (request: Request) => Promise<Response>;

export interface RpcEnvelopeOptions {
  /** Put in `params.tenant`; a `tenant` in `params` itself wins (to build a mismatched call). */
  tenant?: string;
  /** Default: a fresh UUID. */
  id?: RpcId;
}

export interface RpcPostOptions {
  /** The gatekeeper token, sent as `Authorization: Bearer …`; `null` or absent sends none. */
  token?: string | null;
  /** Set on top of the usual headers (Content-Type, A2A-Version, Authorization); `null` removes one. */
  headers?: Record<string, string | null>;
  /** Who answers; default the global `fetch`. */
  fetch?: RpcFetch;
  /** Abort after this many milliseconds (the fetch rejects with a TimeoutError). Default: no limit. */
  timeoutMs?: number;
}

/** What came back, however it is: the status, the headers, the text, and the JSON-RPC reply if it is one. */
export interface RpcResponse {
  status: number;
  headers: Headers;
  text: string;
  /** The body parsed as JSON; `undefined` when it is not JSON. */
  json: unknown;
  /** The body when it is a JSON-RPC reply (an object with `result` or `error`); else `undefined`. */
  reply: JsonRpcReply | undefined;
}

/** The body of one call: `{ jsonrpc: "2.0", id, method, params: { tenant, …params } }`. */
export function rpcBody(method: string, params: Record<string, unknown> = {}, options: RpcEnvelopeOptions = {}): string {
  const withTenant = options.tenant === undefined ? params : { tenant: options.tenant, ...params };
  return JSON.stringify({ jsonrpc: "2.0", id: options.id ?? crypto.randomUUID(), method, params: withTenant });
}

/** The headers of a call as a gatekeeper sends it: JSON, `A2A-Version`, and the bearer token if there is one. */
function rpcHeaders(token?: string | null, overrides: Record<string, string | null> = {}): Headers {
  const headers = new Headers({ "Content-Type": "application/json", [A2A_VERSION_HEADER]: A2A_VERSION });
  if (token !== undefined && token !== null) headers.set("Authorization", `Bearer ${token}`);
  for (const [name, value] of Object.entries(overrides)) {
    if (value === null) headers.delete(name);
    else headers.set(name, value);
  }
  return headers;
}

/** POSTs a prepared body (see {@link rpcBody}) to `endpoint` and reads the whole reply. Throws only what `fetch` throws. */
export async function postRpc(endpoint: string, body: string, options: RpcPostOptions = {}): Promise<RpcResponse> {
  const init: RequestInit = { method: "POST", headers: rpcHeaders(options.token, options.headers), body };
  if (options.timeoutMs !== undefined) init.signal = AbortSignal.timeout(options.timeoutMs);
  const response = options.fetch ? await options.fetch(new Request(endpoint, init)) : await fetch(endpoint, init);
  return readRpcResponse(response);
}

/** One call: {@link rpcBody} then {@link postRpc}. */
export function rpcCall(
  endpoint: string,
  method: string,
  params: Record<string, unknown> = {},
  options: RpcPostOptions & RpcEnvelopeOptions = {},
): Promise<RpcResponse> {
  return postRpc(endpoint, rpcBody(method, params, options), options);
}

/** Reads a response whole: its text, the JSON in it if any, and the JSON-RPC reply if it is one. */
async function readRpcResponse(response: Response): Promise<RpcResponse> {
  const text = await response.text();
  let json: unknown;
  try {
    json = JSON.parse(text);
  } catch {
    json = undefined;
  }
  const candidate = json as JsonRpcReply | null | undefined;
  const reply = candidate && typeof candidate === "object" && (candidate.result !== undefined || candidate.error !== undefined) ? candidate : undefined;
  return { status: response.status, headers: response.headers, text, json, reply };
}

/** One server-sent event of a streaming call: its `id:` (the event's `seq`) and its `data:` as a JSON-RPC reply. */
interface RpcStreamEvent {
  id: string | undefined;
  reply: JsonRpcReply;
}

/** A streaming call's answer: SSE events, or (refused before streaming) one JSON-RPC reply. */
export interface RpcStream {
  status: number;
  headers: Headers;
  /** The refusal, when the answer is not a stream. */
  reply: JsonRpcReply | undefined;
  /** The events as they come; ends when the server closes the stream (and, with `resume`, does not resume it). */
  events: AsyncIterable<RpcStreamEvent>;
  /** The SSE comments read so far, without their leading colon: the heartbeats, and the closing one. */
  readonly comments: readonly string[];
  /** Why the server ended the stream early, from its final `: closing: …` comment; `undefined` otherwise. */
  readonly closing: string | undefined;
  /** Hangs up (a client that goes away). */
  close(): Promise<void>;
}

export interface RpcStreamOptions extends RpcPostOptions {
  /**
   * Follows the task past a stream the server ended early, after its
   * closing comment (docs/protocol.md "Events, streams and pushes": at its
   * token's `exp` or its maximum lifetime): unless the last state read is
   * terminal, or a waiting one a status update announced (the stream's own
   * end), `SubscribeToTask` with a fresh `token()` and `Last-Event-ID` = the
   * last `id:` read, whose snapshot is skipped, and `events` carries on. A
   * stream cut without a closing comment is left to the caller.
   */
  resume?: { token: () => string | Promise<string> };
}

/** POSTs a streaming call (SendStreamingMessage, SubscribeToTask) and reads its `text/event-stream` as it comes. */
export async function openRpcStream(endpoint: string, body: string, options: RpcStreamOptions = {}): Promise<RpcStream> {
  const first = await openOnce(endpoint, body, options);
  const { resume } = options;
  if (!resume || first.reply) return first;
  const { id, params } = JSON.parse(body) as { id: RpcId; params: { tenant?: string } };
  let current = first;
  let closed = false;
  const comments: string[] = [];
  const reopen = async (taskId: string, lastEventId: string) =>
    openOnce(endpoint, rpcBody("SubscribeToTask", { id: taskId }, { tenant: params.tenant, id }), {
      ...options,
      token: await resume.token(),
      headers: { ...options.headers, "Last-Event-ID": lastEventId },
    });
  async function* events(): AsyncGenerator<RpcStreamEvent> {
    let taskId: string | undefined;
    let lastId: string | undefined;
    /** The last state read, and whether a status update said it (a snapshot's waiting state never closed a stream). */
    let state: { name: string | undefined; announced: boolean } = { name: undefined, announced: false };
    for (let resumed = false; ; resumed = true) {
      let snapshot = true;
      for await (const event of current.events) {
        const result = event.reply.result;
        const skip = snapshot && resumed;
        snapshot = false;
        if (skip) continue;
        taskId ??= result?.task?.id ?? result?.statusUpdate?.taskId ?? result?.artifactUpdate?.taskId;
        if (event.id !== undefined) lastId = event.id;
        if (result?.task?.status) state = { name: result.task.status.state, announced: false };
        if (result?.statusUpdate?.status) state = { name: result.statusUpdate.status.state, announced: true };
        yield event;
      }
      const over = TERMINAL_STATE_NAMES.includes(state.name ?? "") || (state.announced && INTERRUPTED_STATE_NAMES.includes(state.name ?? ""));
      if (closed || over || current.closing === undefined || taskId === undefined || lastId === undefined) return;
      comments.push(...current.comments);
      current = await reopen(taskId, lastId);
      if (current.reply) throw new Error(`resuming the stream of task ${taskId} was refused: HTTP ${current.status} ${JSON.stringify(current.reply.error)}`);
    }
  }
  return {
    status: first.status,
    headers: first.headers,
    reply: undefined,
    events: events(),
    get comments() {
      return [...comments, ...current.comments];
    },
    get closing() {
      return current.closing;
    },
    close: async () => {
      closed = true;
      await current.close();
    },
  };
}

/** One streaming call, read as it comes; no resuming. */
async function openOnce(endpoint: string, body: string, options: RpcPostOptions): Promise<RpcStream> {
  const init: RequestInit = { method: "POST", headers: rpcHeaders(options.token, options.headers), body };
  const response = options.fetch ? await options.fetch(new Request(endpoint, init)) : await fetch(endpoint, init);
  if (!response.headers.get("Content-Type")?.startsWith("text/event-stream")) {
    const read = await readRpcResponse(response);
    const events = (async function* () {})();
    return { status: read.status, headers: read.headers, reply: read.reply, events, comments: [], closing: undefined, close: async () => {} };
  }
  const comments: string[] = [];
  let closing: string | undefined;
  const sse = sseFrames(response.body!, (comment) => {
    comments.push(comment);
    if (comment.startsWith("closing:")) closing = comment.slice("closing:".length).trim();
  });
  async function* events(): AsyncGenerator<RpcStreamEvent> {
    for await (const frame of sse.frames) yield { id: frame.id, reply: JSON.parse(frame.data) as JsonRpcReply };
  }
  return {
    status: response.status,
    headers: response.headers,
    reply: undefined,
    events: events(),
    comments,
    get closing() {
      return closing;
    },
    close: sse.cancel,
  };
}
