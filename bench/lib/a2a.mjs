import { randomUUID } from "node:crypto";
import { TENANT } from "./gatekeeper.mjs";

const REQUEST_TIMEOUT_MS = 15_000;

/** GET a public document; resolves once the whole body has arrived. */
export async function getJson(url) {
  const response = await fetch(url, { signal: AbortSignal.timeout(REQUEST_TIMEOUT_MS) });
  const text = await response.text();
  if (response.status !== 200) throw new Error(`GET ${url} answered ${response.status}: ${text.slice(0, 300)}`);
  return text;
}

/**
 * JSON-RPC as a gatekeeper sends it: one caller, one reused token. A call
 * resolves to `result` and throws on anything else, so a benchmark never
 * silently times error replies.
 */
export function a2aCaller({ origin, token }) {
  const endpoint = `${origin}/a2a`;
  const headers = { Authorization: `Bearer ${token}`, "A2A-Version": "1.0", "Content-Type": "application/json" };
  let nextId = 1;

  async function post(body) {
    const response = await fetch(endpoint, { method: "POST", headers, body, signal: AbortSignal.timeout(REQUEST_TIMEOUT_MS) });
    const text = await response.text();
    let reply;
    try {
      reply = JSON.parse(text);
    } catch {
      reply = undefined;
    }
    if (response.status !== 200 || !reply || reply.error || reply.result === undefined) {
      throw new Error(`POST ${endpoint} answered ${response.status}: ${text.slice(0, 300)}`);
    }
    return reply.result;
  }

  const call = (method, params) => post(JSON.stringify({ jsonrpc: "2.0", id: nextId++, method, params: { tenant: TENANT, ...params } }));

  return {
    call,
    /** A body built once, for hot loops: the client's JSON.stringify is not what is measured. */
    prepared: (method, params) => {
      const body = JSON.stringify({ jsonrpc: "2.0", id: 1, method, params: { tenant: TENANT, ...params } });
      return () => post(body);
    },
    /** A new task (a fresh messageId each call) whose outcome is pushed to `pushUrl` with `token`. */
    sendMessage: (text, pushUrl, token = "t") =>
      call("SendMessage", {
        message: { messageId: randomUUID(), role: "ROLE_USER", parts: [{ text }] },
        configuration: { taskPushNotificationConfig: { url: pushUrl, token } },
      }),
  };
}
