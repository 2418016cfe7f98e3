import { eventLine, type EventLines, type StreamEventJson } from "../boundary/index.js";
import type { TaskEventRow } from "../db/task-event-log.js";
import type { EventHub } from "./event-hub.js";
import { endsWait, stateOfEvent } from "./task-events.js";

const encoder = new TextEncoder();
const line = (seq: number, json: string) => encoder.encode(eventLine(seq, json));

export interface TaskStreamOptions {
  hub: EventHub;
  taskId: string;
  /** The task as the stream opens, and the `seq` it is current at. */
  snapshot: { seq: number; event: StreamEventJson };
  /** Events already stored that the stream replays after the snapshot (`Last-Event-ID`). */
  replay: readonly TaskEventRow[];
  /** Ends the stream after the replay (a terminal task replayed from `Last-Event-ID`). */
  endAfterReplay: boolean;
}

/**
 * One stream of a task's events, as JSON lines: the snapshot, the replay, then
 * live events from the hub until the first one since it opened that makes the
 * task terminal or interrupted (the snapshot never ends it). Built with no
 * await between the replay and the subscription, so no event falls between.
 * A consumer that goes away (the client disconnected) cancels it and releases
 * the subscription.
 */
export function taskStream(options: TaskStreamOptions): { streamId: string; lines: EventLines } {
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
          if (row.seq <= last) return;
          last = row.seq;
          controller.enqueue(line(row.seq, row.eventJson));
          const state = stateOfEvent(row);
          if (state && endsWait(state)) end(true);
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
