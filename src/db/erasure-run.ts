import type { AgentDB } from "./agent-db.js";
import type { EraseHooks } from "./erase-rows.js";
import type { ErasedCounts, ErasureRecord, ErasureScope } from "./erasure-store.js";

type Unerased = { plugin: string; rows: number }[];

/** The agent's part in an erasure, for one run: in each batch of rows, then its subagents and plugins. */
export interface AgentErasure extends EraseHooks {
  /** After the rows: these subagents deleted, the plugins told; how many went, and which stores kept rows (no hook, or one that failed). */
  cleanup(scope: ErasureScope, subagents: readonly string[]): Promise<{ subagents: number; unerased: Unerased }>;
}

/** What an erasure's run asks of the object it runs in. */
export interface ErasureEffects {
  /** Runs `work` with no other call of the object in between (its `blockConcurrencyWhile`; as it is, on a wake already inside it). */
  exclusive<T>(work: () => Promise<T>): Promise<T>;
  agent: AgentErasure;
  /** Once the rows are gone: what ran for a task that no longer `exists` stops, unannounced. */
  stopGone(exists: (taskId: string) => boolean): void;
  /** The Workflow instances of the scope's open turns end. */
  terminate(instanceIds: readonly string[]): Promise<void>;
}

/** An erasure that ended: what it erased, and how long it took (for its event). */
export interface FinishedErasure {
  record: ErasureRecord;
  erased: ErasedCounts;
  unerased: Unerased;
  durationMs: number;
}

/**
 * The caller's erasures (docs/retention.md "Erasure"), one at a time, each
 * from its record to its end: unless a reset cut it short after its rows,
 * the scope's `messageId` hashes and its rows under the object's gate, so no
 * call sees the scope half erased, and what ran for its tasks stopped; then,
 * with the caller's other work going on, its Workflow instances and the
 * agent's subagents and plugins; the record last. One a reset cut short is
 * finished by `resume`, on the object's next wake.
 */
export class ErasureRuns {
  #queue: Promise<unknown> = Promise.resolve();

  constructor(
    private readonly db: AgentDB,
    /** What this run asks of the object. */
    private readonly effects: () => ErasureEffects,
    /** Hears each erasure that ended. */
    private readonly done: (finished: FinishedErasure) => void,
  ) {}

  erase(scope: ErasureScope): Promise<{ erased: ErasedCounts; unerased: Unerased }> {
    const run = this.#queue.then(() => this.#run(this.db.erasures.begin(scope), this.effects()));
    this.#queue = run.catch(() => undefined);
    return run;
  }

  /** Every wake, inside the object's start-up gate (so with no gate of its own). */
  async resume(): Promise<void> {
    for (const record of this.db.erasures.running()) await this.#run(record, { ...this.effects(), exclusive: (work) => work() });
  }

  async #run(begun: ErasureRecord, effects: ErasureEffects): Promise<{ erased: ErasedCounts; unerased: Unerased }> {
    const { db } = this;
    const started = Date.now();
    const record =
      begun.state === "cleanup"
        ? begun
        : await effects.exclusive(async () => {
            const done = db.eraseRows(begun, await db.erasures.hashesOf(begun.scope), effects.agent);
            effects.stopGone((taskId) => db.tasks.get(taskId) !== undefined);
            return done;
          });
    await effects.terminate(record.pending.instances);
    const { subagents, unerased } = await effects.agent.cleanup(record.scope, record.pending.subagents);
    db.erasures.finish(record.id);
    const erased = { ...record.counts, subagents };
    this.done({ record, erased, unerased, durationMs: Date.now() - started });
    return { erased, unerased };
  }
}
