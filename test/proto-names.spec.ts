import { describe, expect, it } from "vitest";
import { tenants } from "../reference/tenants.js";
import { PUSH_URL } from "./support/constants.js";
import { isolatedEdge } from "./support/isolated-edge.js";
import { useTurnHarness } from "./support/turn-harness.js";
import { call, drain, openStream } from "./support/rpc.js";

// Requests are read as proto-JSON readers must read them (docs/protocol.md
// "Wire"): every field a2a.proto declares by its lowerCamelCase name and by its
// original proto name, at every depth, for every method; never inside
// `metadata` or a `data` part; a field named both ways is -32602. Replies stay
// lowerCamelCase. The conformance tenant's scenarios (docs/conformance.md) give
// tasks that complete at once (`tck-complete-task`) or wait (`tck-input-required`).

useTurnHarness();

const edge = isolatedEdge({ tenants }, { CONFORMANCE: "1" });
const newCaller = () => ({ tenant: "conformance", identity: { key: `names-${crypto.randomUUID()}` } });
type Caller = ReturnType<typeof newCaller>;
const rpc = async (method: string, params: Record<string, unknown>, mint: Caller) => (await call(method, params, { worker: edge.fetch, mint })).body;
const id = (prefix: string) => `${prefix}-${crypto.randomUUID()}`;

/** A user message written with proto names only. */
const snakeMessage = (prefix: string, extra: Record<string, unknown> = {}) => ({
  message_id: id(prefix),
  role: "ROLE_USER",
  parts: [{ text: "hi" }],
  ...extra,
});

describe("every method reads the proto names", () => {
  it("SendMessage: message, parts and configuration at every depth, the push config's too", async () => {
    const caller = newCaller();
    const messageId = id("tck-input-required");
    const reply = await rpc(
      "SendMessage",
      {
        message: { message_id: messageId, context_id: "ctx-snake", role: "ROLE_USER", parts: [{ text: "hi", media_type: "text/plain" }] },
        configuration: {
          return_immediately: true,
          history_length: 0,
          accepted_output_modes: ["text/plain"],
          task_push_notification_config: { id: "hook", url: PUSH_URL, token: "snake-token", authentication: { scheme: "Bearer", credentials: "c" } },
        },
      },
      caller,
    );
    expect(reply.error).toBeUndefined();
    // return_immediately: the submitted task at once; history_length 0: no history; context_id kept.
    expect(reply.result.task).toMatchObject({ contextId: "ctx-snake", status: { state: "TASK_STATE_SUBMITTED" } });
    expect(reply.result.task.history).toBeUndefined();
    // The push config came with the send, authentication and all.
    const configs = await rpc("ListTaskPushNotificationConfigs", { task_id: reply.result.task.id }, caller);
    expect(configs.result.configs).toEqual([
      expect.objectContaining({
        id: "hook",
        taskId: reply.result.task.id,
        url: PUSH_URL,
        token: "snake-token",
        authentication: { scheme: "Bearer", credentials: "c" },
      }),
    ]);
    // message_id is the message's id: the same id again (in camelCase) is a retry of the same send.
    const retry = await rpc(
      "SendMessage",
      {
        message: { messageId, contextId: "ctx-snake", role: "ROLE_USER", parts: [{ text: "hi", mediaType: "text/plain" }] },
        configuration: { returnImmediately: true },
      },
      caller,
    );
    expect(retry.result.task.id).toBe(reply.result.task.id);
  });

  it("a part's media_type is its media type, checked against the tenant's and kept", async () => {
    const caller = newCaller();
    // Read as octet-stream without its media type, which the tenant does not take.
    const file = { raw: "dGNr", filename: "a.txt", media_type: "text/plain" };
    const sent = await rpc("SendMessage", { message: snakeMessage("tck-complete-task", { parts: [file] }) }, caller);
    const task = (await rpc("GetTask", { id: sent.result.task.id }, caller)).result;
    expect(task.history.find((m: { role: string }) => m.role === "ROLE_USER").parts).toEqual([{ raw: "dGNr", filename: "a.txt", mediaType: "text/plain" }]);
    const refused = await rpc("SendMessage", { message: snakeMessage("tck-complete-task", { parts: [{ ...file, media_type: "image/png" }] }) }, caller);
    expect(refused.error?.code).toBe(-32005);
    expect(refused.error.message).toContain("image/png");
  });

  it("never inside metadata or a data part: those are the client's own JSON", async () => {
    const caller = newCaller();
    const data = { task_id: "not-a-field", history_length: 3, nested: { message_id: "x" } };
    const metadata = { context_id: "mine", reference_task_ids: ["kept"] };
    const sent = await rpc("SendMessage", { message: snakeMessage("tck-complete-task", { parts: [{ data }], metadata }) }, caller);
    const task = (await rpc("GetTask", { id: sent.result.task.id }, caller)).result;
    const asked = task.history.find((m: { role: string }) => m.role === "ROLE_USER");
    expect(asked.parts).toEqual([{ data }]);
    expect(asked.metadata).toEqual(metadata);
  });

  it("GetTask, ListTasks, SubscribeToTask and CancelTask", async () => {
    const caller = newCaller();
    const done = (await rpc("SendMessage", { message: snakeMessage("tck-complete-task", { context_id: "ctx-list" }) }, caller)).result.task;
    expect(done.history.length).toBeGreaterThan(0);
    // GetTask: history_length.
    expect((await rpc("GetTask", { id: done.id, history_length: 0 }, caller)).result.history).toBeUndefined();
    expect((await rpc("GetTask", { id: done.id, history_length: 1 }, caller)).result.history).toHaveLength(1);
    // ListTasks: each of its fields.
    const waiting = (await rpc("SendMessage", { message: snakeMessage("tck-input-required", { context_id: "ctx-list" }) }, caller)).result.task;
    await rpc("SendMessage", { message: snakeMessage("tck-complete-task", { context_id: "elsewhere" }) }, caller);
    const listed = await rpc(
      "ListTasks",
      { context_id: "ctx-list", page_size: 1, history_length: 0, include_artifacts: false, status_timestamp_after: "2000-01-01T00:00:00Z" },
      caller,
    );
    expect(listed.result).toMatchObject({ pageSize: 1, totalSize: 2 });
    expect(listed.result.tasks).toHaveLength(1);
    expect(listed.result.tasks[0].history).toBeUndefined();
    const next = await rpc("ListTasks", { context_id: "ctx-list", page_size: 1, page_token: listed.result.nextPageToken }, caller);
    expect([listed.result.tasks[0].id, next.result.tasks[0].id].sort()).toEqual([done.id, waiting.id].sort());
    // SubscribeToTask: its snapshot shaped by history_length.
    const stream = await openStream("SubscribeToTask", { id: waiting.id, history_length: 0 }, { worker: edge.fetch, mint: caller });
    const first = await stream.events[Symbol.asyncIterator]().next();
    expect(first.value?.reply.result.task).toMatchObject({ id: waiting.id, status: { state: "TASK_STATE_INPUT_REQUIRED" } });
    expect(first.value?.reply.result.task.history).toBeUndefined();
    // CancelTask (id and metadata only: no name to tell apart) ends the stream.
    expect((await rpc("CancelTask", { id: waiting.id, metadata: { why_not: true } }, caller)).result.status.state).toBe("TASK_STATE_CANCELED");
    await stream.close();
  });

  it("SendStreamingMessage", async () => {
    const events = await drain(
      await openStream(
        "SendStreamingMessage",
        { message: snakeMessage("tck-stream-001", { context_id: "ctx-stream" }), configuration: { history_length: 0 } },
        { worker: edge.fetch, mint: newCaller() },
      ),
    );
    expect(events[0]!.result.task).toMatchObject({ contextId: "ctx-stream" });
    expect(events[0]!.result.task.history).toBeUndefined();
    expect(events.at(-1)!.result.statusUpdate.status.state).toBe("TASK_STATE_COMPLETED");
  });

  it("the four push-config methods, by task_id", async () => {
    const caller = newCaller();
    const task = (await rpc("SendMessage", { message: snakeMessage("tck-complete-task") }, caller)).result.task;
    const created = await rpc("CreateTaskPushNotificationConfig", { task_id: task.id, id: "snake", url: PUSH_URL, token: "t" }, caller);
    expect(created.result).toEqual({ id: "snake", taskId: task.id, url: PUSH_URL, token: "t" });
    expect((await rpc("GetTaskPushNotificationConfig", { task_id: task.id, id: "snake" }, caller)).result).toEqual(created.result);
    expect((await rpc("ListTaskPushNotificationConfigs", { task_id: task.id, page_size: 10 }, caller)).result.configs).toEqual([created.result]);
    expect((await rpc("DeleteTaskPushNotificationConfig", { task_id: task.id, id: "snake" }, caller)).result).toBeNull();
    expect((await rpc("GetTaskPushNotificationConfig", { task_id: task.id, id: "snake" }, caller)).error.code).toBe(-32001);
  });

  it("GetExtendedAgentCard (only tenant, one name) answers in lowerCamelCase", async () => {
    const card = (await rpc("GetExtendedAgentCard", {}, newCaller())).result;
    expect(card.supportedInterfaces[0]).toHaveProperty("protocolBinding");
    expect(JSON.stringify(card)).not.toMatch(/"[a-z]+_[a-z_]+":/);
  });
});

describe("a field named both ways is -32602, and nothing happens", () => {
  it("at the top, nested, and in a list of messages", async () => {
    const caller = newCaller();
    const task = (await rpc("SendMessage", { message: snakeMessage("tck-complete-task") }, caller)).result.task;
    const cases: Array<[string, Record<string, unknown>, string]> = [
      ["GetTask", { id: task.id, historyLength: 1, history_length: 1 }, "params.historyLength"],
      ["GetTaskPushNotificationConfig", { taskId: task.id, task_id: task.id, id: "x" }, "params.taskId"],
      ["SendMessage", { message: { ...snakeMessage("tck-complete-task"), messageId: "other" } }, "params.message.messageId"],
      [
        "SendMessage",
        { message: snakeMessage("tck-complete-task"), configuration: { returnImmediately: true, return_immediately: false } },
        "params.configuration.returnImmediately",
      ],
      [
        "SendMessage",
        { message: snakeMessage("tck-complete-task", { parts: [{ text: "a" }, { text: "b", mediaType: "text/plain", media_type: "text/plain" }] }) },
        "params.message.parts.1.mediaType",
      ],
      [
        "SendMessage",
        { message: snakeMessage("tck-complete-task"), configuration: { task_push_notification_config: { url: PUSH_URL, taskId: "a", task_id: "a" } } },
        "params.configuration.taskPushNotificationConfig.taskId",
      ],
    ];
    for (const [method, params, field] of cases) {
      const reply = await rpc(method, params, caller);
      expect(reply.error?.code, field).toBe(-32602);
      expect(reply.error.message, field).toContain(field);
    }
    // None of the sends started a task: the caller still has its first one only.
    expect((await rpc("ListTasks", {}, caller)).result.totalSize).toBe(1);
  });
});
