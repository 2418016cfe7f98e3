import { Agent } from "agents";
import { and, asc, count, eq } from "drizzle-orm";
import { drizzle, type DrizzleSqliteDODatabase } from "drizzle-orm/durable-sqlite";
import { turnTrace } from "../a2a/trace-context.js";
import { resolveConfig, type AgentConfigInput } from "../agent/config.js";
import { exchangeReport, generateWithFallback, type GenerateResult } from "../agent/generate.js";
import type { ModelConfig } from "../agent/model-config.js";
import { tokenBudgetSpent } from "../agent/token-budget.js";
import {
  accepted,
  refused,
  type HumanAnswer,
  type SubagentObject,
  type SubagentRefusal,
  type SubtaskChunk,
  type SubtaskModelCall,
  type SubtaskOutcome,
  type SubtaskRunResult,
  type SubtaskSpec,
  type Verdict,
} from "../boundary/index.js";
import type { AgentPlugin, PluginHost, RecipeContext, RecipeGenerateRequest } from "../plugin/contract.js";
import { createAgentRuntime } from "../plugin/runtime.js";
import { SubtaskCanceled, SubtaskNeedsInput, SubtaskOverBudget } from "./errors.js";
import { SUBAGENT_DDL, recipeAnswers, recipeCalls, recipeChunks, recipeRun } from "./schema.js";

/**
 * The isolated subagent that runs one subtask: a facet of the caller's
 * Durable Object, with its own isolate and its own SQLite. It runs the
 * subtask type's recipe in chunks it records as they finish, so an eviction
 * mid-run resumes after the last finished chunk, and it keeps the finished
 * result under the subtask's fingerprint, so asking again costs nothing.
 * It has what its parent has: the same plugins (their subtask types and
 * workspace backing, over this facet's own storage) and the parent's caps.
 * The recipe's model calls are recorded as each ends and reported with every
 * result, for the parent to count once in its turn's and its caller's usage;
 * the budget the parent hands over holds them.
 */
export abstract class RecipeSubagentBase<Env extends Cloudflare.Env = Cloudflare.Env> extends Agent<Env> implements SubagentObject {
  readonly #db: DrizzleSqliteDODatabase;
  /** Who hears the run's chunks finish (the parent's progress): best effort, its failure ignored. */
  #onChunk: ((chunk: SubtaskChunk) => void) | undefined;
  /** The run in progress in this instance: its lease. A second call joins it. */
  #running: { fingerprint: string; done: Promise<Verdict<SubtaskRunResult, SubagentRefusal>> } | undefined;

  constructor(ctx: DurableObjectState, env: Env) {
    super(ctx, env);
    this.#db = drizzle(ctx.storage);
    void ctx.blockConcurrencyWhile(async () => {
      for (const ddl of SUBAGENT_DDL) ctx.storage.sql.exec(ddl);
    });
  }

  /** The parent agent's plugins: their subtask types run here. */
  protected abstract agentPlugins(host: PluginHost<Env>): AgentPlugin[];

  /** The parent agent's config, for the plugins; the workspace caps come from the parent with each subtask. */
  protected agentConfig(): AgentConfigInput {
    return {};
  }

  async runSubtask(spec: SubtaskSpec, onChunk?: (chunk: SubtaskChunk) => void): Promise<Verdict<SubtaskRunResult, SubagentRefusal>> {
    const running = this.#running;
    if (running && running.fingerprint === spec.fingerprint) return running.done;
    this.#onChunk = onChunk;
    const done = this.#run(spec);
    this.#running = { fingerprint: spec.fingerprint, done };
    try {
      return await done;
    } finally {
      if (this.#running?.done === done) this.#running = undefined;
    }
  }

  /** The run's outcome, with every model call the subtask made so far. */
  async #run(spec: SubtaskSpec): Promise<Verdict<SubtaskRunResult, SubagentRefusal>> {
    const verdict = await this.#outcome(spec);
    return verdict.ok ? accepted({ ...verdict.value, calls: this.#calls() }) : verdict;
  }

  async #outcome(spec: SubtaskSpec): Promise<Verdict<SubtaskOutcome, SubagentRefusal>> {
    const existing = this.#db.select().from(recipeRun).where(eq(recipeRun.id, 1)).get();
    if (existing && existing.fingerprint !== spec.fingerprint) {
      return refused({
        code: "ERR_SUBAGENT_FINGERPRINT",
        message: `Subagent ${spec.subtaskId} refuses to resume: it ran a subtask with fingerprint ${existing.fingerprint}, and is now asked for ${spec.fingerprint} (the type, params or recipe version changed)`,
      });
    }
    if (existing?.status === "done") return accepted({ status: "done", result: JSON.parse(existing.resultJson ?? "null") });
    if (existing?.status === "failed") return accepted({ status: "failed", error: existing.error ?? "failed" });
    if (existing?.status === "canceled" || existing?.cancelRequested) return accepted(this.#finish("canceled"));
    if (!existing) this.#db.insert(recipeRun).values({ id: 1, fingerprint: spec.fingerprint, status: "running" }).run();

    const config = resolveConfig({ ...this.agentConfig(), workspace: spec.workspace });
    const runtime = createAgentRuntime({ plugins: this.agentPlugins({ env: this.env, config, storage: this.ctx.storage }), env: this.env, config });
    const type = runtime.subtaskTypes.get(spec.type);
    if (!type) return accepted(this.#finish("failed", undefined, `no recipe for subtask type ${JSON.stringify(spec.type)}`));
    const parsed = type.params.safeParse(spec.params);
    if (!parsed.success) return accepted(this.#finish("failed", undefined, `invalid params: ${parsed.error.issues[0]?.message}`));

    try {
      const result = await type.recipe(
        {
          chunk: (name, run) => this.#chunk(name, run),
          ask: (name, question) => this.#ask(name, question),
          generate: (request) => this.#generate(request, config.model, spec),
          workspace: runtime.workspace({ storage: this.ctx.storage }),
          subtaskId: spec.subtaskId,
          taskId: spec.taskId,
        },
        parsed.data,
      );
      return accepted(this.#finish("done", result));
    } catch (error) {
      if (error instanceof SubtaskCanceled) return accepted(this.#finish("canceled"));
      // Unfinished, not failed: the run goes on from here once the answer is recorded.
      if (error instanceof SubtaskNeedsInput) return accepted({ status: "input-required", question: error.question });
      return accepted(this.#finish("failed", undefined, error instanceof Error ? error.message : String(error)));
    }
  }

  /** Asks the running recipe to stop at its next chunk boundary. */
  async cancel(): Promise<Verdict<null, never>> {
    const existing = this.#db.select().from(recipeRun).where(eq(recipeRun.id, 1)).get();
    if (!existing) {
      this.#db.insert(recipeRun).values({ id: 1, fingerprint: "", status: "canceled", cancelRequested: 1 }).run();
    } else if (existing.status === "running") {
      this.#db.update(recipeRun).set({ cancelRequested: 1 }).where(eq(recipeRun.id, 1)).run();
    }
    return accepted(null);
  }

  async answer(name: string, answer: HumanAnswer): Promise<Verdict<null, never>> {
    this.#db
      .insert(recipeAnswers)
      .values({ name, answerJson: JSON.stringify(answer), answeredAt: Date.now() })
      .onConflictDoNothing()
      .run();
    return accepted(null);
  }

  /** A question's answer is recorded by the parent (`answer`); until then the run pauses on it. */
  async #ask(name: string, question: Parameters<RecipeContext["ask"]>[1]): Promise<HumanAnswer> {
    const answered = this.#db.select().from(recipeAnswers).where(eq(recipeAnswers.name, name)).get();
    if (answered) return JSON.parse(answered.answerJson) as HumanAnswer;
    if (this.#db.select().from(recipeRun).where(eq(recipeRun.id, 1)).get()?.cancelRequested) throw new SubtaskCanceled("the subtask was canceled");
    throw new SubtaskNeedsInput({ name, ...question });
  }

  /** The recipe's model call, refused once the budget is spent, recorded as it ends (failed ones too: they are model calls). */
  async #generate(request: RecipeGenerateRequest, model: ModelConfig, { budget, trace }: SubtaskSpec): Promise<GenerateResult> {
    let stopWhen = request.stopWhen;
    if (budget) {
      // What the parent has not counted yet is what its budget does not know of.
      const spent = this.#calls()
        .slice(budget.counted)
        .reduce((sum, call) => sum + call.inputTokens + call.outputTokens, 0);
      if (spent >= budget.tokens) {
        const which = budget.limit === "turn.maxTokensPerTurn" ? "the turn's token budget" : "the caller's daily token budget";
        throw new SubtaskOverBudget(
          `a model call was refused: the subtask's calls have spent ${spent} of the ${budget.tokens} tokens left in ${which} (${budget.limit})`,
        );
      }
      // A call of several steps stops where the budget does, as the turn's own do.
      if (stopWhen) stopWhen = [stopWhen].flat().concat(tokenBudgetSpent(budget.tokens - spent));
    }
    const begun = Date.now();
    const traced = trace ? { trace: turnTrace(trace) } : {};
    const result = await generateWithFallback({ ...request, stopWhen, env: this.env, config: request.config ?? model, ...traced });
    this.#db
      .insert(recipeCalls)
      .values(exchangeReport(result, Date.now() - begun))
      .run();
    return result;
  }

  /** Every model call of the subtask so far, in order. */
  #calls(): SubtaskModelCall[] {
    return this.#db
      .select({
        model: recipeCalls.model,
        fallback: recipeCalls.fallback,
        retries: recipeCalls.retries,
        outcome: recipeCalls.outcome,
        steps: recipeCalls.steps,
        inputTokens: recipeCalls.inputTokens,
        outputTokens: recipeCalls.outputTokens,
        durationMs: recipeCalls.durationMs,
      })
      .from(recipeCalls)
      .orderBy(asc(recipeCalls.seq))
      .all();
  }

  async #chunk<T>(name: string, run: () => Promise<T>): Promise<T> {
    const done = this.#db.select().from(recipeChunks).where(eq(recipeChunks.name, name)).get();
    if (done) return JSON.parse(done.resultJson) as T;
    if (this.#db.select().from(recipeRun).where(eq(recipeRun.id, 1)).get()?.cancelRequested) throw new SubtaskCanceled("the subtask was canceled");
    const result = await run();
    // A replayed run may finish the same chunk again: the first result stands, and is what both get.
    this.#db
      .insert(recipeChunks)
      .values({ name, resultJson: JSON.stringify(result ?? null), finishedAt: Date.now() })
      .onConflictDoNothing()
      .run();
    const stored = this.#db.select().from(recipeChunks).where(eq(recipeChunks.name, name)).get();
    const tell = this.#onChunk;
    if (tell) {
      const finished = this.#db.select({ n: count() }).from(recipeChunks).get()?.n ?? 0;
      // Awaited, so the parent hears it before the result; a parent gone (or a stub released) must not fail the recipe.
      await Promise.resolve()
        .then(() => tell({ name, finished }))
        .catch(() => undefined);
    }
    return stored ? (JSON.parse(stored.resultJson) as T) : result;
  }

  /** Records the run's end unless another run already did: a final status never changes, and the recorded one is returned. */
  #finish(status: "done" | "failed" | "canceled", result?: unknown, error?: string): SubtaskOutcome {
    this.#db
      .update(recipeRun)
      .set({ status, resultJson: result === undefined ? null : JSON.stringify(result), error: error ?? null })
      .where(and(eq(recipeRun.id, 1), eq(recipeRun.status, "running")))
      .run();
    const row = this.#db.select().from(recipeRun).where(eq(recipeRun.id, 1)).get();
    if (row?.status === "done") return { status: "done", result: JSON.parse(row.resultJson ?? "null") };
    if (row?.status === "failed") return { status: "failed", error: row.error ?? "failed" };
    return { status: "canceled" };
  }
}
