import { DEAD_LETTERS_KEY } from "../a2a/wire.js";
import type {
  DeadLetter,
  PushOut,
  PushPlan,
  PushTargets,
  RedeliveryOutcome,
  RedeliveryTarget,
  StatusUpdateJson,
  StreamEventJson,
  TaskJson,
} from "../boundary/index.js";
import type { AgentDB } from "../db/agent-db.js";
import { pushConfigOf } from "./push-config-ids.js";
import { stateOfEvent } from "./task-events.js";
import { taskOf } from "../boundary/task-status.js";
import { shapeTask } from "./task-wire.js";

// What the caller's object knows of its tasks' pushes (docs/protocol.md
// "Events, streams and pushes"): which event goes where, what a push sends,
// and the dead letters a given-up delivery leaves on the task.

/** The task's latest status event and its push configs; `undefined` for an unknown task. */
export function pushTargetsOf(db: AgentDB, taskId: string): PushTargets | undefined {
  if (!db.tasks.get(taskId)) return undefined;
  const seq = db.events.latest(taskId, "status")?.seq ?? 0;
  return { seq, configIds: db.pushConfigs.all(taskId).map((row) => row.id) };
}

/**
 * A terminal task's push to every config, built once (`TurnStep` "finished"): from the task its
 * terminal write just stored, with that write's `seq`, or from the task as stored, at its latest status.
 */
export function pushPlanOf(db: AgentDB, task: TaskJson, seq = db.events.latest(task.id, "status")?.seq ?? 0): PushPlan {
  const configs = db.pushConfigs.all(task.id).map((config) => ({ id: config.id, config: pushConfigOf(config.configJson) }));
  return { seq, body: terminalPush(task), configs };
}

/** What a push of a terminal status carries: the task as it is, artifacts and all. */
const terminalPush = (task: TaskJson): StreamEventJson => ({ task: shapeTask(task, { includeArtifacts: true }) });

/**
 * The push of event `seq` to one config as it goes out now: a terminal
 * status is the task as it is (`{task}`), any other the event's own
 * `{statusUpdate}`. `undefined` for an unknown task.
 */
export function pushOf(db: AgentDB, taskId: string, configId: string, seq: number): PushOut | undefined {
  const row = db.tasks.get(taskId);
  if (!row) return undefined;
  const config = db.pushConfigs.get(taskId, configId);
  if (!config) return { gone: true };
  const event = db.events.at(taskId, seq);
  const state = event && stateOfEvent(event);
  let body: StreamEventJson;
  if (!event || !state || db.tasks.isFinal(state)) body = terminalPush(taskOf(row));
  else body = { statusUpdate: (JSON.parse(event.eventJson) as { statusUpdate: StatusUpdateJson }).statusUpdate };
  return { config: pushConfigOf(config.configJson), body };
}

/** The task's dead letters, as its metadata lists them. */
function deadLettersOf(task: Pick<TaskJson, "metadata">): DeadLetter[] {
  const letters = task.metadata?.[DEAD_LETTERS_KEY];
  return Array.isArray(letters) ? (letters as DeadLetter[]) : [];
}

/** Rewrites the task's dead letters: `keep` decides which stay, `add` follows them; retention counts from `now`. */
function rewriteDeadLetters(db: AgentDB, taskId: string, keep: (letter: DeadLetter) => boolean, add: readonly DeadLetter[], now: number): void {
  const row = db.tasks.get(taskId);
  if (!row) return;
  const task = taskOf(row);
  const letters = [...deadLettersOf(task).filter(keep), ...add].sort((a, b) => a.seq - b.seq || a.configId.localeCompare(b.configId));
  const { [DEAD_LETTERS_KEY]: _old, ...rest } = task.metadata ?? {};
  const metadata = letters.length ? { ...rest, [DEAD_LETTERS_KEY]: letters } : rest;
  const next: TaskJson = { ...task };
  if (Object.keys(metadata).length) next.metadata = metadata;
  else delete next.metadata;
  db.tasks.annotate(taskId, JSON.stringify(next), letters.length ? (add.length ? now : row.deadLetterAt) : null);
}

/** Deliveries given up: recorded on the task (one letter per config and event; a newer one replaces it). */
export function recordDeadLetters(db: AgentDB, taskId: string, letters: readonly DeadLetter[], now: number): void {
  if (letters.length === 0) return;
  const key = (l: DeadLetter) => `${l.configId}\n${l.seq}`;
  const replaced = new Set(letters.map(key));
  rewriteDeadLetters(db, taskId, (l) => !replaced.has(key(l)), letters, now);
}

/**
 * A push config was set on the task: if it has dead letters, they are queued
 * for that config, to be sent once. Returns whether anything was queued.
 */
export function queueRedelivery(db: AgentDB, taskId: string, configId: string): boolean {
  const row = db.tasks.get(taskId);
  if (!row) return false;
  const seqs = [...new Set(deadLettersOf(taskOf(row)).map((l) => l.seq))];
  if (seqs.length === 0) return false;
  db.redeliveries.add(taskId, configId, seqs);
  return true;
}

/**
 * The configs queued for the task's dead letters, each with the events to
 * send it. Nothing goes to a config after a later event of the task was
 * delivered to it: a config that was sent the finished task's terminal event
 * (it existed when that event was written, and holds no dead letter of it)
 * is sent nothing older, which is superseded instead.
 */
export function redeliveryTargetsOf(db: AgentDB, taskId: string): RedeliveryTarget[] {
  const queued = db.redeliveries.of(taskId);
  const row = queued.length > 0 ? db.tasks.get(taskId) : undefined;
  if (!row) return [];
  const terminal = db.tasks.isFinal(row.state) ? db.events.latest(taskId, "status") : undefined;
  const letters = deadLettersOf(taskOf(row));
  return queued.map(({ configId, seqs }) => {
    const config = db.pushConfigs.get(taskId, configId);
    const sentLast =
      terminal !== undefined &&
      config !== undefined &&
      config.createdAt <= terminal.createdAt &&
      !letters.some((l) => l.configId === configId && l.seq === terminal.seq);
    const superseded = sentLast ? seqs.filter((seq) => seq < terminal.seq) : [];
    return { configId, seqs: seqs.filter((seq) => !superseded.includes(seq)), superseded };
  });
}

/**
 * One config's re-delivery ended: an event it delivered, or that was
 * superseded for it, is no longer a dead letter (for any config), one it gave
 * up on is recorded under it instead.
 */
export function settleRedelivery(db: AgentDB, taskId: string, outcome: RedeliveryOutcome, now: number): void {
  const settled = new Set([...outcome.delivered, ...outcome.givenUp.map((l) => l.seq), ...outcome.superseded]);
  rewriteDeadLetters(db, taskId, (l) => !settled.has(l.seq), outcome.givenUp, now);
  db.redeliveries.done(taskId, outcome.configId);
}
