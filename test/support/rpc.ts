import { exports } from "cloudflare:workers";
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
  const headers = new Headers({ "Content-Type": "application/json", "A2A-Version": "1.0" });
  if (token !== null) headers.set("Authorization", `Bearer ${token}`);
  for (const [name, value] of Object.entries(options.headers ?? {})) {
    if (value === null) headers.delete(name);
    else headers.set(name, value);
  }
  const response = await (options.worker ?? referenceWorker)(new Request(options.endpoint ?? ENDPOINT, { method: "POST", headers, body }));
  const text = await response.text();
  let parsed: unknown = text;
  try {
    parsed = JSON.parse(text);
  } catch {
    // not JSON: keep the text for the assertion message
  }
  return { status: response.status, headers: response.headers, body: parsed };
}

/** One JSON-RPC call as a gatekeeper would send it (tenant `assistant` unless told). */
export function call(method: string, params: Record<string, unknown> = {}, options: CallOptions = {}): Promise<RpcReply> {
  const tenant = (options.mint?.tenant ?? "assistant") as string;
  return post(JSON.stringify({ jsonrpc: "2.0", id: options.id ?? nextId++, method, params: { tenant, ...params } }), options);
}

export function userMessage(text: string, messageId = crypto.randomUUID(), extra: Record<string, unknown> = {}) {
  return { messageId, role: "ROLE_USER", parts: [{ text }], ...extra };
}

export function sendParams(text: string, messageId?: string, pushUrl = PUSH_URL) {
  return {
    message: userMessage(text, messageId),
    configuration: { taskPushNotificationConfig: { url: pushUrl, token: "notify-secret" } },
  };
}
