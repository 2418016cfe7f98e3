import type { TaskEventRow } from "../db/task-event-log.js";
import { endsWait } from "../a2a/task-state.js";
import { stateOfEvent } from "./task-events.js";

/** Something in this instance following a task's events: a stream or a blocking send. */
export interface EventListener {
  deliver(row: TaskEventRow): void;
  /** A stream, whose client reads the answer as it is written (a blocking send only waits for the end). */
  readonly follows?: boolean;
  /** Its task is gone (erased): no event follows. */
  gone(): void;
}

/**
 * The live side of the event log, in memory: whoever follows a task in this
 * instance hears each event as it is stored. A listener replays what it
 * missed from the log itself; the hub only carries what comes next.
 */
export class EventHub {
  readonly #byTask = new Map<string, Set<EventListener>>();

  /** Called by the store for every event once it is written. */
  deliver(row: TaskEventRow): void {
    for (const listener of this.#byTask.get(row.taskId) ?? []) listener.deliver(row);
  }

  /** Follows a task; returns the unsubscribe. */
  listen(taskId: string, listener: EventListener): () => void {
    let set = this.#byTask.get(taskId);
    if (!set) this.#byTask.set(taskId, (set = new Set()));
    set.add(listener);
    return () => {
      set.delete(listener);
      if (set.size === 0 && this.#byTask.get(taskId) === set) this.#byTask.delete(taskId);
    };
  }

  /**
   * Whether a stream follows the task now: one is open on it, or a streaming
   * send's stream is about to open (its slot is held for the task).
   */
  follows(taskId: string): boolean {
    for (const listener of this.#byTask.get(taskId) ?? []) if (listener.follows) return true;
    const now = Date.now();
    for (const held of this.#held.values()) if (held.taskId === taskId && held.lapses > now) return true;
    return false;
  }

  /** Resolves at the task's next event that ends a wait (terminal or interrupted), or once the task is gone. */
  nextEnd(taskId: string): Promise<void> {
    return new Promise((resolve) => {
      const end = () => (stop(), resolve());
      const stop = this.listen(taskId, {
        deliver: (row) => {
          const state = stateOfEvent(row);
          if (state && endsWait(state)) end();
        },
        gone: end,
      });
    });
  }

  /** Tells whoever follows a task that no longer `exists` (it was erased) that it is gone. */
  endGone(exists: (taskId: string) => boolean): void {
    for (const [taskId, listeners] of [...this.#byTask]) if (!exists(taskId)) for (const listener of [...listeners]) listener.gone();
  }

  readonly #open = new Map<string, () => void>();
  /** Slots held for streams about to open (a streaming send between its accept and its stream), with when each lapses. */
  readonly #held = new Map<string, { lapses: number; taskId?: string }>();

  /** Open streams of this caller and slots held for more, for the cap. */
  get streams(): number {
    const now = Date.now();
    for (const [slot, { lapses }] of this.#held) if (lapses <= now) this.#held.delete(slot);
    return this.#open.size + this.#held.size;
  }

  /**
   * Holds a slot for a stream the edge opens in its next call; it lapses
   * after `forMs` so an edge that never comes back (its isolate died) does
   * not hold it for good.
   */
  holdSlot(forMs: number): string {
    const slot = crypto.randomUUID();
    this.#held.set(slot, { lapses: Date.now() + forMs });
    return slot;
  }

  /** Names the task a held slot's stream will follow, once the send has one. */
  holdFor(slot: string, taskId: string): void {
    const held = this.#held.get(slot);
    if (held) held.taskId = taskId;
  }

  /** Whether `slot` is held (and not lapsed); it is given up either way. */
  takeSlot(slot: string): boolean {
    const held = this.#held.get(slot);
    this.#held.delete(slot);
    return held !== undefined && held.lapses > Date.now();
  }

  /** Counts a stream as open until it ends; `end` is how it is ended from outside (its client went away). */
  openStream(end: () => void): string {
    const id = crypto.randomUUID();
    this.#open.set(id, end);
    return id;
  }

  /** The stream ended by itself: it no longer counts. */
  forgetStream(id: string): void {
    this.#open.delete(id);
  }

  /** Ends a stream whose client went away; idempotent. */
  releaseStream(id: string): void {
    const end = this.#open.get(id);
    this.#open.delete(id);
    end?.();
  }
}
