import type { Agent, DynamicAgentClass } from "agents";
import type { AgentConfig } from "../agent/config.js";
import {
  turnTraceOf,
  type SubagentObject,
  type SubtaskBudget,
  type SubtaskChunk,
  type SubtaskModelCall,
  type SubtaskQuestion,
  type SubtaskRunResult,
  type SubtaskSpec,
} from "../boundary/index.js";
import type { AgentDB } from "../db/agent-db.js";
import type { SubtaskRow } from "../db/subtask-store.js";
import { tokensOf } from "../db/usage-store.js";
import type { RecipeSubagentBase } from "../subagent/recipe-subagent.js";
import { runBounded } from "./bounded.js";
import type { SubtaskAnswer, SubtaskAsk } from "./hitl/index.js";
import type { LoopEvents, SubtaskTracking } from "./deps.js";

/** A class extending `RecipeSubagentBase`, exported from the Worker under its own name so the runtime can make facets of it. */
export type SubagentClass<Env extends Cloudflare.Env> = DynamicAgentClass<RecipeSubagentBase<Env>>;

/** How an agent that delegates names its subagents (`DynamicAgent.subagents()`). */
export interface Subagents<Env extends Cloudflare.Env> {
  /** The class its subtasks run in, one facet per subtask. */
  subagentClass: SubagentClass<Env>;
}

/** The subagent facets of the object, one per subtask, named after it: the object's own (`this.dynamicAgents`), handed in. */
export interface SubagentFacets {
  /** The subagent class's name, as the Worker exports it. */
  className: string;
  get(subtaskId: string): Promise<SubagentObject>;
  has(subtaskId: string): boolean;
  /** Deletes the facet and its storage. */
  delete(subtaskId: string): Promise<void>;
}

/** The facets of `subagentClass` an agent makes through the agents SDK (its `this.dynamicAgents`), one per subtask. */
export function subagentFacets<Env extends Cloudflare.Env>(agents: Agent["dynamicAgents"], subagentClass: SubagentClass<Env>): SubagentFacets {
  return {
    className: subagentClass.name,
    get: (id) => agents.get(subagentClass, id),
    has: (id) => agents.has(subagentClass, id),
    delete: (id) => agents.delete(subagentClass, id),
  };
}

/** What the subtask runner works with. */
export interface SubtaskRunnerDeps {
  db: Pick<AgentDB, "subtasks" | "tasks" | "turns" | "usage" | "countSubtaskCalls">;
  config: Pick<AgentConfig, "rounds" | "workspace" | "turn" | "limits">;
  facets: SubagentFacets;
  events: LoopEvents;
  /** Keeps the object alive for work that outlives the call (a cancel sent to a subagent). */
  waitUntil(promise: Promise<unknown>): void;
}

/** How often a subtask whose subagent died (evicted, crashed) is tried again before it counts as failed. */
const SUBAGENT_ATTEMPTS = 3;
const SUBTASK_HEARTBEAT_MS = 20_000;

/**
 * Runs a delegating round's subtasks, a component the loop calls (turn.ts):
 * subtasks are recorded before they run (the delegate tool), run
 * concurrently in isolated subagents (facets, each with its own isolate and
 * SQLite), and their results feed the next round. A subagent's model calls
 * count as the turn's own: in its usage, the caller's daily total and the
 * events, under the budgets the subagent is handed.
 */
export class SubtaskRunner {
  constructor(private readonly deps: SubtaskRunnerDeps) {}

  /**
   * Runs the unfinished subtasks of a round that delegated, first handing
   * waiting ones the answers to their questions; resolves to a question a
   * subtask still waits on, if any (the task parks on it).
   */
  async run(taskId: string, round: number, answers: readonly SubtaskAnswer[], progress?: SubtaskTracking): Promise<SubtaskAsk | undefined> {
    const { db, config, facets } = this.deps;
    const rows = db.subtasks.ofRound(taskId, round).filter((row) => row.status === "pending" || row.status === "running" || row.status === "waiting");
    // Answers go to the subagents still waiting (recording one is idempotent there): their next run's `ask` returns it.
    const waiting = new Set(rows.filter((row) => row.status === "waiting").map((row) => row.id));
    for (const given of answers) {
      if (waiting.has(given.subtaskId)) await (await facets.get(given.subtaskId)).answer(given.name, given.answer);
    }
    const canceled = () => db.tasks.get(taskId)?.state === "TASK_STATE_CANCELED";
    const asks: SubtaskAsk[] = [];
    await runBounded(
      rows,
      config.rounds.maxParallel,
      async (row) => {
        const question = await this.#runSubtask(taskId, row, progress);
        if (question) asks.push({ subtaskId: row.id, question });
      },
      canceled,
    );
    if (canceled()) for (const row of db.subtasks.unfinished(taskId)) db.subtasks.mark(row.id, "canceled");
    // One question at a time, in the round's order: the others ask again on the next run.
    const order = new Map(rows.map((row, i) => [row.id, i]));
    return asks.sort((a, b) => order.get(a.subtaskId)! - order.get(b.subtaskId)!)[0];
  }

  /** Tells a canceled task's running subagents to stop at their next chunk. */
  cancel(taskId: string): void {
    const { db, facets } = this.deps;
    for (const row of db.subtasks.unfinished(taskId)) {
      db.subtasks.mark(row.id, "canceled");
      this.deps.waitUntil(
        facets
          .get(row.id)
          .then((subagent) => subagent.cancel())
          .catch(() => undefined),
      );
    }
  }

  /** Retention deleted (or an erasure erased) tasks: what is left of their subtasks' subagents goes too; how many went. */
  async deleted(subtaskIds: readonly string[]): Promise<number> {
    const left = this.withSubagents(subtaskIds);
    for (const id of left) await this.#delete(id);
    return left.length;
  }

  /** Those of these subtasks whose subagent (and its storage) is still there. */
  withSubagents(subtaskIds: readonly string[]): string[] {
    return subtaskIds.filter((id) => this.deps.facets.has(id));
  }

  async #runSubtask(taskId: string, row: SubtaskRow, progress: SubtaskTracking | undefined): Promise<SubtaskQuestion | undefined> {
    const store = this.deps.db.subtasks;
    if (store.mark(row.id, "running") && row.status === "pending") {
      this.deps.events.emit("subtask.started", taskId, { round: row.round, subtaskId: row.id, type: row.type }, ["subtask started", row.id]);
    }
    progress?.started(row.id);
    // The subtask heartbeats while its subagent works, so a stale "running" row tells a crash from a slow recipe.
    const heartbeat = setInterval(() => store.touch(row.id), SUBTASK_HEARTBEAT_MS);
    let question: SubtaskQuestion | undefined;
    try {
      question = await this.#runInSubagent(taskId, row, progress);
    } finally {
      clearInterval(heartbeat);
    }
    // Finished: the facet and its storage go (its result lives in the row).
    // A canceled one may still be hearing its cancel; it goes with its task.
    const status = store.get(row.id)?.status;
    if (status === "done" || status === "failed") await this.#delete(row.id);
    return question;
  }

  #delete(id: string): Promise<void> {
    return this.deps.facets.delete(id).catch((error: unknown) => console.warn(`subagent ${id}: could not be deleted`, error));
  }

  async #runInSubagent(taskId: string, row: SubtaskRow, progress: SubtaskTracking | undefined): Promise<SubtaskQuestion | undefined> {
    const store = this.deps.db.subtasks;
    let result: SubtaskRunResult | undefined;
    let lastError = "";
    // The subagent tells each chunk of its recipe as it finishes (a function over RPC): the subtask's tracker.
    let chunks = 0;
    const onChunk = progress
      ? (done: SubtaskChunk) => {
          chunks = done.finished;
          progress.chunk(row.id, done);
        }
      : undefined;
    // Whether a subagent was ever made for it: a subtask none could be made for did not start.
    let started = false;
    for (let attempt = 1; attempt <= SUBAGENT_ATTEMPTS && !result; attempt++) {
      let subagent: SubagentObject;
      try {
        subagent = await this.deps.facets.get(row.id);
      } catch (error) {
        const missing = missingSubagentClass(error, this.deps.facets.className);
        lastError = missing ?? (error instanceof Error ? error.message : String(error));
        // A class the runtime cannot find now it will not find on the next attempt either.
        if (missing) break;
        continue;
      }
      started = true;
      try {
        const verdict = await subagent.runSubtask(
          {
            subtaskId: row.id,
            taskId,
            type: row.type,
            params: JSON.parse(row.paramsJson),
            fingerprint: row.fingerprint,
            workspace: this.deps.config.workspace,
            budget: this.#budgetOf(taskId, row.id),
            trace: this.#traceOf(taskId),
          },
          onChunk,
        );
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
      ? started
        ? store.mark(row.id, "failed", { error: lastError }) && "failed"
        : store.mark(row.id, "unstarted", { error: lastError }) && "failed"
      : result.status === "done"
        ? store.mark(row.id, "done", { result: result.result }) && "done"
        : result.status === "failed"
          ? store.mark(row.id, "failed", { error: result.error }) && "failed"
          : store.mark(row.id, "canceled") && "canceled";
    if (ended === "done" || ended === "failed") progress?.ended(row.id, ended === "done" ? "completed" : "failed", chunks);
    // Only the write that settled it reports it: a replayed run finds it settled.
    if (ended) {
      this.deps.events.emit(
        "subtask.finished",
        taskId,
        { round: row.round, subtaskId: row.id, type: row.type, outcome: ended, durationMs: Date.now() - row.createdAt },
        ["subtask finished", row.id],
      );
    }
    return undefined;
  }

  /** The parent turn's trace, as a subagent joins it: its id and flags (the caller's `tracestate` goes only on pushes). */
  #traceOf(taskId: string): SubtaskSpec["trace"] {
    const trace = turnTraceOf(this.deps.db.turns.get(taskId)?.paramsJson);
    return trace && { traceId: trace.traceId, flags: trace.flags };
  }

  /** What the subtask's calls may still spend, as this object has counted so far. */
  #budgetOf(taskId: string, subtaskId: string): SubtaskBudget {
    const { db, config } = this.deps;
    const { tokens, limit } = tokensLeft(
      { cap: config.turn.maxTokensPerTurn, spent: tokensOf(db.usage.ofTurn(taskId)) },
      { cap: config.limits.tokensPerCallerPerDay, spent: () => tokensOf(db.usage.ofDay()) },
    );
    return { tokens, limit, counted: db.subtasks.get(subtaskId)?.modelCalls ?? 0 };
  }

  /** Counts the subtask's calls not counted yet, and reports each as the turn's own are (its id stable, as its place in the subtask is). */
  #count(taskId: string, row: SubtaskRow, calls: readonly SubtaskModelCall[]): void {
    const from = this.deps.db.countSubtaskCalls(row.id, taskId, calls);
    for (const [i, call] of calls.slice(from).entries()) {
      this.deps.events.emit("model.call", taskId, { round: row.round, subtaskId: row.id, ...call }, ["model", row.id, from + i]);
    }
  }
}

/**
 * How the runtime refuses a facet of a class it cannot find: the agents SDK's
 * words when the Worker's exports (`ctx.exports`) have no such name, and
 * workerd's when the name is exported but not as a Durable Object class (a
 * vitest pool that guessed the export's kind instead of reading it from
 * `additionalExports`).
 */
const NOT_A_SUBAGENT_CLASS = [/not found in worker exports/, /Incorrect type for the 'class' field/];

/**
 * A subagent class the runtime cannot find, said with its likely causes: not
 * exported from the Worker's main module under its own name, or, in a vitest
 * pool, not listed in `additionalExports`. `undefined` for any other failure.
 */
function missingSubagentClass(error: unknown, name: string): string | undefined {
  const message = error instanceof Error ? error.message : String(error);
  if (!NOT_A_SUBAGENT_CLASS.some((pattern) => pattern.test(message))) return undefined;
  return (
    `the subagent class ${name} is not among the Worker's exports as a Durable Object class, so no subtask can run in it: export it from the Worker's ` +
    `main module under its own name; in a vitest pool (@cloudflare/vitest-plugin), also list it in cloudflareTest's additionalExports: { ${name}: "DurableObject" }`
  );
}

/**
 * What a subtask's model calls may still spend (never below 0): the turn's
 * budget left (`turn.maxTokensPerTurn`), or the caller's daily budget left
 * (`limits.tokensPerCallerPerDay`) when there is one and it is less.
 */
function tokensLeft(
  turn: { cap: number; spent: number },
  day: { cap: number | undefined; spent: () => number },
): { tokens: number; limit: SubtaskBudget["limit"] } {
  const inTurn = turn.cap - turn.spent;
  const inDay = day.cap === undefined ? Number.POSITIVE_INFINITY : day.cap - day.spent();
  return inDay < inTurn
    ? { tokens: Math.max(0, inDay), limit: "limits.tokensPerCallerPerDay" }
    : { tokens: Math.max(0, inTurn), limit: "turn.maxTokensPerTurn" };
}
