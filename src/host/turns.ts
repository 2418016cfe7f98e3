import { taskNotFound } from "../a2a/errors.js";
import { TRACE_KEY } from "../a2a/trace-context.js";
import { USAGE_KEY } from "../a2a/wire.js";
import { accepted, refused, type Finished, type TaskJson, type TurnOutcome, type TurnStart, type TurnStep, type Verdict } from "../boundary/index.js";
import { turnTraceOf } from "../boundary/turn-object.js";
import { agentMessage, requestText, taskOf, withState } from "../boundary/task-status.js";
import type { StatusWriteVerdict } from "../db/agent-db.js";
import type { HitlRow } from "../db/hitl-store.js";
import type { TaskRow } from "../db/task-store.js";
import type { TurnRow } from "../db/turn-ledger.js";
import type { Usage } from "../db/usage-store.js";
import { expire, park, requestIdOf, type HitlTarget, type RequestBody } from "../round/hitl/index.js";
import type { Deliveries } from "./deliveries.js";
import { pushPlanOf } from "./deliveries.js";
import type { ObjectParts } from "./lifecycle.js";
import { addedArtifacts } from "../round/artifacts.js";
import { writeStatus } from "./task-events.js";
import { terminalTask } from "./task-wire.js";
import { eventTypeOf, wake } from "./turn-workflows.js";
import type { TurnContext } from "../round/deps.js";

/** How a turn's round ended, inside the object: a step for the Workflow, the task the round ended on (nothing more to run), or its answer to write. */
type RoundEnd =
  | Extract<TurnStep, { kind: "continue" | "interrupted" }>
  | { kind: "ended"; row: TaskRow }
  | { kind: "answered"; row: TaskRow; outcome: TurnOutcome; usage: Usage | undefined };

/** What a turn's start read: the state it left, the task as it stands, and the turn's record. */
interface StartRead {
  state: string;
  task: TaskJson;
  turn: TurnRow | undefined;
}

/** A terminal write's verdict: the task as written and its event's `seq`, or refused as the store says. */
type FinishVerdict = { kind: "written"; task: TaskJson; seq: number } | Exclude<StatusWriteVerdict, { kind: "written" }>;

/**
 * The turn Workflow's turn calls: the start, the rounds (each run under the
 * turn's lease, heartbeating), the guarded terminal write and its push plan,
 * and the glue of a wait for a human (park, expiry, resume).
 */
export class Turns {
  /**
   * The round each turn is running in this instance right now: the turn's
   * lease. A second call for it (a retried step, a re-driven instance) joins
   * the run instead of starting another; only the run that set it clears it.
   */
  readonly #running = new Map<string, { round: number; instanceId: string; done: Promise<Verdict<TurnStep>>; abort: AbortController }>();

  constructor(
    private readonly parts: ObjectParts,
    private readonly deliveries: Deliveries,
  ) {}

  /** Whether this instance runs a round of the task's turn now. */
  runningHere(taskId: string): boolean {
    return this.#running.has(taskId);
  }

  /** Aborts the round of the task's turn this instance runs now, if any (a cancel). */
  abortRound(taskId: string): void {
    this.#running.get(taskId)?.abort.abort(new DOMException("the task was canceled", "AbortError"));
  }

  /** Aborts the rounds this instance runs for tasks that are gone (erased): they end without a word. */
  abortGone(exists: (taskId: string) => boolean): void {
    for (const [taskId, run] of this.#running) if (!exists(taskId)) run.abort.abort(new DOMException("the task was erased", "AbortError"));
  }

  /** The turn's start on its own (the Workflow's run step makes it inside `run`). */
  started(taskId: string, origin: string): Verdict<TurnStart> {
    this.parts.origin.learn(origin);
    const started = this.#start(taskId);
    if (!started) return refused(taskNotFound(taskId));
    return accepted({ proceed: !this.parts.db.tasks.isFinal(started.state), state: started.state });
  }

  async run(taskId: string, origin: string, round: number, instanceId: string, held?: string[]): Promise<Verdict<TurnStep>> {
    this.parts.origin.learn(origin);
    // The turn's lease: a run in progress here is joined, never duplicated.
    const running = this.#running.get(taskId);
    if (running) {
      const joined = await running.done;
      if (running.round === round) {
        // The run it joined closed the record as its instance's: an instance re-driven under a new id closes its own.
        if (joined.ok && joined.value.kind === "finished" && joined.value.closed && running.instanceId !== instanceId)
          await this.deliveries.delivered(taskId, instanceId);
        return joined;
      }
    }
    // The turn's wide log line, if it ends in this call, goes to the Workflow with its push (docs/telemetry.md "Which lines").
    return this.parts.events.handingOver(taskId, () => this.#runHere(taskId, round, instanceId, held));
  }

  async #runHere(taskId: string, round: number, instanceId: string, held?: string[]): Promise<Verdict<TurnStep>> {
    // The turn's start and its round are one round trip (fewer, fuller steps).
    const started = this.#start(taskId);
    if (!started) return refused(taskNotFound(taskId));
    // A turn that does not proceed ends on the task as stored now.
    if (this.parts.db.tasks.isFinal(started.state)) return this.#concluded(taskId, instanceId);
    // A re-driven Workflow runs this step again: the recorded outcome is the
    // answer, so a turn costs one model exchange however often it is re-driven.
    const { turn } = started;
    if (turn?.outcomeJson) return this.#finishRecorded(taskId, instanceId);
    const abort = new AbortController();
    // What the round returns is what the rest of this call works on: the task as the round left it, the write's task and seq.
    const done = this.#runRound(started.task, round, abort.signal, { turnId: turn?.instanceId, held, trace: turnTraceOf(turn?.paramsJson) }).then(
      (verdict): Verdict<TurnStep> | Promise<Verdict<TurnStep>> => {
        if (!verdict.ok) return verdict;
        const end = verdict.value;
        if (end.kind === "ended") return this.#concluded(taskId, instanceId, { row: end.row });
        if (end.kind !== "answered") return accepted(end);
        const written = this.#finish(end.row, end.outcome, turn?.instanceId, end.usage);
        if (written.kind === "missing") return refused(taskNotFound(taskId));
        return this.#concluded(taskId, instanceId, written.kind === "written" ? written : { row: written.row });
      },
    );
    this.#running.set(taskId, { round, instanceId, done, abort });
    try {
      return await done;
    } finally {
      if (this.#running.get(taskId)?.done === done) this.#running.delete(taskId);
    }
  }

  /**
   * The guarded terminal write of the outcome the turn's round recorded (or
   * of `outcome`, for a turn that ends without one); a turn with neither
   * ends unfinished.
   */
  finish(taskId: string, given?: TurnOutcome): Verdict<Finished> {
    const { db, reports, agent } = this.parts;
    reports.reported(taskId);
    const row = db.tasks.get(taskId);
    if (!row) return refused(taskNotFound(taskId));
    const turn = db.turns.get(taskId);
    const recorded = turn?.outcomeJson;
    const outcome = given ?? (recorded ? (JSON.parse(recorded) as TurnOutcome) : { state: "TASK_STATE_FAILED" as const, text: agent.words().unfinished });
    const written = this.#finish(row, outcome, turn?.instanceId);
    if (written.kind === "written") return accepted({ saved: true, state: outcome.state });
    if (written.kind === "final") return accepted({ saved: false, state: written.row.state });
    return refused(taskNotFound(taskId));
  }

  endUnfinished(taskId: string): Verdict<Finished> {
    return this.finish(taskId, { state: "TASK_STATE_FAILED", text: this.parts.agent.words().unfinished });
  }

  resumed(taskId: string, requestId: string): Verdict<{ announce: boolean }> {
    const { db, reports } = this.parts;
    reports.reported(taskId);
    let request = db.hitl.get(requestId);
    // The Workflow's own backstop: past its expiry and still open, it expires now.
    if (request?.status === "open" && Date.now() >= request.expiresAt) {
      this.expire(requestId);
      request = db.hitl.get(requestId);
    }
    db.hitl.resumed(requestId);
    const row = db.tasks.get(taskId);
    if (!row) return refused(taskNotFound(taskId));
    // Expired: the task's status says so, and the gatekeeper is told.
    return accepted({ announce: request?.status === "expired" && row.state === "TASK_STATE_WORKING" });
  }

  /**
   * A request's expiry (the object's own alarm: the local Workflows engine
   * keeps no timer across a restart). Unanswered, it is settled expired, the
   * task goes back to WORKING saying so, and the turn's Workflow is woken.
   */
  async expireRequest(requestId: string): Promise<void> {
    const expired = this.expire(requestId);
    if (expired) await wake(this.parts, expired);
  }

  /** Settles a request expired, its task back to WORKING saying so (`hitl.expired`); nothing when it was settled already. */
  expire(requestId: string): HitlRow | undefined {
    const now = Date.now();
    const expired = expire(this.parts.db, requestId, this.parts.agent.words().hitl, now);
    if (!expired) return undefined;
    if (expired.task) writeStatus(this.parts.db, expired.task, now);
    const { taskId } = expired.request;
    this.parts.events.emit("hitl.expired", taskId, { requestId }, ["expired", requestId]);
    return expired.request;
  }

  /** A turn nothing could finish: its task failed, in the agent's words. */
  abandon(taskId: string): void {
    const { db, agent } = this.parts;
    const row = db.tasks.get(taskId);
    if (!row) return;
    const now = Date.now();
    const task = terminalTask(taskOf(row), { state: "TASK_STATE_FAILED", text: agent.words().abandoned }, now);
    task.metadata = { ...task.metadata, [USAGE_KEY]: db.usage.ofTurn(taskId) };
    // Its wide line waits for the instance the reconciler starts to announce it, which adds that push (docs/telemetry.md "Which lines").
    this.parts.events.log.handOver(taskId);
    if (writeStatus(db, task, now).kind === "written") this.#emitFinished(task, row.createdAt, now);
  }

  /**
   * The turn's start: reported alive, a submitted task marked working
   * (`turn.started`, once), or ended at once when the agent says so
   * (`outcomeAtStart`). Returns the state it is in after, the task as it
   * stands and the turn's record, each read once; `undefined` for no such task.
   */
  #start(taskId: string): StartRead | undefined {
    const { db, reports, events, agent } = this.parts;
    reports.reported(taskId);
    const found = db.turns.withTask(taskId);
    if (!found) return undefined;
    const { task: row, turn } = found;
    const task = taskOf(row);
    if (row.state !== "TASK_STATE_SUBMITTED") return { state: db.tasks.isFinal(row.state) ? row.state : "TASK_STATE_WORKING", task, turn };
    const early = agent.outcomeAtStart(task);
    const ended = early && this.#finish(row, early, turn?.instanceId);
    if (ended?.kind === "written") return { state: ended.task.status.state, task: ended.task, turn };
    if (ended?.kind === "final") return { state: ended.row.state, task: taskOf(ended.row), turn };
    const now = Date.now();
    const working = withState(task, "TASK_STATE_WORKING", now);
    const written = writeStatus(db, working, now);
    if (written.kind === "final") return { state: written.row.state, task: taskOf(written.row), turn };
    if (written.kind === "written") {
      const instanceId = turn?.instanceId ?? "";
      events.emit("turn.started", row.id, { instanceId }, ["started", instanceId], { contextId: row.contextId, turnId: instanceId || undefined });
    }
    return { state: "TASK_STATE_WORKING", task: working, turn };
  }

  /** The terminal write of `outcome` over `row` (the task as just read), guarded: a task already terminal is left as it is. */
  #finish(row: TaskRow, outcome: TurnOutcome, turnId?: string, recorded?: Usage): FinishVerdict {
    const { db, agent } = this.parts;
    const now = Date.now();
    // What the turn's tools added joins the answer; its usage as the outcome's record returned it, or read.
    const usage = recorded ?? db.usage.ofTurn(row.id);
    const task = terminalTask(taskOf(row), outcome, now, addedArtifacts(db.events.ofKind(row.id, "artifact")));
    task.metadata = { ...task.metadata, [USAGE_KEY]: usage };
    const written = writeStatus(db, task, now);
    if (written.kind !== "written") return written;
    // The turn's messages join the conversation every later turn reads.
    db.conversations.commit(row.id);
    this.#emitFinished(task, row.createdAt, now, usage, turnId);
    agent.afterTurn(task);
    return { kind: "written", task, seq: written.seq };
  }

  /** `turn.finished`: the terminal write took effect (once per task: a terminal task is never written again). */
  #emitFinished(task: TaskJson, acceptedAt: number, now: number, usage = this.parts.db.usage.ofTurn(task.id), turnId?: string): void {
    const reply = task.status.message?.parts.map((p) => p.text ?? "").join("") ?? "";
    const text = this.parts.agent.carriesText() ? { text: reply } : {};
    const data = { state: task.status.state, durationMs: now - acceptedAt, ...usage, ...text };
    this.parts.events.emit("turn.finished", task.id, data, ["finished"], { contextId: task.contextId, turnId });
  }

  /** A re-driven turn whose round had answered: the recorded outcome's guarded terminal write (refused if the task is terminal already), then its push. */
  async #finishRecorded(taskId: string, instanceId: string): Promise<Verdict<TurnStep>> {
    const finished = this.finish(taskId);
    if (!finished.ok) return finished;
    return this.#concluded(taskId, instanceId);
  }

  /**
   * The turn is over: its push as it goes out, built once, from the task the
   * terminal write just stored (and that write's `seq`) or, not given, as
   * stored; with no config waiting, instance `instanceId`'s turn closes here too.
   */
  async #concluded(taskId: string, instanceId: string, ended?: { task?: TaskJson; row?: TaskRow; seq?: number }): Promise<Verdict<TurnStep>> {
    const row = ended?.row ?? (ended?.task ? undefined : this.parts.db.tasks.get(taskId));
    const task = ended?.task ?? (row && taskOf(row));
    if (!task) return refused(taskNotFound(taskId));
    const push = pushPlanOf(this.parts.db, task, ended?.seq);
    const closed = push.configs.length === 0;
    if (closed) await this.deliveries.delivered(taskId, instanceId);
    // Its wide log line, kept or rebuilt from the task as stored (the turn's record may be gone: its trace is the task's).
    const known = { state: task.status.state, durationMs: row ? Date.now() - row.createdAt : 0, inputTokens: 0, outputTokens: 0, modelCalls: 0 };
    const about = { contextId: task.contextId, turnId: instanceId, traceId: task.metadata?.[TRACE_KEY] as string | undefined };
    const wide = await this.parts.events.wideLine(taskId, { ...known, ...(task.metadata?.[USAGE_KEY] as Usage | undefined) }, about);
    return accepted({ kind: "finished", state: task.status.state, push, closed, ...(wide ? { wide } : {}) });
  }

  /**
   * One round, heartbeating the turn while it runs so the reconciler knows it
   * is alive. A round that waits for a human parks the task, arms the
   * request's expiry and keeps the turn alive until then; a round the cancel
   * aborted ends with the task as it is; a round that answered recorded its
   * outcome and returns it with the task as it is now, for the terminal write.
   */
  async #runRound(task: TaskJson, round: number, signal: AbortSignal, run: Pick<TurnContext, "turnId" | "held" | "trace">): Promise<Verdict<RoundEnd>> {
    const { db, reports, agent, origin } = this.parts;
    const taskId = task.id;
    const { reportWithinMs } = agent.recovery();
    // The turn's start has just left the turn promising a report: the heartbeat takes over from there.
    const heartbeat = setInterval(() => reports.reported(taskId), Math.max(1_000, reportWithinMs / 3));
    try {
      const step = await agent.runRound({ task, text: requestText(task), origin: origin.require(), ...run }, round, signal);
      const now = db.tasks.get(taskId);
      if (!now) return refused(taskNotFound(taskId));
      if (db.tasks.isFinal(now.state)) return accepted({ kind: "ended", row: now });
      if (step.kind === "canceled") return accepted({ kind: "ended", row: now });
      if (step.kind === "ask") return accepted(await this.#park(taskOf(now), round, step.target, step.body));
      if (step.kind === "done") {
        const usage = db.turns.recordOutcome(taskId, step.outcome, reportWithinMs);
        return accepted({ kind: "answered", row: now, outcome: step.outcome, usage });
      }
      // The round's progress is the task's status now: streams hear it at once, the Workflow pushes it.
      reports.reported(taskId);
      const current = taskOf(now);
      // A retried step says nothing new: the same progress is not a second event.
      const said = current.status.message?.parts.map((p) => p.text ?? "").join("");
      if (step.text && (current.status.state !== "TASK_STATE_WORKING" || said !== step.text)) {
        const at = Date.now();
        writeStatus(db, withState(current, "TASK_STATE_WORKING", at, agentMessage(current, step.text)), at);
      }
      return accepted({ kind: "continue", announce: step.text !== "" });
    } finally {
      clearInterval(heartbeat);
    }
  }

  /** Parks the task on a request to a human; the turn is alive until it expires. */
  async #park(task: TaskJson, round: number, target: HitlTarget, body: RequestBody): Promise<Extract<TurnStep, { kind: "interrupted" }>> {
    const { db, reports, events, agent } = this.parts;
    const requestId = await requestIdOf(task.id, target);
    const existing = db.hitl.get(requestId);
    const expiresAt = existing?.expiresAt ?? Date.now() + agent.limits().hitlExpiresAfterMs;
    const now = Date.now();
    const parked = park(db.hitl, task, { requestId, round, target, body, expiresAt }, agent.words().hitl, now);
    if (parked) writeStatus(db, parked, now);
    reports.reported(task.id, Math.max(0, expiresAt - Date.now()));
    if (!existing) {
      const asked = { requestId, requestKind: body.requestKind, expiresAt: new Date(expiresAt).toISOString() };
      events.emit("hitl.asked", task.id, asked, ["asked", requestId], { contextId: task.contextId });
      await agent.schedule(new Date(expiresAt), "expireRequest", { requestId });
    }
    return { kind: "interrupted", requestId, eventType: eventTypeOf(requestId), expiresAt };
  }
}
