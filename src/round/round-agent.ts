import { stepCountIs, type StopCondition, type ToolSet } from "ai";
import { generateWithFallback } from "../agent/generate.js";
import { toModelMessages, tokenBudgetSpent } from "../agent/turn-loop.js";
import type { Outcome } from "../a2a/outcome.js";
import type { SubtaskRow } from "../db/subtask-store.js";
import type { TaskJson } from "../db/task-store.js";
import { DynamicAgent } from "../host/dynamic-agent.js";
import type { TurnContext } from "../host/task-agent.js";
import type { RecipeSubagentBase } from "../subagent/recipe-subagent.js";
import type { SubtaskRunResult } from "../subagent/recipe.js";
import { DELEGATE_TOOL, createDelegateTool } from "../subtasks/delegate-tool.js";
import { redactSubtaskRows, renderSubtaskResults } from "../subtasks/results.js";
import type { TurnStep } from "../turn/turn-protocol.js";
import { runBounded } from "./bounded.js";
import { validateRoundPolicy, type RoundPolicy } from "./policy.js";

/** A class extending `RecipeSubagentBase`, exported from the Worker so the runtime can make facets of it. */
export type SubagentClass = new (ctx: DurableObjectState, env: never) => RecipeSubagentBase<never>;

/** How often a subtask whose subagent died (evicted, crashed) is tried again before it counts as failed. */
const SUBAGENT_ATTEMPTS = 3;

/**
 * An agent whose turn is a loop of rounds. In each round — one durable step
 * of the turn Workflow — the model either answers or delegates subtasks of
 * the plugins' types; subtasks are recorded before they run, run
 * concurrently in isolated subagents, and their results feed the next round.
 * The last round must answer. What the model decided in a round is recorded
 * too, so a re-run round step neither asks the model again nor re-runs a
 * finished subtask.
 */
export abstract class RoundAgentBase<Env extends Cloudflare.Env = Cloudflare.Env> extends DynamicAgent<Env> {
  #policy: RoundPolicy | undefined;

  /** Every string the loop emits. */
  protected abstract roundPolicy(): RoundPolicy;

  /** The subagent class subtasks run in. */
  protected abstract subagentClass(): SubagentClass;

  protected override async prepareAgent(): Promise<void> {
    this.#policy = validateRoundPolicy(this.roundPolicy());
    await super.prepareAgent();
  }

  protected get policy(): RoundPolicy {
    if (!this.#policy) throw new Error("the agent has not started yet");
    return this.#policy;
  }

  protected override canceledMessage(): string {
    return this.policy.messages.canceled;
  }

  /** Cancels the task, then tells its running subagents to stop at their next chunk. */
  override async cancelTask(taskId: string): Promise<Outcome<TaskJson>> {
    const outcome = await super.cancelTask(taskId);
    if (outcome.ok) {
      for (const row of this.agentDb.subtasks.unfinished(taskId)) {
        this.agentDb.subtasks.mark(row.id, "canceled");
        this.ctx.waitUntil(this.#subagent(row.id).then((s) => s.cancel()).catch(() => undefined));
      }
    }
    return outcome;
  }

  protected override async runRound(turn: TurnContext, round: number): Promise<TurnStep> {
    const taskId = turn.task.id;
    const store = this.agentDb.subtasks;
    if (round === 1) await this.session.append({ id: `${taskId}:user`, role: "user", parts: [{ type: "text", text: turn.text }] });

    let decision = store.decision(taskId, round);
    if (!decision) {
      const lastRound = round >= this.config.rounds.maxRounds;
      const runtime = this.runtime;
      const tools: ToolSet = { ...runtime.tools({ taskId, origin: turn.origin }) };
      if (!lastRound && runtime.subtaskTypes.size > 0) {
        tools[DELEGATE_TOOL] = createDelegateTool({
          types: runtime.subtaskTypes,
          maxSubtasks: this.config.rounds.maxSubtasksPerRound,
          record: (delegations) => store.delegate(taskId, round, delegations, this.config.rounds.maxSubtasksPerRound),
        });
      }
      const delegated: StopCondition<ToolSet> = () => store.decision(taskId, round)?.kind === "delegate";
      const earlier = await redactSubtaskRows(store.before(taskId, round), (event) => runtime.redact(event));
      const messages = toModelMessages(await this.session.history());
      if (earlier.length) messages.push({ role: "user", content: `Results of the subtasks delegated so far:\n\n${renderSubtaskResults(earlier)}` });
      const result = await generateWithFallback({
        env: this.env,
        config: this.config.model,
        instructions: [this.agentSoul(runtime.capabilities), this.policy.roundContract, lastRound ? this.policy.budgetExhaustedNote : ""]
          .filter(Boolean)
          .join("\n\n"),
        messages,
        tools,
        stopWhen: [delegated, stepCountIs(this.config.turn.maxSteps), tokenBudgetSpent(this.config.turn.maxTokensPerTurn)],
        models: this.modelChoices(),
      });
      if (!result.ok) {
        console.error(`round ${round} of ${taskId} failed on every model`, result.errors);
        return { kind: "done", outcome: { state: "TASK_STATE_FAILED", text: this.policy.messages.failure } };
      }
      decision = store.decision(taskId, round) ?? store.decideAnswer(taskId, round, result.text.trim() || this.policy.messages.budgetExhausted);
    }

    if (decision.kind === "answer") {
      await this.session.append({ id: `${taskId}:agent`, role: "assistant", parts: [{ type: "text", text: decision.text }] });
      return { kind: "done", outcome: { state: "TASK_STATE_COMPLETED", text: decision.text } };
    }

    await this.#runSubtasks(taskId, store.ofRound(taskId, round).filter((row) => row.status === "pending" || row.status === "running"));
    const rows = store.ofRound(taskId, round);
    return {
      kind: "continue",
      text: this.policy.messages.progress({
        round,
        subtasks: rows.length,
        done: rows.filter((r) => r.status === "done").length,
        failed: rows.filter((r) => r.status === "failed").length,
      }),
    };
  }

  async #runSubtasks(taskId: string, rows: SubtaskRow[]): Promise<void> {
    const canceled = () => {
      const state = (this.agentDb.tasks.get(taskId)?.status as { state?: string } | undefined)?.state;
      return state === "TASK_STATE_CANCELED";
    };
    await runBounded(rows, this.config.rounds.maxParallel, (row) => this.#runSubtask(taskId, row), canceled);
    if (canceled()) for (const row of this.agentDb.subtasks.unfinished(taskId)) this.agentDb.subtasks.mark(row.id, "canceled");
  }

  async #runSubtask(taskId: string, row: SubtaskRow): Promise<void> {
    const store = this.agentDb.subtasks;
    store.mark(row.id, "running");
    let result: SubtaskRunResult | undefined;
    let lastError = "";
    for (let attempt = 1; attempt <= SUBAGENT_ATTEMPTS && !result; attempt++) {
      try {
        const subagent = await this.#subagent(row.id);
        result = await subagent.runSubtask({
          subtaskId: row.id,
          taskId,
          type: row.type,
          params: JSON.parse(row.paramsJson),
          fingerprint: row.fingerprint,
        });
      } catch (error) {
        // The subagent died mid-run (evicted, crashed): a new run resumes
        // after its last finished chunk.
        lastError = error instanceof Error ? error.message : String(error);
        if (/refuses to resume/.test(lastError)) break;
      }
    }
    if (!result) store.mark(row.id, "failed", { error: `the subagent failed: ${lastError}` });
    else if (result.status === "done") store.mark(row.id, "done", { result: result.result });
    else if (result.status === "failed") store.mark(row.id, "failed", { error: result.error });
    else store.mark(row.id, "canceled");
  }

  #subagent(subtaskId: string): Promise<RecipeSubagentBase<never>> {
    const dynamicAgents = (this as unknown as { dynamicAgents: { get(cls: unknown, name: string): Promise<unknown> } }).dynamicAgents;
    return dynamicAgents.get(this.subagentClass(), subtaskId) as Promise<RecipeSubagentBase<never>>;
  }
}
