// One person talking to a registered agent through the dev gatekeeper: every
// call carries a freshly minted token for the tenant it names, every
// SendMessage carries a push config pointing back at the gatekeeper with a
// notification token of its own, and answers arrive only as verified pushes.
import { randomUUID } from "node:crypto";
import { TERMINAL_STATE_NAMES } from "../../src/a2a/wire.ts";
import { jsonRpc } from "./gatekeeper.mjs";

/** States in which a turn waits no longer: terminal, or interrupted for the caller. */
const ENDS_TURN = new Set([...TERMINAL_STATE_NAMES, "TASK_STATE_INPUT_REQUIRED", "TASK_STATE_AUTH_REQUIRED"]);

export class RpcFailed extends Error {
  name = "RpcFailed";
  constructor(method, error) {
    super(`${method} failed: ${error.message} (JSON-RPC ${error.code})`);
    this.code = error.code;
  }
}

/**
 * @typedef {{ state: string, text: string, task: Record<string, any> }} TurnEnd
 * @typedef {{ tenant: string, taskId: string, messageId: string, done: Promise<TurnEnd>, onStatus: (listener: (text: string, state: string) => void) => void }} Turn
 */

/**
 * @param {{ gatekeeper: any, agent: { origin: string, endpoint: string }, identity: { key: string } }} options
 */
export function createSession({ gatekeeper, agent, identity }) {
  /** Turns of this session by messageId (a push can land before SendMessage's reply does). */
  const turns = new Map();
  /** @type {Array<(push: any) => void>} */
  const otherPushListeners = [];

  const onPush = (push) => {
    if (push.agent !== agent.origin || push.identityKey !== identity.key) return;
    const turn = turns.get(push.messageId);
    if (!turn) {
      for (const listener of otherPushListeners) listener(push);
      return;
    }
    if (push.kind === "statusUpdate") {
      const text = messageText(push.body.statusUpdate.status?.message);
      for (const listener of turn.statusListeners) listener(text, push.state);
      return;
    }
    if (ENDS_TURN.has(push.state)) {
      turns.delete(push.messageId);
      turn.resolve({ state: push.state, text: replyText(push.body.task), task: push.body.task });
    } else {
      const text = messageText(push.body.task.status?.message);
      for (const listener of turn.statusListeners) listener(text, push.state);
    }
  };
  gatekeeper.events.on("push", onPush);

  async function call(tenant, method, params = {}) {
    const token = await gatekeeper.mint({ audience: agent.endpoint, tenant, identity });
    const reply = await jsonRpc(agent.endpoint, token, method, { ...params, tenant });
    if (reply.error) throw new RpcFailed(method, reply.error);
    return reply.result;
  }

  /**
   * Sends one turn. Resolves once the agent accepted it (`submitted`); the
   * answer is `done`, which settles when the verified push of its end lands.
   * @returns {Promise<Turn>}
   */
  async function send(tenant, text) {
    const messageId = randomUUID();
    const token = gatekeeper.issueNotificationToken({ agent: agent.origin, tenant, identityKey: identity.key, messageId });
    let resolve;
    const done = new Promise((r) => (resolve = r));
    /** @type {{ resolve: (end: TurnEnd) => void, statusListeners: Array<(text: string, state: string) => void> }} */
    const entry = { resolve, statusListeners: [] };
    turns.set(messageId, entry);
    let result;
    try {
      result = await call(tenant, "SendMessage", {
        message: { messageId, role: "ROLE_USER", parts: [{ text }] },
        configuration: { taskPushNotificationConfig: { url: gatekeeper.pushUrl, token } },
      });
    } catch (error) {
      turns.delete(messageId);
      throw error;
    }
    const taskId = result?.task?.id;
    if (typeof taskId !== "string") throw new Error(`SendMessage answered without a task: ${JSON.stringify(result).slice(0, 300)}`);
    gatekeeper.bindNotificationToken(token, taskId);
    return { tenant, taskId, messageId, done, onStatus: (listener) => entry.statusListeners.push(listener) };
  }

  return {
    identity,
    agent,
    /** The gatekeeper's events (`push`, `refused`), for showing refusals. */
    gatekeeperEvents: gatekeeper.events,
    call,
    send,
    listTasks: (tenant, pageSize = 20) => call(tenant, "ListTasks", { pageSize }),
    getTask: (tenant, id) => call(tenant, "GetTask", { id }),
    cancel: (tenant, id) => call(tenant, "CancelTask", { id }),
    /** Pushes for this caller's tasks that this session did not send (e.g. a turn from before a restart). */
    onOtherPush: (listener) => otherPushListeners.push(listener),
    close: () => gatekeeper.events.off("push", onPush),
  };
}

/** The answer a task carries: its artifacts' text when completed, else its status message. */
export function replyText(task) {
  const fromArtifacts = (task?.artifacts ?? [])
    .flatMap((a) => a?.parts ?? [])
    .map(partText)
    .filter(Boolean)
    .join("\n");
  if (task?.status?.state === "TASK_STATE_COMPLETED" && fromArtifacts) return fromArtifacts;
  return messageText(task?.status?.message) || fromArtifacts;
}

export function messageText(message) {
  return (message?.parts ?? []).map(partText).filter(Boolean).join("\n");
}

function partText(part) {
  if (typeof part?.text === "string") return part.text;
  if (part?.data !== undefined) return JSON.stringify(part.data);
  return "";
}

/** `TASK_STATE_INPUT_REQUIRED` → `input required`. */
export function stateLabel(state) {
  return String(state ?? "unknown")
    .replace(/^TASK_STATE_/, "")
    .toLowerCase()
    .replace(/_/g, " ");
}
