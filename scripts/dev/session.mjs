// One person talking to a registered agent through the dev gatekeeper: every
// call carries a freshly minted token for the tenant it names. A turn is a
// SendStreamingMessage whose push config points back at the gatekeeper with a
// notification token of its own: the stream shows the answer as it is
// written (artifact chunks) and the progress, and the verified push of the
// task's end is the reply of record (pushes are at least once; a stream is
// gone when its connection is). A turn that asks its human
// (`TASK_STATE_INPUT_REQUIRED`) stops with the request, from the stream or
// its push, whichever comes first; the answer goes to the same task, and a
// SubscribeToTask picks the stream up again from the last event seen
// (`Last-Event-ID`), so the rest of the answer streams too; so does one, with
// a freshly minted token, when the agent ends a stream early (its token
// expired, or its maximum lifetime passed: the rpc client's `resume`). Every
// stream activates progress (docs/protocol.md "Progress"): each tool call,
// MCP call, subtask and round is a tracker, and the turn says when one starts
// and when it ends.
import { randomUUID } from "node:crypto";
import { PROGRESS_EXTENSION } from "../../src/a2a/progress.ts";
import { A2A_EXTENSIONS_HEADER } from "../../src/a2a/wire.ts";
import { HITL_REQUEST_TYPE, HITL_RESPONSE_TYPE, HITL_TIMEOUT_TYPE, INTERRUPTED_STATE_NAMES, TERMINAL_STATE_NAMES } from "../../src/a2a/wire.ts";
import { TRACEPARENT_HEADER, freshTraceparent, traceOfRequest } from "../../src/a2a/trace-context.ts";
import { openRpcStream, rpcBody } from "../../src/testing/rpc-client.ts";
import { jsonRpc } from "./gatekeeper.mjs";

const INPUT_REQUIRED = "TASK_STATE_INPUT_REQUIRED";

/** States a stream closes at with the turn not over: the task waits for its caller. */
const INTERRUPTED = new Set(INTERRUPTED_STATE_NAMES);

/** States in which a turn waits no longer: terminal, or interrupted for the caller. */
const ENDS_TURN = new Set([...TERMINAL_STATE_NAMES, ...INTERRUPTED]);

/** The `state` of a turn the agent answered with a message instead of a task (there is no task, and no push). */
export const MESSAGE_REPLY = "message";

/** How long opening a stream may take before its first event (the task as it is). */
const OPEN_TIMEOUT_MS = 15_000;

/**
 * How often a stream cut short (broken, or closed with the task neither
 * terminal nor waiting: its object was reset, say) is picked up again before
 * only the pushes are left, and the wait before the first try (doubled each time).
 */
const REOPEN_LIMIT = 3;
const REOPEN_DELAY_MS = 500;

/**
 * How long the verified end of a turn waits for its stream to deliver what
 * it still carries (the last chunks, then the terminal status, which closes
 * it): the push and the stream race, and the answer reads better whole.
 */
const STREAM_GRACE_MS = 2_000;

export class RpcFailed extends Error {
  name = "RpcFailed";
  constructor(method, error) {
    super(`${method} failed: ${error.message} (JSON-RPC ${error.code})`);
    this.code = error.code;
  }
}

/**
 * @typedef {{ state: string, text: string, task: Record<string, any> | undefined }} TurnEnd
 *   how a turn ended: its task's final state and reply, or {@link MESSAGE_REPLY} and the message's text (no task)
 * @typedef {{ text: string, append: boolean, lastChunk: boolean }} AnswerChunk  a piece of the answer as the agent writes it
 * @typedef {{ id: string, label: string }} HitlOption
 * @typedef {{ requestId?: string, requestKind: "approval" | "choice" | "question", prompt: string, options: HitlOption[], allowFreeform: boolean, expiresAt?: string }} HitlRequest
 * @typedef {{ kind: "input", request: HitlRequest } | { kind: "expired", requestId: string } | { kind: "end", end: TurnEnd }} TurnStop
 *   where a turn stops for its caller: it asks a human, a request of it expired unanswered, or it ended
 * @typedef {{
 *   tenant: string, taskId: string, contextId: string, messageId: string,
 *   traceId: string,
 *   done: Promise<TurnEnd>,
 *   nextStop: () => Promise<TurnStop>,
 *   onStatus: (listener: (text: string, state: string) => void) => void,
 *   onChunk: (listener: (chunk: AnswerChunk) => void) => void,
 *   onTracker: (listener: (change: TrackerChange) => void) => void,
 * }} Turn
 *   `traceId`: the W3C trace the send started (the turn's events and requests name it);
 *   `onStatus`, `onChunk` and `onTracker` also hand a listener what came before it was added
 * @typedef {{ text?: string, optionId?: string }} HitlAnswer  what the person answered: an option id, text, or both
 * @typedef {{ id: string, kind: string, status: string, message: string, progress?: number, total?: number, change: "started" | "ended" }} TrackerChange
 *   a tracker of the turn's progress that started or ended (its `kind` is its id's prefix: tool, mcp, subtask, round)
 */

/** Whether a turn's end is a reply: a completed task, or a message. */
export const isReply = (/** @type {TurnEnd} */ end) => end.state === "TASK_STATE_COMPLETED" || end.state === MESSAGE_REPLY;

/**
 * Stops in arrival order, each taken once by `next()`; after the end, `next()`
 * answers the end again. A request already seen (the stream's and the push's,
 * a retried push, a GetTask after the push) is not queued twice.
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
    if (stop.kind === "input" || stop.kind === "expired") {
      const key = `${stop.kind}\n${stop.kind === "input" ? (stop.request.requestId ?? stop.request.prompt) : stop.requestId}`;
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
  return { put, next, isEnded: () => ended !== undefined };
}

/**
 * Values handed to every listener, the ones that came before a listener was
 * added included (a stream's first events can come before the chat listens).
 * @template T
 */
function replayed() {
  /** @type {T[]} */
  const values = [];
  /** @type {Array<(value: T) => void>} */
  const listeners = [];
  return {
    /** @param {T} value */
    emit: (value) => {
      values.push(value);
      for (const listener of listeners) listener(value);
    },
    /** @param {(value: T) => void} listener */
    on: (listener) => {
      listeners.push(listener);
      for (const value of values) listener(value);
    },
  };
}

/** The same status seen twice (on the stream and as a push, or a retried push) is one status. */
const statusKey = (status) => `${status?.state}\n${status?.timestamp ?? ""}\n${status?.message?.messageId ?? ""}`;

/**
 * @param {{ gatekeeper: any, agent: { origin: string, endpoint: string }, identity: { key: string }, streamGraceMs?: number, streamRetryMs?: number }} options
 *   `streamGraceMs` and `streamRetryMs`: see {@link STREAM_GRACE_MS} and {@link REOPEN_DELAY_MS}
 */
export function createSession({ gatekeeper, agent, identity, streamGraceMs = STREAM_GRACE_MS, streamRetryMs = REOPEN_DELAY_MS }) {
  /**
   * Turns of this session by messageId (a push can land before the stream's first event does).
   * @typedef {{
   *   tenant: string, taskId?: string, resolve: (end: TurnEnd) => void,
   *   statuses: ReturnType<typeof replayed<[string, string]>>, chunks: ReturnType<typeof replayed<AnswerChunk>>,
   *   trackers: ReturnType<typeof replayed<TrackerChange>>, trackerStates: Map<string, string>,
   *   seenStatuses: Set<string>, stops: ReturnType<typeof stopQueue>,
   *   state?: string, lastSeq: number, stream?: { close(): Promise<void> },
   *   following?: Promise<void>, ending?: boolean,
   * }} TurnEntry
   * @type {Map<string, TurnEntry>}
   */
  const turns = new Map();
  /** @type {Array<(push: any) => void>} */
  const otherPushListeners = [];
  let closed = false;

  const onPush = (push) => {
    if (push.agent !== agent.origin || push.identityKey !== identity.key) return;
    const turn = turns.get(push.messageId);
    if (!turn) {
      for (const listener of otherPushListeners) listener(push);
      return;
    }
    if (push.kind === "task") noteTask(push.messageId, push.body.task);
    else noteStatus(turn, push.body.statusUpdate?.status, { showBare: true });
  };
  gatekeeper.events.on("push", onPush);

  /**
   * A status, pushed or streamed: a request for input is a stop, an expiry
   * is one, anything else not terminal is progress. Terminal ones are left to
   * the task's push, the reply of record. A bare status (no text) is shown
   * only when pushed: the stream has one for every change.
   * @param {TurnEntry} turn
   */
  function noteStatus(turn, status, { showBare }) {
    const state = status?.state;
    if (state === INPUT_REQUIRED) return turn.stops.put({ kind: "input", request: hitlRequestOf(status?.message) });
    if (TERMINAL_STATE_NAMES.includes(state)) return;
    const expired = hitlTimeoutOf(status?.message);
    if (expired) turn.stops.put({ kind: "expired", requestId: expired });
    const key = statusKey(status);
    if (turn.seenStatuses.has(key)) return;
    turn.seenStatuses.add(key);
    const progress = status?.message?.metadata?.[PROGRESS_EXTENSION];
    if (progress) return noteProgress(turn, progress);
    const text = messageText(status?.message);
    if (text || showBare) turn.statuses.emit([text, state]);
  }

  /**
   * A progress snapshot: each tracker that starts (first seen running) or
   * ends (first seen completed or failed) is a change; what happens between
   * is not. Snapshots can come out of order (a push after the stream's next):
   * an ended tracker never starts again.
   * @param {TurnEntry} turn
   */
  function noteProgress(turn, progress) {
    for (const tracker of Array.isArray(progress.trackers) ? progress.trackers : []) {
      if (typeof tracker?.id !== "string") continue;
      const before = turn.trackerStates.get(tracker.id);
      const status = String(tracker.status ?? "running");
      if (before !== undefined && (before !== "running" || status === "running")) continue;
      turn.trackerStates.set(tracker.id, status);
      const change = status === "running" ? "started" : "ended";
      const { progress: done, total } = tracker;
      turn.trackers.emit({
        id: tracker.id,
        kind: tracker.id.split(":", 1)[0],
        status,
        message: String(tracker.message ?? ""),
        ...(typeof done === "number" ? { progress: done } : {}),
        ...(typeof total === "number" ? { total } : {}),
        change,
      });
    }
  }

  /** What a task as pushed or fetched says about its turn: it asks, it ended, or (working) nothing yet. */
  function noteTask(messageId, task) {
    const turn = turns.get(messageId);
    if (!turn) return;
    const state = task?.status?.state;
    if (state === INPUT_REQUIRED) return turn.stops.put({ kind: "input", request: hitlRequestOf(task.status?.message) });
    if (ENDS_TURN.has(state)) return endTurn(messageId, { state, text: replyText(task), task });
    noteStatus(turn, task?.status, { showBare: true });
  }

  /** The turn's end, once its stream has said what it still carries (or {@link STREAM_GRACE_MS} passed). */
  function endTurn(messageId, end) {
    const turn = turns.get(messageId);
    if (!turn || turn.ending) return;
    turn.ending = true;
    const finish = () => {
      if (turns.get(messageId) !== turn) return;
      turns.delete(messageId);
      turn.stops.put({ kind: "end", end });
      turn.resolve(end);
      // What is left of the stream is in the reply now.
      void turn.stream?.close();
    };
    if (!turn.following) return finish();
    const timer = setTimeout(finish, streamGraceMs);
    void turn.following.then(() => {
      clearTimeout(timer);
      finish();
    });
  }

  async function token(tenant) {
    return gatekeeper.mint({ audience: agent.endpoint, tenant, identity });
  }

  async function call(tenant, method, params = {}) {
    const reply = await jsonRpc(agent.endpoint, await token(tenant), method, { ...params, tenant });
    if (reply.error) throw new RpcFailed(method, reply.error);
    return reply.result;
  }

  /**
   * Opens a streaming call and reads its first event (the task as it is, or
   * the agent's message); throws what a refusal says.
   * @returns {Promise<{ stream: import("../../src/testing/rpc-client.ts").RpcStream, events: AsyncIterator<any>, first: { id: string | undefined, result: any } }>}
   */
  async function openStream(tenant, method, params, headers = {}) {
    const stream = await openRpcStream(agent.endpoint, rpcBody(method, { ...params, tenant }), {
      token: await token(tenant),
      // The turn's progress comes on its stream (and its push config, set by the same request); each call
      // is in a trace of its own, unless the caller names one (a send: the turn's).
      headers: { [A2A_EXTENSIONS_HEADER]: PROGRESS_EXTENSION, [TRACEPARENT_HEADER]: freshTraceparent(), ...headers },
      // A stream the agent ends early goes on under a fresh token, from where it stopped.
      resume: { token: () => token(tenant) },
    });
    if (stream.reply?.error) throw new RpcFailed(method, stream.reply.error);
    if (stream.status === 401) throw new Error(`${method}: the agent refused the gatekeeper's token (HTTP 401)`);
    if (stream.reply || stream.status !== 200) throw new Error(`${method}: the agent answered HTTP ${stream.status} with no event stream`);
    const events = stream.events[Symbol.asyncIterator]();
    let timer;
    const timeout = new Promise((_, reject) => {
      timer = setTimeout(() => reject(new Error(`${method}: no event within ${OPEN_TIMEOUT_MS / 1000} s`)), OPEN_TIMEOUT_MS);
    });
    try {
      const next = await Promise.race([events.next(), timeout]);
      if (next.done) throw new Error(`${method}: the stream closed before its first event`);
      if (next.value.reply.error) throw new RpcFailed(method, next.value.reply.error);
      return { stream, events, first: { id: next.value.id, result: next.value.reply.result } };
    } catch (error) {
      await stream.close();
      throw error;
    } finally {
      clearTimeout(timer);
    }
  }

  /**
   * Reads a turn's stream to its end, and picks it up again while the turn
   * goes on: after it closed on a request for input (the answer, or the
   * request's expiry, resumes the turn), and after it was cut short (a few
   * times). `Last-Event-ID` makes each stream start where the last one stopped.
   * @param {string} messageId
   * @param {TurnEntry} turn
   * @param {Awaited<ReturnType<typeof openStream>>} opened
   */
  async function follow(messageId, turn, opened) {
    let current = opened;
    for (let cuts = 0; ; ) {
      turn.stream = current.stream;
      try {
        for (;;) {
          const next = await current.events.next();
          if (next.done || !turns.has(messageId)) break;
          noteEvent(turn, next.value, { snapshot: false });
        }
      } catch {
        // Cut: picked up again below.
      }
      const over = () => closed || turn.ending || !turns.has(messageId) || TERMINAL_STATE_NAMES.includes(turn.state ?? "");
      if (over()) return;
      if (!INTERRUPTED.has(turn.state ?? "")) {
        // Neither terminal nor waiting: the stream did not close by the rule, it was cut.
        if (++cuts > REOPEN_LIMIT) return; // the pushes still come
        await new Promise((resolve) => setTimeout(resolve, streamRetryMs * 2 ** (cuts - 1)));
        if (over()) return;
      }
      try {
        current = await openStream(turn.tenant, "SubscribeToTask", { id: turn.taskId }, { "Last-Event-ID": String(turn.lastSeq) });
      } catch {
        return; // the pushes still come
      }
      // The snapshot repeats what the events after Last-Event-ID say; only its state is news.
      turn.state = current.first.result?.task?.status?.state ?? turn.state;
    }
  }

  /** One event of a turn's stream. @param {TurnEntry} turn */
  function noteEvent(turn, { id, reply }, { snapshot }) {
    const result = reply?.result ?? {};
    const seq = Number(id);
    if (!snapshot && Number.isSafeInteger(seq)) turn.lastSeq = Math.max(turn.lastSeq, seq);
    if (result.statusUpdate) {
      turn.state = result.statusUpdate.status?.state;
      noteStatus(turn, result.statusUpdate.status, { showBare: false });
    } else if (result.artifactUpdate) {
      const { artifact, append, lastChunk } = result.artifactUpdate;
      const text = (artifact?.parts ?? []).map(partText).join("");
      turn.chunks.emit({ text, append: append === true, lastChunk: lastChunk === true });
    } else if (result.task) {
      turn.state = result.task.status?.state;
    }
  }

  /**
   * Sends one turn, in the conversation `contextId` names (a new one without).
   * Resolves once the agent accepted it (the stream's first event); then
   * `onChunk` shows the answer as it is written, `nextStop()` follows the turn
   * (a request for input, its end) and `done` settles at its end, from the
   * verified push of its task (or the agent's message, which is the whole answer).
   * @param {string} tenant
   * @param {string} text
   * @param {{ contextId?: string }} [options]
   * @returns {Promise<Turn>}
   */
  async function send(tenant, text, { contextId } = {}) {
    const messageId = randomUUID();
    const notificationToken = gatekeeper.issueNotificationToken({ agent: agent.origin, tenant, identityKey: identity.key, messageId });
    let resolve = (/** @type {TurnEnd} */ _end) => {};
    /** @type {Promise<TurnEnd>} */
    const done = new Promise((r) => (resolve = r));
    /** @type {TurnEntry} */
    const entry = {
      tenant,
      resolve,
      statuses: replayed(),
      chunks: replayed(),
      trackers: replayed(),
      trackerStates: new Map(),
      seenStatuses: new Set(),
      stops: stopQueue(),
      lastSeq: 0,
    };
    turns.set(messageId, entry);
    // The turn's trace, as the gatekeeper starts it: the Worker's events and requests for the turn name its id.
    const traceparent = freshTraceparent();
    const traceId = /** @type {string} */ (traceOfRequest(traceparent)?.traceId);
    let opened;
    try {
      opened = await openStream(
        tenant,
        "SendStreamingMessage",
        {
          message: { messageId, role: "ROLE_USER", parts: [{ text }], ...(contextId ? { contextId } : {}) },
          configuration: { taskPushNotificationConfig: { url: gatekeeper.pushUrl, token: notificationToken } },
        },
        { [TRACEPARENT_HEADER]: traceparent },
      );
    } catch (error) {
      turns.delete(messageId);
      throw error;
    }
    const { first } = opened;
    const base = {
      tenant,
      messageId,
      traceId,
      done,
      nextStop: entry.stops.next,
      onStatus: (l) => entry.statuses.on(([t, s]) => l(t, s)),
      onChunk: entry.chunks.on,
      onTracker: entry.trackers.on,
    };
    if (first.result?.message) {
      // A message answer: the stream's one event is the whole reply, and no task exists.
      const message = first.result.message;
      await opened.stream.close();
      endTurn(messageId, { state: MESSAGE_REPLY, text: messageText(message), task: undefined });
      return { ...base, taskId: "", contextId: String(message.contextId ?? contextId ?? "") };
    }
    const task = first.result?.task;
    if (typeof task?.id !== "string") {
      turns.delete(messageId);
      await opened.stream.close();
      throw new Error(`SendStreamingMessage answered without a task: ${JSON.stringify(first.result).slice(0, 300)}`);
    }
    entry.taskId = task.id;
    gatekeeper.bindNotificationToken(notificationToken, task.id);
    // The snapshot of a new task stands for its events so far.
    noteEvent(entry, { id: first.id, reply: { result: first.result } }, { snapshot: false });
    entry.following = follow(messageId, entry, opened);
    return { ...base, taskId: task.id, contextId: String(task.contextId ?? contextId ?? "") };
  }

  /**
   * Answers the request a turn stopped on: a new message on its task, in its
   * conversation, sent to return at once (the turn's stream picks up the rest;
   * the task keeps its push config). Resolves to the task as the agent
   * answered (working again).
   * @param {Turn} turn
   * @param {HitlRequest} request
   * @param {HitlAnswer} reply
   */
  async function answer(turn, request, reply) {
    const result = await call(turn.tenant, "SendMessage", {
      message: { messageId: randomUUID(), role: "ROLE_USER", taskId: turn.taskId, contextId: turn.contextId, parts: answerParts(request, reply) },
      configuration: { returnImmediately: true },
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
    /** Erases one conversation of this caller at `tenant` (docs/retention.md "Erasure"). */
    forgetContext: (tenant, contextId) => call(tenant, "dynamicagents/DeleteContext", { contextId }),
    /** Erases everything this caller left at `tenant`. */
    forgetMe: (tenant) => call(tenant, "dynamicagents/DeleteCallerData", {}),
    /** Pushes for this caller's tasks that this session did not send (e.g. a turn from before a restart). */
    onOtherPush: (listener) => otherPushListeners.push(listener),
    close: () => {
      closed = true;
      gatekeeper.events.off("push", onPush);
      for (const turn of turns.values()) void turn.stream?.close();
    },
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
  return [{ data: hitlResponse(request.requestId, answer) }];
}

/**
 * The `hitl/response` data part's value (docs/protocol.md "Human in the
 * loop"): the request answered, the option chosen, the words typed.
 * @param {string | undefined} requestId
 * @param {HitlAnswer} answer
 */
export function hitlResponse(requestId, answer) {
  return {
    type: HITL_RESPONSE_TYPE,
    ...(requestId ? { requestId } : {}),
    ...(answer.optionId ? { optionId: answer.optionId } : {}),
    ...(answer.text ? { text: answer.text } : {}),
  };
}

function partText(part) {
  if (typeof part?.text === "string") return part.text;
  // An answer to a request reads as what was answered (`approved`), not as its JSON.
  if (part?.data?.type === HITL_RESPONSE_TYPE) return answerLabel(part.data) || "answered";
  if (part?.data !== undefined) return JSON.stringify(part.data);
  return "";
}

/**
 * What an answer to a request says, in a word or a few: `approved`,
 * `rejected: not now`, the option chosen, or the words typed.
 * @param {{ optionId?: unknown, text?: unknown }} answer
 */
export function answerLabel({ optionId, text }) {
  const said = typeof text === "string" ? text : "";
  const chose = optionId === "approve" ? "approved" : optionId === "reject" ? "rejected" : typeof optionId === "string" ? optionId : "";
  return [chose, said].filter(Boolean).join(": ");
}

/** `TASK_STATE_INPUT_REQUIRED` → `input required`. */
export function stateLabel(state) {
  return String(state ?? "unknown")
    .replace(/^TASK_STATE_/, "")
    .toLowerCase()
    .replace(/_/g, " ");
}
