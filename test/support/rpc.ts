import { exports } from "cloudflare:workers";
import { openRpcStream, postRpc, rpcBody, type RpcStream } from "../../src/testing/rpc-client.js";
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
  return openRpcStream(options.endpoint ?? ENDPOINT, rpcBody(method, params, { tenant, id: options.id ?? nextId++ }), {
    token,
    headers: options.headers,
    fetch: options.worker ?? referenceWorker,
    ...(resume ? { resume: { token: () => mintToken({ ...options.mint, ...resume }) } } : {}),
  });
}

/** Every event of a stream until the server closes it, as `{id, result}`. */
export async function drain(stream: RpcStream): Promise<Array<{ id: string | undefined; result: any }>> {
  const events: Array<{ id: string | undefined; result: any }> = [];
  for await (const event of stream.events) events.push({ id: event.id, result: event.reply.result });
  return events;
}
