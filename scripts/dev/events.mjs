// The platform's events as `npm start` sees them: the Worker writes each one
// as a JSON line on its log (docs/telemetry.md "The log line",
// src/telemetry/catalogue.ts), and wrangler passes its console.log output
// through to stdout unchanged. The dev console and `--verbose` read them
// here: one parser, and one readable sentence per event for both.
import { EVENT_LINE_TYPE } from "../../src/telemetry/catalogue.ts";
import { answerLabel } from "./session.mjs";

/**
 * @typedef {import("../../src/telemetry/catalogue.ts").AgentEvent} AgentEvent
 * @typedef {{ type: string, v: number, event: string, eventId: string, at: string, tenant?: string, caller?: string, taskId?: string, contextId?: string, turnId?: string, data: Record<string, any> }} EventLike
 *   an event as read off a line: the catalogue's shape, held loosely (a newer Worker may add events and fields)
 */

/** Terminal colour and cursor sequences: wrangler colours its own lines and may one day colour ours. */
const ANSI = /\u001b\[[0-9;?]*[A-Za-z]/g;
/** How many `{` of one line are tried: a prefix (a timestamp, a `[wrangler:…]` tag) holds few. */
const MAX_STARTS = 4;

/**
 * The event a line of the Worker's log carries, or undefined for any other
 * line. Tolerates what a log pipe may add around the JSON: colour codes, a
 * prefix, trailing blanks. Only a line of the catalogue's shape (`type`,
 * `v: 1`, `event`, `eventId`, `at`, `data`) counts.
 * @param {string} line
 * @returns {EventLike | undefined}
 */
export function parseEventLine(line) {
  if (typeof line !== "string" || !line.includes(EVENT_LINE_TYPE)) return undefined;
  const text = line.replace(ANSI, "").trim();
  let from = text.indexOf("{");
  for (let tries = 0; from >= 0 && tries < MAX_STARTS; tries++, from = text.indexOf("{", from + 1)) {
    let value;
    try {
      value = JSON.parse(text.slice(from));
    } catch {
      continue;
    }
    return isEvent(value) ? value : undefined;
  }
  return undefined;
}

/** @returns {value is EventLike} */
function isEvent(value) {
  return (
    value !== null &&
    typeof value === "object" &&
    value.type === EVENT_LINE_TYPE &&
    value.v === 1 &&
    typeof value.event === "string" &&
    typeof value.eventId === "string" &&
    typeof value.at === "string" &&
    value.data !== null &&
    typeof value.data === "object" &&
    !Array.isArray(value.data)
  );
}

const short = (id) => (typeof id === "string" ? id.slice(0, 8) : "?");
const plural = (n, word) => `${n} ${word}${n === 1 ? "" : "s"}`;
const ms = (n) => (typeof n === "number" ? (n >= 1000 ? `${(n / 1000).toFixed(1)} s` : `${Math.round(n)} ms`) : "? ms");
const tokens = (d) =>
  `${d.inputTokens ?? 0} in / ${d.outputTokens ?? 0} out tokens${d.cachedInputTokens ? ` (${d.cachedInputTokens} cached)` : ""}${d.reasoningTokens ? ` (${d.reasoningTokens} reasoning)` : ""}`;
const stateName = (s) =>
  String(s ?? "?")
    .replace(/^TASK_STATE_/, "")
    .toLowerCase()
    .replace(/_/g, " ");

/** What each catalogued event says, in a few words; the key is the event's name. */
const DETAILS = {
  "task.accepted": (d) => `message ${short(d.messageId)}${d.stream ? ", streaming" : ""}, ${plural(d.pushConfigs ?? 0, "push config")}${text(d.text)}`,
  "task.continued": (d) => `message ${short(d.messageId)} continues the task`,
  "task.canceled": (d) => `canceled (was ${stateName(d.from)})`,
  "turn.started": (d) => `instance ${short(d.instanceId)}`,
  "turn.finished": (d) => `${stateName(d.state)} after ${ms(d.durationMs)}: ${plural(d.modelCalls ?? 0, "model call")}, ${tokens(d)}${text(d.text)}`,
  "model.call": (d) =>
    `round ${d.round}, ${d.model}${d.fallback ? " (fallback)" : ""}: ${d.outcome}, ${plural(d.steps ?? 0, "step")}, ${tokens(d)}, ${ms(d.durationMs)}${d.retries ? `, ${plural(d.retries, "retry")}` : ""}`,
  "tool.started": (d) => `round ${d.round}, ${d.tool}: running`,
  "tool.call": (d) => `round ${d.round}, ${d.tool}: ${d.outcome}, ${ms(d.durationMs)}${d.redacted ? ", output redacted" : ""}`,
  "round.finished": (d) => `round ${d.round}: ${d.outcome}, ${ms(d.durationMs)}`,
  "subtask.started": (d) => `round ${d.round}, ${d.type} (subtask ${short(d.subtaskId)})`,
  "subtask.finished": (d) => `round ${d.round}, ${d.type} (subtask ${short(d.subtaskId)}): ${d.outcome}, ${ms(d.durationMs)}`,
  "hitl.asked": (d) => `${d.requestKind} ${short(d.requestId)}, open until ${d.expiresAt}`,
  "hitl.answered": (d) => `${short(d.requestId)}: ${answerLabel({ optionId: d.optionId }) || d.outcome}`,
  "hitl.expired": (d) => `${short(d.requestId)} expired unanswered`,
  "conversation.compacted": (d) => `${plural(d.folded ?? 0, "message")} folded into the summary, ${ms(d.durationMs)}`,
  "push.attempt": (d) => `config ${d.configId}, seq ${d.seq}, attempt ${d.attempt}: ${d.outcome} (HTTP ${d.status}), ${ms(d.durationMs)}`,
  "push.dead_lettered": (d) => `config ${d.configId}, seq ${d.seq} given up (HTTP ${d.status})`,
  "push.superseded": (d) => `config ${d.configId}, seq ${d.seq} superseded by a later event`,
  "push.redelivered": (d) => `config ${d.configId}: ${d.delivered} delivered, ${d.givenUp} given up`,
  "reconciler.action": (d) => `${d.action}, instance ${short(d.instanceId)}`,
  "quota.exceeded": (d) => `${d.limit}, retry after ${d.retryAfterSeconds} s`,
  "edge.refused": (d) => `${d.check}: HTTP ${d.status}, code ${d.code}${d.method ? `, ${d.method}` : ""}`,
  "agent.start_failed": (d) => `${d.code}: ${d.culpritKind} ${d.culpritName}`,
  "mcp.server": (d) =>
    `${d.server}: ${d.status}${d.reason ? ` (${d.reason})` : ""}${d.status === "ready" ? `, ${plural(d.tools ?? 0, "tool")}` : ""}, ${ms(d.durationMs)}`,
  // What the dev gatekeeper itself saw (not the Worker's): see console.mjs.
  "gatekeeper.push": (d) => `received a verified ${d.kind} push: ${stateName(d.state)}${d.traceId ? ` (trace ${d.traceId})` : ""}`,
  "gatekeeper.refused": (d) => `refused a push (${d.check}): ${d.message}`,
  "console.answered": (d) =>
    `answered ${short(d.requestId)} from the console: ${d.optionId ?? ""}${d.optionId && d.text ? ", " : ""}${d.text ? JSON.stringify(d.text) : ""}`,
  "console.redeliver": (d) => `asked for the dead letters again: push config ${d.configId} set`,
};

function text(value) {
  return typeof value === "string" ? `: ${JSON.stringify(value.length > 80 ? `${value.slice(0, 79)}…` : value)}` : "";
}

/** An event's own fields as `name=value`, for events the catalogue above does not know (a plugin's, a newer Worker's). */
function fieldsOf(data) {
  return Object.entries(data)
    .map(([name, value]) => `${name}=${typeof value === "string" ? value : JSON.stringify(value)}`)
    .join(" ");
}

/**
 * What an event says, without its name or scope: `round 1, primary-model:
 * ok, 1 step, 120 in / 14 out tokens, 412 ms`.
 * @param {EventLike} event
 */
export function describeData(event) {
  const detail = Object.hasOwn(DETAILS, event.event) ? DETAILS[/** @type {keyof typeof DETAILS} */ (event.event)] : undefined;
  try {
    if (detail) return detail(event.data);
  } catch {
    // A field of another shape than expected: show the fields as they are.
  }
  return fieldsOf(event.data);
}

/**
 * One readable line for the terminal (`npm start -- --verbose`): the time,
 * the event, where it happened (tenant, task) and what it says.
 * @param {EventLike} event
 */
export function describeEvent(event) {
  const time = /T(\d\d:\d\d:\d\d\.\d{3})/.exec(event.at)?.[1] ?? event.at;
  const where = [event.tenant, event.taskId ? `task ${short(event.taskId)}` : undefined].filter(Boolean).join(" ");
  return `${time}  ${event.event.padEnd(18)} ${where ? `${where}  ` : ""}${describeData(event)}`;
}
