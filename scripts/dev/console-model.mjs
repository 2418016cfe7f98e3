// What the dev console knows, as plain data and pure functions (console.mjs
// serves it, test/node/console.test.mjs checks it): the events the Worker
// logged (events.mjs reads them off wrangler's output) and what the dev
// gatekeeper saw itself, kept once each by `eventId`; and the tasks as the A2A
// API reports them (ListTasks, GetTask). A task's timeline is its events in
// time order; its usage adds up its model calls. A tenant's MCP servers show
// as their latest `mcp.server` event says.
import { PROGRESS_EXTENSION } from "../../src/a2a/progress.ts";
import { DEAD_LETTERS_KEY, TERMINAL_STATE_NAMES } from "../../src/a2a/wire.ts";
import { EVENT_LINE_TYPE } from "../../src/telemetry/catalogue.ts";
import { TRACE_KEY } from "../../src/a2a/trace-context.ts";
import { waterfallOf } from "./console-waterfall.mjs";
import { describeData } from "./events.mjs";
import { hitlRequestOf, messageText, replyText } from "./session.mjs";

/**
 * @typedef {import("./events.mjs").EventLike} EventLike
 * @typedef {{ at: string, event: string, group: string, source: "worker" | "gatekeeper", text: string, tenant?: string, taskId?: string }} TimelineEntry
 * @typedef {{ modelCalls: number, inputTokens: number, outputTokens: number, toolCalls: number, modelMs: number }} Usage
 * @typedef {{ tenant: string, server: string, status: string, tools: number, reason?: string, at: string }} McpServerStatus
 */

/** Marks what the dev gatekeeper and the console record themselves, beside the Worker's events. */
const LOCAL_TYPE = "dynamicagents.dev-console";
/** Events kept at most: a long session drops its oldest (the A2A API still has every task). */
const DEFAULT_LIMIT = 20_000;

/**
 * The events seen so far, each once (an event seen again, a replayed
 * Workflow step's, keeps its `eventId`), in arrival order; `subscribe` hears
 * each new one.
 * @param {{ limit?: number }} [options]
 */
export function createEventLog({ limit = DEFAULT_LIMIT } = {}) {
  /** @type {Map<string, EventLike>} eventId → event, oldest first */
  const events = new Map();
  /** @type {Map<string, EventLike[]>} taskId → its events, oldest first: the page asks for one task's often */
  const byTask = new Map();
  /** @type {Set<(event: EventLike) => void>} */
  const listeners = new Set();
  /** @type {Map<string, McpServerStatus>} "tenant\nserver" → its latest status: kept apart, so a server's status outlives the event cap */
  const mcpServers = new Map();
  let counter = 0;

  /** Adds an event; false when it was seen before. @param {EventLike} event */
  function add(event) {
    if (events.has(event.eventId)) return false;
    events.set(event.eventId, event);
    noteMcpServer(mcpServers, event);
    if (event.taskId) {
      const list = byTask.get(event.taskId);
      if (list) list.push(event);
      else byTask.set(event.taskId, [event]);
    }
    if (events.size > limit) {
      const [oldestId, oldest] = /** @type {[string, EventLike]} */ (events.entries().next().value);
      events.delete(oldestId);
      const same = oldest.taskId ? byTask.get(oldest.taskId) : undefined;
      if (same) {
        same.shift();
        if (same.length === 0) byTask.delete(/** @type {string} */ (oldest.taskId));
      }
    }
    for (const listener of listeners) {
      try {
        listener(event);
      } catch {
        // One listener's failure (a closed page, a terminal gone) is no reason to drop the event for the others.
      }
    }
    return true;
  }

  /**
   * Records what the dev gatekeeper or the console itself saw, in the
   * shape of an event (its own `type`, so it is never taken for the Worker's).
   * @param {string} name
   * @param {{ tenant?: string, taskId?: string }} scope
   * @param {Record<string, unknown>} data
   * @param {Date} [at]
   */
  function note(name, scope, data, at = new Date()) {
    return add({ type: LOCAL_TYPE, v: 1, event: name, eventId: `local-${Date.now().toString(36)}-${++counter}`, at: at.toISOString(), ...scope, data });
  }

  return {
    add,
    note,
    /** Every event of one task, in time order. @param {string} taskId */
    forTask: (taskId) => inTimeOrder(byTask.get(taskId) ?? []),
    /** The newest `count` events, in time order. */
    recent: (count = 50) => inTimeOrder([...events.values()].slice(-count)),
    /** Each tenant's MCP servers as their latest `mcp.server` event says, by tenant then server. */
    mcpServers: () => [...mcpServers.values()].sort((a, b) => a.tenant.localeCompare(b.tenant) || a.server.localeCompare(b.server)),
    /** @param {(event: EventLike) => void} listener @returns {() => void} stops it */
    subscribe: (listener) => {
      listeners.add(listener);
      return () => void listeners.delete(listener);
    },
    get size() {
      return events.size;
    },
  };
}

/**
 * Takes an `mcp.server` event of the Worker's into `servers`, unless an
 * event of a later time said otherwise already. Each caller's object
 * connects on its own; the console shows the latest word of any of them.
 * @param {Map<string, McpServerStatus>} servers
 * @param {EventLike} event
 */
function noteMcpServer(servers, event) {
  if (event.type !== EVENT_LINE_TYPE || event.event !== "mcp.server" || typeof event.data.server !== "string") return;
  const tenant = typeof event.tenant === "string" ? event.tenant : "";
  const key = `${tenant}\n${event.data.server}`;
  const known = servers.get(key);
  if (known && Date.parse(known.at) > Date.parse(event.at)) return;
  const { server, status, tools, reason } = event.data;
  servers.set(key, {
    tenant,
    server,
    status: String(status ?? "unknown"),
    tools: number(tools),
    ...(typeof reason === "string" && reason !== "" ? { reason } : {}),
    at: event.at,
  });
}

/** Stable: events with the same `at` keep their arrival order. @param {EventLike[]} events */
function inTimeOrder(events) {
  return events
    .map((event, index) => ({ event, index, time: Date.parse(event.at) }))
    .sort((a, b) => (a.time || 0) - (b.time || 0) || a.index - b.index)
    .map(({ event }) => event);
}

/**
 * An event as the page shows it in a timeline: when, which event, its group
 * (`model`, `push`, `hitl`…, for its colour), who saw it, and what it says.
 * @param {EventLike} event
 * @returns {TimelineEntry}
 */
export function timelineEntry(event) {
  return {
    at: event.at,
    event: event.event,
    group: event.event.split(".")[0] ?? "other",
    source: event.type === EVENT_LINE_TYPE ? "worker" : "gatekeeper",
    text: describeData(event),
    ...(event.tenant ? { tenant: event.tenant } : {}),
    ...(event.taskId ? { taskId: event.taskId } : {}),
  };
}

/**
 * What a task's model calls cost, from its events. Each `model.call` counts;
 * a turn whose model calls were not seen (the console started later) counts
 * by its `turn.finished` totals instead, never both.
 * @param {EventLike[]} events  one task's
 * @returns {Usage}
 */
export function usageOf(events) {
  const usage = { modelCalls: 0, inputTokens: 0, outputTokens: 0, toolCalls: 0, modelMs: 0 };
  const callsByTurn = new Map();
  for (const event of events) {
    if (event.type !== EVENT_LINE_TYPE) continue;
    if (event.event === "model.call") {
      usage.modelCalls++;
      usage.inputTokens += number(event.data.inputTokens);
      usage.outputTokens += number(event.data.outputTokens);
      usage.modelMs += number(event.data.durationMs);
      callsByTurn.set(event.turnId, (callsByTurn.get(event.turnId) ?? 0) + 1);
    } else if (event.event === "tool.call") {
      usage.toolCalls++;
    }
  }
  for (const event of events) {
    if (event.type !== EVENT_LINE_TYPE || event.event !== "turn.finished" || callsByTurn.has(event.turnId)) continue;
    usage.modelCalls += number(event.data.modelCalls);
    usage.inputTokens += number(event.data.inputTokens);
    usage.outputTokens += number(event.data.outputTokens);
  }
  return usage;
}

const number = (value) => (typeof value === "number" && Number.isFinite(value) ? value : 0);

/** The deliveries given up for a task, from its metadata (docs/gatekeeper.md "Dead letters and re-delivery"). */
export function deadLettersOf(task) {
  const letters = task?.metadata?.[DEAD_LETTERS_KEY];
  return Array.isArray(letters) ? letters.filter((l) => l && typeof l === "object") : [];
}

/**
 * A task as the lists show it: ids, state, when it last changed, what was
 * asked (its first user message), and the request it waits on, if any.
 * @param {string} tenant
 * @param {Record<string, any>} task  the wire JSON of ListTasks or GetTask
 */
export function taskSummary(tenant, task) {
  const state = String(task?.status?.state ?? "TASK_STATE_UNSPECIFIED");
  const asked = (task?.history ?? []).find((m) => m?.role === "ROLE_USER");
  return {
    tenant,
    id: String(task?.id ?? ""),
    contextId: String(task?.contextId ?? ""),
    state,
    terminal: TERMINAL_STATE_NAMES.includes(state),
    updatedAt: String(task?.status?.timestamp ?? ""),
    asked: messageText(asked),
    waiting: state === "TASK_STATE_INPUT_REQUIRED",
    deadLetters: deadLettersOf(task).length,
  };
}

/**
 * @typedef {{ id: string, kind: string, status: string, message: string, progress?: number, total?: number, startedAt: string, updatedAt: string }} TrackerView
 * @typedef {{ trackers: TrackerView[], aggregate?: { progress: number, total?: number, message?: string } }} ProgressView
 */

/**
 * The progress a working task shows in its status (docs/protocol.md
 * "Progress"): the latest snapshot's trackers, each with its kind (its id's
 * prefix), and the aggregate; none once the task left working.
 * @param {Record<string, any>} task  GetTask's wire JSON
 * @returns {ProgressView | undefined}
 */
function progressOf(task) {
  const payload = task?.status?.state === "TASK_STATE_WORKING" ? task.status.message?.metadata?.[PROGRESS_EXTENSION] : undefined;
  if (!payload || !Array.isArray(payload.trackers)) return undefined;
  const num = (value) => (typeof value === "number" && Number.isFinite(value) ? value : undefined);
  const trackers = payload.trackers
    .filter((t) => typeof t?.id === "string")
    .map((t) => {
      const progress = num(t.progress);
      const total = num(t.total);
      return {
        id: t.id,
        kind: t.id.split(":", 1)[0],
        status: String(t.status ?? "running"),
        message: String(t.message ?? ""),
        ...(progress === undefined ? {} : { progress }),
        ...(total === undefined ? {} : { total }),
        startedAt: String(t.startedAt ?? ""),
        updatedAt: String(t.updatedAt ?? ""),
      };
    });
  const aggregate = payload.aggregate && num(payload.aggregate.progress) !== undefined ? payload.aggregate : undefined;
  return {
    trackers,
    ...(aggregate
      ? {
          aggregate: {
            progress: aggregate.progress,
            ...(num(aggregate.total) === undefined ? {} : { total: aggregate.total }),
            ...(typeof aggregate.message === "string" ? { message: aggregate.message } : {}),
          },
        }
      : {}),
  };
}

/**
 * One task in full, as the detail view shows it: the summary, the request
 * it waits on, its progress while it works, its messages, its answer, its
 * dead letters, and its waterfall, timeline and usage from the events.
 * @param {string} tenant
 * @param {Record<string, any>} task  GetTask's wire JSON
 * @param {EventLike[]} events  the task's, in time order
 */
export function taskDetail(tenant, task, events) {
  const summary = taskSummary(tenant, task);
  return {
    ...summary,
    request: summary.waiting ? hitlRequestOf(task.status?.message) : undefined,
    reply: summary.terminal ? replyText(task) : "",
    statusText: messageText(task?.status?.message),
    progress: progressOf(task),
    messages: (task?.history ?? []).map((m) => ({ role: m?.role === "ROLE_AGENT" ? "agent" : "user", text: messageText(m) })),
    deadLetterList: deadLettersOf(task),
    usage: usageOf(events),
    waterfall: waterfallOf(events, { traceId: typeof task?.metadata?.[TRACE_KEY] === "string" ? task.metadata[TRACE_KEY] : undefined }),
    timeline: events.map(timelineEntry),
  };
}

/**
 * The tasks grouped by conversation (tenant and contextId), the conversation
 * with the latest change first, and each one's tasks newest first.
 * @param {ReturnType<typeof taskSummary>[]} tasks
 */
export function conversationsOf(tasks) {
  /** @type {Map<string, { tenant: string, contextId: string, updatedAt: string, tasks: ReturnType<typeof taskSummary>[] }>} */
  const byKey = new Map();
  for (const task of tasks) {
    const key = `${task.tenant}\n${task.contextId}`;
    let conversation = byKey.get(key);
    if (!conversation) byKey.set(key, (conversation = { tenant: task.tenant, contextId: task.contextId, updatedAt: "", tasks: [] }));
    conversation.tasks.push(task);
    if (task.updatedAt > conversation.updatedAt) conversation.updatedAt = task.updatedAt;
  }
  const newestFirst = (a, b) => (a.updatedAt < b.updatedAt ? 1 : a.updatedAt > b.updatedAt ? -1 : 0);
  const conversations = [...byKey.values()];
  for (const conversation of conversations) conversation.tasks.sort(newestFirst);
  return conversations.sort(newestFirst);
}
