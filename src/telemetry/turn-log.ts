import type { AgentEvent, EventCatalogue, EventLine, EventName } from "./catalogue.js";
import { jsonLogSink, type EventSink } from "./sinks.js";

/** Occurrences by name or outcome. */
type Tally = Record<string, number>;

/**
 * What one turn did, folded from its events as they were emitted: the
 * `summary` of its wide `turn.finished` log line (docs/telemetry.md "The log
 * line"). Counts, sums and tallies only, like the events it folds.
 */
export interface TurnSummary {
  /** This isolate saw the turn only from part way (an eviction, a restart): what its events said before is missing. */
  partial?: true;
  rounds: { count: number; outcomes: Tally; durationMs: number };
  models: {
    calls: number;
    models: Tally;
    outcomes: Tally;
    fallbacks: number;
    retries: number;
    steps: number;
    inputTokens: number;
    outputTokens: number;
    durationMs: number;
  };
  tools: { calls: number; tools: Tally; outcomes: Tally; redacted: number; durationMs: number };
  subtasks: { started: number; finished: number; types: Tally; outcomes: Tally };
  hitl: { asked: number; answered: number; expired: number };
  compactions: number;
  pushes: { attempts: number; outcomes: Tally; statuses: Tally; durationMs: number };
}

/** The wide line: `turn.finished` as the log gets it, with its turn's summary. */
export type TurnLogLine = EventLine<"turn.finished", EventCatalogue["turn.finished"] & { summary: TurnSummary }>;

const emptySummary = (): TurnSummary => ({
  rounds: { count: 0, outcomes: {}, durationMs: 0 },
  models: { calls: 0, models: {}, outcomes: {}, fallbacks: 0, retries: 0, steps: 0, inputTokens: 0, outputTokens: 0, durationMs: 0 },
  tools: { calls: 0, tools: {}, outcomes: {}, redacted: 0, durationMs: 0 },
  subtasks: { started: 0, finished: 0, types: {}, outcomes: {} },
  hitl: { asked: 0, answered: 0, expired: 0 },
  compactions: 0,
  pushes: { attempts: 0, outcomes: {}, statuses: {}, durationMs: 0 },
});

const count = (tally: Tally, key: string | number) => {
  tally[key] = (tally[key] ?? 0) + 1;
};

/** Adds one event's figures to the summary of its turn (events that carry none leave it as it is). */
function fold(s: TurnSummary, event: AgentEvent): void {
  switch (event.event) {
    case "round.finished":
      s.rounds.count++;
      count(s.rounds.outcomes, event.data.outcome);
      s.rounds.durationMs += event.data.durationMs;
      return;
    case "model.call": {
      const m = s.models;
      const d = event.data;
      m.calls++;
      count(m.models, d.model);
      count(m.outcomes, d.outcome);
      m.fallbacks += d.fallback ? 1 : 0;
      m.retries += d.retries;
      m.steps += d.steps;
      m.inputTokens += d.inputTokens;
      m.outputTokens += d.outputTokens;
      m.durationMs += d.durationMs;
      return;
    }
    case "tool.call":
      s.tools.calls++;
      count(s.tools.tools, event.data.tool);
      count(s.tools.outcomes, event.data.outcome);
      s.tools.redacted += event.data.redacted ? 1 : 0;
      s.tools.durationMs += event.data.durationMs;
      return;
    case "subtask.started":
      s.subtasks.started++;
      count(s.subtasks.types, event.data.type);
      return;
    case "subtask.finished":
      s.subtasks.finished++;
      count(s.subtasks.outcomes, event.data.outcome);
      return;
    case "hitl.asked":
    case "hitl.answered":
    case "hitl.expired":
      s.hitl[event.event.slice(5) as "asked" | "answered" | "expired"]++;
      return;
    case "conversation.compacted":
      s.compactions++;
      return;
    case "push.attempt":
      s.pushes.attempts++;
      count(s.pushes.outcomes, event.data.outcome);
      count(s.pushes.statuses, event.data.status);
      s.pushes.durationMs += event.data.durationMs;
      return;
    default:
      return;
  }
}

/** Events that keep a line of their own by default: how a turn began, refusals, failures, give-ups, an operator's or the reconciler's doing. */
const OWN_LINE = new Set<EventName | `plugin.${string}`>([
  "task.accepted",
  "task.continued",
  "task.canceled",
  "push.dead_lettered",
  "push.superseded",
  "push.redelivered",
  "reconciler.action",
  "quota.exceeded",
  "edge.refused",
  "agent.start_failed",
  "erasure.done",
]);

const failedPush = (event: AgentEvent) => event.event === "push.attempt" && (event.data.outcome === "transient" || event.data.outcome === "permanent");

/** Whether the event is written on its own in the default mode (a failed model call or push too, besides being folded). */
const ownLine = (event: AgentEvent): boolean =>
  !event.taskId ||
  OWN_LINE.has(event.event) ||
  event.event.startsWith("plugin.") ||
  (event.event === "model.call" && event.data.outcome === "error") ||
  failedPush(event);

/** Turns folded at once: a turn parked for days, or one whose end this isolate never sees, must not hold memory for ever. */
const MAX_TURNS = 256;

/**
 * The caller's object's log (docs/telemetry.md "Which lines"): with
 * `eachEvent`, one line per event; otherwise a turn's events are folded in
 * memory into its wide `turn.finished` line, and only the events of
 * {@link ownLine} are written as they come. A turn whose end the Workflow
 * announces is handed over (`handOver`, then `take`): the Workflow adds its
 * first push attempts and writes it. Every event still reaches the other
 * sinks and the subscribers: this is the log's sink only.
 */
export class TurnLog {
  readonly #turns = new Map<string, TurnSummary>();
  readonly #handing = new Set<string>();
  readonly #held = new Map<string, TurnLogLine>();

  constructor(
    readonly eachEvent: () => boolean,
    private readonly write: EventSink = jsonLogSink,
  ) {}

  readonly sink: EventSink = (event) => {
    if (this.eachEvent()) return this.write(event);
    const taskId = event.taskId;
    if (taskId && event.event === "turn.finished") {
      const line = this.wide(event, taskId);
      if (this.#handing.delete(taskId)) this.#held.set(taskId, line);
      else this.write(line);
      return;
    }
    if (ownLine(event)) this.write(event);
    if (taskId) fold(this.#summaryOf(taskId, event), event);
  };

  /** The task's next `turn.finished` is kept for {@link take} instead of written. */
  handOver(taskId: string): void {
    if (!this.eachEvent()) this.#handing.add(taskId);
  }

  /** The wide line kept for the task (once), if one is. */
  take(taskId: string): TurnLogLine | undefined {
    const line = this.#held.get(taskId);
    this.#held.delete(taskId);
    this.#handing.delete(taskId);
    return line;
  }

  /** Writes the wide line kept for the task, if one is (nobody took it). */
  release(taskId: string): void {
    const line = this.take(taskId);
    if (line) this.write(line);
  }

  /** `finished` (a `turn.finished` line, emitted or rebuilt) as the wide line, with what this isolate folded of the turn (dropped here). */
  wide(finished: AgentEvent & { event: "turn.finished" }, taskId: string): TurnLogLine {
    const summary = this.#turns.get(taskId) ?? { ...emptySummary(), partial: true as const };
    this.#turns.delete(taskId);
    return { ...finished, data: { ...finished.data, summary } };
  }

  #summaryOf(taskId: string, event: AgentEvent): TurnSummary {
    let summary = this.#turns.get(taskId);
    if (summary) return summary;
    // A turn seen from its accept or its start is seen whole; from anything later, in part.
    summary = event.event === "task.accepted" || event.event === "turn.started" ? emptySummary() : { ...emptySummary(), partial: true };
    if (this.#turns.size >= MAX_TURNS) this.#turns.delete(this.#turns.keys().next().value!);
    this.#turns.set(taskId, summary);
    return summary;
  }
}

/**
 * The turn Workflow's log of one turn: with `eachEvent`, one line per event;
 * otherwise the push attempts made while a wide line handed over by the
 * object is open (the first ones, in the step that finished the turn) are
 * folded into it, and any other attempt is written only when it failed. Its
 * other events (superseded pushes) keep their line.
 */
export class PushLog {
  #open: TurnLogLine | undefined;

  constructor(
    private readonly eachEvent: boolean,
    private readonly write: EventSink = jsonLogSink,
  ) {}

  readonly sink: EventSink = (event) => {
    if (this.eachEvent || event.event !== "push.attempt") return this.write(event);
    if (this.#open) fold(this.#open.data.summary, event);
    else if (failedPush(event)) this.write(event);
  };

  /** Push attempts from now on are folded into `line`, the object's hand-over as it crossed the boundary (none in the per-event mode). */
  open(line: { readonly event: "turn.finished" } | undefined): void {
    this.#open = isTurnLogLine(line) ? line : undefined;
  }

  /** Writes the open wide line (the caller awaits the telemetry's flush first: every attempt is in). */
  close(): void {
    if (this.#open) this.write(this.#open);
    this.#open = undefined;
  }
}

/** A wide line as `TurnLog` makes it, read back after crossing the object's boundary (src/boundary keeps it opaque). */
function isTurnLogLine(line: { readonly event: "turn.finished" } | undefined): line is TurnLogLine {
  const summary = (line as { data?: { summary?: Partial<TurnSummary> } } | undefined)?.data?.summary;
  return typeof summary?.pushes === "object" && summary.pushes !== null;
}
