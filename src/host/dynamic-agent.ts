import { testClockOf } from "../a2a/test-clock.js";
import { resolveConfig, type AgentConfig, type AgentConfigInput } from "../agent/config.js";
import { validatePolicy, type AgentPolicy } from "../agent/policy.js";
import type { ModelChoice } from "../agent/providers.js";
import type { TaskJson } from "../boundary/index.js";
import type { AgentErasure } from "../db/erasure-run.js";
import { ConfigError } from "../errors/index.js";
import type { EventCatalogue, EventSubscriber } from "../telemetry/index.js";
import { ensurePluginStores, eraseStores, unerasedRows } from "../db/plugin-stores.js";
import type { AgentPlugin, PluginHost } from "../plugin/contract.js";
import { createAgentRuntime, type AgentRuntime } from "../plugin/runtime.js";
import { mcpServersPlugin } from "../mcp/index.js";
import { compactAfterTurn, summarizeWith } from "../round/conversation.js";
import type { LoopDeps, RoundStep, TurnContext } from "../round/deps.js";
import { SubtaskRunner, subagentFacets, type Subagents } from "../round/subtasks.js";
import { runTurn } from "../round/turn.js";
import { AgentNotStarted } from "./errors.js";
import type { AgentEnv, LifecycleLimits, LifecycleWords } from "./lifecycle.js";
import { appendArtifactChunk } from "./task-events.js";
import { TaskAgent } from "./task-agent.js";

/**
 * The Durable Object every agent extends. Four seams are the author's —
 * `agentConfig()`, `agentPlugins(host)`, `agentSoul(capabilities)` and
 * `agentPolicy()` — and the rest is built from them once per instance, at
 * start-up: the validated config and policy, the plugin runtime (a wrong
 * plugin set fails the start with a sentence), the plugins' tables, and one
 * continuous session per verified caller. Nothing is resolved at import time,
 * when `env` does not exist yet.
 *
 * Every agent runs the same turn loop (`runTurn`, src/round): a
 * single-inference agent is the loop with one round and no subtask types; an
 * agent that delegates names its subagents (`subagents()`), and the loop runs
 * its subtasks in them.
 */
export abstract class DynamicAgent<Env extends Cloudflare.Env & AgentEnv = Cloudflare.Env & AgentEnv> extends TaskAgent<Env> {
  #config: AgentConfig | undefined;
  #policy: AgentPolicy | undefined;
  #runtime: AgentRuntime | undefined;
  #subtasks: SubtaskRunner | undefined;

  // ── the author's seams ───────────────────────────────────────────────────

  /** Model ids (with fallback), budgets and limits; validated by `resolveConfig`. */
  protected agentConfig(): AgentConfigInput {
    return {};
  }

  /** The capabilities this agent has. */
  protected agentPlugins(_host: PluginHost<Env>): AgentPlugin[] {
    return [];
  }

  /** The system prompt, given every plugin's capability sentence. Core ships none. */
  protected abstract agentSoul(capabilities: string): string;

  /** Every other sentence the agent says to its users or its model. Core ships none. */
  protected abstract agentPolicy(): AgentPolicy;

  /** The models a turn uses; `undefined` picks them from the environment (see `chooseModels`). */
  protected modelChoices(): ModelChoice[] | undefined {
    return undefined;
  }

  /**
   * An agent that delegates says so here: the `RecipeSubagentBase` subclass
   * its subtasks run in (exported from the Worker under its own name). Its
   * plugins declare the subtask types, its policy the `rounds` words.
   * `undefined` (the default): it delegates nothing, and a plugin that
   * declares a subtask type fails its start.
   */
  protected subagents(): Subagents<Env> | undefined {
    return undefined;
  }

  // ── what core builds from them ───────────────────────────────────────────

  protected get config(): AgentConfig {
    if (!this.#config) throw new AgentNotStarted("the agent has not started yet");
    return this.#config;
  }

  protected get policy(): AgentPolicy {
    if (!this.#policy) throw new AgentNotStarted("the agent has not started yet");
    return this.#policy;
  }

  protected get runtime(): AgentRuntime {
    if (!this.#runtime) throw new AgentNotStarted("the agent has not started yet");
    return this.#runtime;
  }

  protected override async prepareAgent(): Promise<void> {
    const config = resolveConfig(this.agentConfig());
    const plugins = this.agentPlugins({ env: this.env, config, storage: this.ctx.storage });
    if (config.mcp.servers.length) {
      // The servers' state changes are events; `unavailable` is read per turn: the policy is validated after the plugins are.
      const report = (event: EventCatalogue["mcp.server"]) => this.agentEvents.emit("mcp.server", undefined, event, ["mcp", event.server, crypto.randomUUID()]);
      const unavailable = (servers: string[]) => this.policy.tools?.mcpUnavailable?.(servers) ?? "";
      plugins.push(mcpServersPlugin(this.mcp, { config: config.mcp, env: this.env, report, unavailable }));
    }
    const runtime = createAgentRuntime({ plugins, env: this.env, config });
    const delegates = runtime.subtaskTypes.size > 0;
    const subagents = this.subagents();
    if (delegates && !subagents) {
      const [type] = runtime.subtaskTypes.keys();
      throw new ConfigError(
        { kind: "plugin", name: runtime.plugins.find((p) => p.subtaskTypes?.some((t) => t.key === type))?.key ?? String(type) },
        `a plugin declares the subtask type ${JSON.stringify(type)}, but ${this.constructor.name} runs no subtasks: name its subagent class in subagents() to delegate`,
        { code: "ERR_SUBTASKS_WITHOUT_SUBAGENTS" },
      );
    }
    const { exposure, defaultExposure } = config.tools;
    const searches = defaultExposure === "search" || Object.values(exposure).includes("search");
    const policy = validatePolicy(this.agentPolicy(), { delegates, searches, mcp: config.mcp.servers.length > 0 });
    ensurePluginStores(this.agentDb.db, this.ctx.storage.sql, runtime.stores);
    this.#config = config;
    this.#policy = policy;
    this.#runtime = runtime;
    if (subagents) this.#subtasks = this.#subtaskRunner(subagents.subagentClass, config);
  }

  /** The subtask runner, over this object's facets of `subagentClass`. */
  #subtaskRunner(subagentClass: Subagents<Env>["subagentClass"], config: AgentConfig): SubtaskRunner {
    return new SubtaskRunner({
      db: this.agentDb,
      config,
      facets: subagentFacets(this.dynamicAgents, subagentClass),
      events: this.agentEvents,
      waitUntil: (promise) => this.ctx.waitUntil(promise),
    });
  }

  /** Tells a canceled task's running subagents to stop at their next chunk. */
  protected override onCanceled(taskId: string): void {
    this.#subtasks?.cancel(taskId);
  }

  /** What is left of deleted tasks' subagents goes with them. */
  protected override async onTasksDeleted(subtaskIds: readonly string[]): Promise<void> {
    await this.#subtasks?.deleted(subtaskIds);
  }

  /** Its part in one erasure: its subtasks' subagents, its plugins' stores (in each batch of rows) and state; the stores that kept rows. */
  protected override erasure(): AgentErasure {
    const { sql } = this.ctx.storage;
    const { stores } = this.runtime;
    const failed = new Set<string>();
    return {
      subagentsOf: (ids) => this.#subtasks?.withSubagents(ids) ?? [],
      plugins: (scope) => eraseStores(sql, stores, scope, failed),
      cleanup: async (scope, subagents) => {
        const deleted = (await this.#subtasks?.deleted(subagents)) ?? 0;
        await this.runtime.onErased(scope.kind === "caller" ? scope : { ...scope, taskIds: [] });
        return { subagents: deleted, unerased: unerasedRows(sql, stores, failed) };
      },
    };
  }

  /** The plugins that subscribe hear every event of this object. */
  protected override eventSubscribers(): EventSubscriber[] {
    return this.runtime.plugins.flatMap((plugin) => (plugin.onEvent ? [plugin.onEvent] : []));
  }

  /** The plugins' secrets join the deployment's: no event carries one. */
  protected override eventSecrets(): (string | undefined)[] {
    // Before the plugins started (a start that failed) only the deployment's are known.
    return [...super.eventSecrets(), ...(this.#runtime?.secretValues ?? [])];
  }

  protected override eventsCarryText(): boolean {
    return this.config.telemetry.messageText;
  }
  /** Before the config is read (a start that failed): the default, two lines a turn. */
  protected override eventLines(): boolean {
    return this.#config?.telemetry.eventLines ?? false;
  }

  protected override lifecycleWords(): LifecycleWords {
    const { abandoned, unfinished, canceled } = this.policy.messages;
    return { abandoned, unfinished, canceled, hitl: this.policy.hitl };
  }

  protected override lifecycleLimits(): LifecycleLimits {
    const { limits, retention, hitl } = this.config;
    // Test clocks shorten a request's expiry and a dead letter's keep (docs/gatekeeper.md "Test clocks").
    const clock = testClockOf(this.env);
    return {
      maxInFlightTurns: limits.maxInFlightTurns,
      maxPendingQuestions: limits.maxPendingQuestions,
      maxPendingDeliveries: limits.maxPendingDeliveries,
      maxOpenStreams: limits.maxOpenStreams,
      tokensPerCallerPerDay: limits.tokensPerCallerPerDay,
      retention: clock.deadLetterRetentionMs === undefined ? retention : { ...retention, deadLetterKeepMs: clock.deadLetterRetentionMs },
      hitlExpiresAfterMs: clock.questionExpiryMs ?? hitl.expiresAfterMinutes * 60_000,
    };
  }

  /** Which conversation a task belongs to: its context's, or the caller's one (`history.conversation`). */
  protected conversationOf(task: TaskJson): string {
    return this.config.history.conversation === "caller" ? "caller" : task.contextId;
  }

  /** After a turn ends, its conversation is compacted if it grew past the threshold (in the background, one at a time). */
  protected override afterTurn(task: TaskJson): void {
    this.ctx.waitUntil(compactAfterTurn(this.#loopDeps(), task, (instructions, transcript) => this.summarize(instructions, transcript)));
  }

  /** The model call a compaction summarizes with, under the agent's own instructions, billed to the caller's day. */
  protected summarize(instructions: string, transcript: string): Promise<string> {
    return summarizeWith(this.#loopDeps(), instructions, transcript);
  }

  /** One round of the one turn loop (src/round/turn.ts), over this object's stores, events and streams. */
  protected override runRound(turn: TurnContext, round: number, signal: AbortSignal): Promise<RoundStep> {
    return runTurn(this.#loopDeps(), turn, round, signal);
  }

  /** What the loop is handed: this agent's config, policy, plugins and models, and this object's stores, events and streams. */
  #loopDeps(): LoopDeps {
    const { config, policy, runtime } = this;
    return {
      db: this.agentDb,
      config,
      policy,
      runtime,
      soul: this.agentSoul(runtime.capabilities),
      env: this.env,
      models: this.modelChoices(),
      events: this.agentEvents,
      secrets: this.eventSecrets(),
      conversationOf: (task) => this.conversationOf(task),
      appendArtifact: (task, artifact, chunk) => appendArtifactChunk(this.agentDb, task, artifact, chunk),
      streamFollows: (taskId) => this.streamFollows(taskId),
      ...(this.#subtasks ? { subtasks: this.#subtasks } : {}),
    };
  }
}
