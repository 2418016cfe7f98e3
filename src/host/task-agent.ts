import { Agent } from "agents";
import { isTerminal, parseStateName } from "../a2a/task-state.js";
import { settle, type Outcome } from "../a2a/outcome.js";
import { AgentDB } from "../db/agent-db.js";
import type {
  BeginTaskInput,
  BeginTaskResult,
  ListTasksPage,
  ListTasksQuery,
  PushConfigJson,
  SaveVerdict,
  TaskJson,
} from "../db/task-store.js";
import { turnInstanceId, type TurnAgentRpc, type TurnOutcome, type TurnParams, type TurnStart, type TurnStep } from "../turn/turn-protocol.js";
import { reconcileTurns } from "./reconcile-turns.js";
import { SelfOrigin } from "./self-origin.js";
import type { TaskAgentRpc } from "./task-agent-rpc.js";
import { requestText, terminalTask } from "./terminal-task.js";
import { DEFAULT_TURN_POLICY, type TurnPolicy } from "./turn-policy.js";

/** What a tenant's turn function is handed. */
export interface TurnContext {
  task: TaskJson;
  /** The text of the message that opened the task. */
  text: string;
  /** This deployment's origin (see `requireSelfOrigin`). */
  origin: string;
}

/**
 * The Durable Object of one verified caller of one tenant: it owns that
 * caller's tasks and turns. The edge reaches it only after the caller's token
 * verified and only under the caller's own `identity.key`, so another
 * caller's task is simply not in its tables.
 *
 * Subclasses write `handleTurn`; the lifecycle around it (idempotent accept,
 * the Workflow hand-off, the guarded terminal write, cancel, the alarm that
 * re-drives a lost turn) is here so every agent gets it the same way.
 */
export class TaskAgent<Env extends Cloudflare.Env = Cloudflare.Env> extends Agent<Env> implements TaskAgentRpc, TurnAgentRpc {
  protected readonly agentDb: AgentDB;
  readonly #selfOrigin = new SelfOrigin();
  /** Turns whose model work is executing in this instance right now. */
  readonly #running = new Set<string>();

  constructor(ctx: DurableObjectState, env: Env) {
    super(ctx, env);
    this.agentDb = new AgentDB(ctx.storage);
    // Input gates hold every RPC until this resolves: no call sees a table
    // that is not there yet.
    void ctx.blockConcurrencyWhile(async () => {
      await this.agentDb.migrate();
      await this.prepareAgent();
    });
  }

  /**
   * Runs once per instance, inside the start-up gate, after the core
   * migrations: whatever throws here fails the object's start, not a request.
   */
  protected async prepareAgent(): Promise<void> {}

  // ── seams ────────────────────────────────────────────────────────────────

  /** The tenant's turn. Runs inside a durable Workflow step; a returned failure ends the task `failed`. */
  protected async handleTurn(_turn: TurnContext): Promise<TurnOutcome> {
    throw new Error(`${this.constructor.name} does not implement handleTurn()`);
  }

  /** The turn Workflow binding; by default `env.TURN_WORKFLOW`. */
  protected turnWorkflow(): Workflow<TurnParams> {
    const workflow = (this.env as { TURN_WORKFLOW?: Workflow<TurnParams> }).TURN_WORKFLOW;
    if (!workflow) throw new Error("No turn Workflow: bind one as TURN_WORKFLOW or override turnWorkflow()");
    return workflow;
  }

  protected turnPolicy(): TurnPolicy {
    return DEFAULT_TURN_POLICY;
  }

  /** This deployment's origin, learned from the first turn this object served; `undefined` before that. */
  protected selfOrigin(): string | undefined {
    return this.#selfOrigin.get();
  }

  /** Like {@link selfOrigin}, but throws a clear error when no turn has arrived yet (constructor, alarms). */
  protected requireSelfOrigin(): string {
    return this.#selfOrigin.require();
  }

  // ── the edge's calls ─────────────────────────────────────────────────────

  /**
   * Records the `submitted` task of a turn and hands it to a Workflow, or
   * returns the task already recorded for this `messageId` and starts nothing.
   */
  async beginTask(input: BeginTaskInput & { tenant: string; origin: string }): Promise<Outcome<BeginTaskResult>> {
    this.#selfOrigin.learn(input.origin);
    const messageId = String((input.message as { messageId?: unknown })?.messageId ?? "");
    const agentId = this.ctx.id.toString();
    const instanceId = await turnInstanceId(agentId, messageId);
    // From here to the end of the block nothing awaits, so the task and its
    // turn record are written together and no retry can interleave.
    const outcome = settle(() => {
      const begun = this.agentDb.tasks.begin(input);
      if (begun.created) {
        const params: TurnParams = { tenant: input.tenant, agentId, taskId: begun.task.id, messageId, origin: input.origin };
        this.agentDb.turns.open(begun.task.id, instanceId, params);
      }
      return begun;
    });
    if (outcome.ok && outcome.value.created) {
      await this.#ensureAlarm();
      const turn = this.agentDb.turns.get(outcome.value.task.id)!;
      // Not awaited: the reply to SendMessage does not wait for the Workflow
      // engine. If this object goes away before the instance exists, the
      // alarm armed above finds the turn's instance unknown and starts it.
      this.ctx.waitUntil(this.#startWorkflow(turn.instanceId, JSON.parse(turn.paramsJson) as TurnParams));
    }
    return outcome;
  }

  async getTask(taskId: string, historyLength?: number): Promise<TaskJson | null> {
    return this.agentDb.tasks.get(taskId, historyLength);
  }

  /** Refuses (and says so) once the task is terminal. */
  async saveTask(task: TaskJson): Promise<SaveVerdict> {
    return this.agentDb.tasks.save(task);
  }

  /** Cancels a task that is not terminal; its turn stops at the next step and announces `canceled`. */
  async cancelTask(taskId: string): Promise<Outcome<TaskJson>> {
    return settle(() => this.agentDb.tasks.cancel(taskId, this.canceledMessage()));
  }

  /** The agent's last word on a canceled task; none by default. */
  protected canceledMessage(): string | undefined {
    return undefined;
  }

  async listTasks(query: ListTasksQuery): Promise<Outcome<ListTasksPage>> {
    return settle(() => this.agentDb.tasks.list(query));
  }

  async putPushConfig(taskId: string, config: PushConfigJson): Promise<Outcome<PushConfigJson>> {
    return settle(() => this.agentDb.pushConfigs.put(taskId, config));
  }

  async getPushConfig(taskId: string, id: string): Promise<Outcome<PushConfigJson>> {
    return settle(() => this.agentDb.pushConfigs.get(taskId, id));
  }

  async listPushConfigs(taskId: string): Promise<Outcome<PushConfigJson[]>> {
    return settle(() => this.agentDb.pushConfigs.list(taskId));
  }

  async deletePushConfig(taskId: string, id: string): Promise<Outcome<null>> {
    return settle(() => (this.agentDb.pushConfigs.delete(taskId, id), null));
  }

  // ── the turn Workflow's calls ────────────────────────────────────────────

  async turnStarted(taskId: string, origin: string): Promise<TurnStart> {
    this.#selfOrigin.learn(origin);
    this.agentDb.turns.progress(taskId);
    const task = this.agentDb.tasks.get(taskId);
    if (!task) return { proceed: false, state: "TASK_STATE_UNSPECIFIED" };
    const state = stateOf(task);
    if (isTerminal(parseStateName(state)!)) return { proceed: false, state };
    if (state === "TASK_STATE_SUBMITTED") {
      const verdict = this.agentDb.tasks.save({ ...task, status: { state: "TASK_STATE_WORKING" } });
      if (!verdict.saved) return { proceed: false, state: verdict.reason === "terminal" ? stateOf(verdict.task) : "TASK_STATE_UNSPECIFIED" };
    }
    return { proceed: true };
  }

  async runTurn(taskId: string, origin: string, round = 1): Promise<TurnStep | null> {
    this.#selfOrigin.learn(origin);
    const task = this.agentDb.tasks.get(taskId);
    if (!task || isTerminal(parseStateName(stateOf(task))!)) return null;
    // A re-driven Workflow runs this step again: the recorded outcome is the
    // answer, so a turn costs one model exchange however often it is re-driven.
    const recorded = this.agentDb.turns.get(taskId)?.outcomeJson;
    if (recorded) return { kind: "done", outcome: JSON.parse(recorded) as TurnOutcome };
    this.agentDb.turns.progress(taskId);
    this.#running.add(taskId);
    try {
      const step = await this.runRound({ task, text: requestText(task), origin: this.#selfOrigin.require() }, round);
      if (step.kind === "done") this.agentDb.turns.recordOutcome(taskId, step.outcome);
      else this.agentDb.turns.progress(taskId);
      return step;
    } finally {
      this.#running.delete(taskId);
    }
  }

  /** One round of the turn; a single-inference agent answers in its first. */
  protected async runRound(turn: TurnContext, _round: number): Promise<TurnStep> {
    return { kind: "done", outcome: await this.handleTurn(turn) };
  }

  async finishTurn(taskId: string, outcome: TurnOutcome): Promise<{ saved: boolean; state: string }> {
    this.agentDb.turns.progress(taskId);
    const task = this.agentDb.tasks.get(taskId);
    if (!task) return { saved: false, state: "TASK_STATE_UNSPECIFIED" };
    const verdict = this.agentDb.tasks.save(terminalTask(task, outcome));
    if (verdict.saved) return { saved: true, state: outcome.state };
    return { saved: false, state: verdict.reason === "terminal" ? stateOf(verdict.task) : "TASK_STATE_UNSPECIFIED" };
  }

  async deliveryOf(taskId: string): Promise<{ task: TaskJson; configs: PushConfigJson[] } | null> {
    this.agentDb.turns.progress(taskId);
    const task = this.agentDb.tasks.get(taskId);
    return task ? { task, configs: this.agentDb.pushConfigs.all(taskId) } : null;
  }

  async turnProgress(taskId: string): Promise<void> {
    this.agentDb.turns.progress(taskId);
  }

  async turnDelivered(taskId: string): Promise<void> {
    this.agentDb.turns.close(taskId);
    if (this.agentDb.turns.size === 0 && this.lifecycle.jobs.get(RECONCILE_JOB)) await this.lifecycle.jobs.cancel(RECONCILE_JOB);
  }

  // ── no turn is left hanging ──────────────────────────────────────────────

  /** Every wake of this object (the reconcile timer below, or anything else) looks at open turns. */
  override async onAlarm(): Promise<void> {
    await super.onAlarm();
    await reconcileTurns({
      ledger: this.agentDb.turns,
      tasks: this.agentDb.tasks,
      workflow: this.turnWorkflow(),
      policy: this.turnPolicy(),
      start: (id, params) => this.#startWorkflow(id, params),
      runningHere: (taskId) => this.#running.has(taskId),
    });
  }

  /**
   * The reconcile timer is a job on the SDK's lifecycle queue, which owns the
   * object's one physical alarm: it re-arms itself while any turn is open.
   */
  override _onHostJob(fn: string, context: unknown) {
    if (fn !== RECONCILE_JOB) return super._onHostJob(fn, context as never);
    return this.agentDb.turns.size > 0 ? { rescheduleAt: Date.now() + this.turnPolicy().reconcileEveryMs } : undefined;
  }

  async #ensureAlarm(): Promise<void> {
    if (!this.lifecycle.jobs.get(RECONCILE_JOB)) {
      await this.lifecycle.jobs.push({ id: RECONCILE_JOB, fn: RECONCILE_JOB, time: Date.now() + this.turnPolicy().reconcileEveryMs });
    }
  }

  /** Creates the instance; one that already exists counts as started. */
  async #startWorkflow(id: string, params: TurnParams): Promise<void> {
    const workflow = this.turnWorkflow();
    try {
      await workflow.create({ id, params });
    } catch (error) {
      try {
        await workflow.get(id);
      } catch {
        // Neither created nor there: the alarm retries it.
        console.error(`turn ${id}: could not start its Workflow`, error);
      }
    }
  }
}

const RECONCILE_JOB = "reconcileTurns";

const stateOf = (task: TaskJson): string => ((task.status as { state?: string } | undefined)?.state ?? "TASK_STATE_UNSPECIFIED");

