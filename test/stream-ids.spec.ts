import { describe, expect, it } from "vitest";
import { tenants } from "../reference/tenants.js";
import { isolatedEdge } from "./support/isolated-edge.js";
import { useTurnHarness } from "./support/turn-harness.js";
import { call, drain, openStream, userMessage } from "./support/rpc.js";

// Stream ids (docs/protocol.md "Stream ids"): on one stream no `id:` is lower
// than one already sent. The snapshot's id is the task's latest seq L, or n
// after `Last-Event-ID: n` (n > L is -32602), so a client that de-duplicates
// by id applies every event once: after Last-Event-ID it ignores the snapshot
// and applies what follows; otherwise the snapshot, then the events above its id.

useTurnHarness();

const edge = isolatedEdge({ tenants }, { CONFORMANCE: "1" });
const newCaller = () => ({ tenant: "conformance", identity: { key: `ids-${crypto.randomUUID()}` } });
type Caller = ReturnType<typeof newCaller>;
const subscribe = (taskId: string, mint: Caller, lastEventId?: string) =>
  openStream(
    "SubscribeToTask",
    { id: taskId },
    { worker: edge.fetch, mint, ...(lastEventId === undefined ? {} : { headers: { "Last-Event-ID": lastEventId } }) },
  );
const ids = (events: Array<{ id: string | undefined }>) => events.map((e) => Number(e.id));
const nonDecreasing = (values: number[]) => values.every((v, i) => i === 0 || v >= values[i - 1]!);

/** A finished task with a few events: working, an artifact, completed (docs/conformance.md `tck-stream-001`). */
async function finishedTask(caller: Caller) {
  const events = await drain(
    await openStream("SendStreamingMessage", { message: userMessage("hi", `tck-stream-001-${crypto.randomUUID()}`) }, { worker: edge.fetch, mint: caller }),
  );
  return { taskId: events[0]!.result.task.id as string, events, latest: Math.max(...ids(events)) };
}

describe("stream ids never go down", () => {
  it("a live stream: the snapshot at the task's latest seq, then the events above it", async () => {
    const { events, latest } = await finishedTask(newCaller());
    expect(nonDecreasing(ids(events))).toBe(true);
    expect(
      ids(events)
        .slice(1)
        .every((id) => id > ids(events)[0]!),
    ).toBe(true);
    expect(latest).toBeGreaterThanOrEqual(4);
  });

  it("Last-Event-ID: 0 on a finished task: the snapshot is 0, then every event from 1, each once", async () => {
    const caller = newCaller();
    const { taskId, latest } = await finishedTask(caller);
    const replay = await drain(await subscribe(taskId, caller, "0"));
    expect(replay[0]!.result.task.status.state).toBe("TASK_STATE_COMPLETED");
    expect(ids(replay)).toEqual([0, ...Array.from({ length: latest }, (_, i) => i + 1)]);
  });

  it("Last-Event-ID: n: the snapshot is n, the events above it follow", async () => {
    const caller = newCaller();
    const { taskId, latest } = await finishedTask(caller);
    const replay = await drain(await subscribe(taskId, caller, "2"));
    expect(ids(replay)).toEqual([2, ...Array.from({ length: latest - 2 }, (_, i) => i + 3)]);
    // At the latest: only the snapshot, numbered as the latest.
    expect(ids(await drain(await subscribe(taskId, caller, String(latest))))).toEqual([latest]);
  });

  it("a Last-Event-ID past the task's latest event is -32602, no stream", async () => {
    const caller = newCaller();
    const { taskId, latest } = await finishedTask(caller);
    const refused = await subscribe(taskId, caller, String(latest + 1));
    expect(refused.reply?.error?.code).toBe(-32602);
    expect(refused.reply?.error?.message).toContain(`latest event (${latest})`);
  });

  it("a client applying the one-line rule sees each event once, in order, across a resume", async () => {
    const caller = newCaller();
    const waiting = (
      await call("SendMessage", { message: userMessage("hi", `tck-input-required-${crypto.randomUUID()}`) }, { worker: edge.fetch, mint: caller })
    ).body.result.task;
    // A stream on a waiting task stays open: read it up to the question, then hang up.
    const open = await subscribe(waiting.id, caller, "0");
    const first: Array<{ id: string | undefined; result: any }> = [];
    for await (const event of open.events) {
      first.push({ id: event.id, result: event.reply.result });
      if (event.reply.result.statusUpdate?.status.state === "TASK_STATE_INPUT_REQUIRED") break;
    }
    await open.close();
    const applied = first.slice(1);
    const last = ids(first).at(-1)!;
    // The answer comes while nobody listens; the resume replays only what is above the last id read.
    await call(
      "SendMessage",
      { message: userMessage("ok", `tck-complete-task-${crypto.randomUUID()}`, { taskId: waiting.id }) },
      { worker: edge.fetch, mint: caller },
    );
    const resumed = await drain(await subscribe(waiting.id, caller, String(last)));
    expect(ids(resumed)[0]).toBe(last);
    applied.push(...resumed.slice(1));
    expect(ids(applied)).toEqual(Array.from({ length: applied.length }, (_, i) => i + 1));
    expect(applied.at(-1)!.result.statusUpdate.status.state).toBe("TASK_STATE_COMPLETED");
  });
});
