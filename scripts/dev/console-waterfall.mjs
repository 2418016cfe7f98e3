// A task's turns as a waterfall (the dev console's picture of a turn): each
// turn, model call, tool call (an MCP server's, named `<server>__<tool>`, apart),
// subtask, question to a human and push attempt as a bar from its start to its
// end on one time axis, failures marked, from the Worker's events
// (docs/telemetry.md). Plain data and pure functions: console-model.mjs puts it
// in a task's detail, console/page.js draws it, test/node/console.test.mjs checks it.
import { EVENT_LINE_TYPE } from "../../src/telemetry/catalogue.ts";
import { answerLabel } from "./session.mjs";

/**
 * @typedef {import("./events.mjs").EventLike} EventLike
 * @typedef {"turn" | "model" | "tool" | "mcp" | "subtask" | "question" | "push"} BarKind
 * @typedef {{ kind: BarKind, label: string, detail: string, startMs: number, endMs: number, failed: boolean, running: boolean, nested: boolean }} Bar
 *   `startMs`/`endMs` from the axis' start; `running`: no end seen yet (it ends now); `nested`: a subtask's own model call
 * @typedef {{ traceId?: string, startedAt?: string, spanMs: number, bars: Bar[] }} Waterfall
 */

const at = (event) => Date.parse(event.at);
const number = (value) => (typeof value === "number" && Number.isFinite(value) ? value : 0);
const short = (id) => String(id ?? "").slice(0, 8);

/**
 * The waterfall of one task's events (in time order); `now` ends what is still running.
 * @param {EventLike[]} events
 * @param {{ now?: number, traceId?: string }} [options]  `traceId`: the task's, from its metadata (else its events')
 * @returns {Waterfall}
 */
export function waterfallOf(events, { now = Date.now(), traceId } = {}) {
  const worker = events.filter((e) => e.type === EVENT_LINE_TYPE && Number.isFinite(at(e)));
  /** @type {Array<Omit<Bar, "startMs" | "endMs"> & { start: number, end: number, order: number }>} */
  const bars = [];
  const add = (kind, label, detail, start, end, { failed = false, running = false, nested = false } = {}) =>
    bars.push({ kind, label, detail, start, end: Math.max(start, end), failed, running, nested, order: bars.length });
  /** Bars waiting for the event that ends them, by what names them. */
  const open = new Map();
  const begin = (key, make) => open.set(key, make);
  const end = (key) => {
    const made = open.get(key);
    open.delete(key);
    return made;
  };

  for (const event of worker) {
    const d = event.data ?? {};
    const time = at(event);
    const took = (ms) => time - number(ms);
    switch (event.event) {
      case "task.accepted":
      case "turn.started":
        if (event.turnId && !open.has(`turn ${event.turnId}`)) begin(`turn ${event.turnId}`, { start: time, turnId: event.turnId });
        break;
      case "turn.finished": {
        const turn = end(`turn ${event.turnId}`);
        const state = String(d.state ?? "")
          .replace(/^TASK_STATE_/, "")
          .toLowerCase();
        add("turn", `turn ${short(event.turnId)}`, `${state}, ${number(d.modelCalls)} model calls`, turn?.start ?? took(d.durationMs), time, {
          failed: state !== "completed",
        });
        break;
      }
      case "model.call":
        add(
          "model",
          `model ${d.model ?? "?"}`,
          `round ${d.round}: ${d.outcome}, ${number(d.inputTokens)} in / ${number(d.outputTokens)} out tokens`,
          took(d.durationMs),
          time,
          {
            failed: d.outcome !== "ok",
            nested: typeof d.subtaskId === "string",
          },
        );
        break;
      case "tool.started":
        begin(`tool ${d.callId ?? `${d.round} ${d.tool}`}`, { start: time, tool: d.tool, round: d.round });
        break;
      case "tool.call": {
        const started = end(`tool ${d.callId ?? `${d.round} ${d.tool}`}`);
        const kind = String(d.tool ?? "").includes("__") ? "mcp" : "tool";
        add(kind, String(d.tool ?? "?"), `round ${d.round}: ${d.outcome}`, started?.start ?? took(d.durationMs), time, {
          failed: d.outcome === "error" || d.outcome === "interrupted",
        });
        break;
      }
      case "subtask.started":
        begin(`subtask ${d.subtaskId}`, { start: time, type: d.type });
        break;
      case "subtask.finished": {
        const started = end(`subtask ${d.subtaskId}`);
        add("subtask", `subtask ${d.type ?? "?"}`, `${short(d.subtaskId)}: ${d.outcome}`, started?.start ?? took(d.durationMs), time, {
          failed: d.outcome !== "done",
        });
        break;
      }
      case "hitl.asked":
        begin(`question ${d.requestId}`, { start: time, requestKind: d.requestKind });
        break;
      case "hitl.answered":
      case "hitl.expired": {
        const asked = end(`question ${d.requestId}`);
        const expired = event.event === "hitl.expired";
        const answer = expired ? "expired" : answerLabel({ optionId: d.optionId }) || String(d.outcome ?? "answered");
        add("question", `${asked?.requestKind ?? "question"}: ${answer}`, `request ${short(d.requestId)}`, asked?.start ?? time, time, { failed: expired });
        break;
      }
      case "push.attempt":
        add("push", `push ${d.configId ?? "?"}`, `seq ${d.seq}, attempt ${d.attempt}: ${d.outcome} (HTTP ${d.status})`, took(d.durationMs), time, {
          failed: d.outcome !== "delivered",
        });
        break;
    }
  }
  // What began and has not ended runs until now.
  for (const [key, made] of open) {
    const kind = /** @type {BarKind} */ (key.split(" ")[0]);
    const label =
      kind === "turn"
        ? `turn ${short(made.turnId)}`
        : kind === "tool"
          ? String(made.tool ?? "?")
          : kind === "subtask"
            ? `subtask ${made.type ?? "?"}`
            : `${made.requestKind}: waiting`;
    add(kind === "tool" && String(made.tool ?? "").includes("__") ? "mcp" : kind, label, "running", made.start, Math.max(made.start, now), { running: true });
  }

  const first = Math.min(...bars.map((b) => b.start), ...worker.map(at));
  const last = Math.max(...bars.map((b) => b.end), ...worker.map(at));
  const origin = Number.isFinite(first) ? first : now;
  const ordered = bars.sort((a, b) => a.start - b.start || rank(a.kind) - rank(b.kind) || a.order - b.order);
  const trace = traceId ?? traceOf(worker);
  return {
    ...(trace ? { traceId: trace } : {}),
    ...(Number.isFinite(first) ? { startedAt: new Date(first).toISOString() } : {}),
    spanMs: Number.isFinite(last) ? Math.max(0, last - origin) : 0,
    bars: ordered.map(({ start, end: stop, order: _order, ...bar }) => ({ ...bar, startMs: start - origin, endMs: stop - origin })),
  };
}

/** At the same start the enclosing bar goes first: the turn, then a subtask or question, then what runs inside. */
const rank = (kind) => ["turn", "subtask", "question", "model", "tool", "mcp", "push"].indexOf(kind);

/** The trace id the task's events name (docs/telemetry.md "Trace context"). */
const traceOf = (events) => events.find((e) => typeof e.traceId === "string")?.traceId;
