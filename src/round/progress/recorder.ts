import { PROGRESS_PARAMS, clipChars, type ProgressAggregate, type ProgressPayload, type ProgressTracker, type TrackerStatus } from "../../a2a/progress.js";

/** One snapshot of a task's progress: its trackers, and the status text saying what happens now. */
interface ProgressSnapshot {
  text: string;
  payload: ProgressPayload;
}

/** Where snapshots go (the task's status and its progress event); synchronous, and never throws into the loop. */
export type ProgressSink = (snapshot: ProgressSnapshot) => void;

/** What a tracker says: as it is now, and as the last snapshot showed it. */
interface State {
  progress?: number;
  total?: number;
  message: string;
  status: TrackerStatus;
  updatedAt: number;
}

interface Tracker {
  startedAt: number;
  now: State;
  /** As last shown; none before its first snapshot. */
  shown?: State;
  /** When it was last shown, and the time before. */
  shownAt: number;
  shownBefore: number;
  /** It changed since it was last shown. */
  changed: boolean;
}

/** Two updates a second at most, per tracker (the extension's `recommendedMaxUpdatesPerSecond`). */
const PER_SECOND = PROGRESS_PARAMS.recommendedMaxUpdatesPerSecond;
/** An update waits this long after the last one; an end only while the last second holds two already. */
const MIN_INTERVAL_MS = 1000 / PER_SECOND;

/** When `tracker`'s change may be shown: its end at once unless two updates fill the last second, any other change half a second after the last. */
function dueAt(tracker: Tracker): number {
  const spaced = tracker.shownAt + MIN_INTERVAL_MS;
  return tracker.now.status === "running" ? spaced : Math.min(spaced, tracker.shownBefore + 1000);
}

const at = (ms: number) => new Date(ms).toISOString();
const number = (value: unknown): value is number => typeof value === "number" && Number.isFinite(value) && value >= 0;

/**
 * The trackers of one run of a round (docs/protocol.md "Progress"): each
 * tool call, MCP call, subtask and the round itself, by an id whose prefix is
 * its kind. A tracker's change is shown at once unless the tracker was shown
 * less than half a second ago (its end: unless it was shown twice in the
 * last second); then it waits, later changes folding into it, for its turn.
 * So a tracker starts in the snapshot its start makes, a quick one ends in
 * the next, none goes faster than two updates a second however often its
 * work reports, and a final state is never dropped (`settle` waits for it). Each snapshot
 * holds every running tracker as last shown and, once, each one whose end it
 * shows. Nothing is written before the first tracker starts: a round with
 * none costs nothing.
 */
export class ProgressRecorder {
  readonly #trackers = new Map<string, Tracker>();
  #aggregate: ProgressAggregate | undefined;
  /** The tracker that changed last: its message is the status text. */
  #latest = "";
  #timer: ReturnType<typeof setTimeout> | undefined;
  #flushed: Array<() => void> = [];
  #closed = false;

  constructor(
    private readonly sink: ProgressSink,
    private readonly now: () => number = Date.now,
  ) {}

  /**
   * A tracker starts (or starts again: a re-run of its work). `quiet`: it is
   * shown with the next snapshot another change makes (a round's tracker is
   * no news before its first tool call).
   */
  start(id: string, fields: { message: string; total?: number }, quiet = false): void {
    const now = this.now();
    const state: State = { message: fields.message, status: "running", updatedAt: now, ...(number(fields.total) ? { total: fields.total } : {}) };
    this.#trackers.set(id, { startedAt: now, now: state, shownAt: Number.NEGATIVE_INFINITY, shownBefore: Number.NEGATIVE_INFINITY, changed: true });
    if (!quiet) this.#changed(id);
  }

  /**
   * How far a running tracker got. `total` may not fall below the progress
   * made, and progress never goes down nor past `total` (the draft's rules).
   */
  update(id: string, fields: { progress?: number; total?: number; message?: string }): void {
    const state = this.#running(id);
    if (!state) return;
    if (number(fields.total) && fields.total >= (state.progress ?? 0)) state.total = fields.total;
    if (number(fields.progress)) {
      const capped = state.total === undefined ? fields.progress : Math.min(fields.progress, state.total);
      state.progress = Math.max(state.progress ?? 0, capped);
    }
    if (fields.message) state.message = fields.message;
    state.updatedAt = this.now();
    this.#changed(id);
  }

  /** A tracker ends; a completed one with a total has made all of it. */
  end(id: string, status: "completed" | "failed", message?: string): void {
    const state = this.#running(id);
    if (!state) return;
    state.status = status;
    if (status === "completed" && state.total !== undefined) state.progress = state.total;
    if (message) state.message = message;
    state.updatedAt = this.now();
    this.#changed(id);
  }

  /** Whether `id` is a tracker still running. */
  running(id: string): boolean {
    return this.#running(id) !== undefined;
  }

  /** The aggregate the next snapshots carry (advisory); `undefined` for none. */
  aggregate(aggregate: ProgressAggregate | undefined): void {
    this.#aggregate = aggregate;
  }

  /** Resolves once every change so far is shown (a final state waits at most half a second for its turn). */
  settle(): Promise<void> {
    if (!this.#timer) return Promise.resolve();
    return new Promise((resolve) => this.#flushed.push(resolve));
  }

  /** Nothing more is written (the task is no longer working, or the round is over). */
  close(): void {
    this.#closed = true;
    if (this.#timer) clearTimeout(this.#timer);
    this.#timer = undefined;
    for (const resolve of this.#flushed.splice(0)) resolve();
  }

  #running(id: string): State | undefined {
    const state = this.#trackers.get(id)?.now;
    return state?.status === "running" ? state : undefined;
  }

  #changed(id: string): void {
    this.#latest = id;
    const tracker = this.#trackers.get(id);
    if (tracker) tracker.changed = true;
    if (this.#closed) return;
    if (tracker && this.now() >= dueAt(tracker)) this.#flush();
    else this.#schedule();
  }

  /** A timer for the earliest change still waiting for its tracker's turn. */
  #schedule(): void {
    if (this.#closed || this.#timer) return;
    const waiting = [...this.#trackers.values()].filter((t) => t.changed).map(dueAt);
    if (waiting.length === 0) {
      for (const resolve of this.#flushed.splice(0)) resolve();
      return;
    }
    this.#timer = setTimeout(
      () => {
        this.#timer = undefined;
        this.#flush();
      },
      Math.max(0, Math.min(...waiting) - this.now()),
    );
  }

  #flush(): void {
    if (this.#closed) return;
    const now = this.now();
    // Every change whose tracker's turn has come is shown; the others show as they were.
    for (const tracker of this.#trackers.values()) {
      if (!tracker.changed || now < dueAt(tracker)) continue;
      tracker.shown = { ...tracker.now };
      tracker.shownBefore = tracker.shownAt;
      tracker.shownAt = now;
      tracker.changed = false;
    }
    const { maxTrackers, maxIdChars, maxMessageChars } = PROGRESS_PARAMS;
    const shown = [...this.#trackers].filter(([, t]) => t.shown && t.shownAt === now) as Array<[string, Tracker & { shown: State }]>;
    const others = [...this.#trackers].filter(([, t]) => t.shown && t.shownAt !== now) as Array<[string, Tracker & { shown: State }]>;
    // Ends first (each is shown once), then what changed now, then what runs still, the latest news first.
    const ended = shown.filter(([, t]) => t.shown.status !== "running");
    const byNews = (a: [string, Tracker & { shown: State }], b: [string, Tracker & { shown: State }]) => b[1].shown.updatedAt - a[1].shown.updatedAt;
    const listed = [...ended, ...shown.filter(([, t]) => t.shown.status === "running").sort(byNews), ...others.sort(byNews)].slice(0, maxTrackers);
    const trackers = listed.map(
      ([id, { startedAt, shown: s }]): ProgressTracker => ({
        id: clipChars(id, maxIdChars),
        ...(s.progress === undefined ? {} : { progress: s.progress }),
        ...(s.total === undefined ? {} : { total: s.total }),
        message: clipChars(s.message, maxMessageChars),
        status: s.status,
        startedAt: at(startedAt),
        updatedAt: at(s.updatedAt),
      }),
    );
    // An end shown is done with; one that did not fit is shown again next time.
    for (const [id] of listed) if (this.#trackers.get(id)?.shown?.status !== "running") this.#trackers.delete(id);
    for (const [, tracker] of ended.slice(maxTrackers)) tracker.changed = true;
    const latest = trackers[listed.findIndex(([id]) => id === this.#latest)] ?? trackers[0];
    const aggregate = this.#aggregate && {
      ...this.#aggregate,
      ...(this.#aggregate.message ? { message: clipChars(this.#aggregate.message, maxMessageChars) } : {}),
    };
    try {
      if (trackers.length) this.sink({ text: latest?.message ?? "", payload: { trackers, ...(aggregate ? { aggregate } : {}) } });
    } catch (error) {
      console.warn("progress could not be written (best effort)", error);
    }
    this.#schedule();
  }
}
