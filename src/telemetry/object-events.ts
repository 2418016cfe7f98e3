import { callerHash } from "./caller-hash.js";
import type { AgentEvent, EventCatalogue, EventName, EventScope, PluginEventData } from "./catalogue.js";
import type { Telemetry } from "./telemetry.js";
import { TurnLog, type TurnLogLine } from "./turn-log.js";

/** Where the object keeps who it serves, for every event's scope: the tenant and the caller's hash, never the identity. */
const SCOPE_KEY = "telemetry.scope";

/** What the emitter already knows of a task's event: its context, and its open turn's Workflow instance. */
export interface EventAbout {
  contextId?: string;
  turnId?: string;
  /** The task's trace (docs/telemetry.md "Trace context"). */
  traceId?: string;
}

interface StoredScope {
  tenant: string;
  caller?: string;
}

/**
 * The caller's object's events: each is scoped to the object's tenant and
 * caller hash and, when it is about a task, to the task's context and open
 * turn. Emitted at durable transitions (the callers below emit after a write
 * took effect), so an occurrence is emitted once; its id is derived from the
 * occurrence, so one seen again carries the same id.
 */
export class ObjectEvents {
  #scope: StoredScope | undefined;
  /** The object's log sink: one line per event, or a turn's in one wide line (docs/telemetry.md "Which lines"). */
  readonly log: TurnLog;

  constructor(
    private readonly kv: SyncKvStorage,
    /** A task's context, its open turn's instance and that turn's trace, as the object stores them (each read only when not given). */
    private readonly lookup: {
      contextOf(taskId: string): string | undefined;
      turnOf(taskId: string): string | undefined;
      traceOf(taskId: string): string | undefined;
    },
    private readonly telemetry: () => Telemetry,
    /** Whether the log gets one line per event (the agent's `telemetry.eventLines`). */
    eachEvent: () => boolean = () => true,
  ) {
    this.log = new TurnLog(eachEvent);
  }

  /**
   * Runs `step`, a turn's step here: a `turn.finished` line it emits is kept
   * for {@link wideLine} (the Workflow adds the step's first push attempts
   * and writes it) instead of written; one nobody took is written after.
   */
  async handingOver<T>(taskId: string, step: () => Promise<T>): Promise<T> {
    this.log.handOver(taskId);
    try {
      return await step();
    } finally {
      this.log.release(taskId);
    }
  }

  /**
   * The task's wide line for the Workflow (none with one line per event): the
   * one kept, or, when this isolate emitted none (a step run again after a
   * crash, a canceled turn), one rebuilt from the stored task, `finished`,
   * with the same id as its `turn.finished` and what is known.
   */
  async wideLine(taskId: string, finished: EventCatalogue["turn.finished"], about: EventAbout): Promise<TurnLogLine | undefined> {
    if (this.log.eachEvent()) return undefined;
    await this.telemetry().flushed();
    const kept = this.log.take(taskId);
    if (kept) return kept;
    const line = await this.telemetry().line("turn.finished", this.#scopeOf(taskId, about), finished, ["finished"]);
    return this.log.wide(line as AgentEvent & { event: "turn.finished" }, taskId);
  }

  /** Learns who this object serves from a verified call (the first one; the identity of an object never changes). */
  async learnCaller(signingKeySecret: string | undefined, caller: { gatekeeper: string; tenant: string; key: string }): Promise<void> {
    if (this.#stored()?.tenant === caller.tenant && this.#scope?.caller) return;
    const hash = await callerHash(signingKeySecret, caller);
    const scope: StoredScope = { tenant: caller.tenant, ...(hash ? { caller: hash } : {}) };
    this.kv.put(SCOPE_KEY, scope);
    this.#scope = scope;
  }

  /** The scope every event of this object carries. */
  scope(): EventScope {
    const stored = this.#stored();
    return stored ? { tenant: stored.tenant, ...(stored.caller ? { caller: stored.caller } : {}) } : {};
  }

  /** An event about a task: its context, open turn and trace are looked up unless given (a turn's own calls hold them: no read per event). */
  emit<N extends EventName>(name: N, taskId: string | undefined, data: EventCatalogue[N], occurrence: readonly (string | number)[], about?: EventAbout): void {
    void this.telemetry().emit(name, this.#scopeOf(taskId, about), data, occurrence);
  }

  /** A plugin's own event about a task. */
  emitPlugin(plugin: string, name: string, taskId: string, data: PluginEventData, occurrence: readonly (string | number)[]): void {
    void this.telemetry().emitPlugin(plugin, name, this.#scopeOf(taskId), data, occurrence);
  }

  #scopeOf(taskId: string | undefined, about: EventAbout = {}): EventScope {
    const scope: EventScope = this.scope();
    if (about.contextId) scope.contextId = about.contextId;
    if (taskId) {
      scope.taskId = taskId;
      const context = about.contextId ?? this.lookup.contextOf(taskId);
      if (context) scope.contextId = context;
      const turn = about.turnId ?? this.lookup.turnOf(taskId);
      if (turn) scope.turnId = turn;
      const trace = about.traceId ?? this.lookup.traceOf(taskId);
      if (trace) scope.traceId = trace;
    }
    return scope;
  }

  #stored(): StoredScope | undefined {
    this.#scope ??= this.kv.get<StoredScope>(SCOPE_KEY);
    return this.#scope;
  }
}
