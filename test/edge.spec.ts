import { env } from "cloudflare:workers";
import { introspectWorkflow, type WorkflowIntrospector } from "cloudflare:test";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { GATEKEEPER, OTHER_GATEKEEPER } from "./support/constants.js";
import { isolatedEdge } from "./support/isolated-edge.js";
import { interceptOutbound } from "./support/outbound.js";
import { call, post, sendParams, userMessage } from "./support/rpc.js";

const identity = (key: string) => ({ identity: { key } });

// These specs are about the edge and the task store: accepted turns are held
// at their first step so every task stays where the edge left it.
let workflows: WorkflowIntrospector;
beforeEach(async () => {
  workflows = await introspectWorkflow(env.TURN_WORKFLOW);
  await workflows.modifyAll(async (m) => {
    await m.disableRetryDelays();
    await m.mockStepError({ name: "start" }, new Error("held by the edge specs"));
  });
});
afterEach(() => workflows.dispose());
const newCaller = () => identity(`caller-${crypto.randomUUID()}`);

describe("the JSON-RPC envelope", () => {
  it("answers -32700 to a body that is not JSON", async () => {
    using _ = interceptOutbound();
    const reply = await post("{not json");
    expect(reply.status).toBeLessThan(500);
    expect(reply.body).toMatchObject({ jsonrpc: "2.0", id: null, error: { code: -32700 } });
  });

  it("answers -32600 to JSON that is not a request object", async () => {
    using _ = interceptOutbound();
    for (const body of [
      "[]",
      "42",
      "null",
      '{"jsonrpc":"1.0","id":1,"method":"GetTask"}',
      '{"jsonrpc":"2.0","method":"GetTask"}',
      '{"jsonrpc":"2.0","id":{},"method":"GetTask"}',
      '{"jsonrpc":"2.0","id":1,"method":"GetTask","params":[1]}',
    ]) {
      const reply = await post(body);
      expect(reply.status, body).toBeLessThan(500);
      expect(reply.body.error.code, body).toBe(-32600);
    }
  });

  it("keeps the request id on an envelope error when it is readable", async () => {
    using _ = interceptOutbound();
    const reply = await post('{"jsonrpc":"2.0","id":"abc","method":""}');
    expect(reply.body).toMatchObject({ id: "abc", error: { code: -32600 } });
  });

  it("verifies the token before looking at the body", async () => {
    using _ = interceptOutbound();
    const reply = await post("{not json", { token: "garbage" });
    expect(reply.status).toBe(401);
  });

  it("refuses a request without A2A-Version as v0.3 with -32009", async () => {
    using _ = interceptOutbound();
    const reply = await call("GetTask", { id: "x" }, { headers: { "A2A-Version": "" } });
    expect(reply.body.error.code).toBe(-32009);
    const old = await call("GetTask", { id: "x" }, { headers: { "A2A-Version": "0.3" } });
    expect(old.body.error.code).toBe(-32009);
  });

  it("answers -32601 to an unknown method, also one named like an Object property", async () => {
    using _ = interceptOutbound();
    for (const method of ["NoSuchMethod", "toString", "__proto__", "constructor"]) {
      const reply = await call(method);
      expect(reply.body.error.code, method).toBe(-32601);
    }
  });

  it("refuses an oversized body with 413 before parsing it", async () => {
    using _ = interceptOutbound();
    const edge = isolatedEdge({ maxBodyBytes: 1024 });
    const reply = await call("SendMessage", sendParams("x".repeat(4096)), { worker: edge.fetch });
    expect(reply.status).toBe(413);
    expect(reply.body.error.code).toBe(-32600);
    expect(edge.doAccesses()).toBe(0);
  });

  it("refuses an unknown tenant before any Durable Object is addressed", async () => {
    using _ = interceptOutbound();
    const edge = isolatedEdge();
    const reply = await call("GetTask", { id: "x" }, { worker: edge.fetch, mint: { tenant: "ghost" } });
    expect(reply.status).toBeLessThan(500);
    expect(reply.body.error.code).toBe(-32602);
    expect(reply.body.error.message).toContain("ghost");
    expect(edge.doAccesses()).toBe(0);
  });

  it("answers -32602 with the parameter's name to malformed params, never a 5xx", async () => {
    using _ = interceptOutbound();
    const cases: Array<[string, Record<string, unknown>]> = [
      ["GetTask", {}],
      ["GetTask", { id: 7 }],
      ["GetTask", { id: "x", historyLength: -1 }],
      ["ListTasks", { pageSize: 0 }],
      ["ListTasks", { pageSize: 101 }],
      ["ListTasks", { status: "TASK_STATE_BOGUS" }],
      ["ListTasks", { statusTimestampAfter: "yesterday" }],
      ["ListTasks", { pageToken: "!!" }],
      ["CancelTask", { id: "" }],
      ["SendMessage", {}],
      ["SendMessage", { message: "hi" }],
      ["SendMessage", { message: { messageId: "m", role: "ROLE_AGENT", parts: [{ text: "x" }] } }],
      ["SendMessage", { message: { messageId: "m", role: "ROLE_USER", parts: [] } }],
      ["SendMessage", { message: { messageId: "m", role: "ROLE_USER", parts: [{}] } }],
      ["SendMessage", { message: { role: "ROLE_USER", parts: [{ text: "x" }] } }],
    ];
    for (const [method, params] of cases) {
      const reply = await call(method, params, { mint: newCaller() });
      const label = `${method} ${JSON.stringify(params)}`;
      expect(reply.status, label).toBeLessThan(500);
      expect(reply.body.error?.code, label).toBe(-32602);
    }
  });
});

describe("SendMessage (accept, then notify)", () => {
  it("accepts a turn at once as a submitted task", async () => {
    using _ = interceptOutbound();
    const reply = await call("SendMessage", sendParams("hello"), { mint: newCaller() });
    expect(reply.status).toBe(200);
    expect(reply.body.result.task).toMatchObject({ status: { state: "TASK_STATE_SUBMITTED" } });
    expect(reply.body.result.task.history[0].parts).toEqual([{ text: "hello" }]);
  });

  it("requires a push config, says so, and creates no task", async () => {
    using _ = interceptOutbound();
    const caller = newCaller();
    const reply = await call("SendMessage", { message: userMessage("hi") }, { mint: caller });
    expect(reply.body.error.code).toBe(-32602);
    expect(reply.body.error.message).toMatch(/taskPushNotificationConfig/);
    expect((await call("ListTasks", {}, { mint: caller })).body.result.totalSize).toBe(0);
  });

  it("refuses a push URL off the gatekeeper allowlist (exact origin) and creates no task", async () => {
    using outbound = interceptOutbound();
    const caller = newCaller();
    for (const url of ["https://evil.test/hook", "http://localhost:9999/a2a/notifications", "https://gatekeeper.test:444/x", "not a url"]) {
      const reply = await call("SendMessage", sendParams("hi", undefined, url), { mint: caller });
      expect(reply.body.error?.code, url).toBe(-32602);
    }
    expect((await call("ListTasks", {}, { mint: caller })).body.result.totalSize).toBe(0);
    expect(outbound.requests.filter((r) => !r.url.startsWith(GATEKEEPER))).toHaveLength(0);
  });

  it("accepts a loopback push URL only on the exact allowlisted origin", async () => {
    using _ = interceptOutbound();
    const ok = await call("SendMessage", sendParams("hi", undefined, "http://127.0.0.1:9999/a2a/notifications"), { mint: newCaller() });
    expect(ok.body.result.task.status.state).toBe("TASK_STATE_SUBMITTED");
  });

  it("enforces the 262,144-byte text limit on the trimmed concatenation of text parts", async () => {
    using _ = interceptOutbound();
    const caller = newCaller();
    const fits = {
      ...sendParams(""),
      message: userMessage("", undefined, { parts: [{ text: `  ${"é".repeat(65_536)}` }, { text: `${"a".repeat(131_072)}\n\n` }] }),
    };
    expect((await call("SendMessage", fits, { mint: caller })).body.result?.task).toBeDefined();
    const over = { ...sendParams(""), message: userMessage("", undefined, { parts: [{ text: "é".repeat(65_536) }, { text: "a".repeat(131_073) }] }) };
    const reply = await call("SendMessage", over, { mint: caller });
    expect(reply.body.error.code).toBe(-32602);
    expect(reply.body.error.message).toContain("262,144 bytes");
  });

  it("returns the same task for a retried messageId, also when five arrive at once", async () => {
    using _ = interceptOutbound();
    const caller = newCaller();
    const replies = await Promise.all(Array.from({ length: 5 }, () => call("SendMessage", sendParams("once", "msg-dup"), { mint: caller })));
    const ids = new Set(replies.map((r) => r.body.result.task.id));
    expect(ids.size).toBe(1);
    const list = await call("ListTasks", {}, { mint: caller });
    expect(list.body.result.totalSize).toBe(1);
  });
});

describe("tasks belong to their caller", () => {
  it("answers TaskNotFound for another caller's task, on every method", async () => {
    using _ = interceptOutbound();
    const alice = newCaller();
    const mallory = newCaller();
    const task = (await call("SendMessage", sendParams("secret"), { mint: alice })).body.result.task;

    expect((await call("GetTask", { id: task.id }, { mint: mallory })).body.error.code).toBe(-32001);
    expect((await call("CancelTask", { id: task.id }, { mint: mallory })).body.error.code).toBe(-32001);
    expect((await call("ListTasks", {}, { mint: mallory })).body.result).toMatchObject({ tasks: [], totalSize: 0, nextPageToken: "" });
    // And the owner still sees it untouched.
    expect((await call("GetTask", { id: task.id }, { mint: alice })).body.result.status.state).toBe("TASK_STATE_SUBMITTED");
  });

  it("gives each gatekeeper its own objects: one identity key through two gatekeepers is two callers", async () => {
    using _ = interceptOutbound();
    const caller = newCaller();
    const viaOther = { ...caller, iss: OTHER_GATEKEEPER, jku: `${OTHER_GATEKEEPER}/.well-known/jwks.json` };
    const task = (await call("SendMessage", sendParams("hi"), { mint: caller })).body.result.task;

    // A 200 (not a 401): the other gatekeeper's token verified, and its caller has no such task.
    const other = await call("GetTask", { id: task.id }, { mint: viaOther });
    expect(other.status).toBe(200);
    expect(other.body.error.code).toBe(-32001);
    expect((await call("ListTasks", {}, { mint: viaOther })).body.result.totalSize).toBe(0);
    expect((await call("GetTask", { id: task.id }, { mint: caller })).body.result.id).toBe(task.id);
  });

  it("keeps one caller's tasks apart across tenants too", async () => {
    using _ = interceptOutbound();
    const caller = newCaller();
    const task = (await call("SendMessage", sendParams("hi"), { mint: caller })).body.result.task;
    const other = await call("GetTask", { id: task.id }, { mint: { ...caller, tenant: "researcher" } });
    expect(other.body.error.code).toBe(-32001);
  });
});

describe("GetTask, CancelTask, ListTasks over the edge", () => {
  it("cancels a submitted task, and canceling it again returns it (CancelTask is idempotent)", async () => {
    using _ = interceptOutbound();
    const caller = newCaller();
    const task = (await call("SendMessage", sendParams("hi"), { mint: caller })).body.result.task;
    const canceled = await call("CancelTask", { id: task.id }, { mint: caller });
    expect(canceled.body.result.status.state).toBe("TASK_STATE_CANCELED");
    const again = await call("CancelTask", { id: task.id }, { mint: caller });
    expect(again.body.error).toBeUndefined();
    expect(again.body.result).toEqual(canceled.body.result);
    expect((await call("GetTask", { id: task.id }, { mint: caller })).body.result.status.state).toBe("TASK_STATE_CANCELED");
  });

  it("honours historyLength on GetTask", async () => {
    using _ = interceptOutbound();
    const caller = newCaller();
    const task = (await call("SendMessage", sendParams("hi"), { mint: caller })).body.result.task;
    const none = await call("GetTask", { id: task.id, historyLength: 0 }, { mint: caller });
    expect(none.body.result.history).toBeUndefined();
    const one = await call("GetTask", { id: task.id, historyLength: 1 }, { mint: caller });
    expect(one.body.result.history).toHaveLength(1);
  });

  it("refuses streaming methods with -32004 since the card says streaming: false", async () => {
    using _ = interceptOutbound();
    const reply = await call("SendStreamingMessage", sendParams("hi"), { mint: newCaller() });
    expect(reply.body.error.code).toBe(-32004);
  });
});
