import { resolveConfig, type AgentConfig, type AgentConfigInput } from "../agent/config.js";
import { generateWithFallback } from "../agent/generate.js";
import { validatePolicy, type AgentPolicy } from "../agent/policy.js";
import type { ModelChoice } from "../agent/providers.js";
import type { TaskJson } from "../boundary/index.js";
import { ConfigError } from "../errors/index.js";
import type { EventSubscriber } from "../telemetry/index.js";
import { ensurePluginStores } from "../db/plugin-stores.js";
import { tokensOf } from "../db/usage-store.js";
import { AnswerStream } from "../round/answer-stream.js";
import { subtaskAnswers, subtaskRequest, type SubtaskAnswer, type SubtaskAsk } from "../round/hitl/index.js";
import { addArtifact, appendArtifactChunk } from "./task-events.js";
import { ANSWER_ARTIFACT, requestParts } from "./task-wire.js";
import { runRound, type RoundObserver } from "../round/loop.js";
import type { AgentPlugin, PluginHost } from "../plugin/contract.js";
import { createAgentRuntime, type AgentRuntime } from "../plugin/runtime.js";
import { AgentNotStarted } from "./errors.js";
import { credentialedFetch, mcpPlugin, McpServers } from "../mcp/index.js";
import { compactConversation } from "../round/conversation.js";
import type { AgentEnv, LifecycleLimits, LifecycleWords, RoundStep, TurnContext } from "./lifecycle.js";
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
 * Every agent runs the same turn loop (`runRound`): a single-inference agent
 * is the loop with one round and no subtask types; `RoundAgentBase` adds the
 * subagents that run delegated subtasks.
 */
export abstract class DynamicAgent<Env extends Cloudflare.Env & AgentEnv = Cloudflare.Env & AgentEnv> extends TaskAgent<Env> {
  #config: AgentConfig | undefined;
  #policy: AgentPolicy | undefined;
  #runtime: AgentRuntime | undefined;

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

  /**
   * Runs the unfinished subtasks of a round that delegated, first handing
   * waiting ones the answers to their questions; resolves to a question a
   * subtask still waits on, if any (the task parks on it). Only an agent
   * that {@link runsSubtasks} is ever asked.
   */
  protected async runRoundSubtasks(_taskId: string, _round: number, _signal: AbortSignal, _answers: readonly SubtaskAnswer[]): Promise<SubtaskAsk | undefined> {
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
    if (config.mcp.servers.length) plugins.push(this.#mcpPlugin(config));
    const runtime = createAgentRuntime({ plugins, env: this.env, config });
    const delegates = runtime.subtaskTypes.size > 0;
    if (delegates && !this.runsSubtasks()) {
      const [type] = runtime.subtaskTypes.keys();
      throw new ConfigError(
        { kind: "plugin", name: runtime.plugins.find((p) => p.subtaskTypes?.some((t) => t.key === type))?.key ?? String(type) },
        `a plugin declares the subtask type ${JSON.stringify(type)}, but ${this.constructor.name} runs no subtasks: extend RoundAgentBase to delegate`,
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
  }

  /** The config's MCP servers as a plugin, reached through this object's MCP client; each server's state changes are events. */
  #mcpPlugin(config: AgentConfig): AgentPlugin {
    const env = new Map<string, unknown>(Object.entries(this.env));
    const connections = new McpServers(this.mcp, {
      config: config.mcp,
      fetch: (server) => credentialedFetch(server, { allowlist: config.mcp.allowlist, env }),
      report: (event) => this.agentEvents.emit("mcp.server", undefined, event, ["mcp", event.server, crypto.randomUUID()]),
    });
    return mcpPlugin({
      servers: config.mcp.servers,
      connections,
      // Read per turn: the policy is validated after the plugins are.
      unavailable: (servers) => this.policy.tools?.mcpUnavailable?.(servers) ?? "",
    });
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

  protected override tokensPerCallerPerDay(): number | undefined {
    return this.config.limits.tokensPerCallerPerDay;
  }

  protected override lifecycleWords(): LifecycleWords {
    const { abandoned, unfinished, canceled } = this.policy.messages;
    return { abandoned, unfinished, canceled, hitl: this.policy.hitl };
  }

  protected override lifecycleLimits(): LifecycleLimits {
    const { limits, retention, hitl } = this.config;
    return {
      maxInFlightTurns: limits.maxInFlightTurns,
      maxPendingQuestions: limits.maxPendingQuestions,
      maxPendingDeliveries: limits.maxPendingDeliveries,
      maxOpenStreams: limits.maxOpenStreams,
      retention,
      hitlExpiresAfterMs: hitl.expiresAfterMinutes * 60_000,
    };
  }

  /** Which conversation a task belongs to: its context's, or the caller's one (`history.conversation`). */
  protected conversationOf(task: TaskJson): string {
    return this.config.history.conversation === "caller" ? "caller" : task.contextId;
  }

  /** After a turn ends, its conversation is compacted if it grew past the threshold (in the background, one at a time). */
  protected override afterTurn(task: TaskJson): void {
    const conversationId = this.conversationOf(task);
    const runtime = this.runtime;
    const started = Date.now();
    this.ctx.waitUntil(
      compactConversation({
        store: this.agentDb.conversations,
        conversationId,
        history: this.config.history,
        instructions: this.policy.messages.summarize,
        summarize: (instructions, transcript) => this.summarize(instructions, transcript),
        onDisplaced: (messages) => runtime.onMessagesDisplaced(messages),
      })
        .then((folded) => {
          if (folded > 0) {
            this.agentEvents.emit("conversation.compacted", undefined, { folded, durationMs: Date.now() - started }, [conversationId, crypto.randomUUID()], {
              contextId: task.contextId,
            });
          }
        })
        .catch((error: unknown) => console.error(`compaction of conversation ${conversationId} failed; it is tried again after the next turn`, error)),
    );
  }

  /** The model call a compaction summarizes with, under the agent's own instructions. */
  protected async summarize(instructions: string, transcript: string): Promise<string> {
    const result = await generateWithFallback({
      env: this.env,
      config: this.config.model,
      instructions,
      messages: [{ role: "user", content: transcript }],
      models: this.modelChoices(),
    });
    // A summary costs the caller like a turn does (no task: today's total only).
    if (result.ok) this.agentDb.usage.record(undefined, { inputTokens: result.inputTokens, outputTokens: result.outputTokens, modelCalls: 1 });
    // An empty summary leaves history as it is: compaction is skipped, not wrong.
    return result.ok ? result.text : "";
  }

  /** What a round's model calls and tools report: events, and the usage budgets are held against. */
  #observer(turn: TurnContext, round: number): RoundObserver {
    const taskId = turn.task.id;
    const about = { contextId: turn.task.contextId, turnId: turn.turnId };
    return {
      modelCall: ({ point, ...call }) => {
        this.agentDb.usage.record(taskId, { inputTokens: call.inputTokens, outputTokens: call.outputTokens, modelCalls: 1 });
        this.agentEvents.emit("model.call", taskId, { round, ...call }, ["model", point], about);
      },
      toolCall: ({ key, ...call }) => this.agentEvents.emit("tool.call", taskId, { round, ...call }, ["tool", key], about),
    };
  }

  /** One round of the one turn loop; a round that delegated runs its subtasks, then reports progress. */
  protected override async runRound(turn: TurnContext, round: number, signal: AbortSignal): Promise<RoundStep> {
    const taskId = turn.task.id;
    // No round past the budget: a turn still going there ends, failed, in the agent's words.
    if (round > this.config.rounds.maxRounds) return { kind: "done", outcome: { state: "TASK_STATE_FAILED", text: this.policy.messages.unfinished } };
    const runtime = this.runtime;
    const begun = Date.now();
    const result = await runRound({
      taskId,
      round,
      text: turn.text,
      parts: requestParts(turn.task),
      addArtifact: (artifact) =>
        addArtifact(this.agentDb, turn.task, artifact, { maxBytes: this.config.parts.maxArtifactBytes, withheld: this.policy.parts.withheld }),
      origin: turn.origin,
      soul: this.agentSoul(runtime.capabilities),
      config: this.config,
      policy: this.policy,
      runtime,
      conversation: { store: this.agentDb.conversations, id: this.conversationOf(turn.task) },
      journal: this.agentDb.toolCalls,
      hitl: this.agentDb.hitl,
      rounds: this.agentDb.subtasks,
      delegates: this.runsSubtasks(),
      env: this.env,
      models: this.modelChoices(),
      signal,
      answer: new AnswerStream(
        (chunk) => appendArtifactChunk(this.agentDb, turn.task, { artifactId: ANSWER_ARTIFACT, name: ANSWER_ARTIFACT, parts: chunk.parts }, chunk),
        () => this.streamFollows(taskId),
      ),
      observer: this.#observer(turn, round),
      spentTokens: tokensOf(this.agentDb.usage.ofTurn(taskId)),
      emit: (plugin, name, data, occurrence) =>
        this.agentEvents.emitPlugin(plugin, name, taskId, data, occurrence === undefined ? [crypto.randomUUID()] : ["plugin", occurrence]),
      secrets: this.eventSecrets(),
    });
    // An answer or a delegation is a decision the round recorded (turn-loop.ts); one decided before (a replayed step) reports nothing again.
    if ((result.kind === "answer" || result.kind === "delegated") && result.fresh) {
      const outcome = result.kind === "answer" ? "answer" : "delegated";
      this.agentEvents.emit("round.finished", taskId, { round, outcome, durationMs: Date.now() - begun }, ["round", round], {
        contextId: turn.task.contextId,
        turnId: turn.turnId,
      });
    }
    if (result.kind === "answer") return { kind: "done", outcome: { state: result.state, text: result.text } };
    if (result.kind === "ask" || result.kind === "canceled") return result;
    const asked = await this.runRoundSubtasks(taskId, round, signal, subtaskAnswers(this.agentDb.hitl, taskId, round));
    if (signal.aborted) return { kind: "canceled" };
    if (asked) return { kind: "ask", ...subtaskRequest(asked.subtaskId, asked.question) };
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
