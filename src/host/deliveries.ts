import { taskNotFound } from "../a2a/errors.js";
import { DEAD_LETTERS_KEY } from "../a2a/wire.js";
import {
  accepted,
  refused,
  type DeadLetter,
  type Delivery,
  type PushOut,
  type PushPlan,
  type PushTargets,
  type RedeliveryOutcome,
  type RedeliveryTarget,
  type StatusUpdateJson,
  type StreamEventJson,
  type TaskJson,
  type TurnParams,
  type Verdict,
} from "../boundary/index.js";
import type { AgentDB } from "../db/agent-db.js";
import type { ObjectParts } from "./lifecycle.js";
import { configsOf, pushConfigOf } from "./push-config-ids.js";
import { stateOfEvent, statusUpdateOf } from "./task-events.js";
import { taskOf } from "../boundary/task-status.js";
import { shapeTask } from "./task-wire.js";
import { redeliver } from "./turn-workflows.js";

// What the caller's object knows of its tasks' pushes (docs/protocol.md
// "Events, streams and pushes"): which event goes where, what a push sends,
// and the dead letters a given-up delivery leaves on the task.

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

/** The turn Workflow's delivery calls: each reports the turn alive, then reads or records its pushes. */
export class Deliveries {
  constructor(private readonly parts: ObjectParts) {}

  of(taskId: string): Verdict<Delivery> {
    const { db, reports } = this.parts;
    reports.reported(taskId);
    const row = db.tasks.get(taskId);
    if (!row) return refused(taskNotFound(taskId));
    const task = taskOf(row);
    const latest = db.events.latest(taskId, "status");
    // A task stored before events were recorded has none: its status as it is, at seq 0.
    const status = latest
      ? { seq: latest.seq, statusUpdate: (JSON.parse(latest.eventJson) as { statusUpdate: StatusUpdateJson }).statusUpdate }
      : { seq: 0, statusUpdate: statusUpdateOf(task) };
    return accepted({ task, configs: configsOf(db, taskId), status });
  }

  /** Delivery in backoff is progress: alive until its next attempt is due. */
  progress(taskId: string, nextAttemptWithinMs: number): Verdict<null> {
    this.parts.reports.reported(taskId, Math.max(0, nextAttemptWithinMs));
    return accepted(null);
  }

  async delivered(taskId: string, instanceId: string): Promise<Verdict<null>> {
    // Configs set while this turn ran, waiting for dead letters: their re-delivery starts now (the turn's record names the deployment).
    const closing = this.parts.db.turns.close(taskId, instanceId);
    this.parts.reports.closed(taskId);
    if (closing) await redeliver(this.parts, taskId, JSON.parse(closing) as TurnParams);
    // The schedule stays: the next pass finds nothing open and stops it. A caller's turns back to
    // back keep one schedule instead of arming and cancelling it per turn (a dozen SQL statements).
    return accepted(null);
  }

  /** The task's latest status event and its push configs. */
  targets(taskId: string): Verdict<PushTargets> {
    const { db, reports } = this.parts;
    reports.reported(taskId);
    if (!db.tasks.get(taskId)) return refused(taskNotFound(taskId));
    const seq = db.events.latest(taskId, "status")?.seq ?? 0;
    return accepted({ seq, configIds: db.pushConfigs.all(taskId).map((row) => row.id) });
  }

  /**
   * The push of event `seq` to one config as it goes out now: a terminal
   * status is the task as it is (`{task}`), any other the event's own
   * `{statusUpdate}`.
   */
  push(taskId: string, configId: string, seq: number): Verdict<PushOut> {
    const { db, reports } = this.parts;
    reports.reported(taskId);
    const row = db.tasks.get(taskId);
    if (!row) return refused(taskNotFound(taskId));
    const config = db.pushConfigs.get(taskId, configId);
    if (!config) return accepted({ gone: true });
    const event = db.events.at(taskId, seq);
    const state = event && stateOfEvent(event);
    let body: StreamEventJson;
    if (!event || !state || db.tasks.isFinal(state)) body = terminalPush(taskOf(row));
    else body = { statusUpdate: (JSON.parse(event.eventJson) as { statusUpdate: StatusUpdateJson }).statusUpdate };
    return accepted({ config: pushConfigOf(config.configJson), body });
  }

  /** Deliveries given up: recorded on the task (one letter per config and event; a newer one replaces it). */
  deadLetter(taskId: string, letters: DeadLetter[]): Verdict<null> {
    if (letters.length > 0) {
      const key = (l: DeadLetter) => `${l.configId}\n${l.seq}`;
      const replaced = new Set(letters.map(key));
      rewriteDeadLetters(this.parts.db, taskId, (l) => !replaced.has(key(l)), letters, Date.now());
    }
    for (const { configId, seq, status, at } of letters) {
      this.parts.events.emit("push.dead_lettered", taskId, { configId, seq, status }, ["dead letter", configId, seq, at]);
    }
    return accepted(null);
  }

  /**
   * The configs queued for the task's dead letters, each with the events to
   * send it. Nothing goes to a config after a later event of the task was
   * delivered to it: a config that was sent the finished task's terminal event
   * (it existed when that event was written, and holds no dead letter of it)
   * is sent nothing older, which is superseded instead.
   */
  redeliveryTargets(taskId: string): Verdict<RedeliveryTarget[]> {
    const { db, reports } = this.parts;
    reports.reported(taskId);
    const queued = db.redeliveries.of(taskId);
    const row = queued.length > 0 ? db.tasks.get(taskId) : undefined;
    if (!row) return accepted([]);
    const terminal = db.tasks.isFinal(row.state) ? db.events.latest(taskId, "status") : undefined;
    const letters = deadLettersOf(taskOf(row));
    return accepted(
      queued.map(({ configId, seqs }) => {
        const config = db.pushConfigs.get(taskId, configId);
        const sentLast =
          terminal !== undefined &&
          config !== undefined &&
          config.createdAt <= terminal.createdAt &&
          !letters.some((l) => l.configId === configId && l.seq === terminal.seq);
        const superseded = sentLast ? seqs.filter((seq) => seq < terminal.seq) : [];
        return { configId, seqs: seqs.filter((seq) => !superseded.includes(seq)), superseded };
      }),
    );
  }

  /**
   * One config's re-delivery ended: an event it delivered, or that was
   * superseded for it, is no longer a dead letter (for any config), one it gave
   * up on is recorded under it instead.
   */
  redelivered(taskId: string, outcome: RedeliveryOutcome): Verdict<null> {
    const { db, reports, events } = this.parts;
    reports.reported(taskId);
    const instanceId = db.turns.get(taskId)?.instanceId ?? "";
    const settled = new Set([...outcome.delivered, ...outcome.givenUp.map((l) => l.seq), ...outcome.superseded]);
    rewriteDeadLetters(db, taskId, (l) => !settled.has(l.seq), outcome.givenUp, Date.now());
    db.redeliveries.done(taskId, outcome.configId);
    const { configId, delivered, givenUp } = outcome;
    events.emit("push.redelivered", taskId, { configId, delivered: delivered.length, givenUp: givenUp.length }, ["redelivered", instanceId, configId]);
    return accepted(null);
  }
}
