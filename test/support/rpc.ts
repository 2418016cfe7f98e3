import { exports } from "cloudflare:workers";
import { openRpcStream, postRpc, rpcBody, type RpcStream } from "../../src/testing/rpc-client.js";
import { assertResultShape, assertStreamResponseShape } from "../../src/testing/wire-round-trip.js";
import { ENDPOINT, PUSH_URL } from "./constants.js";
import { mintToken, type MintOptions } from "./gatekeeper.js";

export type Fetcher = (request: Request) => Promise<Response>;

export const referenceWorker: Fetcher = (request) => exports.default.fetch(request);

export interface CallOptions {
  token?: string | null;
  mint?: MintOptions;
  /** Added to (or, with `null`, removed from) the usual Content-Type and A2A-Version. */
  headers?: Record<string, string | null>;
  worker?: Fetcher;
  id?: string | number;
  /** Where the request goes; default the test origin's `/a2a`. */
  endpoint?: string;
}

export interface RpcReply {
  status: number;
  headers: Headers;
  body: any;
}

let nextId = 1;

export async function post(body: string, options: CallOptions = {}): Promise<RpcReply> {
  const token = options.token === undefined ? await mintToken(options.mint) : options.token;
  const answer = await postRpc(options.endpoint ?? ENDPOINT, body, { token, headers: options.headers, fetch: options.worker ?? referenceWorker });
  // Every result is exactly its A2A type (src/testing/wire-round-trip.ts): a stray key fails the spec here.
  if (answer.reply?.result !== undefined) assertResultShape(methodOf(body), answer.reply.result);
  // Not JSON: keep the text for the assertion message.
  return { status: answer.status, headers: answer.headers, body: answer.json === undefined ? answer.text : answer.json };
}

/** One JSON-RPC call as a gatekeeper would send it (tenant `assistant` unless told). */
export function call(method: string, params: Record<string, unknown> = {}, options: CallOptions = {}): Promise<RpcReply> {
  const tenant = (options.mint?.tenant ?? "assistant") as string;
  return post(rpcBody(method, params, { tenant, id: options.id ?? nextId++ }), options);
}

export function userMessage(text: string, messageId = crypto.randomUUID(), extra: Record<string, unknown> = {}) {
  return { messageId, role: "ROLE_USER", parts: [{ text }], ...extra };
}

export function sendParams(text: string, messageId?: string, pushUrl = PUSH_URL) {
  return {
    message: userMessage(text, messageId),
    configuration: { returnImmediately: true, taskPushNotificationConfig: { url: pushUrl, token: "notify-secret" } },
  };
}

/**
 * A streaming call (SendStreamingMessage, SubscribeToTask) as a gatekeeper
 * would open it; with `resume`, a stream the server ends early goes on with a
 * fresh token from `resume` (`mint` with its own `expiresIn`) and `Last-Event-ID`.
 */
export async function openStream(
  method: string,
  params: Record<string, unknown> = {},
  options: CallOptions & { resume?: MintOptions } = {},
): Promise<RpcStream> {
  const token = options.token === undefined ? await mintToken(options.mint) : options.token;
  const tenant = (options.mint?.tenant ?? "assistant") as string;
  const { resume } = options;
  const stream = await openRpcStream(options.endpoint ?? ENDPOINT, rpcBody(method, params, { tenant, id: options.id ?? nextId++ }), {
    token,
    headers: options.headers,
    fetch: options.worker ?? referenceWorker,
    ...(resume ? { resume: { token: () => mintToken({ ...options.mint, ...resume }) } } : {}),
  });
  if (stream.reply?.result !== undefined) assertResultShape(method, stream.reply.result);
  return checkedEvents(stream, method);
}

/**
 * The Worker's response to a `method` call, as a client of its own reads it
 * (the SDK's), with every JSON-RPC result and stream event checked on the way
 * (src/testing/wire-round-trip.ts): a misshapen one fails the read.
 */
export async function checkedResponse(method: string, response: Response): Promise<Response> {
  if (!response.body) return response;
  if (!response.headers.get("Content-Type")?.startsWith("text/event-stream")) {
    const reply = (await response
      .clone()
      .json()
      .catch(() => undefined)) as { result?: unknown } | undefined;
    if (reply?.result !== undefined) assertResultShape(method, reply.result);
    return response;
  }
  let index = 0;
  return withEachData(response, response.body, (data) => {
    const result = (JSON.parse(data) as { result?: unknown }).result;
    if (result !== undefined) assertStreamResponseShape(`event ${index++} of ${method}`, result);
  });
}

/** `response` with its SSE body passed through as it is, each `data:` line handed to `check` on the way (a throw fails the read). */
export function withEachData(response: Response, body: ReadableStream<Uint8Array>, check: (data: string) => void): Response {
  let buffer = "";
  const checked = body.pipeThrough(new TextDecoderStream()).pipeThrough(
    new TransformStream<string, string>({
      transform(chunk, controller) {
        buffer += chunk;
        const lines = buffer.split("\n");
        buffer = lines.pop() ?? "";
        for (const line of lines) if (line.startsWith("data:")) check(line.replace(/\r$/, "").slice(5));
        controller.enqueue(chunk);
      },
    }),
  );
  return new Response(checked.pipeThrough(new TextEncoderStream()), { status: response.status, headers: response.headers });
}

/** The method a request body names, or "" when it names none (a malformed body the edge refuses). */
function methodOf(body: string): string {
  try {
    const method = (JSON.parse(body) as { method?: unknown }).method;
    return typeof method === "string" ? method : "";
  } catch {
    return "";
  }
}

/** The stream, its every event checked as a StreamResponse as it is read. */
function checkedEvents(stream: RpcStream, method: string): RpcStream {
  const events = stream.events;
  async function* checked() {
    let index = 0;
    for await (const event of events) {
      if (event.reply.result !== undefined) assertStreamResponseShape(`event ${index} (id ${event.id}) of ${method}`, event.reply.result);
      index++;
      yield event;
    }
  }
  return {
    status: stream.status,
    headers: stream.headers,
    reply: stream.reply,
    events: checked(),
    get comments() {
      return stream.comments;
    },
    get closing() {
      return stream.closing;
    },
    close: () => stream.close(),
  };
}

/** Every event of a stream until the server closes it, as `{id, result}`. */
export async function drain(stream: RpcStream): Promise<Array<{ id: string | undefined; result: any }>> {
  const events: Array<{ id: string | undefined; result: any }> = [];
  for await (const event of stream.events) events.push({ id: event.id, result: event.reply.result });
  return events;
}
