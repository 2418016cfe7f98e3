import type { DynamicAgentClass } from "agents";
import type { SubtaskRow } from "../db/subtask-store.js";
import { tokensOf } from "../db/usage-store.js";
import { tokensLeft } from "../host/budget.js";
import { DynamicAgent } from "../host/dynamic-agent.js";
import type { SubtaskAnswer, SubtaskAsk } from "./hitl/index.js";
import type { AgentEnv } from "../host/lifecycle.js";
import type { RecipeSubagentBase } from "../subagent/recipe-subagent.js";
import type { SubtaskBudget, SubtaskModelCall, SubtaskQuestion, SubtaskRunResult } from "../boundary/index.js";
import { runBounded } from "./bounded.js";

/** A class extending `RecipeSubagentBase`, exported from the Worker under its own name so the runtime can make facets of it. */
export type SubagentClass<Env extends Cloudflare.Env> = DynamicAgentClass<RecipeSubagentBase<Env>>;

/** How often a subtask whose subagent died (evicted, crashed) is tried again before it counts as failed. */
const SUBAGENT_ATTEMPTS = 3;
const SUBTASK_HEARTBEAT_MS = 20_000;

/**
 * An agent whose turn can delegate: the same loop as every agent, plus the
 * subagents. A round either answers or delegates subtasks of the plugins'
 * types; subtasks are recorded before they run, run concurrently in isolated
 * subagents (facets, each with its own isolate and SQLite), and their results
 * feed the next round. The last round must answer. A subagent's model calls
 * count as the turn's own: in its usage, the caller's daily total and the
 * events, under the budgets the subagent is handed.
 */
export abstract class RoundAgentBase<Env extends Cloudflare.Env & AgentEnv = Cloudflare.Env & AgentEnv> extends DynamicAgent<Env> {
  /** The subagent class subtasks run in. */
  protected abstract subagentClass(): SubagentClass<Env>;

  protected override runsSubtasks(): boolean {
    return true;
  }

  /** Tells a canceled task's running subagents to stop at their next chunk. */
  protected override onCanceled(taskId: string): void {
    for (const row of this.agentDb.subtasks.unfinished(taskId)) {
      this.agentDb.subtasks.mark(row.id, "canceled");
      this.ctx.waitUntil(
        this.#subagent(row.id)
          .then((subagent) => subagent.cancel())
          .catch(() => undefined),
      );
    }
  }

  protected override async runRoundSubtasks(
    taskId: string,
    round: number,
    _signal: AbortSignal,
    answers: readonly SubtaskAnswer[],
  ): Promise<SubtaskAsk | undefined> {
    const rows = this.agentDb.subtasks.ofRound(taskId, round).filter((row) => row.status === "pending" || row.status === "running" || row.status === "waiting");
    // Answers go to the subagents still waiting (recording one is idempotent there): their next run's `ask` returns it.
    const waiting = new Set(rows.filter((row) => row.status === "waiting").map((row) => row.id));
    for (const given of answers) {
      if (waiting.has(given.subtaskId)) await (await this.#subagent(given.subtaskId)).answer(given.name, given.answer);
    }
    const canceled = () => this.agentDb.tasks.get(taskId)?.state === "TASK_STATE_CANCELED";
    const asks: SubtaskAsk[] = [];
    await runBounded(
      rows,
      this.config.rounds.maxParallel,
      async (row) => {
        const question = await this.#runSubtask(taskId, row);
        if (question) asks.push({ subtaskId: row.id, question });
      },
      canceled,
    );
    if (canceled()) for (const row of this.agentDb.subtasks.unfinished(taskId)) this.agentDb.subtasks.mark(row.id, "canceled");
    // One question at a time, in the round's order: the others ask again on the next run.
    const order = new Map(rows.map((row, i) => [row.id, i]));
    return asks.sort((a, b) => order.get(a.subtaskId)! - order.get(b.subtaskId)!)[0];
  }

  async #runSubtask(taskId: string, row: SubtaskRow): Promise<SubtaskQuestion | undefined> {
    const store = this.agentDb.subtasks;
    if (store.mark(row.id, "running") && row.status === "pending") {
      this.agentEvents.emit("subtask.started", taskId, { round: row.round, subtaskId: row.id, type: row.type }, ["subtask started", row.id]);
    }
    // The subtask heartbeats while its subagent works, so a stale "running" row tells a crash from a slow recipe.
    const heartbeat = setInterval(() => store.touch(row.id), SUBTASK_HEARTBEAT_MS);
    let question: SubtaskQuestion | undefined;
    try {
      question = await this.#runInSubagent(taskId, row);
    } finally {
      clearInterval(heartbeat);
    }
    // Finished: the facet and its storage go (its result lives in the row).
    // A canceled one may still be hearing its cancel; it goes with its task.
    const status = store.get(row.id)?.status;
    if (status === "done" || status === "failed") await this.#deleteSubagent(row.id);
    return question;
  }

  protected override async onTasksDeleted(subtaskIds: readonly string[]): Promise<void> {
    for (const id of subtaskIds) if (this.dynamicAgents.has(this.subagentClass(), id)) await this.#deleteSubagent(id);
  }

  #deleteSubagent(id: string): Promise<void> {
    return this.dynamicAgents.delete(this.subagentClass(), id).catch((error: unknown) => console.warn(`subagent ${id}: could not be deleted`, error));
  }

  async #runInSubagent(taskId: string, row: SubtaskRow): Promise<SubtaskQuestion | undefined> {
    const store = this.agentDb.subtasks;
    let result: SubtaskRunResult | undefined;
    let lastError = "";
    for (let attempt = 1; attempt <= SUBAGENT_ATTEMPTS && !result; attempt++) {
      try {
        const subagent = await this.#subagent(row.id);
        const verdict = await subagent.runSubtask({
          subtaskId: row.id,
          taskId,
          type: row.type,
          params: JSON.parse(row.paramsJson),
          fingerprint: row.fingerprint,
          workspace: this.config.workspace,
          budget: this.#budgetOf(taskId, row.id),
        });
        if (!verdict.ok) {
          // It ran something else under this name: trying again cannot help.
          lastError = verdict.error.message;
          break;
        }
        result = verdict.value;
        this.#count(taskId, row, result.calls);
      } catch (error) {
        // The subagent died mid-run (evicted, crashed): a new run resumes
        // after its last finished chunk.
        lastError = error instanceof Error ? error.message : String(error);
      }
    }
    if (result?.status === "input-required") {
      store.mark(row.id, "waiting");
      return result.question;
    }
    const ended = !result
      ? store.mark(row.id, "failed", { error: lastError }) && "failed"
      : result.status === "done"
        ? store.mark(row.id, "done", { result: result.result }) && "done"
        : result.status === "failed"
          ? store.mark(row.id, "failed", { error: result.error }) && "failed"
          : store.mark(row.id, "canceled") && "canceled";
    // Only the write that settled it reports it: a replayed run finds it settled.
    if (ended) {
      this.agentEvents.emit(
        "subtask.finished",
        taskId,
        { round: row.round, subtaskId: row.id, type: row.type, outcome: ended, durationMs: Date.now() - row.createdAt },
        ["subtask finished", row.id],
      );
    }
    return undefined;
  }

  /** What the subtask's calls may still spend, as this object has counted so far. */
  #budgetOf(taskId: string, subtaskId: string): SubtaskBudget {
    const { tokens, limit } = tokensLeft(
      { cap: this.config.turn.maxTokensPerTurn, spent: tokensOf(this.agentDb.usage.ofTurn(taskId)) },
      { cap: this.config.limits.tokensPerCallerPerDay, spent: () => tokensOf(this.agentDb.usage.ofDay()) },
    );
    return { tokens, limit, counted: this.agentDb.subtasks.get(subtaskId)?.modelCalls ?? 0 };
  }

  /** Counts the subtask's calls not counted yet, and reports each as the turn's own are (its id stable, as its place in the subtask is). */
  #count(taskId: string, row: SubtaskRow, calls: readonly SubtaskModelCall[]): void {
    const from = this.agentDb.countSubtaskCalls(row.id, taskId, calls);
    for (const [i, call] of calls.slice(from).entries()) {
      this.agentEvents.emit("model.call", taskId, { round: row.round, subtaskId: row.id, ...call }, ["model", row.id, from + i]);
    }
  }

  #subagent(subtaskId: string) {
    return this.dynamicAgents.get(this.subagentClass(), subtaskId);
  }
}
