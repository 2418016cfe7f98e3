import type { RpcStream } from "../src/testing/rpc-client.js";
import { decodeJwt } from "jose";
import { describe, expect, it } from "vitest";
import { markerEdge } from "./support/isolated-edge.js";
import { overTheNetwork } from "./support/network.js";
import { useMarkerHarness } from "./support/turn-harness.js";
import { chatCompletion, chatToolCall, eventually, holdModel } from "./support/outbound.js";
import { mintToken } from "./support/gatekeeper.js";
import { drainRest, openRestStream } from "./support/rest.js";
import { call, drain, openStream, userMessage, type Fetcher } from "./support/rpc.js";

// How a stream shows it is open, frees its place when its client is gone,
// and ends at its token's exp or its maximum lifetime (docs/protocol.md
// "Events, streams and pushes"). The edge's timing is shortened here through
// createA2AWorker's options; the specs' agents hold at most 2 streams a caller.

const harness = useMarkerHarness();

const HEARTBEAT_MS = 250;
/** Room for a loaded machine beyond the interval a rule names. */
const SLACK_MS = 1_500;

const edgeWith = (options: { streamHeartbeatMs?: number; streamMaxLifetimeMs?: number } = {}): Fetcher =>
  overTheNetwork(markerEdge({}, { streamHeartbeatMs: HEARTBEAT_MS, ...options }).fetch);
const newCaller = () => ({ tenant: "marker", identity: { key: `caller-${crypto.randomUUID()}` } });
type Caller = ReturnType<typeof newCaller>;
const stateOf = (result: any) => result.task?.status?.state ?? result.statusUpdate?.status?.state;
const accepted = (s: { status: number; reply: unknown }) => s.status === 200 && s.reply === undefined;

/** A task of `caller` parked for a human (the model asks): its streams wait with nothing to say. */
async function parkedTask(worker: Fetcher, caller: Caller): Promise<string> {
  harness.outbound.model = (c) =>
    c.messages.some((m) => m.role === "tool") ? chatCompletion("thanks", c.model) : chatToolCall("ask_user", { question: "Which?" }, c.model);
  const task = (await call("SendMessage", { message: userMessage("ask me") }, { worker, mint: caller })).body.result.task;
  expect(task.status.state).toBe("TASK_STATE_INPUT_REQUIRED");
  return task.id;
}

describe("a stream's heartbeat", () => {
  it("writes an SSE comment every interval on a stream with nothing to say", async () => {
    const worker = edgeWith();
    const caller = newCaller();
    const taskId = await parkedTask(worker, caller);
    const stream = await openStream("SubscribeToTask", { id: taskId }, { worker, mint: caller });
    const events = stream.events[Symbol.asyncIterator]();
    expect(stateOf((await events.next()).value!.reply.result)).toBe("TASK_STATE_INPUT_REQUIRED");
    // Reading on: the comments come while no event does.
    void events.next();
    const opened = Date.now();
    await eventually(
      () => stream.comments.length,
      (n) => n >= 3,
      "three heartbeats",
    );
    expect(Date.now() - opened).toBeLessThan(3 * HEARTBEAT_MS + SLACK_MS);
    expect(stream.comments).toEqual(["keepalive", "keepalive", "keepalive"]);
    await stream.close();
  });

  it("frees the places of streams whose clients went away within an interval, though their task says nothing", async () => {
    const worker = edgeWith();
    const caller = newCaller();
    const taskId = await parkedTask(worker, caller);
    const open = [
      await openStream("SubscribeToTask", { id: taskId }, { worker, mint: caller }),
      await openStream("SubscribeToTask", { id: taskId }, { worker, mint: caller }),
    ];
    expect(open.every(accepted)).toBe(true);
    const refused = await openStream("SubscribeToTask", { id: taskId }, { worker, mint: caller });
    expect(refused.status).toBe(429);
    // The clients hang up; the Worker hears of it only when it next writes.
    for (const s of open) await s.close();
    const left = Date.now();
    // Both places, each within an interval (their heartbeats tick apart).
    const fresh: RpcStream[] = [];
    for (const place of ["first", "second"]) {
      fresh.push(await eventually(() => openStream("SubscribeToTask", { id: taskId }, { worker, mint: caller }), accepted, `the ${place} place`, 80));
    }
    expect(Date.now() - left).toBeLessThan(HEARTBEAT_MS + SLACK_MS);
    for (const s of fresh) await s.close();
  });
});

describe("a stream's end", () => {
  it("comes within an interval after its token's exp, with a comment saying why, and frees its place", async () => {
    const worker = edgeWith();
    const caller = newCaller();
    const taskId = await parkedTask(worker, caller);
    const token = await mintToken({ ...caller, expiresIn: 2 });
    const expiresAt = decodeJwt(token).exp! * 1000;
    const stream = await openStream("SubscribeToTask", { id: taskId }, { worker, token, mint: caller });
    const other = await openStream("SubscribeToTask", { id: taskId }, { worker, mint: caller });
    const events = await drain(stream);
    const ended = Date.now();
    expect(events.map((e) => stateOf(e.result))).toEqual(["TASK_STATE_INPUT_REQUIRED"]);
    expect(ended).toBeGreaterThanOrEqual(expiresAt);
    expect(ended).toBeLessThan(expiresAt + HEARTBEAT_MS + SLACK_MS);
    expect(stream.comments.at(-1)).toBe("closing: token expired; resume with a fresh token and Last-Event-ID");
    expect(stream.closing).toBe("token expired; resume with a fresh token and Last-Event-ID");
    // Its place is free: with the other still open, one more stream fits.
    const next = await eventually(() => openStream("SubscribeToTask", { id: taskId }, { worker, mint: caller }), accepted, "the expired stream's place", 40);
    await next.close();
    await other.close();
  });

  it("comes at the maximum lifetime, with a comment saying why, and frees its place", async () => {
    const lifetime = 800;
    const worker = edgeWith({ streamMaxLifetimeMs: lifetime });
    const caller = newCaller();
    const taskId = await parkedTask(worker, caller);
    const opened = Date.now();
    const stream = await openStream("SubscribeToTask", { id: taskId }, { worker, mint: caller });
    await drain(stream);
    const lasted = Date.now() - opened;
    expect(lasted).toBeGreaterThanOrEqual(lifetime);
    expect(lasted).toBeLessThan(lifetime + HEARTBEAT_MS + SLACK_MS);
    expect(stream.closing).toBe("maximum stream lifetime (1 s) reached; resume with a fresh token and Last-Event-ID");
    const both = [
      await openStream("SubscribeToTask", { id: taskId }, { worker, mint: caller }),
      await openStream("SubscribeToTask", { id: taskId }, { worker, mint: caller }),
    ];
    expect(both.every(accepted)).toBe(true);
    for (const s of both) await s.close();
  });

  it("a stream that ends early is resumed with a fresh token and Last-Event-ID, and misses nothing", async () => {
    const held = holdModel(harness.outbound);
    const caller = newCaller();
    const edge = edgeWith();
    const sent: Request[] = [];
    const worker: Fetcher = (request) => {
      sent.push(request.clone());
      return edge(request);
    };
    const task = (await call("SendMessage", { message: userMessage("slow"), configuration: { returnImmediately: true } }, { worker, mint: caller })).body.result
      .task;
    await eventually(
      () => held.length,
      (n) => n > 0,
      "the model call",
    );
    const token = await mintToken({ ...caller, expiresIn: 1 });
    const stream = await openStream("SubscribeToTask", { id: task.id }, { worker, token, mint: caller, resume: { expiresIn: 300 } });
    const all = drain(stream);
    await eventually(
      () => stream.comments,
      (comments) => comments.some((c) => c.startsWith("closing: token expired")),
      "the first stream's end",
    );
    held[0]!.release("late answer");
    const events = await all;
    expect(events[0]!.result.task.status.state).toBe("TASK_STATE_WORKING");
    expect(stateOf(events.at(-1)!.result)).toBe("TASK_STATE_COMPLETED");
    expect(events.at(-1)!.result.statusUpdate.status.message.parts[0].text).toBe("late answer");
    // Each event once, in order: the resumed stream's snapshot is not among them.
    const ids = events.map((e) => Number(e.id));
    expect(ids).toEqual([...new Set(ids)].sort((a, b) => a - b));
    expect(events.filter((e) => e.result.task)).toHaveLength(1);
    const resumed = sent.filter((r) => r.headers.has("Last-Event-ID"));
    expect(resumed).toHaveLength(1);
    expect(resumed[0]!.headers.get("Last-Event-ID")).toBe(events[0]!.id);
    expect(await resumed[0]!.json()).toMatchObject({ method: "SubscribeToTask", params: { id: task.id } });
    expect(resumed[0]!.headers.get("Authorization")).not.toBe(`Bearer ${token}`);
  });
});

describe("over HTTP+JSON", () => {
  it("the same heartbeat, the same cap on open streams (429 in AIP-193's shape), the same end at the maximum lifetime", async () => {
    const lifetime = 800;
    const worker = edgeWith({ streamMaxLifetimeMs: lifetime });
    const caller = newCaller();
    const taskId = await parkedTask(worker, caller);
    const opened = Date.now();
    const open = [
      await openRestStream("SubscribeToTask", { id: taskId }, { worker, mint: caller }),
      await openRestStream("SubscribeToTask", { id: taskId }, { worker, mint: caller, verb: "POST" }),
    ];
    expect(open.map((s) => s.status)).toEqual([200, 200]);
    const refused = await openRestStream("SubscribeToTask", { id: taskId }, { worker, mint: caller });
    expect(refused.status).toBe(429);
    expect(refused.headers.get("Retry-After")).toBe("5");
    expect(refused.body.error).toMatchObject({
      code: 429,
      status: "RESOURCE_EXHAUSTED",
      details: [
        expect.objectContaining({ reason: "QUOTA_EXCEEDED", domain: "dynamicagents.dev", metadata: expect.objectContaining({ limit: "maxOpenStreams" }) }),
      ],
    });
    const events = await drainRest(open[0]!);
    expect(events.map((e) => stateOf(e.event))).toEqual(["TASK_STATE_INPUT_REQUIRED"]);
    expect(Date.now() - opened).toBeGreaterThanOrEqual(lifetime);
    expect(open[0]!.comments).toContain("keepalive");
    expect(open[0]!.comments.at(-1)).toBe("closing: maximum stream lifetime (1 s) reached; resume with a fresh token and Last-Event-ID");
    await drainRest(open[1]!);
  });
});

describe("createA2AWorker's stream timing", () => {
  it("refuses a heartbeat over 15 s or not positive, and a lifetime not positive", () => {
    for (const options of [{ streamHeartbeatMs: 15_001 }, { streamHeartbeatMs: 0 }, { streamMaxLifetimeMs: -1 }, { streamHeartbeatMs: Number.NaN }]) {
      expect(() => markerEdge({}, options)).toThrow(/streamHeartbeatMs|streamMaxLifetimeMs/);
    }
  });
});
