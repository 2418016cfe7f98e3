import { randomUUID } from "node:crypto";
import { endpointOf } from "../../src/a2a/wire.ts";
import { postRpc, rpcBody } from "../../src/testing/rpc-client.ts";
import { TENANT } from "./gatekeeper.mjs";

const REQUEST_TIMEOUT_MS = 15_000;

/**
 * GET a public document; resolves once the whole body has arrived.
 * @param {string} url
 */
export async function getJson(url) {
  const response = await fetch(url, { signal: AbortSignal.timeout(REQUEST_TIMEOUT_MS) });
  const text = await response.text();
  if (response.status !== 200) throw new Error(`GET ${url} answered ${response.status}: ${text.slice(0, 300)}`);
  return text;
}

/**
 * JSON-RPC as a gatekeeper sends it (src/testing/rpc-client.ts), for one
 * caller whose token `token()` gives (see the gatekeeper's `tokenFor`). A
 * call resolves to `result` and throws on anything else, so a benchmark never
 * silently times error replies.
 * @param {{ origin: string, token: () => Promise<string> }} options
 */
export function a2aCaller({ origin, token }) {
  const endpoint = endpointOf(origin);
  let nextId = 1;

  /** @param {string} body */
  async function post(body) {
    const { status, text, reply } = await postRpc(endpoint, body, { token: await token(), timeoutMs: REQUEST_TIMEOUT_MS });
    if (status !== 200 || !reply || reply.error || reply.result === undefined) {
      throw new Error(`POST ${endpoint} answered ${status}: ${text.slice(0, 300)}`);
    }
    return reply.result;
  }

  /**
   * @param {string} method
   * @param {Record<string, unknown>} params
   */
  const call = (method, params) => post(rpcBody(method, params, { tenant: TENANT, id: nextId++ }));

  return {
    call,
    /**
     * A body built once, for hot loops: the client's JSON.stringify is not what is measured.
     * @param {string} method
     * @param {Record<string, unknown>} params
     */
    prepared: (method, params) => {
      const body = rpcBody(method, params, { tenant: TENANT, id: 1 });
      return () => post(body);
    },
    /**
     * A new task (a fresh messageId unless one is given: a retry names the
     * earlier one) whose outcome is pushed to `pushUrl` with `token`; in
     * the context `contextId` when one is given (a new one otherwise).
     * @param {string} text
     * @param {string} pushUrl
     * @param {string} [contextId]
     */
    sendMessage: (text, pushUrl, notificationToken = "t", messageId = randomUUID(), contextId = undefined) =>
      call("SendMessage", {
        message: { messageId, role: "ROLE_USER", parts: [{ text }], ...(contextId ? { contextId } : {}) },
        configuration: { returnImmediately: true, taskPushNotificationConfig: { url: pushUrl, token: notificationToken } },
      }),
  };
}
