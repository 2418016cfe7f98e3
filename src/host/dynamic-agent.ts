import { Sessions } from "agents/sessions";
import { resolveConfig, type AgentConfig, type AgentConfigInput } from "../agent/config.js";
import { generateWithFallback } from "../agent/generate.js";
import type { ModelChoice } from "../agent/providers.js";
import { bindSession, type SessionLike } from "../agent/session.js";
import { runSessionTurn } from "../agent/turn-loop.js";
import { ensurePluginStores } from "../db/plugin-stores.js";
import type { AgentPlugin, PluginHost } from "../plugin/contract.js";
import { createAgentRuntime, type AgentRuntime } from "../plugin/runtime.js";
import type { TurnOutcome } from "../turn/turn-protocol.js";
import { TaskAgent, type TurnContext } from "./task-agent.js";

/**
 * The Durable Object every agent extends. Three seams are the author's —
 * `agentConfig()`, `agentPlugins(host)`, `agentSoul(capabilities)` — and the
 * rest is built from them once per instance, at start-up: the validated
 * config, the plugin runtime (a wrong plugin set fails the start with a
 * sentence), the plugins' tables, and one continuous session per verified
 * caller. Nothing is resolved at import time, when `env` does not exist yet.
 */
export abstract class DynamicAgent<Env extends Cloudflare.Env = Cloudflare.Env> extends TaskAgent<Env> {
  protected readonly sessions = new Sessions();
  #config: AgentConfig | undefined;
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

  /** The models a turn uses; `undefined` picks them from the environment (see `chooseModels`). */
  protected modelChoices(): ModelChoice[] | undefined {
    return undefined;
  }

  // ── what core builds from them ───────────────────────────────────────────

  protected get config(): AgentConfig {
    if (!this.#config) throw new Error("the agent has not started yet");
    return this.#config;
  }

  protected get runtime(): AgentRuntime {
    if (!this.#runtime) throw new Error("the agent has not started yet");
    return this.#runtime;
  }

  protected get session(): SessionLike {
    if (!this.#session) throw new Error("the agent has not started yet");
    return this.#session;
  }

  protected override async prepareAgent(): Promise<void> {
    const config = resolveConfig(this.agentConfig());
    const runtime = createAgentRuntime({ plugins: this.agentPlugins({ env: this.env, config }), env: this.env, config });
    ensurePluginStores(this.agentDb.db, this.ctx.storage.sql, runtime.stores);
    this.#config = config;
    this.#runtime = runtime;
    this.#session = bindSession(this.sessions.session(), {
      compactAfterTokens: config.history.compactAfterTokens,
      keepRecentTokens: config.history.keepRecentTokens,
      summarize: (prompt) => this.summarize(prompt),
      onMessagesDisplaced: (messages) => runtime.onMessagesDisplaced(messages),
    });
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

  protected override async handleTurn(turn: TurnContext): Promise<TurnOutcome> {
    const runtime = this.runtime;
    const result = await runSessionTurn({
      session: this.session,
      config: this.config,
      env: this.env,
      soul: this.agentSoul(runtime.capabilities),
      tools: runtime.tools({ taskId: turn.task.id, origin: turn.origin }),
      taskId: turn.task.id,
      text: turn.text,
      shouldHandle: () => runtime.shouldHandleTurn({ text: turn.text, taskId: turn.task.id }),
      models: this.modelChoices(),
    });
    switch (result.kind) {
      case "declined":
        return { state: "TASK_STATE_COMPLETED", text: "" };
      case "answered":
        return { state: "TASK_STATE_COMPLETED", text: result.text };
      case "failed":
        console.error("turn failed on every model", result.errors);
        return { state: "TASK_STATE_FAILED", text: result.message };
    }
  }
}
