// One person talking to a registered agent through the dev gatekeeper: every
// call carries a freshly minted token for the tenant it names, every
// SendMessage carries a push config pointing back at the gatekeeper with a
// notification token of its own, and answers arrive only as verified pushes.
// A turn that asks its human (`TASK_STATE_INPUT_REQUIRED`) stops with the
// request; the answer goes to the same task, and the turn goes on to its end.
import { randomUUID } from "node:crypto";
import { HITL_REQUEST_TYPE, HITL_RESPONSE_TYPE, HITL_TIMEOUT_TYPE, TERMINAL_STATE_NAMES } from "../../src/a2a/wire.ts";
import { jsonRpc } from "./gatekeeper.mjs";

const INPUT_REQUIRED = "TASK_STATE_INPUT_REQUIRED";

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
 * @typedef {{ id: string, label: string }} HitlOption
 * @typedef {{ requestId?: string, requestKind: "approval" | "choice" | "question", prompt: string, options: HitlOption[], allowFreeform: boolean, expiresAt?: string }} HitlRequest
 * @typedef {{ kind: "input", request: HitlRequest } | { kind: "expired", requestId: string } | { kind: "end", end: TurnEnd }} TurnStop
 *   where a turn stops for its caller: it asks a human, a request of it expired unanswered, or it ended
 * @typedef {{
 *   tenant: string, taskId: string, contextId: string, messageId: string,
 *   done: Promise<TurnEnd>,
 *   nextStop: () => Promise<TurnStop>,
 *   onStatus: (listener: (text: string, state: string) => void) => void,
 * }} Turn
 * @typedef {{ text?: string, optionId?: string }} HitlAnswer  what the person answered: an option id, text, or both
 */

/**
 * Stops in arrival order, each taken once by `next()`; after the end, `next()`
 * answers the end again. A request already seen (a retried push, a GetTask
 * after the push) is not queued twice.
 */
function stopQueue() {
  /** @type {TurnStop[]} */
  const queued = [];
  /** @type {Array<(stop: TurnStop) => void>} */
  const waiting = [];
  const seen = new Set();
  /** @type {TurnStop | undefined} */
  let ended;
  /** @param {TurnStop} stop */
  const put = (stop) => {
    if (ended) return;
    if (stop.kind === "input") {
      const key = stop.request.requestId ?? stop.request.prompt;
      if (seen.has(key)) return;
      seen.add(key);
    }
    if (stop.kind === "end") ended = stop;
    const waiter = waiting.shift();
    if (waiter) waiter(stop);
    else queued.push(stop);
  };
  /** @returns {Promise<TurnStop>} */
  const next = () => {
    const stop = queued.shift() ?? ended;
    return stop ? Promise.resolve(stop) : new Promise((resolve) => waiting.push(resolve));
  };
  return { put, next };
}

/**
 * @param {{ gatekeeper: any, agent: { origin: string, endpoint: string }, identity: { key: string } }} options
 */
export function createSession({ gatekeeper, agent, identity }) {
  /** Turns of this session by messageId (a push can land before SendMessage's reply does). */
  const turns = new Map();
  /** The notification token of each turn by messageId: its answers carry it again. */
  const pushTokens = new Map();
  /** @type {Array<(push: any) => void>} */
  const otherPushListeners = [];

  const onPush = (push) => {
    if (push.agent !== agent.origin || push.identityKey !== identity.key) return;
    const turn = turns.get(push.messageId);
    if (!turn) {
      for (const listener of otherPushListeners) listener(push);
      return;
    }
    const status = push.kind === "statusUpdate" ? push.body.statusUpdate.status : push.body.task.status;
    if (push.kind === "task") noteTask(push.messageId, push.body.task);
    else if (push.state === INPUT_REQUIRED) turn.stops.put({ kind: "input", request: hitlRequestOf(status?.message) });
    else {
      const expired = hitlTimeoutOf(status?.message);
      if (expired) turn.stops.put({ kind: "expired", requestId: expired });
      for (const listener of turn.statusListeners) listener(messageText(status?.message), push.state);
    }
  };
  gatekeeper.events.on("push", onPush);

  /** What a task as pushed or fetched says about its turn: it asks, it ended, or (working) nothing yet. */
  function noteTask(messageId, task) {
    const turn = turns.get(messageId);
    if (!turn) return;
    const state = task?.status?.state;
    if (state === INPUT_REQUIRED) return turn.stops.put({ kind: "input", request: hitlRequestOf(task.status?.message) });
    if (ENDS_TURN.has(state)) {
      turns.delete(messageId);
      const end = { state, text: replyText(task), task };
      turn.stops.put({ kind: "end", end });
      turn.resolve(end);
      return;
    }
    for (const listener of turn.statusListeners) listener(messageText(task?.status?.message), state);
  }

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
  /**
   * Sends one turn, in the conversation `contextId` names (a new one without).
   * Resolves once the agent accepted it (`submitted`); then `nextStop()`
   * follows it (a request for input, its end) and `done` settles at its end,
   * each from verified pushes.
   * @param {string} tenant
   * @param {string} text
   * @param {{ contextId?: string }} [options]
   * @returns {Promise<Turn>}
   */
  async function send(tenant, text, { contextId } = {}) {
    const messageId = randomUUID();
    const token = gatekeeper.issueNotificationToken({ agent: agent.origin, tenant, identityKey: identity.key, messageId });
    let resolve;
    const done = new Promise((r) => (resolve = r));
    /** @type {{ resolve: (end: TurnEnd) => void, statusListeners: Array<(text: string, state: string) => void>, stops: ReturnType<typeof stopQueue> }} */
    const entry = { resolve, statusListeners: [], stops: stopQueue() };
    turns.set(messageId, entry);
    let result;
    try {
      result = await call(tenant, "SendMessage", {
        message: { messageId, role: "ROLE_USER", parts: [{ text }], ...(contextId ? { contextId } : {}) },
        configuration: { returnImmediately: true, taskPushNotificationConfig: { url: gatekeeper.pushUrl, token } },
      });
    } catch (error) {
      turns.delete(messageId);
      throw error;
    }
    const taskId = result?.task?.id;
    if (typeof taskId !== "string") throw new Error(`SendMessage answered without a task: ${JSON.stringify(result).slice(0, 300)}`);
    gatekeeper.bindNotificationToken(token, taskId);
    pushTokens.set(messageId, token);
    return {
      tenant,
      taskId,
      contextId: String(result.task.contextId ?? contextId ?? ""),
      messageId,
      done,
      nextStop: entry.stops.next,
      onStatus: (listener) => entry.statusListeners.push(listener),
    };
  }

  /**
   * Answers the request a turn stopped on: a new message on its task, in its
   * conversation. Resolves to the task as the agent answered (working again).
   * @param {Turn} turn
   * @param {HitlRequest} request
   * @param {HitlAnswer} reply
   */
  async function answer(turn, request, reply) {
    // The edge wants a push config on every send; this one is the turn's own
    // (same URL and token), and a continuation keeps the task's configs anyway.
    const token = pushTokens.get(turn.messageId);
    const result = await call(turn.tenant, "SendMessage", {
      message: { messageId: randomUUID(), role: "ROLE_USER", taskId: turn.taskId, contextId: turn.contextId, parts: answerParts(request, reply) },
      configuration: { returnImmediately: true, taskPushNotificationConfig: { url: gatekeeper.pushUrl, ...(token ? { token } : {}) } },
    });
    return result?.task;
  }

  /** GetTask for a turn, fed to it like a push: for when a push is slow or lost. */
  async function refresh(turn) {
    const task = await call(turn.tenant, "GetTask", { id: turn.taskId });
    noteTask(turn.messageId, task);
    return task;
  }

  return {
    identity,
    agent,
    /** The gatekeeper's events (`push`, `refused`), for showing refusals. */
    gatekeeperEvents: gatekeeper.events,
    call,
    send,
    answer,
    refresh,
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

/** A message's text parts; its data parts as JSON only when it has no text (a request's data repeats its text). */
export function messageText(message) {
  const parts = message?.parts ?? [];
  const texts = parts.filter((p) => typeof p?.text === "string" && p.text !== "");
  return (texts.length ? texts : parts).map(partText).filter(Boolean).join("\n");
}

/**
 * The human-in-the-loop request a parked task's status message carries. With
 * no request part (an agent that parks without one) it is a question whose
 * prompt is the message's text.
 * @returns {HitlRequest}
 */
export function hitlRequestOf(message) {
  const data = dataOfType(message, HITL_REQUEST_TYPE);
  if (!data) return { requestKind: "question", prompt: messageText(message) || "(the agent asks for input)", options: [], allowFreeform: true };
  const kind = ["approval", "choice", "question"].includes(data.requestKind) ? data.requestKind : "question";
  const options = (Array.isArray(data.options) ? data.options : [])
    .filter((o) => typeof o?.id === "string")
    .map((o) => ({ id: o.id, label: typeof o.label === "string" ? o.label : o.id }));
  return {
    ...(typeof data.requestId === "string" ? { requestId: data.requestId } : {}),
    requestKind: kind,
    prompt: typeof data.prompt === "string" && data.prompt ? data.prompt : messageText(message),
    options,
    allowFreeform: kind === "question" || data.allowFreeform === true,
    ...(typeof data.expiresAt === "string" ? { expiresAt: data.expiresAt } : {}),
  };
}

/** The requestId a `hitl/timeout` part names, if the message has one. */
function hitlTimeoutOf(message) {
  const data = dataOfType(message, HITL_TIMEOUT_TYPE);
  return typeof data?.requestId === "string" ? data.requestId : undefined;
}

function dataOfType(message, type) {
  return (message?.parts ?? []).map((p) => p?.data).find((d) => d && typeof d === "object" && d.type === type);
}

/**
 * The parts of an answer: a question's text as plain text (what the contract
 * asks of a question), else a `hitl/response` naming the option or the text.
 * @param {HitlRequest} request
 * @param {HitlAnswer} answer
 */
function answerParts(request, answer) {
  if (request.requestKind === "question" && answer.text !== undefined) return [{ text: answer.text }];
  const response = {
    type: HITL_RESPONSE_TYPE,
    ...(request.requestId ? { requestId: request.requestId } : {}),
    ...(answer.optionId ? { optionId: answer.optionId } : {}),
    ...(answer.text ? { text: answer.text } : {}),
  };
  return [{ data: response }];
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
