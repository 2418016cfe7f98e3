import { invalidParams, quotaExceeded, taskNotFound, unsupportedOperation } from "../a2a/errors.js";
import { endsWait } from "../a2a/task-state.js";
import { accepted, closingLine, eventLine, refused, settle } from "../boundary/index.js";
import type { EventLines, StreamEventJson, StreamQuery, TaskJson, TaskQuery, Verdict } from "../boundary/index.js";
import type { TaskEventRow } from "../db/task-event-log.js";
import type { EventHub } from "./event-hub.js";
import { taskOf } from "../boundary/task-status.js";
import type { ObjectParts } from "./lifecycle.js";
import { foldArtifacts } from "../round/artifacts.js";
import { stateOfEvent } from "./task-events.js";
import { getTask } from "./tasks.js";
import { shapeTask } from "./task-wire.js";

/** How long a streaming send's slot waits for the edge to open its stream. */
const STREAM_SLOT_MS = 30_000;

/** Who follows a task: a blocking send's wait and the streams, under the caller's cap on open streams. */
export class Streams {
  constructor(private readonly parts: ObjectParts) {}

  /**
   * A blocking send's wait: the task once it is terminal or interrupted (at
   * once if it is). The wait lives in this instance's memory; if the object
   * resets meanwhile the edge asks again, and the new instance reads the task.
   */
  async await(query: TaskQuery): Promise<Verdict<TaskJson>> {
    const row = this.parts.db.tasks.get(query.taskId);
    if (!row) return refused(taskNotFound(query.taskId));
    if (!endsWait(row.state)) await this.parts.hub.nextEnd(query.taskId);
    return getTask(this.parts.db, query);
  }

  /** A stream of the task's events (see `StreamQuery`); at most `limits.maxOpenStreams` per caller at once. */
  stream(query: StreamQuery): Verdict<{ streamId: string; lines: EventLines }> {
    const { db, hub } = this.parts;
    return settle(() => {
      const row = db.tasks.get(query.taskId);
      if (!row) throw taskNotFound(query.taskId);
      const terminal = db.tasks.isFinal(row.state);
      if (terminal && query.purpose === "subscribe" && query.afterSeq === undefined) {
        throw unsupportedOperation(
          `Task ${JSON.stringify(query.taskId)} is ${row.state}: there is nothing left to subscribe to (send Last-Event-ID to replay its events)`,
          { taskState: row.state },
        );
      }
      // Stream ids never go down (docs/protocol.md "Stream ids"): after Last-Event-ID n the snapshot is n, the replay above it.
      const latest = db.events.lastSeq(query.taskId);
      if (query.afterSeq !== undefined && query.afterSeq > latest) {
        throw invalidParams(`Last-Event-ID ${query.afterSeq} is past task ${JSON.stringify(query.taskId)}'s latest event (${latest})`);
      }
      if (!(query.slot && hub.takeSlot(query.slot))) this.assertRoom();
      const task = shapeTask(taskOf(row), { historyLength: query.historyLength, includeArtifacts: true });
      // A task still being written shows the answer so far.
      if (!terminal) {
        const written = foldArtifacts(db.events.ofKind(query.taskId, "artifact"));
        if (written.length) task.artifacts = [...(task.artifacts ?? []), ...written];
      }
      // Progress events only to a stream whose request activated progress; the snapshot shows the latest to all.
      const carries = (row: TaskEventRow) => query.progress === true || row.kind !== "progress";
      const replay = query.afterSeq === undefined ? [] : db.events.after(query.taskId, query.afterSeq).filter(carries);
      const snapshot = { seq: query.afterSeq ?? latest, event: { task } };
      return taskStream({ hub, taskId: query.taskId, snapshot, replay, endAfterReplay: terminal, carries });
    });
  }

  release(streamId: string): Verdict<null> {
    this.parts.hub.releaseStream(streamId);
    return accepted(null);
  }

  /** A slot for the stream a streaming send's edge opens next, within the cap (checked first: a refused stream creates no task). */
  holdSlot(): string {
    this.assertRoom();
    return this.parts.hub.holdSlot(STREAM_SLOT_MS);
  }

  /** 429 when the caller has as many streams open (or held) as `limits.maxOpenStreams`. */
  assertRoom(): void {
    const { maxOpenStreams } = this.parts.agent.limits();
    const open = this.parts.hub.streams;
    if (open >= maxOpenStreams) {
      this.parts.events.emit("quota.exceeded", undefined, { limit: "maxOpenStreams", retryAfterSeconds: 5 }, [crypto.randomUUID()]);
      throw quotaExceeded({
        message: `This caller already has ${open} streams open, the most it may have at once (${maxOpenStreams}): close one first`,
        retryAfterSeconds: 5,
        metadata: { limit: "maxOpenStreams", open: String(open) },
      });
    }
  }
}

const encoder = new TextEncoder();
const line = (seq: number, json: string) => encoder.encode(eventLine(seq, json));

interface TaskStreamOptions {
  hub: EventHub;
  taskId: string;
  /** The task as the stream opens, and the `seq` it is current at. */
  snapshot: { seq: number; event: StreamEventJson };
  /** Events already stored that the stream replays after the snapshot (`Last-Event-ID`). */
  replay: readonly TaskEventRow[];
  /** Ends the stream after the replay (a terminal task replayed from `Last-Event-ID`). */
  endAfterReplay: boolean;
  /** Which live events the stream carries (it skips the others' `seq`). */
  carries: (row: TaskEventRow) => boolean;
}

/**
 * One stream of a task's events, as JSON lines: the snapshot, the replay, then
 * live events from the hub until the first one since it opened that makes the
 * task terminal or interrupted (the snapshot never ends it). Built with no
 * await between the replay and the subscription, so no event falls between.
 * A consumer that goes away (the client disconnected) cancels it and releases
 * the subscription.
 */
function taskStream(options: TaskStreamOptions): { streamId: string; lines: EventLines } {
  const { hub } = options;
  let stop = () => {};
  let streamId = "";
  let ended = false;
  let control: ReadableStreamDefaultController<Uint8Array> | undefined;
  const end = (close: boolean) => {
    if (ended) return;
    ended = true;
    stop();
    hub.forgetStream(streamId);
    if (close) control?.close();
  };
  const lines = new ReadableStream<Uint8Array>({
    start(controller) {
      control = controller;
      let last = options.snapshot.seq;
      controller.enqueue(line(options.snapshot.seq, JSON.stringify(options.snapshot.event)));
      for (const row of options.replay) {
        controller.enqueue(line(row.seq, row.eventJson));
        last = Math.max(last, row.seq);
      }
      if (options.endAfterReplay) {
        ended = true;
        controller.close();
        return;
      }
      stop = hub.listen(options.taskId, {
        follows: true,
        deliver(row) {
          if (row.seq <= last || !options.carries(row)) return;
          last = row.seq;
          controller.enqueue(line(row.seq, row.eventJson));
          const state = stateOfEvent(row);
          if (state && endsWait(state)) end(true);
        },
        gone() {
          controller.enqueue(encoder.encode(closingLine("the task was erased")));
          end(true);
        },
      });
    },
    cancel() {
      end(false);
    },
  });
  if (!ended) streamId = hub.openStream(() => end(true));
  return { streamId, lines };
}
