import { Agent } from "agents";
import { eq } from "drizzle-orm";
import { drizzle, type DrizzleSqliteDODatabase } from "drizzle-orm/durable-sqlite";
import { resolveConfig } from "../agent/config.js";
import type { SubtaskType } from "../plugin/contract.js";
import { Workspace, memoryWorkspaceBacking, type WorkspaceBacking, type WorkspaceCaps } from "../plugin/workspace.js";
import { SubtaskCanceled, type Recipe, type SubtaskRunResult, type SubtaskSpec } from "./recipe.js";
import { SUBAGENT_DDL, recipeChunks, recipeRun } from "./schema.js";

/**
 * The isolated subagent that runs one subtask: a facet of the caller's
 * Durable Object, with its own isolate and its own SQLite. It runs the
 * subtask type's recipe in chunks it records as they finish, so an eviction
 * mid-run resumes after the last finished chunk, and it keeps the finished
 * result under the subtask's fingerprint, so asking again costs nothing.
 */
export abstract class RecipeSubagentBase<Env extends Cloudflare.Env = Cloudflare.Env> extends Agent<Env> {
  readonly #db: DrizzleSqliteDODatabase;

  constructor(ctx: DurableObjectState, env: Env) {
    super(ctx, env);
    this.#db = drizzle(ctx.storage);
    void ctx.blockConcurrencyWhile(async () => {
      for (const ddl of SUBAGENT_DDL) ctx.storage.sql.exec(ddl);
    });
  }

  /** The subtask types (with recipes) this subagent can run: usually the plugins' own. */
  protected abstract subtaskTypes(): SubtaskType[];

  protected workspaceBacking(): WorkspaceBacking {
    return memoryWorkspaceBacking();
  }

  protected workspaceCaps(): WorkspaceCaps {
    return resolveConfig().workspace;
  }

  /** Runs (or resumes, or answers from cache) the subtask. Recipe failures are results, not exceptions. */
  async runSubtask(spec: SubtaskSpec): Promise<SubtaskRunResult> {
    const existing = this.#db.select().from(recipeRun).where(eq(recipeRun.id, 1)).get();
    if (existing && existing.fingerprint !== spec.fingerprint) {
      throw new Error(
        `Subagent ${spec.subtaskId} refuses to resume: it ran a subtask with fingerprint ${existing.fingerprint}, and is now asked for ${spec.fingerprint} (the type, params or recipe version changed)`,
      );
    }
    if (existing?.status === "done") return { status: "done", result: JSON.parse(existing.resultJson ?? "null") };
    if (existing?.status === "failed") return { status: "failed", error: existing.error ?? "failed" };
    if (existing?.status === "canceled" || existing?.cancelRequested) return this.#finish("canceled");
    if (!existing) this.#db.insert(recipeRun).values({ id: 1, fingerprint: spec.fingerprint, status: "running" }).run();

    const type = this.subtaskTypes().find((t) => t.key === spec.type);
    if (!type || typeof type.recipe !== "function") return this.#finish("failed", undefined, `no recipe for subtask type ${JSON.stringify(spec.type)}`);
    const parsed = type.params.safeParse(spec.params);
    if (!parsed.success) return this.#finish("failed", undefined, `invalid params: ${parsed.error.issues[0]?.message}`);

    try {
      const result = await (type.recipe as Recipe<Env>)(
        {
          env: this.env,
          chunk: (name, run) => this.#chunk(name, run),
          workspace: new Workspace(this.workspaceBacking(), this.workspaceCaps()),
          subtaskId: spec.subtaskId,
          taskId: spec.taskId,
        },
        parsed.data,
      );
      return this.#finish("done", result);
    } catch (error) {
      if (error instanceof SubtaskCanceled) return this.#finish("canceled");
      return this.#finish("failed", undefined, error instanceof Error ? error.message : String(error));
    }
  }

  /** Asks the running recipe to stop at its next chunk boundary. */
  async cancel(): Promise<void> {
    const existing = this.#db.select().from(recipeRun).where(eq(recipeRun.id, 1)).get();
    if (!existing) {
      this.#db.insert(recipeRun).values({ id: 1, fingerprint: "", status: "canceled", cancelRequested: 1 }).run();
    } else if (existing.status === "running") {
      this.#db.update(recipeRun).set({ cancelRequested: 1 }).where(eq(recipeRun.id, 1)).run();
    }
  }

  async #chunk<T>(name: string, run: () => Promise<T>): Promise<T> {
    const done = this.#db.select().from(recipeChunks).where(eq(recipeChunks.name, name)).get();
    if (done) return JSON.parse(done.resultJson) as T;
    if (this.#db.select().from(recipeRun).where(eq(recipeRun.id, 1)).get()?.cancelRequested) throw new SubtaskCanceled();
    const result = await run();
    this.#db
      .insert(recipeChunks)
      .values({ name, resultJson: JSON.stringify(result ?? null), finishedAt: Date.now() })
      .run();
    return result;
  }

  #finish(status: "done" | "failed" | "canceled", result?: unknown, error?: string): SubtaskRunResult {
    this.#db
      .update(recipeRun)
      .set({ status, resultJson: result === undefined ? null : JSON.stringify(result), error: error ?? null })
      .where(eq(recipeRun.id, 1))
      .run();
    if (status === "done") return { status, result };
    if (status === "failed") return { status, error: error ?? "failed" };
    return { status };
  }
}
