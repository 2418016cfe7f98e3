import { describe, expect, it } from "vitest";
import { tenants } from "../reference/tenants.js";
import { isolatedEdge } from "./support/isolated-edge.js";
import { drainRest, openRestStream, restCall } from "./support/rest.js";
import { call, drain, openStream, userMessage } from "./support/rpc.js";
import { useTurnHarness } from "./support/turn-harness.js";

// Streams over HTTP+JSON (docs/protocol.md "HTTP+JSON", "Events, streams and
// pushes"): `SendStreamingMessage` and `SubscribeToTask` (GET and POST)
// answer `text/event-stream` whose `data:` is the bare StreamResponse, with
// the same `id:` (the event's seq) and `Last-Event-ID` rules as JSON-RPC's
// streams, whose events they carry. The conformance tenant's scenarios
// (docs/conformance.md) give tasks with known events.

useTurnHarness();

const edge = isolatedEdge({ tenants }, { CONFORMANCE: "1" });
const newCaller = () => ({ tenant: "conformance", identity: { key: `rest-${crypto.randomUUID()}` } });
type Caller = ReturnType<typeof newCaller>;
const as = (mint: Caller, lastEventId?: string) => ({
  worker: edge.fetch,
  mint,
  ...(lastEventId === undefined ? {} : { headers: { "Last-Event-ID": lastEventId } }),
});
const stateOf = (event: any): string | undefined => event.task?.status?.state ?? event.statusUpdate?.status?.state;
const ids = (events: Array<{ id: string | undefined }>) => events.map((e) => Number(e.id));

/** A finished task with a few events (`tck-stream-001`: working, an artifact, completed), streamed over HTTP+JSON. */
async function streamedTask(caller: Caller) {
  const stream = await openRestStream("SendStreamingMessage", { message: userMessage("hi", `tck-stream-001-${crypto.randomUUID()}`) }, as(caller));
  expect(stream.status).toBe(200);
  expect(stream.headers.get("Content-Type")).toMatch(/^text\/event-stream/);
  const events = await drainRest(stream);
  return { taskId: events[0]!.event.task.id as string, events, latest: Math.max(...ids(events)) };
}

describe("SendStreamingMessage over HTTP+JSON", () => {
  it("sends the snapshot, the events in order, each data: a bare StreamResponse with its seq as id:, and closes at the end", async () => {
    const { events, latest } = await streamedTask(newCaller());
    expect(events.every((e) => !("jsonrpc" in e.event) && !("result" in e.event))).toBe(true);
    expect(stateOf(events[0]!.event)).toBe("TASK_STATE_SUBMITTED");
    expect(events.map((e) => stateOf(e.event)).filter(Boolean)).toEqual(["TASK_STATE_SUBMITTED", "TASK_STATE_WORKING", "TASK_STATE_COMPLETED"]);
    expect(events.some((e) => e.event.artifactUpdate?.artifact.parts[0].text === "Stream hello from TCK")).toBe(true);
    expect(ids(events)).toEqual([...ids(events)].sort((a, b) => a - b));
    expect(ids(events).at(-1)).toBe(latest);
  });

  it("a message answer is one {message} event, id 0, then the stream closes", async () => {
    const stream = await openRestStream("SendStreamingMessage", { message: userMessage("hi", `tck-message-response-${crypto.randomUUID()}`) }, as(newCaller()));
    const events = await drainRest(stream);
    expect(events).toEqual([{ id: "0", event: { message: expect.objectContaining({ role: "ROLE_AGENT" }) } }]);
  });
});

describe("SubscribeToTask over HTTP+JSON, by GET and by POST", () => {
  for (const verb of ["GET", "POST"]) {
    it(`${verb} with Last-Event-ID: 0 replays a finished task: the events JSON-RPC's replay carries, with the same ids`, async () => {
      const caller = newCaller();
      const { taskId, latest } = await streamedTask(caller);
      const replay = await drainRest(await openRestStream("SubscribeToTask", { id: taskId }, { ...as(caller, "0"), verb }));
      expect(ids(replay)).toEqual([0, ...Array.from({ length: latest }, (_, i) => i + 1)]);
      const rpc = await drain(await openStream("SubscribeToTask", { id: taskId }, as(caller, "0")));
      expect(replay).toEqual(rpc.map((e) => ({ id: e.id, event: e.result })));
    });

    it(`${verb} with Last-Event-ID: n: the snapshot is n, the events above it follow`, async () => {
      const caller = newCaller();
      const { taskId, latest } = await streamedTask(caller);
      const replay = await drainRest(await openRestStream("SubscribeToTask", { id: taskId }, { ...as(caller, "2"), verb }));
      expect(ids(replay)).toEqual([2, ...Array.from({ length: latest - 2 }, (_, i) => i + 3)]);
      expect(stateOf(replay[0]!.event)).toBe("TASK_STATE_COMPLETED");
    });
  }

  it("refuses before streaming, in AIP-193's shape: a finished task without Last-Event-ID (400), an id past the latest (400), an unknown task (404)", async () => {
    const caller = newCaller();
    const { taskId, latest } = await streamedTask(caller);
    const finished = await openRestStream("SubscribeToTask", { id: taskId }, as(caller));
    expect(finished.status).toBe(400);
    expect(finished.body.error).toMatchObject({
      code: 400,
      status: "UNIMPLEMENTED",
      details: [expect.objectContaining({ reason: "UNSUPPORTED_OPERATION", metadata: { taskState: "TASK_STATE_COMPLETED" } })],
    });
    const past = await openRestStream("SubscribeToTask", { id: taskId }, as(caller, String(latest + 1)));
    expect(past.status).toBe(400);
    expect(past.body.error).toMatchObject({ code: 400, status: "INVALID_ARGUMENT", message: expect.stringContaining(`latest event (${latest})`), details: [] });
    const unknown = await openRestStream("SubscribeToTask", { id: "no-such-task" }, { ...as(caller), verb: "POST" });
    expect(unknown.status).toBe(404);
    expect(unknown.body.error.details).toEqual([expect.objectContaining({ reason: "TASK_NOT_FOUND" })]);
  });

  it("follows a waiting task through its answer; a client that hung up resumes with Last-Event-ID and applies each event once", async () => {
    const caller = newCaller();
    const waiting = (await call("SendMessage", { message: userMessage("hi", `tck-input-required-${crypto.randomUUID()}`) }, as(caller))).body.result.task;
    expect(waiting.status.state).toBe("TASK_STATE_INPUT_REQUIRED");
    // Read up to the question (a stream on a waiting task stays open), then hang up.
    const open = await openRestStream("SubscribeToTask", { id: waiting.id }, as(caller, "0"));
    const first: Array<{ id: string | undefined; event: any }> = [];
    for await (const event of open.events) {
      first.push(event);
      if (event.event.statusUpdate?.status.state === "TASK_STATE_INPUT_REQUIRED") break;
    }
    await open.close();
    const last = ids(first).at(-1)!;
    // The answer, over HTTP+JSON too, while nobody listens.
    const answered = await restCall(
      "SendMessage",
      { message: userMessage("ok", `tck-complete-task-${crypto.randomUUID()}`, { taskId: waiting.id }) },
      { worker: edge.fetch, mint: caller },
    );
    expect(answered.body.task.status.state).toBe("TASK_STATE_COMPLETED");
    const resumed = await drainRest(await openRestStream("SubscribeToTask", { id: waiting.id }, { ...as(caller, String(last)), verb: "POST" }));
    expect(ids(resumed)[0]).toBe(last);
    const applied = [...first.slice(1), ...resumed.slice(1)];
    expect(ids(applied)).toEqual(Array.from({ length: applied.length }, (_, i) => i + 1));
    expect(stateOf(applied.at(-1)!.event)).toBe("TASK_STATE_COMPLETED");
  });
});
