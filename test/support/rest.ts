import { METHODS, type Method } from "../../src/a2a/methods.js";
import { matchRestRoute } from "../../src/a2a/rest-routes.js";
import { A2A_REST_PATH, A2A_VERSION, A2A_VERSION_HEADER } from "../../src/a2a/wire.js";
import { sseFrames } from "../../src/testing/sse-frames.js";
import { assertResultShape, assertStreamResponseShape } from "../../src/testing/wire-round-trip.js";
import { ORIGIN } from "./constants.js";
import { mintToken, type MintOptions } from "./gatekeeper.js";
import { referenceWorker, withEachData, type Fetcher } from "./rpc.js";

// The HTTP+JSON binding as a client of it calls (docs/protocol.md
// "HTTP+JSON"): the method's route from the table both bindings share, its
// path parameters filled from the params, the rest in the query (GET,
// DELETE) or the JSON body (POST). Every result and stream event is checked
// to be exactly its A2A type, as the JSON-RPC helpers do (./rpc.ts).

export const REST_ENDPOINT = `${ORIGIN}/a2a/rest`;

export interface RestOptions {
  token?: string | null;
  mint?: MintOptions;
  /** Set on top of the usual headers (A2A-Version, Authorization, and Content-Type with a body); `null` removes one. */
  headers?: Record<string, string | null>;
  worker?: Fetcher;
  /** The path's tenant: default the token's (`mint.tenant`, else `assistant`); `null` writes the route without one. */
  tenant?: string | null;
  /** Another verb than the route's first. */
  verb?: string;
  /** The body as sent, instead of the params' JSON. */
  body?: string | null;
}

export interface RestReply {
  status: number;
  headers: Headers;
  body: any;
}

/** The request of one call: `params` by their place in the route (path, query or body). */
export function restRequest(method: Method, params: Record<string, unknown> = {}, options: RestOptions & { token?: string | null } = {}): Request {
  const { verbs, path } = METHODS[method].http;
  const verb = options.verb ?? verbs[0]!;
  const rest = { ...params };
  const filled = path.replace(/\{(\w+)\}/g, (_, name: string) => {
    const value = rest[name];
    delete rest[name];
    return encodeURIComponent(String(value));
  });
  const tenant = options.tenant === undefined ? ((options.mint?.tenant ?? "assistant") as string) : options.tenant;
  const url = new URL(`${REST_ENDPOINT}${tenant === null ? "" : `/${encodeURIComponent(tenant)}`}${filled}`);
  let body: string | undefined;
  if (verb === "POST") body = Object.keys(rest).length ? JSON.stringify(rest) : undefined;
  else for (const [name, value] of Object.entries(rest)) url.searchParams.set(name, String(value));
  if (options.body !== undefined) body = options.body ?? undefined;
  const headers = new Headers({ [A2A_VERSION_HEADER]: A2A_VERSION });
  if (body !== undefined) headers.set("Content-Type", "application/json");
  if (options.token) headers.set("Authorization", `Bearer ${options.token}`);
  for (const [name, value] of Object.entries(options.headers ?? {})) {
    if (value === null) headers.delete(name);
    else headers.set(name, value);
  }
  return new Request(url, { method: verb, headers, ...(body === undefined ? {} : { body }) });
}

/** One call as a gatekeeper's client would send it over HTTP+JSON; the reply read whole. */
export async function restCall(method: Method, params: Record<string, unknown> = {}, options: RestOptions = {}): Promise<RestReply> {
  const token = options.token === undefined ? await mintToken(options.mint) : options.token;
  const response = await (options.worker ?? referenceWorker)(restRequest(method, params, { ...options, token }));
  const text = await response.text();
  let body: unknown = text;
  try {
    body = JSON.parse(text);
  } catch {
    // Not JSON: kept as text for the assertion message.
  }
  if (response.ok) assertRestResult(method, body);
  return { status: response.status, headers: response.headers, body };
}

/** A result is exactly its A2A type; google.protobuf.Empty is `{}` here, where JSON-RPC's result is `null`. */
function assertRestResult(method: string, body: unknown): void {
  const empty = body !== null && typeof body === "object" && Object.keys(body).length === 0;
  assertResultShape(method, method === "DeleteTaskPushNotificationConfig" && empty ? null : body);
}

/**
 * The Worker's response to an HTTP+JSON request, as a client of its own
 * reads it (the SDK's), its result or every stream event checked on the way
 * to be exactly its A2A type: a misshapen one fails the read.
 */
export async function checkedRestResponse(request: Request, response: Response): Promise<Response> {
  const route = matchRestRoute(request.method, new URL(request.url).pathname.slice(A2A_REST_PATH.length));
  if (route.kind !== "route" || !response.ok || !response.body) return response;
  if (!response.headers.get("Content-Type")?.startsWith("text/event-stream")) {
    assertRestResult(route.method, await response.clone().json());
    return response;
  }
  let index = 0;
  return withEachData(response, response.body, (data) => assertStreamResponseShape(`event ${index++} of ${route.method}`, JSON.parse(data)));
}

export interface RestStream {
  status: number;
  headers: Headers;
  /** The refusal, when the answer is not a stream. */
  body: any;
  /** `{id, event}` as they come, each `event` a bare StreamResponse; ends when the server closes the stream. */
  events: AsyncIterable<{ id: string | undefined; event: any }>;
  /** The SSE comments read so far (heartbeats, the closing one). */
  readonly comments: readonly string[];
  close(): Promise<void>;
}

/** A streaming call (SendStreamingMessage, SubscribeToTask) over HTTP+JSON, read as it comes. */
export async function openRestStream(method: Method, params: Record<string, unknown> = {}, options: RestOptions = {}): Promise<RestStream> {
  const token = options.token === undefined ? await mintToken(options.mint) : options.token;
  const response = await (options.worker ?? referenceWorker)(restRequest(method, params, { ...options, token }));
  const comments: string[] = [];
  if (!response.headers.get("Content-Type")?.startsWith("text/event-stream")) {
    const text = await response.text();
    return { status: response.status, headers: response.headers, body: JSON.parse(text), events: (async function* () {})(), comments, close: async () => {} };
  }
  // Comments as the server wrote them past the colon and one space.
  const sse = sseFrames(response.body!, (comment) => comments.push(comment.trim()));
  async function* events() {
    let index = 0;
    for await (const { id, data } of sse.frames) {
      const event = JSON.parse(data);
      assertStreamResponseShape(`event ${index++} (id ${id}) of ${method}`, event);
      yield { id, event };
    }
  }
  return { status: response.status, headers: response.headers, body: undefined, events: events(), comments, close: sse.cancel };
}

/** Every event of a stream until the server closes it. */
export async function drainRest(stream: RestStream): Promise<Array<{ id: string | undefined; event: any }>> {
  const all: Array<{ id: string | undefined; event: any }> = [];
  for await (const event of stream.events) all.push(event);
  return all;
}
