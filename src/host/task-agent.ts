import { Agent } from "agents";
import { agentStartFailed, invalidParams, quotaExceeded, taskNotCancelable, taskNotFound, toRpcErrorValue, unsupportedOperation } from "../a2a/errors.js";
import { TERMINAL_STATE_NAMES, USAGE_KEY } from "../a2a/wire.js";
import {
  accepted,
  refused,
  settle,
  turnInstanceId,
  type ArtifactJson,
  type BeginTask,
  type Begun,
  type MessageJson,
  type Replied,
  type CallerObject,
  type DeadLetter,
  type Delivery,
  type EventLines,
  type StatusUpdateJson,
  type StreamQuery,
  type Finished,
  type PushConfigFrom,
  type PushConfigJson,
  type PushOut,
  type PushTargets,
  type RedeliveryOutcome,
  type RedeliveryTarget,
  type TaskJson,
  type TaskListPage,
  type TaskListQuery,
  type TaskQuery,
  type TurnObject,
  type TurnOutcome,
  type TurnParams,
  type TurnStart,
  type TurnStep,
  type Verdict,
} from "../boundary/index.js";
import { AgentDB, type StatusWriteVerdict } from "../db/agent-db.js";
import { ConfigError } from "../errors/index.js";
import type { TaskRow } from "../db/task-store.js";
import type { HitlRow } from "../db/hitl-store.js";
import type { TurnRow } from "../db/turn-ledger.js";
import type { Usage } from "../db/usage-store.js";
import { expire, park, requestIdOf, type HitlTarget, type RequestBody } from "../round/hitl/index.js";
import type { AgentEnv, LifecycleLimits, LifecycleWords } from "./lifecycle.js";
import type { RoundStep, TurnContext } from "../round/deps.js";
import { pushOf, pushPlanOf, pushTargetsOf, queueRedelivery, recordDeadLetters, redeliveryTargetsOf, settleRedelivery } from "./deliveries.js";
import { messageFingerprint } from "./message-fingerprint.js";
import type { Continued } from "./multi-turn.js";
import { pushConfigOf } from "./push-config-ids.js";
import { configsOf, putConfig } from "./push-configs.js";
import { reconcileTurns, type ReconcileAction } from "./reconcile-turns.js";
import { DEFAULT_RECOVERY_POLICY, type RecoveryPolicy } from "./recovery-policy.js";
import { sweepOnce } from "./retention.js";
import { SelfOrigin } from "./self-origin.js";
import { TurnSchedules } from "./turn-schedules.js";
import { EventHub } from "./event-hub.js";
import { addedArtifacts, appendArtifactChunk, endsWait, foldArtifacts, statusUpdateOf, writeStatus } from "./task-events.js";
import { taskStream } from "./task-stream.js";
import { analyticsSink, jsonLogSink, Telemetry, type EventSink, type EventSubscriber } from "../telemetry/index.js";
import { ObjectEvents } from "./object-events.js";
import { decideAccept, type Happened } from "./accept.js";
import { agentMessage, requestText, taskOf, withState } from "../boundary/task-status.js";
import { shapeTask, terminalTask } from "./task-wire.js";

/** The Workflow event that ends a wait for request `requestId`. */
const eventTypeOf = (requestId: string) => `answer-${requestId}`;

/** How long a streaming send's slot waits for the edge to open its stream. */
const STREAM_SLOT_MS = 30_000;
/** A report this soon after the last plain one written here is not written again (a heartbeat comes at least a second apart). */
const REPORT_AGAIN_AFTER_MS = 500;

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
 * The Durable Object of one verified caller of one tenant: it owns that
 * caller's tasks and turns. The edge reaches it only after the caller's token
 * verified and only under the caller's own identity, so another caller's
 * task is simply not in its tables.
 *
 * The lifecycle is here so every agent gets it the same way: idempotent
 * accept, the Workflow's steps, the guarded terminal write, cancel, and the
 * schedule that re-drives a lost turn. `DynamicAgent` supplies the rounds.
 */
export abstract class TaskAgent<Env extends Cloudflare.Env & AgentEnv = Cloudflare.Env & AgentEnv> extends Agent<Env> implements CallerObject, TurnObject {
  protected readonly agentDb: AgentDB;
  readonly #selfOrigin = new SelfOrigin();
  /** Who in this instance follows which task's events: streams and blocking sends. */
  readonly #events = new EventHub();
  /**
   * The round each turn is running in this instance right now: the turn's
   * lease. A second call for it (a retried step, a re-driven instance) joins
   * the run instead of starting another; only the run that set it clears it.
   */
  readonly #running = new Map<string, { round: number; instanceId: string; done: Promise<Verdict<TurnStep>>; abort: AbortController }>();
  /** A task whose `runTurn` waits on `turnStarted`: what this class's start read for it (null until then). */
  readonly #startReads = new Map<string, StartRead | null>();
  /** When this instance last wrote each open turn's expectation (the accept's record, a report): a report right after it writes nothing. */
  readonly #reportedAt = new Map<string, number>();
  /** The reconcile and retention passes on the SDK's scheduler. */
  readonly #schedules: TurnSchedules;
  #telemetry: Telemetry | undefined;
  #agentEvents: ObjectEvents | undefined;

  constructor(ctx: DurableObjectState, env: Env) {
    super(ctx, env);
    this.agentDb = new AgentDB(ctx.storage, TERMINAL_STATE_NAMES);
    this.agentDb.onEventAppended((row) => this.#events.deliver(row));
    this.#schedules = new TurnSchedules(
      {
        reconcileEvery: (seconds) => this.scheduleEvery(seconds, "reconcileTurns"),
        reconcileAt: (at) => this.schedule(at, "reconcileTurns"),
        reconcilePending: async () => (await this.listSchedules()).some((s) => s.callback === "reconcileTurns" && s.type !== "interval"),
        stopReconcileEvery: async () => {
          for (const schedule of await this.listSchedules({ type: "interval" })) {
            if (schedule.callback === "reconcileTurns") await this.cancelSchedule(schedule.id);
          }
        },
        retentionEvery: (seconds) => this.scheduleEvery(seconds, "sweepRetention"),
      },
      this.agentDb.turns,
      () => this.recoveryPolicy(),
    );
    // Input gates hold every RPC until this resolves: no call sees a table
    // that is not there yet.
    void ctx.blockConcurrencyWhile(async () => {
      await this.agentDb.migrate();
      try {
        await this.prepareAgent();
      } catch (error) {
        // A start-up check refused the agent: every call says so, naming the
        // culprit, instead of the object failing (and resetting) on each one.
        if (!(error instanceof ConfigError)) throw error;
        const { code, culprit } = error;
        // A check that refused a secret may quote it: for a secret, only the culprit is logged.
        const detail = culprit.kind === "secret" ? "" : `: ${error.message}`;
        console.error(`agent ${this.constructor.name} could not start: ${code} ${culprit.kind} ${culprit.name}${detail}`);
        this.#startFailure = error;
        // Not through agentEvents: the plugins that would subscribe never started.
        const telemetry = new Telemetry({ sinks: this.eventSinks(), secrets: this.eventSecrets() });
        const scope = new ObjectEvents(this.agentDb, ctx.storage.kv, () => telemetry).scope();
        void telemetry.emit("agent.start_failed", scope, { code, culpritKind: culprit.kind, culpritName: culprit.name }, [crypto.randomUUID()]);
      }
    });
  }

  /** The start-up check that refused this agent, if one did. */
  #startFailure: ConfigError | undefined;

  #notStarted(tenant?: string) {
    return refused(toRpcErrorValue(agentStartFailed(tenant, this.#startFailure!)));
  }

  /** Runs once per instance, inside the start-up gate, after the core migrations. */
  protected async prepareAgent(): Promise<void> {}

  /**
   * A send this agent answers with a message instead of a task (a blocking or
   * streaming one; never with `returnImmediately`): the message, its
   * `messageId` and `role` set by the agent. No task exists, and a retry gets
   * the same message. Synchronous: it runs inside the accept's write block.
   */
  protected directReply(_message: MessageJson): MessageJson | undefined {
    return undefined;
  }

  /** One round of the turn; `signal` aborts when the task is canceled. */
  protected abstract runRound(turn: TurnContext, round: number, signal: AbortSignal): Promise<RoundStep>;

  /** After a turn's terminal write (the conversation's compaction runs here). */
  protected afterTurn(_task: TaskJson): void {}

  protected abstract lifecycleWords(): LifecycleWords;

  protected abstract lifecycleLimits(): LifecycleLimits;

  /** Called after a task was canceled here (the round loop stops its subagents). */
  protected onCanceled(_taskId: string): void {}

  /** Called after retention deleted tasks, with their subtasks' ids (the round loop deletes what is left of their subagents). */
  protected async onTasksDeleted(_subtaskIds: readonly string[]): Promise<void> {}

  protected turnWorkflow(): Workflow<TurnParams> {
    const workflow = this.env.TURN_WORKFLOW;
    if (!workflow) {
      throw new ConfigError({ kind: "binding", name: "TURN_WORKFLOW" }, "No turn Workflow: bind one as TURN_WORKFLOW or override turnWorkflow()", {
        code: ConfigError.MISSING,
      });
    }
    return workflow;
  }

  protected recoveryPolicy(): RecoveryPolicy {
    return DEFAULT_RECOVERY_POLICY;
  }

  /** This deployment's origin, learned from the first turn this object served; `undefined` before that. */
  protected selfOrigin(): string | undefined {
    return this.#selfOrigin.get();
  }

  /** Like {@link selfOrigin}, but throws a clear error when no turn has arrived yet (constructor, alarms). */
  protected requireSelfOrigin(): string {
    return this.#selfOrigin.require();
  }

  /** Who hears this object's events besides the log (an agent's plugins, through `DynamicAgent`). Read once, at the first event. */
  protected eventSubscribers(): EventSubscriber[] {
    return [];
  }

  /** Values no event may carry (docs/telemetry.md): the deployment's secrets; an agent adds its plugins'. */
  protected eventSecrets(): (string | undefined)[] {
    return [this.env.A2A_SIGNING_KEY, this.env.OPENAI_API_KEY];
  }

  /** Where events go: one JSON log line each, and the Analytics Engine dataset when one is bound. */
  protected eventSinks(): EventSink[] {
    return this.env.A2A_ANALYTICS ? [jsonLogSink, analyticsSink(this.env.A2A_ANALYTICS)] : [jsonLogSink];
  }

  /** This object's events (docs/telemetry.md), scoped to its tenant and caller hash. */
  protected get agentEvents(): ObjectEvents {
    this.#agentEvents ??= new ObjectEvents(this.agentDb, this.ctx.storage.kv, () => {
      this.#telemetry ??= new Telemetry({ sinks: this.eventSinks(), subscribers: this.eventSubscribers(), secrets: this.eventSecrets() });
      return this.#telemetry;
    });
    return this.#agentEvents;
  }

  /** Whether events may carry message text (an agent's `telemetry.messageText`). */
  protected eventsCarryText(): boolean {
    return false;
  }

  /** Tokens one caller may spend per UTC day; `undefined`: no cap. */
  protected tokensPerCallerPerDay(): number | undefined {
    return undefined;
  }

  // ── the edge's calls ─────────────────────────────────────────────────────

  /**
   * Records the `submitted` task of a turn and names the turn for the edge
   * to start, or returns the task already recorded for this `messageId` and
   * names nothing.
   */
  async beginTask(input: BeginTask): Promise<Verdict<Begun | Replied>> {
    if (this.#startFailure) return this.#notStarted(input.tenant);
    this.#selfOrigin.learn(input.origin);
    const messageId = input.message.messageId;
    const agentId = this.ctx.id.toString();
    const instanceId = await turnInstanceId(agentId, messageId);
    const fingerprint = await messageFingerprint(input.message);
    if (input.caller?.gatekeeper) {
      await this.agentEvents.learnCaller(this.env.A2A_SIGNING_KEY, { gatekeeper: input.caller.gatekeeper, tenant: input.tenant, key: input.caller.key });
    }
    const caller = this.agentEvents.scope().caller;
    // What the block below decided, for its events (emitted once its writes are in).
    let happened: Happened | undefined;
    // From here to the end of the block nothing awaits, so the task and its
    // turn record are written together and no retry can interleave.
    let slot: string | undefined;
    // A retry that added a config to a task with dead letters: the task whose re-delivery starts.
    let queued: string | undefined;
    const verdict = settle((): Continued | Replied => {
      // A stream over the cap is refused before anything is written.
      if (input.stream) {
        this.#assertStreamRoom();
        slot = this.#events.holdSlot(STREAM_SLOT_MS);
      }
      const { maxInFlightTurns, maxPendingQuestions, maxPendingDeliveries } = this.lifecycleLimits();
      const decision = decideAccept(
        this.agentDb,
        { input, agentId, instanceId, fingerprint, caller },
        {
          directReply: (message) => this.directReply(message),
          tokensPerCallerPerDay: this.tokensPerCallerPerDay(),
          maxInFlightTurns,
          maxPendingQuestions,
          maxPendingDeliveries,
          reportWithinMs: this.recoveryPolicy().reportWithinMs,
          now: Date.now(),
        },
      );
      happened = decision.happened;
      if ("refused" in decision) throw decision.refused;
      queued = decision.queued;
      return decision.reply;
    });
    // The task and its turn are written above with no await in between; the
    // reply leaves only once these writes (the schedule's too) are stored. A
    // crash before that loses the reply, and its retry arms what is missing.
    // No stream follows a refusal, a message answer or a settled answer's task: the slot goes back.
    this.#emitBegun(happened, input);
    // The new task's turn record promises a report within the window from now: the start's report need not write it again.
    if (happened?.kind === "accepted") this.#reportedAt.set(happened.task.id, Date.now());
    if (!verdict.ok || "message" in verdict.value || verdict.value.settledBefore) {
      if (slot) this.#events.takeSlot(slot);
      slot = undefined;
      if (!verdict.ok) return verdict;
    }
    const begun = verdict.value;
    // Before the Workflow can start: the turn's model call sees the stream coming and streams the answer.
    if (slot && "task" in begun) this.#events.holdFor(slot, begun.task.id);
    await this.#schedules.armRetention();
    if (queued) await this.#redeliver(queued, { tenant: input.tenant, agentId, origin: input.origin });
    if ("message" in begun) return accepted(begun);
    if (begun.turn) await this.#schedules.ensureReconciling();
    if (begun.answered) {
      const { requestId, taskId: answeredTask } = begun.answered;
      const settlement = this.agentDb.hitl.get(requestId);
      const answer = settlement?.answerJson ? (JSON.parse(settlement.answerJson) as { outcome?: string; optionId?: string }) : {};
      this.agentEvents.emit(
        "hitl.answered",
        answeredTask,
        { requestId, outcome: answer.outcome ?? "answered", ...(answer.optionId ? { optionId: answer.optionId } : {}) },
        ["answered", requestId],
      );
      await this.#wake(begun.answered);
    }
    return accepted({
      task: begun.task,
      ...(begun.turn ? { turn: begun.turn } : {}),
      ...(begun.settledBefore ? { settledBefore: true as const } : {}),
      ...(slot ? { streamSlot: slot } : {}),
    });
  }

  #emitBegun(happened: Happened | undefined, input: BeginTask): void {
    const messageId = input.message.messageId;
    if (happened?.kind === "accepted") {
      const { task } = happened;
      const text = this.eventsCarryText() ? { text: requestText(task) } : {};
      this.agentEvents.emit(
        "task.accepted",
        task.id,
        { messageId, stream: input.stream === true, pushConfigs: input.pushConfig ? 1 : 0, ...text },
        ["accepted"],
        { contextId: task.contextId, turnId: happened.turnId },
      );
    } else if (happened?.kind === "continued") {
      this.agentEvents.emit("task.continued", input.message.taskId, { messageId }, ["continued", messageId]);
    } else if (happened?.kind === "refused") {
      // A refusal is its own occurrence each time: a retry is refused again, and counted again.
      this.agentEvents.emit("quota.exceeded", undefined, { limit: happened.limit, retryAfterSeconds: happened.retryAfterSeconds }, [crypto.randomUUID()]);
    }
  }

  async getTask(query: TaskQuery): Promise<Verdict<TaskJson>> {
    if (this.#startFailure) return this.#notStarted();
    const row = this.agentDb.tasks.get(query.taskId);
    if (!row) return refused(taskNotFound(query.taskId));
    return accepted(shapeTask(taskOf(row), { historyLength: query.historyLength, includeArtifacts: true }));
  }

  /**
   * Cancels a task that is not terminal, and stops its work: the running
   * round's model call and tools are aborted, a wait for a human ends, and
   * nothing of the turn stays in the conversation. Idempotent: a canceled
   * task is returned as it is; another terminal one is -32002.
   */
  async cancelTask(taskId: string): Promise<Verdict<TaskJson>> {
    if (this.#startFailure) return this.#notStarted();
    let parked: HitlRow | undefined;
    const verdict = settle(() => {
      const row = this.#requireTask(taskId);
      const task = taskOf(row);
      if (row.state === "TASK_STATE_CANCELED") return task;
      if (this.agentDb.tasks.isFinal(row.state)) throw taskNotCancelable(taskId, row.state);
      const now = Date.now();
      const canceled = withState(task, "TASK_STATE_CANCELED", now, agentMessage(task, this.lifecycleWords().canceled));
      if (writeStatus(this.agentDb, canceled, now).kind !== "written") throw taskNotFound(taskId);
      this.agentEvents.emit("task.canceled", taskId, { from: row.state }, ["canceled"], { contextId: row.contextId });
      this.agentDb.conversations.discard(taskId);
      const open = this.agentDb.hitl.openOf(taskId);
      if (open && this.agentDb.hitl.settle(open.requestId, "canceled", { outcome: "canceled" }).kind === "settled") parked = open;
      this.#running.get(taskId)?.abort.abort(new DOMException("the task was canceled", "AbortError"));
      this.onCanceled(taskId);
      return canceled;
    });
    if (parked) await this.#wake(parked);
    return verdict;
  }

  /**
   * A blocking send's wait: the task once it is terminal or interrupted (at
   * once if it is). The wait lives in this instance's memory; if the object
   * resets meanwhile the edge asks again, and the new instance reads the task.
   */
  async awaitTask(query: TaskQuery): Promise<Verdict<TaskJson>> {
    if (this.#startFailure) return this.#notStarted();
    const row = this.agentDb.tasks.get(query.taskId);
    if (!row) return refused(taskNotFound(query.taskId));
    if (!endsWait(row.state)) await this.#events.nextEnd(query.taskId);
    return this.getTask(query);
  }

  /** A stream of the task's events (see `StreamQuery`); at most `limits.maxOpenStreams` per caller at once. */
  async streamTask(query: StreamQuery): Promise<Verdict<{ streamId: string; lines: EventLines }>> {
    if (this.#startFailure) return this.#notStarted();
    return settle(() => {
      const row = this.#requireTask(query.taskId);
      const terminal = this.agentDb.tasks.isFinal(row.state);
      if (terminal && query.purpose === "subscribe" && query.afterSeq === undefined) {
        throw unsupportedOperation(
          `Task ${JSON.stringify(query.taskId)} is ${row.state}: there is nothing left to subscribe to (send Last-Event-ID to replay its events)`,
          {
            taskState: row.state,
          },
        );
      }
      if (!(query.slot && this.#events.takeSlot(query.slot))) this.#assertStreamRoom();
      const task = shapeTask(taskOf(row), { historyLength: query.historyLength, includeArtifacts: true });
      // A task still being written shows the answer so far.
      if (!terminal) {
        const written = foldArtifacts(this.agentDb.events.ofKind(query.taskId, "artifact"));
        if (written.length) task.artifacts = [...(task.artifacts ?? []), ...written];
      }
      const replay = query.afterSeq === undefined ? [] : this.agentDb.events.after(query.taskId, query.afterSeq);
      return taskStream({
        hub: this.#events,
        taskId: query.taskId,
        snapshot: { seq: this.agentDb.events.lastSeq(query.taskId), event: { task } },
        replay,
        endAfterReplay: terminal,
      });
    });
  }

  /** 429 when the caller has as many streams open (or held) as `limits.maxOpenStreams`. */
  #assertStreamRoom(): void {
    const { maxOpenStreams } = this.lifecycleLimits();
    const open = this.#events.streams;
    if (open >= maxOpenStreams) {
      this.agentEvents.emit("quota.exceeded", undefined, { limit: "maxOpenStreams", retryAfterSeconds: 5 }, [crypto.randomUUID()]);
      throw quotaExceeded({
        message: `This caller already has ${open} streams open, the most it may have at once (${maxOpenStreams}): close one first`,
        retryAfterSeconds: 5,
        metadata: { limit: "maxOpenStreams", open: String(open) },
      });
    }
  }

  async releaseStream(streamId: string): Promise<Verdict<null>> {
    this.#events.releaseStream(streamId);
    return accepted(null);
  }

  async listTasks(query: TaskListQuery): Promise<Verdict<TaskListPage>> {
    if (this.#startFailure) return this.#notStarted();
    const page = this.agentDb.tasks.page({
      contextId: query.contextId,
      state: query.state,
      statusAfter: query.statusAfter,
      limit: query.pageSize,
      pageToken: query.pageToken,
    });
    if (page.kind === "bad-page-token") {
      return refused(invalidParams("pageToken is not a token this server issued: pass the nextPageToken of a previous ListTasks reply"));
    }
    return accepted({
      tasks: page.rows.map((row) => shapeTask(taskOf(row), query)),
      nextPageToken: page.nextPageToken,
      pageSize: query.pageSize,
      totalSize: page.total,
    });
  }

  async putPushConfig(taskId: string, config: PushConfigJson, from: PushConfigFrom): Promise<Verdict<PushConfigJson>> {
    if (this.#startFailure) return this.#notStarted();
    this.#selfOrigin.learn(from.origin);
    let queued = false;
    const verdict = settle(() => {
      this.#requireTask(taskId);
      const stored = putConfig(this.agentDb, taskId, config);
      queued = queueRedelivery(this.agentDb, taskId, stored.id);
      return stored;
    });
    if (queued) await this.#redeliver(taskId, { tenant: from.tenant, agentId: this.ctx.id.toString(), origin: from.origin });
    return verdict;
  }

  async getPushConfig(taskId: string, configId: string): Promise<Verdict<PushConfigJson>> {
    if (this.#startFailure) return this.#notStarted();
    return settle(() => {
      this.#requireTask(taskId);
      const row = this.agentDb.pushConfigs.get(taskId, configId);
      if (!row) throw taskNotFound(`${taskId}/pushNotificationConfigs/${configId}`);
      return pushConfigOf(row.configJson);
    });
  }

  async listPushConfigs(taskId: string): Promise<Verdict<PushConfigJson[]>> {
    if (this.#startFailure) return this.#notStarted();
    return settle(() => {
      this.#requireTask(taskId);
      return configsOf(this.agentDb, taskId);
    });
  }

  /** Idempotent: deleting a config that is not there succeeds. */
  async deletePushConfig(taskId: string, configId: string): Promise<Verdict<null>> {
    if (this.#startFailure) return this.#notStarted();
    return settle(() => {
      this.#requireTask(taskId);
      this.agentDb.pushConfigs.delete(taskId, configId);
      return null;
    });
  }

  #requireTask(taskId: string): TaskRow {
    const row = this.agentDb.tasks.get(taskId);
    if (!row) throw taskNotFound(taskId);
    return row;
  }

  // ── the turn Workflow's calls ────────────────────────────────────────────

  /**
   * The turn's start, as the Workflow's run step makes it (inside `runTurn`).
   * An agent may override it; an override calls `super.turnStarted` and
   * returns what it gives.
   */
  async turnStarted(taskId: string, origin: string): Promise<Verdict<TurnStart>> {
    if (this.#startFailure) return this.#notStarted();
    this.#selfOrigin.learn(origin);
    const started = this.#start(taskId);
    if (!started) return refused(taskNotFound(taskId));
    if (this.#startReads.has(taskId)) this.#startReads.set(taskId, started);
    return accepted({ proceed: !this.agentDb.tasks.isFinal(started.state), state: started.state });
  }

  /** The task and its turn record as stored, for a start that read nothing here. */
  #asStored(taskId: string): StartRead | undefined {
    const row = this.agentDb.tasks.get(taskId);
    return row && { state: row.state, task: taskOf(row), turn: this.agentDb.turns.get(taskId) };
  }

  /**
   * The turn's start: reported alive, a submitted task marked working
   * (`turn.started`, once). Returns the state it is in after, the task as it
   * stands and the turn's record, each read once; `undefined` for no such task.
   */
  #start(taskId: string): StartRead | undefined {
    this.#reported(taskId);
    const found = this.agentDb.turns.withTask(taskId);
    if (!found) return undefined;
    const { task: row, turn } = found;
    const task = taskOf(row);
    if (row.state !== "TASK_STATE_SUBMITTED") return { state: this.agentDb.tasks.isFinal(row.state) ? row.state : "TASK_STATE_WORKING", task, turn };
    const now = Date.now();
    const working = withState(task, "TASK_STATE_WORKING", now);
    const written = writeStatus(this.agentDb, working, now);
    if (written.kind === "final") return { state: written.row.state, task: taskOf(written.row), turn };
    if (written.kind === "written") {
      const instanceId = turn?.instanceId ?? "";
      this.agentEvents.emit("turn.started", row.id, { instanceId }, ["started", instanceId], { contextId: row.contextId, turnId: instanceId || undefined });
    }
    return { state: "TASK_STATE_WORKING", task: working, turn };
  }

  async runTurn(taskId: string, origin: string, round: number, instanceId: string): Promise<Verdict<TurnStep>> {
    if (this.#startFailure) return this.#notStarted();
    this.#selfOrigin.learn(origin);
    // The turn's lease: a run in progress here is joined, never duplicated.
    const running = this.#running.get(taskId);
    if (running) {
      const joined = await running.done;
      if (running.round === round) {
        // The run it joined closed the record as its instance's: an instance re-driven under a new id closes its own.
        if (joined.ok && joined.value.kind === "finished" && joined.value.closed && running.instanceId !== instanceId)
          await this.turnDelivered(taskId, instanceId);
        return joined;
      }
    }
    // The turn's start and its round are one round trip (fewer, fuller steps); an agent may override the start.
    this.#startReads.set(taskId, null);
    let verdict: Verdict<TurnStart>;
    let read: StartRead | null | undefined;
    try {
      verdict = await this.turnStarted(taskId, origin);
    } finally {
      read = this.#startReads.get(taskId);
      this.#startReads.delete(taskId);
    }
    if (!verdict.ok) return verdict;
    // A turn that does not proceed ends on the task as stored now.
    if (!verdict.value.proceed) return this.#concluded(taskId, instanceId);
    // What this class's start read is what the round runs on, when the verdict is the one it gave; an
    // override that answered on its own leaves nothing, and the task is read again.
    const started = read?.state === verdict.value.state ? read : this.#asStored(taskId);
    if (!started) return refused(taskNotFound(taskId));
    // A re-driven Workflow runs this step again: the recorded outcome is the
    // answer, so a turn costs one model exchange however often it is re-driven.
    const { turn } = started;
    if (turn?.outcomeJson) return this.#finishRecorded(taskId, instanceId);
    const abort = new AbortController();
    // What the round returns is what the rest of this call works on: the task as the round left it, the write's task and seq.
    const done = this.#runRound(started.task, round, abort.signal, turn?.instanceId).then((verdict): Verdict<TurnStep> | Promise<Verdict<TurnStep>> => {
      if (!verdict.ok) return verdict;
      const end = verdict.value;
      if (end.kind === "ended") return this.#concluded(taskId, instanceId, { task: taskOf(end.row) });
      if (end.kind !== "answered") return accepted(end);
      const written = this.#finish(end.row, end.outcome, turn?.instanceId, end.usage);
      if (written.kind === "missing") return refused(taskNotFound(taskId));
      return this.#concluded(taskId, instanceId, written.kind === "written" ? written : { task: taskOf(written.row) });
    });
    this.#running.set(taskId, { round, instanceId, done, abort });
    try {
      return await done;
    } finally {
      if (this.#running.get(taskId)?.done === done) this.#running.delete(taskId);
    }
  }

  /** A re-driven turn whose round had answered: the recorded outcome's guarded terminal write (refused if the task is terminal already), then its push. */
  async #finishRecorded(taskId: string, instanceId: string): Promise<Verdict<TurnStep>> {
    const finished = await this.finishTurn(taskId);
    if (!finished.ok) return finished;
    return this.#concluded(taskId, instanceId);
  }

  /**
   * The turn is over: its push as it goes out, built once, from the task the
   * terminal write just stored (and that write's `seq`) or, not given, as
   * stored; with no config waiting, instance `instanceId`'s turn closes here too.
   */
  async #concluded(taskId: string, instanceId: string, ended?: { task: TaskJson; seq?: number }): Promise<Verdict<TurnStep>> {
    let task = ended?.task;
    if (!task) {
      const row = this.agentDb.tasks.get(taskId);
      if (!row) return refused(taskNotFound(taskId));
      task = taskOf(row);
    }
    const push = pushPlanOf(this.agentDb, task, ended?.seq);
    const closed = push.configs.length === 0;
    if (closed) await this.turnDelivered(taskId, instanceId);
    return accepted({ kind: "finished", state: task.status.state, push, closed });
  }

  /**
   * One round, heartbeating the turn while it runs so the reconciler knows it
   * is alive. A round that waits for a human parks the task, arms the
   * request's expiry and keeps the turn alive until then; a round the cancel
   * aborted ends with the task as it is; a round that answered recorded its
   * outcome and returns it with the task as it is now, for the terminal write.
   */
  async #runRound(task: TaskJson, round: number, signal: AbortSignal, turnId?: string): Promise<Verdict<RoundEnd>> {
    const taskId = task.id;
    const { reportWithinMs } = this.recoveryPolicy();
    // runTurn's start (turnStarted) has just left the turn promising a report: the heartbeat takes over from there.
    const heartbeat = setInterval(() => this.#reported(taskId), Math.max(1_000, reportWithinMs / 3));
    try {
      const step = await this.runRound({ task, text: requestText(task), origin: this.#selfOrigin.require(), ...(turnId ? { turnId } : {}) }, round, signal);
      const now = this.agentDb.tasks.get(taskId);
      if (!now) return refused(taskNotFound(taskId));
      if (this.agentDb.tasks.isFinal(now.state)) return accepted({ kind: "ended", row: now });
      if (step.kind === "canceled") return accepted({ kind: "ended", row: now });
      if (step.kind === "ask") return accepted(await this.#park(taskOf(now), round, step.target, step.body));
      if (step.kind === "done") {
        const usage = this.agentDb.turns.recordOutcome(taskId, step.outcome, reportWithinMs);
        return accepted({ kind: "answered", row: now, outcome: step.outcome, usage });
      }
      // The round's progress is the task's status now: streams hear it at once, the Workflow pushes it.
      this.#reported(taskId);
      const current = taskOf(now);
      // A retried step says nothing new: the same progress is not a second event.
      const said = current.status.message?.parts.map((p) => p.text ?? "").join("");
      if (step.text && (current.status.state !== "TASK_STATE_WORKING" || said !== step.text)) {
        const at = Date.now();
        writeStatus(this.agentDb, withState(current, "TASK_STATE_WORKING", at, agentMessage(current, step.text)), at);
      }
      return accepted({ kind: "continue", announce: step.text !== "" });
    } finally {
      clearInterval(heartbeat);
    }
  }

  /** Parks the task on a request to a human; the turn is alive until it expires. */
  async #park(task: TaskJson, round: number, target: HitlTarget, body: RequestBody): Promise<Extract<TurnStep, { kind: "interrupted" }>> {
    const requestId = await requestIdOf(task.id, target);
    const existing = this.agentDb.hitl.get(requestId);
    const expiresAt = existing?.expiresAt ?? Date.now() + this.lifecycleLimits().hitlExpiresAfterMs;
    const now = Date.now();
    const parked = park(this.agentDb.hitl, task, { requestId, round, target, body, expiresAt }, this.lifecycleWords().hitl, now);
    if (parked) writeStatus(this.agentDb, parked, now);
    this.#reported(task.id, Math.max(0, expiresAt - Date.now()));
    if (!existing) {
      this.agentEvents.emit(
        "hitl.asked",
        task.id,
        { requestId, requestKind: body.requestKind, expiresAt: new Date(expiresAt).toISOString() },
        ["asked", requestId],
        { contextId: task.contextId },
      );
      await this.schedule(new Date(expiresAt), "expireRequest", { requestId });
    }
    return { kind: "interrupted", requestId, eventType: eventTypeOf(requestId), expiresAt };
  }

  /**
   * A request's expiry (the object's own alarm: the local Workflows engine
   * keeps no timer across a restart). Unanswered, it is settled expired, the
   * task goes back to WORKING saying so, and the turn's Workflow is woken.
   * Public only because the agents SDK's scheduler calls methods by name.
   */
  async expireRequest(payload: { requestId: string }): Promise<void> {
    if (this.#startFailure) return;
    const expired = this.#expire(payload.requestId);
    if (expired) this.agentEvents.emit("hitl.expired", expired.taskId, { requestId: expired.requestId }, ["expired", expired.requestId]);
    if (expired) await this.#wake(expired);
  }

  /** Settles a request expired, its task back to WORKING saying so; the request, or nothing when it was settled already. */
  #expire(requestId: string): HitlRow | undefined {
    const now = Date.now();
    const expired = expire(this.agentDb, requestId, this.lifecycleWords().hitl, now);
    if (expired?.task) writeStatus(this.agentDb, expired.task, now);
    return expired?.request;
  }

  /** Tells a parked turn's Workflow that its wait is over; an outage is retried by the reconciler. */
  async #wake(request: HitlRow): Promise<void> {
    const turn = this.agentDb.turns.get(request.taskId);
    if (!turn) return;
    try {
      await (await this.turnWorkflow().get(turn.instanceId)).sendEvent({ type: eventTypeOf(request.requestId), payload: { requestId: request.requestId } });
    } catch (error) {
      console.warn(`turn ${turn.instanceId}: could not wake it for request ${request.requestId}; the reconciler tries again`, error);
    }
  }

  /** The turn's Workflow reported in: it is expected again within the policy's window (plus `moreMs`). */
  #reported(taskId: string, moreMs = 0): void {
    const now = Date.now();
    // Reported a moment ago by this instance (the accept, the start): the record already promises about as long.
    if (moreMs === 0 && now - (this.#reportedAt.get(taskId) ?? Number.NEGATIVE_INFINITY) < REPORT_AGAIN_AFTER_MS) return;
    this.agentDb.turns.progress(taskId, this.recoveryPolicy().reportWithinMs + moreMs);
    // A longer promise (a wait, a backoff) is not one the next plain report may leave standing: that one is written.
    if (moreMs > 0) {
      this.#reportedAt.delete(taskId);
      return;
    }
    // Only the last moments matter: a turn that ended another way leaves no lasting entry.
    if (this.#reportedAt.size >= 1_000) this.#reportedAt.clear();
    this.#reportedAt.set(taskId, now);
  }

  /**
   * The guarded terminal write of the outcome the turn's round recorded (or
   * of `outcome`, for a turn that ends without one); a turn with neither
   * ends unfinished.
   */
  async finishTurn(taskId: string, given?: TurnOutcome): Promise<Verdict<Finished>> {
    if (this.#startFailure) return this.#notStarted();
    this.#reported(taskId);
    const row = this.agentDb.tasks.get(taskId);
    if (!row) return refused(taskNotFound(taskId));
    const turn = this.agentDb.turns.get(taskId);
    const recorded = turn?.outcomeJson;
    const outcome =
      given ?? (recorded ? (JSON.parse(recorded) as TurnOutcome) : { state: "TASK_STATE_FAILED" as const, text: this.lifecycleWords().unfinished });
    const written = this.#finish(row, outcome, turn?.instanceId);
    if (written.kind === "written") return accepted({ saved: true, state: outcome.state });
    if (written.kind === "final") return accepted({ saved: false, state: written.row.state });
    return refused(taskNotFound(taskId));
  }

  /** The terminal write of `outcome` over `row` (the task as just read), guarded: a task already terminal is left as it is. */
  #finish(row: TaskRow, outcome: TurnOutcome, turnId?: string, recorded?: Usage): FinishVerdict {
    const now = Date.now();
    // What the turn's tools added joins the answer; its usage as the outcome's record returned it, or read.
    const usage = recorded ?? this.agentDb.usage.ofTurn(row.id);
    const task = terminalTask(taskOf(row), outcome, now, addedArtifacts(this.agentDb.events.ofKind(row.id, "artifact")));
    task.metadata = { ...task.metadata, [USAGE_KEY]: usage };
    const written = writeStatus(this.agentDb, task, now);
    if (written.kind !== "written") return written;
    // The turn's messages join the conversation every later turn reads.
    this.agentDb.conversations.commit(row.id);
    this.#emitFinished(task, row.createdAt, now, usage, turnId);
    this.afterTurn(task);
    return { kind: "written", task, seq: written.seq };
  }

  /** `turn.finished`: the terminal write took effect (once per task: a terminal task is never written again). */
  #emitFinished(task: TaskJson, acceptedAt: number, now: number, usage = this.agentDb.usage.ofTurn(task.id), turnId?: string): void {
    const reply = task.status.message?.parts.map((p) => p.text ?? "").join("") ?? "";
    this.agentEvents.emit(
      "turn.finished",
      task.id,
      { state: task.status.state, durationMs: now - acceptedAt, ...usage, ...(this.eventsCarryText() ? { text: reply } : {}) },
      ["finished"],
      { contextId: task.contextId, turnId },
    );
  }

  async endUnfinished(taskId: string): Promise<Verdict<Finished>> {
    if (this.#startFailure) return this.#notStarted();
    return this.finishTurn(taskId, { state: "TASK_STATE_FAILED", text: this.lifecycleWords().unfinished });
  }

  async turnResumed(taskId: string, requestId: string): Promise<Verdict<{ announce: boolean }>> {
    if (this.#startFailure) return this.#notStarted();
    this.#reported(taskId);
    let request = this.agentDb.hitl.get(requestId);
    // The Workflow's own backstop: past its expiry and still open, it expires now.
    if (request?.status === "open" && Date.now() >= request.expiresAt) {
      if (this.#expire(requestId)) this.agentEvents.emit("hitl.expired", taskId, { requestId }, ["expired", requestId]);
      request = this.agentDb.hitl.get(requestId);
    }
    this.agentDb.hitl.resumed(requestId);
    const row = this.agentDb.tasks.get(taskId);
    if (!row) return refused(taskNotFound(taskId));
    // Expired: the task's status says so, and the gatekeeper is told.
    return accepted({ announce: request?.status === "expired" && row.state === "TASK_STATE_WORKING" });
  }

  async deliveryOf(taskId: string): Promise<Verdict<Delivery>> {
    if (this.#startFailure) return this.#notStarted();
    this.#reported(taskId);
    const row = this.agentDb.tasks.get(taskId);
    if (!row) return refused(taskNotFound(taskId));
    const task = taskOf(row);
    const latest = this.agentDb.events.latest(taskId, "status");
    // A task stored before events were recorded has none: its status as it is, at seq 0.
    const status = latest
      ? { seq: latest.seq, statusUpdate: (JSON.parse(latest.eventJson) as { statusUpdate: StatusUpdateJson }).statusUpdate }
      : { seq: 0, statusUpdate: statusUpdateOf(task) };
    return accepted({ task, configs: configsOf(this.agentDb, taskId), status });
  }

  async turnProgress(taskId: string, nextAttemptWithinMs: number): Promise<Verdict<null>> {
    // Delivery in backoff is progress: alive until its next attempt is due.
    this.#reported(taskId, Math.max(0, nextAttemptWithinMs));
    return accepted(null);
  }

  async turnDelivered(taskId: string, instanceId: string): Promise<Verdict<null>> {
    // Configs set while this turn ran, waiting for dead letters: their re-delivery starts now (the turn's record names the deployment).
    const closing = this.agentDb.turns.close(taskId, instanceId);
    this.#reportedAt.delete(taskId);
    if (closing) await this.#redeliver(taskId, JSON.parse(closing) as TurnParams);
    // The schedule stays: the next pass finds nothing open and stops it. A caller's turns back to
    // back keep one schedule instead of arming and cancelling it per turn (a dozen SQL statements).
    return accepted(null);
  }

  async pushTargets(taskId: string): Promise<Verdict<PushTargets>> {
    if (this.#startFailure) return this.#notStarted();
    this.#reported(taskId);
    const targets = pushTargetsOf(this.agentDb, taskId);
    return targets ? accepted(targets) : refused(taskNotFound(taskId));
  }

  async pushOf(taskId: string, configId: string, seq: number): Promise<Verdict<PushOut>> {
    if (this.#startFailure) return this.#notStarted();
    this.#reported(taskId);
    const out = pushOf(this.agentDb, taskId, configId, seq);
    return out ? accepted(out) : refused(taskNotFound(taskId));
  }

  async deadLetter(taskId: string, letters: DeadLetter[]): Promise<Verdict<null>> {
    if (this.#startFailure) return this.#notStarted();
    recordDeadLetters(this.agentDb, taskId, letters, Date.now());
    for (const letter of letters) {
      this.agentEvents.emit("push.dead_lettered", taskId, { configId: letter.configId, seq: letter.seq, status: letter.status }, [
        "dead letter",
        letter.configId,
        letter.seq,
        letter.at,
      ]);
    }
    return accepted(null);
  }

  async redeliveryTargets(taskId: string): Promise<Verdict<RedeliveryTarget[]>> {
    if (this.#startFailure) return this.#notStarted();
    this.#reported(taskId);
    return accepted(redeliveryTargetsOf(this.agentDb, taskId));
  }

  async redelivered(taskId: string, outcome: RedeliveryOutcome): Promise<Verdict<null>> {
    if (this.#startFailure) return this.#notStarted();
    this.#reported(taskId);
    const instanceId = this.agentDb.turns.get(taskId)?.instanceId ?? "";
    settleRedelivery(this.agentDb, taskId, outcome, Date.now());
    this.agentEvents.emit("push.redelivered", taskId, { configId: outcome.configId, delivered: outcome.delivered.length, givenUp: outcome.givenUp.length }, [
      "redelivered",
      instanceId,
      outcome.configId,
    ]);
    return accepted(null);
  }

  /**
   * Starts the re-delivery of a task's dead letters to the configs queued for
   * them, unless a turn of the task is open (its end starts it, see
   * `turnDelivered`). It is a turn in the ledger, so the reconciler re-drives
   * it like any other and retention keeps the task until it ends.
   */
  async #redeliver(taskId: string, like: Pick<TurnParams, "tenant" | "agentId" | "origin">): Promise<void> {
    if (this.agentDb.turns.get(taskId)) return;
    const row = this.agentDb.tasks.get(taskId);
    if (!row) return;
    const instanceId = `redeliver-${crypto.randomUUID()}`;
    const params: TurnParams = { tenant: like.tenant, agentId: like.agentId, taskId, messageId: row.messageId, origin: like.origin, redeliver: true };
    this.agentDb.turns.open(taskId, instanceId, params, this.recoveryPolicy().reportWithinMs);
    await this.#schedules.ensureReconciling();
    // One that does not start now is started by the reconciler's next pass.
    if (!(await this.#startWorkflow(instanceId, params))) console.warn(`task ${taskId}: its re-delivery did not start; the reconciler tries again`);
  }

  // ── no turn is left hanging ──────────────────────────────────────────────

  /**
   * Every wake of the object: open turns mean a reconcile schedule. This is
   * also what carries an object across a deploy whose earlier version kept
   * its timer some other way. A subclass that overrides this calls `super`.
   */
  override async onStart(): Promise<void> {
    if (this.#startFailure) return;
    if (this.agentDb.turns.size > 0) {
      await this.#schedules.ensureReconciling();
      await this.#schedules.armDueCheck();
    }
    await this.#schedules.armRetention();
  }

  /**
   * One pass over the open turns, on the object's schedule while any is
   * open: re-drives what errored, vanished or stalled (see `reconcileTurns`).
   * Public only because the agents SDK's scheduler calls methods by name.
   */
  async reconcileTurns(): Promise<Map<string, ReconcileAction>> {
    if (this.#startFailure) return new Map();
    const actions = await reconcileTurns({
      ledger: this.agentDb.turns,
      workflow: this.turnWorkflow(),
      policy: this.recoveryPolicy(),
      start: (id, params) => this.#startWorkflow(id, params),
      runningHere: (taskId) => this.#running.has(taskId),
      close: async (taskId, instanceId) => void (await this.turnDelivered(taskId, instanceId)),
      abandon: (taskId) => this.#abandon(taskId),
    });
    for (const [taskId, action] of actions) {
      if (action === "alive" || action === "closed") continue;
      const turn = this.agentDb.turns.get(taskId);
      const instanceId = turn?.instanceId ?? "";
      this.agentEvents.emit("reconciler.action", taskId, { action, instanceId }, ["reconciled", instanceId, turn?.attempts ?? 0, action]);
    }
    // A wake that did not arrive (an outage, a Worker restart) is sent again until the turn takes it in.
    for (const request of this.agentDb.hitl.unresumed()) if (this.agentDb.turns.get(request.taskId)) await this.#wake(request);
    if (this.agentDb.turns.size === 0) await this.#schedules.stopReconciling();
    else await this.#schedules.armDueCheck();
    return actions;
  }

  /**
   * Retention, in bounded batches: finished, delivered tasks past the agent's
   * `retention.finishedTaskDays` go with everything hanging off them; their
   * `messageId`s are remembered `retention.messageIdDays`. A full batch comes
   * back at once for the rest. Public only for the SDK's scheduler.
   */
  async sweepRetention(): Promise<{ tasks: number; messageIds: number }> {
    if (this.#startFailure) return { tasks: 0, messageIds: 0 };
    const swept = await sweepOnce(this.agentDb, this.lifecycleLimits().retention, Date.now(), (ids) => this.onTasksDeleted(ids));
    if (swept.more) await this.schedule(1, "sweepRetention");
    return { tasks: swept.tasks, messageIds: swept.messageIds };
  }

  #abandon(taskId: string): void {
    const row = this.agentDb.tasks.get(taskId);
    if (!row) return;
    const now = Date.now();
    const task = terminalTask(taskOf(row), { state: "TASK_STATE_FAILED", text: this.lifecycleWords().abandoned }, now);
    task.metadata = { ...task.metadata, [USAGE_KEY]: this.agentDb.usage.ofTurn(taskId) };
    if (writeStatus(this.agentDb, task, now).kind === "written") this.#emitFinished(task, row.createdAt, now);
  }

  /** Creates the instance; one that already exists counts as started. False when neither (the next pass retries). */
  async #startWorkflow(id: string, params: TurnParams): Promise<boolean> {
    const workflow = this.turnWorkflow();
    try {
      await workflow.create({ id, params });
      return true;
    } catch (error) {
      try {
        await workflow.get(id);
        return true;
      } catch {
        console.error(`turn ${id}: could not start its Workflow`, error);
        return false;
      }
    }
  }

  // ── for agents that script their turns ───────────────────────────────────

  /**
   * Whether a stream follows the task now (a streaming send's, or a
   * SubscribeToTask): its model calls then stream the answer as it is
   * written; otherwise each is made in one request and its answer written
   * whole (docs/protocol.md "Streamed for a reader only").
   */
  protected streamFollows(taskId: string): boolean {
    return this.#events.follows(taskId);
  }

  /**
   * One chunk of an artifact, written as an event of the task while the round
   * runs: streams hear it at once, and it is folded into a snapshot of the
   * task still being written (docs/protocol.md "Events, streams and pushes").
   * For an agent that writes its artifacts itself instead of streaming a
   * model's answer; the finished task's artifacts are the outcome's. A task
   * that is missing or terminal (canceled meanwhile) gets nothing: the result
   * says whether the chunk was written.
   */
  protected writeArtifactChunk(taskId: string, artifact: ArtifactJson, chunk: { append: boolean; lastChunk: boolean }): boolean {
    const row = this.agentDb.tasks.get(taskId);
    if (!row || this.agentDb.tasks.isFinal(row.state)) return false;
    appendArtifactChunk(this.agentDb, { id: row.id, contextId: row.contextId }, artifact, chunk);
    return true;
  }
}
