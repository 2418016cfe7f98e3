import { Agent } from "agents";
import { agentStartFailed, toRpcErrorValue } from "../a2a/errors.js";
import { TERMINAL_STATE_NAMES } from "../a2a/wire.js";
import { accepted, refused, turnTraceOf, type Verdict } from "../boundary/index.js";
import type { ArtifactJson, BeginTask, CallerObject, DeadLetter, MessageJson, PushConfigFrom, PushConfigJson } from "../boundary/index.js";
import type { RedeliveryOutcome, StreamQuery, TaskJson, TaskListQuery, TaskQuery, TurnObject, TurnOutcome, TurnParams } from "../boundary/index.js";
import { AgentDB } from "../db/agent-db.js";
import { TurnReports } from "../db/turn-reports.js";
import { ErasureRuns, type AgentErasure } from "../db/erasure-run.js";
import { ConfigError } from "../errors/index.js";
import type { RoundStep, TurnContext } from "../round/deps.js";
import { analyticsSink, Telemetry, type EventSink, type EventSubscriber } from "../telemetry/index.js";
import { ObjectEvents } from "../telemetry/object-events.js";
import { Begin } from "./accept.js";
import { Deliveries } from "./deliveries.js";
import { EventHub } from "./event-hub.js";
import type { AgentEnv, AgentRules, LifecycleLimits, LifecycleWords, ObjectParts } from "./lifecycle.js";
import { PushConfigs } from "./push-configs.js";
import { Recovery, type ReconcileAction } from "./recovery.js";
import { DEFAULT_RECOVERY_POLICY, type RecoveryPolicy } from "./recovery-policy.js";
import { SelfOrigin } from "./self-origin.js";
import { Streams } from "./streams.js";
import { appendArtifactChunk } from "./task-events.js";
import { Tasks } from "./tasks.js";
import { Turns } from "./turns.js";
import { TurnSchedules } from "./turn-schedules.js";
import { terminate } from "./turn-workflows.js";

/** The modules the object's calls go to, each over the same parts. */
interface ObjectCore {
  begin: Begin;
  tasks: Tasks;
  streams: Streams;
  pushConfigs: PushConfigs;
  turns: Turns;
  deliveries: Deliveries;
  recovery: Recovery;
  erasures: ErasureRuns;
}

/**
 * The Durable Object of one verified caller of one tenant: it owns that
 * caller's tasks and turns. The edge reaches it only after the caller's token
 * verified and only under the caller's own identity, so another caller's
 * task is simply not in its tables.
 *
 * A thin shell: it implements the edge's contract (`CallerObject`) and the
 * turn Workflow's (`TurnObject`) by handing each call to a module of its own
 * (accept, tasks, streams, push configs, turns, deliveries, recovery), all
 * over the same storage, event hub, events and the agent's rules. One guard
 * answers every call of an agent that could not start. `DynamicAgent`
 * supplies the rounds and the rules.
 */
export abstract class TaskAgent<Env extends Cloudflare.Env & AgentEnv = Cloudflare.Env & AgentEnv> extends Agent<Env> implements CallerObject, TurnObject {
  protected readonly agentDb: AgentDB;
  /** Who in this instance follows which task's events: streams and blocking sends. */
  readonly #hub = new EventHub();
  readonly #origin = new SelfOrigin();
  readonly #core: ObjectCore;
  #telemetry: Telemetry | undefined;
  #agentEvents: ObjectEvents;
  /** The start-up check that refused this agent, if one did. */
  #startFailure: ConfigError | undefined;

  constructor(ctx: DurableObjectState, env: Env) {
    super(ctx, env);
    this.agentDb = new AgentDB(ctx.storage, TERMINAL_STATE_NAMES);
    this.agentDb.onEventAppended((row) => this.#hub.deliver(row));
    this.#agentEvents = new ObjectEvents(
      ctx.storage.kv,
      this.#lookup,
      () => (this.#telemetry ??= new Telemetry({ sinks: this.eventSinks(), subscribers: this.eventSubscribers(), secrets: this.eventSecrets() })),
      () => this.eventLines(),
    );
    this.#core = this.#wire();
    // Input gates hold every RPC until this resolves: no call sees a table
    // that is not there yet, nor a scope an erasure left half erased.
    void ctx.blockConcurrencyWhile(async () => {
      await this.agentDb.migrate();
      try {
        await this.prepareAgent();
        // The agent's stores take part in an erasure: one a reset cut short is finished once they are ready.
        await this.#core.erasures.resume();
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
        const scope = new ObjectEvents(ctx.storage.kv, this.#lookup, () => telemetry).scope();
        void telemetry.emit("agent.start_failed", scope, { code, culpritKind: culprit.kind, culpritName: culprit.name }, [crypto.randomUUID()]);
      }
    });
  }

  /** What events read of a task they are about. */
  readonly #lookup = {
    contextOf: (taskId: string) => this.agentDb.tasks.get(taskId)?.contextId,
    turnOf: (taskId: string) => this.agentDb.turns.get(taskId)?.instanceId,
    traceOf: (taskId: string) => turnTraceOf(this.agentDb.turns.get(taskId)?.paramsJson)?.traceId,
  };

  /** The modules, over the parts they share; the agent's rules are read from this object's seams at each use. */
  #wire(): ObjectCore {
    const agent: AgentRules = {
      words: () => this.lifecycleWords(),
      limits: () => this.lifecycleLimits(),
      recovery: () => this.recoveryPolicy(),
      workflow: () => this.turnWorkflow(),
      carriesText: () => this.eventsCarryText(),
      directReply: (message) => this.directReply(message),
      outcomeAtStart: (task) => this.outcomeAtStart(task),
      runRound: (turn, round, signal) => this.runRound(turn, round, signal),
      afterTurn: (task) => this.afterTurn(task),
      canceled: (taskId) => this.onCanceled(taskId),
      tasksDeleted: (ids) => this.onTasksDeleted(ids),
      erasure: () => this.erasure(),
      schedule: (at, callback, payload) => this.schedule(at, callback, payload),
      agentId: () => this.ctx.id.toString(),
      signingKey: () => this.env.A2A_SIGNING_KEY,
    };
    const schedules = new TurnSchedules(
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
      agent.recovery,
    );
    const reports = new TurnReports(this.agentDb.turns, () => agent.recovery().reportWithinMs);
    const parts: ObjectParts = { db: this.agentDb, hub: this.#hub, events: this.#agentEvents, origin: this.#origin, reports, schedules, agent };
    const streams = new Streams(parts);
    const deliveries = new Deliveries(parts);
    const turns = new Turns(parts, deliveries);
    return {
      begin: new Begin(parts, streams),
      tasks: new Tasks(parts, (taskId) => turns.abortRound(taskId)),
      streams,
      pushConfigs: new PushConfigs(parts),
      turns,
      deliveries,
      recovery: new Recovery(parts, turns, deliveries, () => this.schedule(1, "sweepRetention")),
      erasures: new ErasureRuns(
        this.agentDb,
        () => ({
          exclusive: (work) => this.ctx.blockConcurrencyWhile(work),
          agent: this.erasure(),
          stopGone: (exists) => (turns.abortGone(exists), this.#hub.endGone(exists)),
          terminate: (instanceIds) => terminate(parts, instanceIds),
        }),
        ({ record, erased, unerased, durationMs }) => {
          const data = { scope: record.scope.kind, ...erased, unerased: unerased.length, durationMs };
          this.#agentEvents.emit("erasure.done", undefined, data, ["erasure", record.id, record.startedAt]);
        },
      ),
    };
  }

  /** The modules, unless the agent could not start. */
  #live(): ObjectCore | undefined {
    return this.#startFailure ? undefined : this.#core;
  }

  /** The one guard: an agent that could not start answers every call with AGENT_START_FAILED, naming the culprit. */
  async #call<T>(run: (core: ObjectCore) => Verdict<T> | Promise<Verdict<T>>, tenant?: string): Promise<Verdict<T>> {
    const core = this.#live();
    if (!core) return refused(toRpcErrorValue(agentStartFailed(tenant, this.#startFailure!)));
    return run(core);
  }

  // ── the agent's seams ────────────────────────────────────────────────────

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

  /**
   * A turn this agent ends as it starts, before the task is marked working
   * and before any round: its outcome, written as the task's terminal state.
   * `undefined` (the default): the turn starts as usual.
   */
  protected outcomeAtStart(_task: TaskJson): TurnOutcome | undefined {
    return undefined;
  }

  /** One round of the turn; `signal` aborts when the task is canceled. */
  protected abstract runRound(turn: TurnContext, round: number, signal: AbortSignal): Promise<RoundStep>;

  /** After a turn's terminal write (the conversation's compaction runs here). */
  protected afterTurn(_task: TaskJson): void {}

  protected abstract lifecycleWords(): LifecycleWords;

  protected abstract lifecycleLimits(): LifecycleLimits;

  /** Called after a task was canceled here (the loop stops its subagents). */
  protected onCanceled(_taskId: string): void {}

  /** Called after retention deleted tasks, with their subtasks' ids (the loop deletes what is left of their subagents). */
  protected async onTasksDeleted(_subtaskIds: readonly string[]): Promise<void> {}

  /** The agent's part in one erasure (docs/retention.md "Erasure"): its subagents, its plugins' stores and state. */
  protected abstract erasure(): AgentErasure;

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
    return this.#origin.get();
  }

  /** Like {@link selfOrigin}, but throws a clear error when no turn has arrived yet (constructor, alarms). */
  protected requireSelfOrigin(): string {
    return this.#origin.require();
  }

  /** Who hears this object's events besides the log (an agent's plugins, through `DynamicAgent`). Read once, at the first event. */
  protected eventSubscribers(): EventSubscriber[] {
    return [];
  }

  /** Values no event may carry (docs/telemetry.md): the deployment's secrets; an agent adds its plugins'. */
  protected eventSecrets(): (string | undefined)[] {
    return [this.env.A2A_SIGNING_KEY, this.env.OPENAI_API_KEY];
  }

  /** Where events go: the log (a turn's in two lines, or one per event) and the Analytics Engine dataset when one is bound. */
  protected eventSinks(): EventSink[] {
    const log = this.#agentEvents.log.sink;
    return this.env.A2A_ANALYTICS ? [log, analyticsSink(this.env.A2A_ANALYTICS)] : [log];
  }

  /** Whether the log gets one line per event instead of two a turn (an agent's `telemetry.eventLines`). */
  protected eventLines(): boolean {
    return false;
  }

  /** This object's events (docs/telemetry.md), scoped to its tenant and caller hash. */
  protected get agentEvents(): ObjectEvents {
    return this.#agentEvents;
  }

  /** Whether events may carry message text (an agent's `telemetry.messageText`). */
  protected eventsCarryText(): boolean {
    return false;
  }

  /**
   * Whether a stream follows the task now (a streaming send's, or a
   * SubscribeToTask): its model calls then stream the answer as it is
   * written; otherwise each is made in one request and its answer written
   * whole (docs/protocol.md "Streamed for a reader only").
   */
  protected streamFollows(taskId: string): boolean {
    return this.#hub.follows(taskId);
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

  // ── the edge's calls (CallerObject) ──────────────────────────────────────

  beginTask(input: BeginTask) {
    return this.#call((core) => core.begin.task(input), input.tenant);
  }
  getTask(query: TaskQuery) {
    return this.#call((core) => core.tasks.get(query));
  }
  listTasks(query: TaskListQuery) {
    return this.#call((core) => core.tasks.list(query));
  }
  cancelTask(taskId: string) {
    return this.#call((core) => core.tasks.cancel(taskId));
  }
  awaitTask(query: TaskQuery) {
    return this.#call((core) => core.streams.await(query));
  }
  streamTask(query: StreamQuery) {
    return this.#call((core) => core.streams.stream(query));
  }
  /** Unguarded: a stream's slot is freed whatever the agent's state. */
  async releaseStream(streamId: string) {
    return this.#core.streams.release(streamId);
  }
  putPushConfig(taskId: string, config: PushConfigJson, from: PushConfigFrom) {
    return this.#call((core) => core.pushConfigs.put(taskId, config, from));
  }
  getPushConfig(taskId: string, configId: string) {
    return this.#call((core) => core.pushConfigs.get(taskId, configId));
  }
  listPushConfigs(taskId: string) {
    return this.#call((core) => core.pushConfigs.list(taskId));
  }
  deletePushConfig(taskId: string, configId: string) {
    return this.#call((core) => core.pushConfigs.delete(taskId, configId));
  }
  deleteContext(contextId: string) {
    return this.#call(async (core) => accepted(await core.erasures.erase({ kind: "context", contextId })));
  }
  deleteCallerData() {
    return this.#call(async (core) => accepted(await core.erasures.erase({ kind: "caller" })));
  }

  // ── the turn Workflow's calls (TurnObject) ───────────────────────────────

  runTurn(taskId: string, origin: string, round: number, instanceId: string, held?: string[]) {
    return this.#call((core) => core.turns.run(taskId, origin, round, instanceId, held));
  }
  endUnfinished(taskId: string) {
    return this.#call((core) => core.turns.endUnfinished(taskId));
  }
  turnResumed(taskId: string, requestId: string) {
    return this.#call((core) => core.turns.resumed(taskId, requestId));
  }
  deliveryOf(taskId: string) {
    return this.#call((core) => core.deliveries.of(taskId));
  }
  /** Unguarded, as `turnDelivered`: a Workflow's bookkeeping of its own turn. */
  async turnProgress(taskId: string, nextAttemptWithinMs: number) {
    return this.#core.deliveries.progress(taskId, nextAttemptWithinMs);
  }
  turnDelivered(taskId: string, instanceId: string) {
    return this.#core.deliveries.delivered(taskId, instanceId);
  }
  pushTargets(taskId: string) {
    return this.#call((core) => core.deliveries.targets(taskId));
  }
  pushOf(taskId: string, configId: string, seq: number) {
    return this.#call((core) => core.deliveries.push(taskId, configId, seq));
  }
  deadLetter(taskId: string, letters: DeadLetter[]) {
    return this.#call((core) => core.deliveries.deadLetter(taskId, letters));
  }
  redeliveryTargets(taskId: string) {
    return this.#call((core) => core.deliveries.redeliveryTargets(taskId));
  }
  redelivered(taskId: string, outcome: RedeliveryOutcome) {
    return this.#call((core) => core.deliveries.redelivered(taskId, outcome));
  }

  // ── a turn's parts on their own (specs and agents that drive a turn; the Workflow runs both inside runTurn) ──

  /** The turn's start: reported alive, a submitted task marked working. */
  turnStarted(taskId: string, origin: string) {
    return this.#call((core) => core.turns.started(taskId, origin));
  }
  /** The guarded terminal write of `outcome`, or of the outcome the turn's round recorded. */
  finishTurn(taskId: string, outcome?: TurnOutcome) {
    return this.#call((core) => core.turns.finish(taskId, outcome));
  }

  // ── the SDK scheduler's callbacks (public only because it calls them by name) ──

  /** Every wake of the object: open turns mean a reconcile schedule. A subclass that overrides this calls `super`. */
  override async onStart(): Promise<void> {
    await this.#live()?.recovery.onStart();
  }

  /** One pass over the open turns, on the object's schedule while any is open. */
  async reconcileTurns(): Promise<Map<string, ReconcileAction>> {
    return (await this.#live()?.recovery.reconcile()) ?? new Map();
  }

  /** Retention, in bounded batches (`Recovery.sweep`). */
  async sweepRetention(): Promise<{ tasks: number; messageIds: number; conversations: number }> {
    return (await this.#live()?.recovery.sweep()) ?? { tasks: 0, messageIds: 0, conversations: 0 };
  }

  /** A request to a human expires (the object's own alarm). */
  async expireRequest(payload: { requestId: string }): Promise<void> {
    await this.#live()?.turns.expireRequest(payload.requestId);
  }
}
