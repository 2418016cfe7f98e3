import { Sessions } from "agents/sessions";
import { resolveConfig, type AgentConfig, type AgentConfigInput } from "../agent/config.js";
import { generateWithFallback } from "../agent/generate.js";
import { validatePolicy, type AgentPolicy } from "../agent/policy.js";
import type { ModelChoice } from "../agent/providers.js";
import { bindSession, type SessionLike } from "../agent/session.js";
import type { TurnStep } from "../boundary/index.js";
import { ConfigError } from "../errors/index.js";
import { ensurePluginStores } from "../db/plugin-stores.js";
import { runRound } from "./turn-loop.js";
import type { AgentPlugin, PluginHost } from "../plugin/contract.js";
import { createAgentRuntime, type AgentRuntime } from "../plugin/runtime.js";
import { AgentNotStarted } from "./errors.js";
import { TaskAgent, type AgentEnv, type LifecycleLimits, type LifecycleWords, type TurnContext } from "./task-agent.js";

/**
 * The Durable Object every agent extends. Four seams are the author's —
 * `agentConfig()`, `agentPlugins(host)`, `agentSoul(capabilities)` and
 * `agentPolicy()` — and the rest is built from them once per instance, at
 * start-up: the validated config and policy, the plugin runtime (a wrong
 * plugin set fails the start with a sentence), the plugins' tables, and one
 * continuous session per verified caller. Nothing is resolved at import time,
 * when `env` does not exist yet.
 *
 * Every agent runs the same turn loop (`runRound`): a single-inference agent
 * is the loop with one round and no subtask types; `RoundAgentBase` adds the
 * subagents that run delegated subtasks.
 */
export abstract class DynamicAgent<Env extends Cloudflare.Env & AgentEnv = Cloudflare.Env & AgentEnv> extends TaskAgent<Env> {
  protected readonly sessions = new Sessions();
  #config: AgentConfig | undefined;
  #policy: AgentPolicy | undefined;
  #runtime: AgentRuntime | undefined;
  #session: SessionLike | undefined;

  constructor(ctx: DurableObjectState, env: Env) {
    super(ctx, env);
    this.lifecycle.use(this.sessions);
  }

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

  /** Whether this agent runs delegated subtasks (`RoundAgentBase` does). */
  protected runsSubtasks(): boolean {
    return false;
  }

  /** Runs the pending subtasks of a round that delegated; only an agent that {@link runsSubtasks} is ever asked. */
  protected async runRoundSubtasks(_taskId: string, _round: number): Promise<void> {}

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

  protected get session(): SessionLike {
    if (!this.#session) throw new AgentNotStarted("the agent has not started yet");
    return this.#session;
  }

  protected override async prepareAgent(): Promise<void> {
    const config = resolveConfig(this.agentConfig());
    const runtime = createAgentRuntime({ plugins: this.agentPlugins({ env: this.env, config }), env: this.env, config });
    const delegates = runtime.subtaskTypes.size > 0;
    if (delegates && !this.runsSubtasks()) {
      const [type] = runtime.subtaskTypes.keys();
      throw new ConfigError(
        { kind: "plugin", name: runtime.plugins.find((p) => p.subtaskTypes?.some((t) => t.key === type))?.key ?? String(type) },
        `a plugin declares the subtask type ${JSON.stringify(type)}, but ${this.constructor.name} runs no subtasks: extend RoundAgentBase to delegate`,
        { code: "ERR_SUBTASKS_WITHOUT_SUBAGENTS" },
      );
    }
    const policy = validatePolicy(this.agentPolicy(), { delegates });
    ensurePluginStores(this.agentDb.db, this.ctx.storage.sql, runtime.stores);
    this.#config = config;
    this.#policy = policy;
    this.#runtime = runtime;
    this.#session = bindSession(this.sessions.session(), {
      compactAfterTokens: config.history.compactAfterTokens,
      keepRecentTokens: config.history.keepRecentTokens,
      summarize: (prompt) => this.summarize(prompt),
      onMessagesDisplaced: (messages) => runtime.onMessagesDisplaced(messages),
    });
  }

  protected override lifecycleWords(): LifecycleWords {
    const { abandoned, unfinished, canceled } = this.policy.messages;
    return { abandoned, unfinished, canceled };
  }

  protected override lifecycleLimits(): LifecycleLimits {
    return { maxInFlightTurns: this.config.limits.maxInFlightTurns, retention: this.config.retention };
  }

  /** The model call compaction summarizes with; the prompt is the SDK's. */
  protected async summarize(prompt: string): Promise<string> {
    const result = await generateWithFallback({
      env: this.env,
      config: this.config.model,
      messages: [{ role: "user", content: prompt }],
      models: this.modelChoices(),
    });
    // An empty summary leaves history as it is: compaction is skipped, not wrong.
    return result.ok ? result.text : "";
  }

  /** One round of the one turn loop; a round that delegated runs its subtasks, then reports progress. */
  protected override async runRound(turn: TurnContext, round: number): Promise<Exclude<TurnStep, { kind: "ended" }>> {
    const taskId = turn.task.id;
    // No round past the budget: a turn still going there ends, failed, in the agent's words.
    if (round > this.config.rounds.maxRounds) return { kind: "done", outcome: { state: "TASK_STATE_FAILED", text: this.policy.messages.unfinished } };
    const runtime = this.runtime;
    const result = await runRound({
      taskId,
      round,
      text: turn.text,
      origin: turn.origin,
      soul: this.agentSoul(runtime.capabilities),
      config: this.config,
      policy: this.policy,
      runtime,
      session: this.session,
      rounds: this.agentDb.subtasks,
      delegates: this.runsSubtasks(),
      env: this.env,
      models: this.modelChoices(),
    });
    if (result.kind === "answer") return { kind: "done", outcome: { state: result.state, text: result.text } };
    await this.runRoundSubtasks(taskId, round);
    const rows = this.agentDb.subtasks.ofRound(taskId, round);
    const progress = this.policy.rounds?.progress;
    return {
      kind: "continue",
      text: progress
        ? progress({
            round,
            subtasks: rows.length,
            done: rows.filter((r) => r.status === "done").length,
            failed: rows.filter((r) => r.status === "failed").length,
          })
        : "",
    };
  }
}
