// The one JSON-RPC client of this repository's tooling: how a gatekeeper calls
// an agent (docs/protocol.md "Wire"). The harness, the specs' support, the dev
// gatekeeper of `npm start`, the benches and the e2e tests build their requests
// and read the replies here, and each keeps its own policy on what to throw.
// It imports only the wire constants (with their `.ts` extension), so Node
// loads it as it is (Node strips the types); it needs nothing but `fetch`.
import { A2A_VERSION, A2A_VERSION_HEADER } from "../a2a/wire.ts";

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
  /** The events as they come; ends when the server closes the stream. */
  events: AsyncIterable<RpcStreamEvent>;
  /** Hangs up (a client that goes away). */
  close(): Promise<void>;
}

/** POSTs a streaming call (SendStreamingMessage, SubscribeToTask) and reads its `text/event-stream` as it comes. */
export async function openRpcStream(endpoint: string, body: string, options: RpcPostOptions = {}): Promise<RpcStream> {
  const init: RequestInit = { method: "POST", headers: rpcHeaders(options.token, options.headers), body };
  const response = options.fetch ? await options.fetch(new Request(endpoint, init)) : await fetch(endpoint, init);
  if (!response.headers.get("Content-Type")?.startsWith("text/event-stream")) {
    const read = await readRpcResponse(response);
    return { status: read.status, headers: read.headers, reply: read.reply, events: (async function* () {})(), close: async () => {} };
  }
  const reader = response.body!.pipeThrough(new TextDecoderStream()).getReader();
  async function* events(): AsyncGenerator<RpcStreamEvent> {
    let buffer = "";
    let id: string | undefined;
    let data: string[] = [];
    for (;;) {
      const { value, done } = await reader.read();
      if (done) return;
      buffer += value;
      for (let end = buffer.indexOf("\n"); end >= 0; end = buffer.indexOf("\n")) {
        const line = buffer.slice(0, end).replace(/\r$/, "");
        buffer = buffer.slice(end + 1);
        if (line === "") {
          if (data.length) yield { id, reply: JSON.parse(data.join("\n")) as JsonRpcReply };
          id = undefined;
          data = [];
        } else if (line.startsWith("data:")) data.push(line.slice(5).replace(/^ /, ""));
        else if (line.startsWith("id:")) id = line.slice(3).trim();
      }
    }
  }
  return { status: response.status, headers: response.headers, reply: undefined, events: events(), close: () => reader.cancel().catch(() => {}) };
}
