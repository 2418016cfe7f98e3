// The specs' wire-shape check (src/testing/wire-round-trip.ts), on its own:
// a key the A2A 1.0 type lacks fails loudly, named with its path, at any
// depth; a field sent with its proto default, and anything inside an opaque
// field (metadata, a data part), pass. The gatekeeper intercept checks every
// push it takes the same way.
import { describe, expect, it } from "vitest";
import { interceptGatekeeper } from "../../src/testing/intercept-gatekeeper.ts";
import { WireShapeError, assertResultShape, assertStreamResponseShape } from "../../src/testing/wire-round-trip.ts";

const task = { id: "t", contextId: "c", status: { state: "TASK_STATE_WORKING", timestamp: "2026-12-01T10:00:00.000Z" } };

describe("a stray key fails, named", () => {
  it("beside an artifact in a streamed artifactUpdate (the defect it was written for)", () => {
    const event = {
      artifactUpdate: {
        taskId: "t",
        contextId: "c",
        artifact: { artifactId: "a", parts: [{ text: "x" }] },
        append: false,
        lastChunk: true,
        parts: [{ text: "x" }],
      },
    };
    expect(() => assertStreamResponseShape("event 3", event)).toThrow(WireShapeError);
    expect(() => assertStreamResponseShape("event 3", event)).toThrow(/event 3 is not exactly its A2A 1.0 type: stray key "parts" at artifactUpdate\.parts/);
  });

  it("at any depth, every one of them", () => {
    const listed = { tasks: [{ ...task, status: { ...task.status, extra: 1 } }], nextPageToken: "", pageSize: 50, totalSize: 1, more: "" };
    let message = "";
    try {
      assertResultShape("ListTasks", listed);
    } catch (error) {
      message = error.message;
    }
    expect(message).toContain('stray key "extra" at tasks.0.status.extra');
    // An empty string is a proto default only for a field the type has.
    expect(message).toContain('stray key "more" at more');
  });

  it("a value the type would change", () => {
    expect(() => assertResultShape("GetTask", { ...task, status: { state: "WORKING" } })).toThrow(/status\.state: "WORKING" comes back as/);
  });

  it("DeleteTaskPushNotificationConfig answers null (google.protobuf.Empty), nothing else", () => {
    expect(() => assertResultShape("DeleteTaskPushNotificationConfig", null)).not.toThrow();
    expect(() => assertResultShape("DeleteTaskPushNotificationConfig", { deleted: true })).toThrow(WireShapeError);
  });
});

describe("what passes", () => {
  it("fields sent with their proto defaults, which the encoder leaves out", () => {
    expect(() => assertResultShape("ListTasks", { tasks: [], nextPageToken: "", pageSize: 50, totalSize: 0 })).not.toThrow();
    expect(() => assertResultShape("ListTaskPushNotificationConfigs", { configs: [], nextPageToken: "" })).not.toThrow();
    const chunk = { artifactUpdate: { taskId: "t", contextId: "c", artifact: { artifactId: "a", parts: [{ text: "" }] }, append: false, lastChunk: false } };
    expect(() => assertStreamResponseShape("a chunk", chunk)).not.toThrow();
  });

  it("anything inside metadata and data parts: the client's own JSON", () => {
    const history = [
      { messageId: "m", role: "ROLE_USER", parts: [{ data: { any_key: [1, { x: null }] }, metadata: { "https://x.test/k": { deep_key: true } } }] },
    ];
    expect(() =>
      assertResultShape("SendMessage", { task: { ...task, history, metadata: { "https://dynamicagents.dev/usage": { inputTokens: 1 } } } }),
    ).not.toThrow();
  });

  it("a method that is not A2A's (an extension's own result shape) is not checked", () => {
    expect(() => assertResultShape("dynamicagents/DeleteContext", { erased: { tasks: 1 }, unerased: [] })).not.toThrow();
  });
});

describe("the gatekeeper intercept's pushes", () => {
  const gatekeeper = "https://gatekeeper.test";
  const push = (body) =>
    fetch(`${gatekeeper}/a2a/notifications`, { method: "POST", headers: { "Content-Type": "application/a2a+json" }, body: JSON.stringify(body) });
  const statusUpdate = { taskId: "t", contextId: "c", status: { state: "TASK_STATE_WORKING" } };

  it("a push that is not exactly a StreamResponse fails the intercept's end, naming the key", async () => {
    const intercept = interceptGatekeeper({ gatekeeper, jwks: [] });
    expect((await push({ statusUpdate: { ...statusUpdate, parts: [{ text: "x" }] } })).status).toBe(200);
    expect(intercept.pushes).toHaveLength(1);
    expect(() => intercept.restore()).toThrow(/pushes that are not exactly an A2A 1\.0 StreamResponse: .*stray key "parts" at statusUpdate\.parts/);
    // Restored all the same: the real fetch is back.
    expect(globalThis.fetch).not.toHaveProperty("mock");
  });

  it("exact pushes end it quietly", async () => {
    const intercept = interceptGatekeeper({ gatekeeper, jwks: [] });
    await push({ statusUpdate });
    await push({ task: { id: "t", contextId: "c", status: { state: "TASK_STATE_COMPLETED" } } });
    expect(() => intercept.restore()).not.toThrow();
  });
});
