import { env } from "cloudflare:workers";
import { runInDurableObject } from "cloudflare:test";
import { callerObjectName } from "@dynamicagents/core/worker";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { ConformanceAgent } from "../reference/conformance/agent.js";
import { RESUBSCRIBE_HOLD_MS } from "../reference/conformance/scenarios.js";
import { tenants } from "../reference/tenants.js";
import { GATEKEEPER, ORIGIN } from "./support/constants.js";
import { isolatedEdge } from "./support/isolated-edge.js";
import { useTurnHarness } from "./support/turn-harness.js";
import { eventually } from "./support/outbound.js";
import { call, drain, openStream, referenceWorker, userMessage, type Fetcher } from "./support/rpc.js";

// The reference deployment's `conformance` tenant (docs/conformance.md): known
// only with CONFORMANCE=1, and then the messageId prefix picks the scenario.
// Its turns run on the reference turn Workflow, introspected per spec.

const harness = useTurnHarness();

const on = isolatedEdge({ tenants }, { CONFORMANCE: "1" });
const newCaller = () => ({ tenant: "conformance", identity: { key: `tck-${crypto.randomUUID()}` } });
type Caller = ReturnType<typeof newCaller>;
const rpc = (method: string, params: Record<string, unknown>, mint: Caller = newCaller(), worker: Fetcher = on.fetch) => call(method, params, { worker, mint });
const stream = (method: string, params: Record<string, unknown>, mint: Caller) => openStream(method, params, { worker: on.fetch, mint });
/** A message whose id has `prefix`, made unique the way the proxy does (scripts/conformance/proxy.mjs). */
const message = (prefix: string, extra: Record<string, unknown> = {}) => userMessage("hi", `${prefix}-${crypto.randomUUID()}`, extra);
const send = async (prefix: string, mint?: Caller, configuration?: Record<string, unknown>) =>
  (await rpc("SendMessage", { message: message(prefix), ...(configuration ? { configuration } : {}) }, mint)).body;
const stateOf = (result: any): string | undefined => result.task?.status?.state ?? result.statusUpdate?.status?.state;
const textOf = (parts: Array<{ text?: string }> | undefined) => (parts ?? []).map((p) => p.text ?? "").join("");

describe("the conformance tenant is served only with CONFORMANCE=1", () => {
  const refusedWith = async (worker: Fetcher) => {
    const reply = await rpc("SendMessage", { message: message("tck-complete-task") }, newCaller(), worker);
    expect(reply.status).toBe(404);
    expect(reply.body.error.code).toBe(-32602);
    // Not named among the tenants served either.
    expect(reply.body.error.message).toContain("assistant, researcher");
    expect(reply.body.error.message.replace(/"conformance"/, "")).not.toContain("conformance");
    const card = await rpc("GetExtendedAgentCard", {}, newCaller(), worker);
    expect(card.status).toBe(404);
    expect(card.body.error.code).toBe(-32602);
  };

  it("without the variable: unknown, and no object addressed", async () => {
    // The test Worker runs with CONFORMANCE=1 (vitest.config.ts): this edge's env has none.
    const edge = isolatedEdge({ tenants }, { CONFORMANCE: undefined });
    await refusedWith(edge.fetch);
    expect(edge.doAccesses()).toBe(0);
  });

  it("the stub card never names it, even when it is served", async () => {
    for (const worker of [referenceWorker, on.fetch]) {
      const stub = await (await worker(new Request(`${ORIGIN}/.well-known/agent-card.json`))).text();
      expect(stub).not.toContain("conformance");
    }
  });

  it("any value but 1 leaves it unknown, and nothing is addressed", async () => {
    for (const value of ["0", "true", " 1", ""]) {
      const edge = isolatedEdge({ tenants }, { CONFORMANCE: value });
      await refusedWith(edge.fetch);
      expect(edge.doAccesses(), value).toBe(0);
    }
  });

  it("with CONFORMANCE=1 it has a signed card of its own and is named among the tenants served", async () => {
    const card = (await rpc("GetExtendedAgentCard", {})).body.result;
    expect(card.supportedInterfaces[0]).toMatchObject({ url: `${ORIGIN}/a2a`, tenant: "conformance", protocolBinding: "JSONRPC" });
    expect(card.signatures).toHaveLength(1);
    const unknown = await rpc("GetTask", { id: "x" }, { tenant: "nobody", identity: { key: "k" } });
    expect(unknown.body.error.message).toContain("assistant, researcher, conformance");
  });
});

describe("unary scenarios (blocking SendMessage)", () => {
  it("tck-complete-task: completed, the agent's message, no artifact; any other id does the same", async () => {
    for (const prefix of ["tck-complete-task", "something-else"]) {
      const { task } = (await send(prefix)).result;
      expect(task.status.state, prefix).toBe("TASK_STATE_COMPLETED");
      expect(task.status.message.role).toBe("ROLE_AGENT");
      expect(textOf(task.status.message.parts)).toBe("Hello from TCK");
      expect(task.artifacts, prefix).toBeUndefined();
    }
  });

  it("tck-artifact-*: the artifact, then completed", async () => {
    const expected: Record<string, unknown> = {
      "tck-artifact-text": { text: "Generated text content" },
      "tck-artifact-file": { raw: "dGNr", mediaType: "text/plain", filename: "output.txt" },
      // Longest prefix first: this is not tck-artifact-file.
      "tck-artifact-file-url": { url: "https://example.com/output.txt", mediaType: "text/plain", filename: "output.txt" },
      "tck-artifact-data": { data: { key: "value", count: 42 } },
    };
    for (const [prefix, part] of Object.entries(expected)) {
      const { task } = (await send(prefix)).result;
      expect(task.status.state, prefix).toBe("TASK_STATE_COMPLETED");
      expect(task.artifacts, prefix).toHaveLength(1);
      expect(task.artifacts[0].parts, prefix).toEqual([part]);
    }
    expect(atob("dGNr")).toBe("tck");
  });

  it("tck-message-response: a message and no task; with returnImmediately a task that completes saying it", async () => {
    const caller = newCaller();
    const reply = await send("tck-message-response", caller);
    expect(reply.result.task).toBeUndefined();
    expect(reply.result.message).toMatchObject({ role: "ROLE_AGENT", parts: [{ text: "Direct message response" }] });
    const { task } = (await send("tck-message-response", caller, { returnImmediately: true })).result;
    expect(task.status.state).toBe("TASK_STATE_SUBMITTED");
    const done = await eventually(
      async () => (await rpc("GetTask", { id: task.id }, caller)).body.result,
      (t) => t.status.state === "TASK_STATE_COMPLETED",
      "the task to complete",
    );
    expect(textOf(done.status.message.parts)).toBe("Direct message response");
  });

  it("tck-reject-task: rejected, saying so", async () => {
    const { task } = (await send("tck-reject-task")).result;
    expect(task.status.state).toBe("TASK_STATE_REJECTED");
    expect(textOf(task.status.message.parts)).toBe("rejected");
    expect(task.artifacts).toBeUndefined();
  });

  it("tck-input-required: waits for input; a follow-up's own prefix keeps it waiting or finishes it", async () => {
    const caller = newCaller();
    const waiting = (await send("tck-input-required", caller)).result.task;
    expect(waiting.status.state).toBe("TASK_STATE_INPUT_REQUIRED");
    const followUp = async (prefix: string) =>
      (await rpc("SendMessage", { message: message(prefix, { taskId: waiting.id, contextId: waiting.contextId }) }, caller)).body;
    const again = (await followUp("tck-input-required")).result.task;
    expect(again.status.state).toBe("TASK_STATE_INPUT_REQUIRED");
    // A new question, not the first one again.
    const requestOf = (t: any) => t.status.message.parts.find((p: any) => p.data)?.data.requestId;
    expect(requestOf(again)).toBeDefined();
    expect(requestOf(again)).not.toBe(requestOf(waiting));
    const done = (await followUp("tck-artifact-text")).result.task;
    expect(done.status.state).toBe("TASK_STATE_COMPLETED");
    expect(done.artifacts[0].parts).toEqual([{ text: "Generated text content" }]);
    // Terminal now: the platform's own rule.
    expect((await followUp("tck-complete-task")).error.code).toBe(-32004);
  });

  it("a follow-up that completes or rejects ends the waiting task that way", async () => {
    for (const [prefix, state, text] of [
      ["tck-complete-task", "TASK_STATE_COMPLETED", "Hello from TCK"],
      ["tck-reject-task", "TASK_STATE_REJECTED", "rejected"],
    ] as const) {
      const caller = newCaller();
      const waiting = (await send("tck-input-required", caller)).result.task;
      const done = (await rpc("SendMessage", { message: message(prefix, { taskId: waiting.id }) }, caller)).body.result.task;
      expect(done.status.state, prefix).toBe(state);
      expect(textOf(done.status.message.parts)).toBe(text);
    }
  });

  it("a question nobody answers expires, and the task completes rather than asking forever", async () => {
    const caller = newCaller();
    const waiting = (await send("tck-input-required", caller)).result.task;
    const requestId = waiting.status.message.parts.find((p: any) => p.data)!.data.requestId;
    const namespace = env.CONFORMANCE_AGENT;
    const stub = namespace.get(namespace.idFromName(callerObjectName({ gatekeeper: GATEKEEPER, tenant: "conformance", key: caller.identity.key })));
    // The request's own alarm, fired now.
    await runInDurableObject(stub, (agent: ConformanceAgent) => agent.expireRequest({ requestId }));
    const done = await eventually(
      async () => (await rpc("GetTask", { id: waiting.id }, caller)).body.result,
      (t) => t.status.state !== "TASK_STATE_WORKING" && t.status.state !== "TASK_STATE_INPUT_REQUIRED",
      "the task to end",
    );
    expect(done.status.state).toBe("TASK_STATE_COMPLETED");
  });

  it("a waiting task can be canceled", async () => {
    const caller = newCaller();
    const waiting = (await send("tck-input-required", caller)).result.task;
    const canceled = (await rpc("CancelTask", { id: waiting.id }, caller)).body.result;
    expect(canceled.status.state).toBe("TASK_STATE_CANCELED");
  });
});

describe("streaming scenarios (SendStreamingMessage)", () => {
  const play = async (prefix: string, caller = newCaller()) => drain(await stream("SendStreamingMessage", { message: message(prefix) }, caller));
  const statesAfterSnapshot = (events: Array<{ result: any }>) =>
    events
      .slice(1)
      .map((e) => stateOf(e.result))
      .filter(Boolean);
  const artifactsOf = (events: Array<{ result: any }>) => events.map((e) => e.result.artifactUpdate).filter(Boolean);

  it("working, one artifact, completed, in that order", async () => {
    const expected: Record<string, unknown> = {
      "tck-stream-001": { text: "Stream hello from TCK" },
      "tck-stream-003": { text: "Stream task lifecycle" },
      "tck-stream-ordering-001": { text: "Ordered output" },
      "tck-stream-artifact-text": { text: "Streamed text content" },
      "tck-stream-artifact-file": { raw: "dGNr", mediaType: "text/plain", filename: "output.txt" },
    };
    for (const [prefix, part] of Object.entries(expected)) {
      const events = await play(prefix);
      expect(events[0]!.result.task, prefix).toBeDefined();
      expect(statesAfterSnapshot(events).at(-1), prefix).toBe("TASK_STATE_COMPLETED");
      const working = events.findIndex((e) => stateOf(e.result) === "TASK_STATE_WORKING");
      const artifact = events.findIndex((e) => e.result.artifactUpdate);
      const completed = events.findIndex((e) => stateOf(e.result) === "TASK_STATE_COMPLETED");
      expect(working, prefix).toBeGreaterThanOrEqual(0);
      expect(working, prefix).toBeLessThan(artifact);
      expect(artifact, prefix).toBeLessThan(completed);
      expect(artifactsOf(events), prefix).toHaveLength(1);
      expect(artifactsOf(events)[0].artifact.parts, prefix).toEqual([part]);
      // The finished task carries the artifact whole.
      expect(events[completed]!.result.statusUpdate.status.message, prefix).toBeUndefined();
    }
  });

  it("tck-stream-002: completed at once, never working, no artifact", async () => {
    const caller = newCaller();
    const events = await play("tck-stream-002", caller);
    const states = events.map((e) => stateOf(e.result)).filter(Boolean);
    expect(states.at(-1)).toBe("TASK_STATE_COMPLETED");
    expect(states).not.toContain("TASK_STATE_WORKING");
    expect(artifactsOf(events)).toEqual([]);
    const task = (await rpc("GetTask", { id: events[0]!.result.task.id }, caller)).body.result;
    expect(task.status.state).toBe("TASK_STATE_COMPLETED");
    expect(task.artifacts).toBeUndefined();
    expect(task.status.message).toBeUndefined();
  });

  it("tck-stream-artifact-chunked: two appended chunks, the last marked, then completed with them joined", async () => {
    const caller = newCaller();
    const events = await play("tck-stream-artifact-chunked", caller);
    const chunks = artifactsOf(events);
    expect(chunks.map((c) => [textOf(c.artifact.parts), c.append, c.lastChunk])).toEqual([
      ["chunk-1 ", true, false],
      ["chunk-2", true, true],
    ]);
    expect(new Set(chunks.map((c) => c.artifact.artifactId)).size).toBe(1);
    expect(statesAfterSnapshot(events)).toEqual(["TASK_STATE_WORKING", "TASK_STATE_COMPLETED"]);
    const task = (await rpc("GetTask", { id: events[0]!.result.task.id }, caller)).body.result;
    expect(task.artifacts.map((a: any) => textOf(a.parts))).toEqual(["chunk-1 chunk-2"]);
  });

  describe("test-resubscribe-message-id", () => {
    const HOLD_MS = 1_000;
    beforeEach(() => {
      // The deployed hold is the suite's 4 s; specs wait a second.
      expect(ConformanceAgent.resubscribeHoldMs).toBe(RESUBSCRIBE_HOLD_MS);
      expect(RESUBSCRIBE_HOLD_MS).toBeGreaterThanOrEqual(4_000);
      ConformanceAgent.resubscribeHoldMs = HOLD_MS;
    });
    afterEach(() => {
      ConformanceAgent.resubscribeHoldMs = RESUBSCRIBE_HOLD_MS;
    });

    it("stays working for the hold, so a second stream can subscribe, then completes", async () => {
      const caller = newCaller();
      const started = Date.now();
      const first = await stream("SendStreamingMessage", { message: message("test-resubscribe-message-id") }, caller);
      const iterator = first.events[Symbol.asyncIterator]();
      const snapshot = (await iterator.next()).value!.reply.result;
      const taskId = snapshot.task.id;
      await first.close();
      await eventually(
        async () => (await rpc("GetTask", { id: taskId }, caller)).body.result.status.state,
        (s) => s === "TASK_STATE_WORKING",
        "the task to be working",
      );
      const events = await drain(await stream("SubscribeToTask", { id: taskId }, caller));
      expect(events[0]!.result.task.status.state).toBe("TASK_STATE_WORKING");
      expect(stateOf(events.at(-1)!.result)).toBe("TASK_STATE_COMPLETED");
      expect(Date.now() - started).toBeGreaterThanOrEqual(HOLD_MS);
      expect(artifactsOf(events)).toEqual([]);
    });

    it("a cancel during the hold ends it at once: canceled, and its turn over well before the hold", async () => {
      ConformanceAgent.resubscribeHoldMs = 5_000;
      const caller = newCaller();
      const { task } = (await send("test-resubscribe-message-id", caller, { returnImmediately: true })).result;
      await eventually(
        async () => (await rpc("GetTask", { id: task.id }, caller)).body.result.status.state,
        (s) => s === "TASK_STATE_WORKING",
        "the task to be working",
      );
      const canceledAt = Date.now();
      expect((await rpc("CancelTask", { id: task.id }, caller)).body.result.status.state).toBe("TASK_STATE_CANCELED");
      const [turn] = await harness.workflows.get();
      await turn!.waitForStatus("complete");
      expect(Date.now() - canceledAt).toBeLessThan(2_500);
      expect((await rpc("GetTask", { id: task.id }, caller)).body.result.status.state).toBe("TASK_STATE_CANCELED");
    });
  });
});
