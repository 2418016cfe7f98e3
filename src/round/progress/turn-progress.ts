import type { ToolSet } from "ai";
import type { TraceContext } from "../../a2a/trace-context.js";
import type { ProgressWords, TrackerState } from "../../agent/policy.js";
import type { AgentDB } from "../../db/agent-db.js";
import type { AgentPlugin, ToolContext, ToolResultEvent } from "../../plugin/contract.js";
import type { LoopEvents, ProgressPushEnv, SubtaskTracking } from "../deps.js";
import { progressOutlet } from "./outlet.js";
import { ProgressPushes } from "./pushes.js";
import { ProgressRecorder } from "./recorder.js";
import { toolProgress, trackTools, type ToolTracking } from "./tools.js";

export interface TurnProgressDeps {
  db: Pick<AgentDB, "tasks" | "events" | "pushConfigs" | "writeProgress" | "subtasks">;
  words: ProgressWords;
  taskId: string;
  round: number;
  /** The deployment's origin: a push's `iss`. */
  origin: string;
  env: ProgressPushEnv;
  events: LoopEvents;
  redact: (event: ToolResultEvent) => Promise<unknown>;
  secrets: readonly (string | undefined)[];
  /** Push configs not pushed this round's progress (`TurnContext.held`). */
  held?: readonly string[];
  /** The turn's trace, which its pushes carry (`TurnContext.trace`). */
  trace?: TraceContext;
}

/**
 * The progress of one run of a round (docs/protocol.md "Progress"): its
 * tool calls, its subtasks and the round itself as trackers, written as the
 * task's progress and pushed to the configs that asked for it. The round is
 * a tracker from its first piece of work on (from its start, past round 1):
 * a one-round turn that calls no tool shows none. `finish` ends the round's
 * tracker, writes what is left and waits for the pushes in flight.
 */
export class TurnProgress implements SubtaskTracking {
  readonly #recorder: ProgressRecorder;
  readonly #pushes: ProgressPushes;
  readonly #tracking: ToolTracking;
  readonly #roundId: string;
  #roundStarted = false;

  constructor(private readonly deps: TurnProgressDeps) {
    this.#pushes = new ProgressPushes({ taskId: deps.taskId, origin: deps.origin, env: deps.env, events: deps.events, trace: deps.trace });
    const outlet = progressOutlet({ db: deps.db, taskId: deps.taskId, pushes: this.#pushes, held: deps.held, stopped: () => this.#recorder.close() });
    this.#recorder = new ProgressRecorder(outlet);
    this.#roundId = `round:${deps.round}`;
    this.#tracking = {
      recorder: this.#recorder,
      words: deps.words,
      redact: deps.redact,
      secrets: deps.secrets,
      round: deps.round,
      working: () => this.#working(),
    };
    // Past the first round, the round itself is news.
    if (deps.round > 1) this.#working(false);
  }

  /** The round's tools, each call a tracker (`trackTools`). */
  tools(tools: ToolSet, owners: ReadonlyMap<string, AgentPlugin>, failed: (callOptions: unknown) => boolean): ToolSet {
    return trackTools(tools, owners, this.#tracking, failed);
  }

  /** `ToolContext.progress` for the round's tools. */
  get toolProgress(): ToolContext["progress"] {
    return toolProgress(this.#tracking);
  }

  started(subtaskId: string): void {
    this.#working();
    this.#recorder.start(`subtask:${subtaskId}`, { message: this.#subtaskWords(subtaskId, "running", 0) });
    this.#aggregate();
  }

  chunk(subtaskId: string, done: { name: string; finished: number }): void {
    const message = this.#subtaskWords(subtaskId, "running", done.finished, done.name);
    this.#recorder.update(`subtask:${subtaskId}`, { progress: done.finished, message });
  }

  ended(subtaskId: string, status: "completed" | "failed", chunks: number): void {
    this.#recorder.end(`subtask:${subtaskId}`, status, this.#subtaskWords(subtaskId, status, chunks));
    this.#aggregate();
  }

  /**
   * The round is over: `completed` or `failed`, or `paused` (it waits for a
   * human: its trackers stay as they are), and what is left is written and
   * pushed; or `stopped` (canceled, or it threw), and nothing more is written.
   */
  async finish(end: "completed" | "failed" | "paused" | "stopped"): Promise<void> {
    if (end === "stopped") this.#recorder.close();
    else if (end !== "paused" && this.#roundStarted) this.#recorder.end(this.#roundId, end, this.#roundWords(end));
    await this.#recorder.settle();
    this.#recorder.close();
    await this.#pushes.settle();
  }

  /** The round's own tracker starts with its first piece of work (shown with it). */
  #working(quiet = true): void {
    if (this.#roundStarted) return;
    this.#roundStarted = true;
    this.#recorder.start(this.#roundId, { message: this.#roundWords("running") }, quiet);
  }

  #roundWords(status: TrackerState): string {
    const rows = this.deps.db.subtasks.ofRound(this.deps.taskId, this.deps.round);
    const count = (...statuses: string[]) => rows.filter((row) => statuses.includes(row.status)).length;
    return this.deps.words.round({ round: this.deps.round, subtasks: rows.length, done: count("done"), failed: count("failed", "unstarted"), status });
  }

  #subtaskWords(subtaskId: string, status: TrackerState, chunks: number, chunk?: string): string {
    const rows = this.deps.db.subtasks.ofRound(this.deps.taskId, this.deps.round);
    const index = rows.findIndex((row) => row.id === subtaskId);
    const type = rows[index]?.type ?? "";
    return this.deps.words.subtask({ type, index: index + 1, of: rows.length, status, chunks, ...(chunk ? { chunk } : {}) });
  }

  /** With subtasks running, the round's aggregate: how many of them ended. */
  #aggregate(): void {
    const rows = this.deps.db.subtasks.ofRound(this.deps.taskId, this.deps.round);
    const ended = rows.filter((row) => ["done", "failed", "unstarted"].includes(row.status)).length;
    this.#recorder.aggregate({ progress: ended, total: rows.length, message: this.#roundWords("running") });
  }
}
