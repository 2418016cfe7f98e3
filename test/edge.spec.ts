import { env } from "cloudflare:workers";
import { introspectWorkflow, type WorkflowIntrospector } from "cloudflare:test";
import { TaskState } from "@a2a-js/sdk";
import { callerObjectName } from "@dynamicagents/core/worker";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { GATEKEEPER, LOOPBACK_GATEKEEPER, OTHER_GATEKEEPER } from "./support/constants.js";
import { isolatedEdge } from "./support/isolated-edge.js";
import { interceptOutbound } from "./support/outbound.js";
import { call, post, sendParams, userMessage } from "./support/rpc.js";
import { driven, type DrivenObject } from "./support/turns.js";

const identity = (key: string) => ({ identity: { key } });

// These specs are about the edge and the task store: accepted turns are held
// at their first step so every task stays where the edge left it.
let workflows: WorkflowIntrospector;
beforeEach(async () => {
  workflows = await introspectWorkflow(env.TURN_WORKFLOW);
  await workflows.modifyAll(async (m) => {
    await m.disableRetryDelays();
    await m.mockStepError({ name: "run" }, new Error("held by the edge specs"));
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

  it("takes a send without a push config (it is optional) and stores none", async () => {
    using outbound = interceptOutbound();
    const caller = newCaller();
    const reply = await call("SendMessage", { message: userMessage("hi"), configuration: { returnImmediately: true } }, { mint: caller });
    expect(reply.body.result.task.status.state).toBe("TASK_STATE_SUBMITTED");
    const configs = await call("ListTaskPushNotificationConfigs", { taskId: reply.body.result.task.id }, { mint: caller });
    expect(configs.body.result.configs).toEqual([]);
    expect(outbound.pushes).toHaveLength(0);
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
    // A loopback gatekeeper's caller: its push URL is on its own origin, `localhost` is not `127.0.0.1`.
    const caller = { ...newCaller(), iss: LOOPBACK_GATEKEEPER, jku: `${LOOPBACK_GATEKEEPER}/.well-known/jwks.json` };
    const ok = await call("SendMessage", sendParams("hi", undefined, `${LOOPBACK_GATEKEEPER}/a2a/notifications`), { mint: caller });
    expect(ok.body.result.task.status.state).toBe("TASK_STATE_SUBMITTED");
    const other = await call("SendMessage", sendParams("hi", undefined, "http://localhost:9999/a2a/notifications"), { mint: caller });
    expect(other.body.error?.code).toBe(-32602);
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

  // docs/protocol.md "SendMessage" → Content limit: data parts and inline text files count, not only text.
  const sendParts = (parts: unknown[]) => ({ ...sendParams(""), message: userMessage("", undefined, { parts }) });
  const base64 = (text: string) => btoa(text);

  it("counts a data part's JSON toward the 262,144-byte content limit, and creates no task", async () => {
    using _ = interceptOutbound();
    const caller = newCaller();
    const reply = await call("SendMessage", sendParts([{ text: "see the data" }, { data: { rows: "r".repeat(300_000) } }]), { mint: caller });
    expect(reply.status).toBe(200);
    expect(reply.body.error?.code).toBe(-32602);
    expect(reply.body.error.message).toContain("262,144 bytes");
    expect((await call("ListTasks", {}, { mint: caller })).body.result.totalSize).toBe(0);
  });

  it("counts the bytes of an inline text/* file toward the content limit", async () => {
    using _ = interceptOutbound();
    const caller = newCaller();
    const file = (bytes: number) => ({ raw: base64("f".repeat(bytes)), mediaType: "text/plain; charset=utf-8", filename: "notes.txt" });
    const reply = await call("SendMessage", sendParts([{ text: "read this" }, file(300_000)]), { mint: caller });
    expect(reply.body.error?.code).toBe(-32602);
    expect(reply.body.error.message).toContain("262,144 bytes");
    expect((await call("ListTasks", {}, { mint: caller })).body.result.totalSize).toBe(0);
    // A file that fits is taken.
    expect((await call("SendMessage", sendParts([{ text: "read this" }, file(200_000)]), { mint: caller })).body.result?.task).toBeDefined();
  });

  it("counts text and data together: each fits, both do not", async () => {
    using _ = interceptOutbound();
    const caller = newCaller();
    // `{"d":"…"}` is the string plus 8 bytes of JSON.
    const data = (chars: number) => ({ data: { d: "d".repeat(chars) } });
    const text = { text: "t".repeat(131_072) };
    const exactly = await call("SendMessage", sendParts([text, data(131_072 - 8)]), { mint: caller });
    expect(exactly.body.result?.task, JSON.stringify(exactly.body.error)).toBeDefined();
    const over = await call("SendMessage", sendParts([text, data(131_072 - 7)]), { mint: caller });
    expect(over.body.error?.code).toBe(-32602);
    expect(over.body.error.message).toContain("262,144 bytes");
    expect((await call("ListTasks", {}, { mint: caller })).body.result.totalSize).toBe(1);
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
});

describe("ListTasks filters over the edge (A2A 1.0 ListTasksRequest)", () => {
  const list = async (caller: ReturnType<typeof newCaller>, params: Record<string, unknown> = {}) => {
    const reply = await call("ListTasks", params, { mint: caller });
    expect(reply.status).toBe(200);
    return reply.body;
  };
  const ids = (body: any): string[] => (body.result?.tasks ?? []).map((t: { id: string }) => t.id);
  const send = async (caller: ReturnType<typeof newCaller>, extra: Record<string, unknown> = {}) => {
    const params = sendParams("hi");
    const task = (await call("SendMessage", { ...params, message: { ...params.message, ...extra } }, { mint: caller })).body.result.task;
    // Status times are whole milliseconds: keep every task's its own.
    await new Promise((r) => setTimeout(r, 3));
    return task as { id: string; contextId: string; status: { state: string; timestamp: string } };
  };
  /** The caller's object, to finish a held turn as its Workflow would. */
  const objectOf = (caller: ReturnType<typeof newCaller>): DrivenObject =>
    driven(env.ASSISTANT.get(env.ASSISTANT.idFromName(callerObjectName({ gatekeeper: GATEKEEPER, tenant: "assistant", key: caller.identity.key }))));

  it("contextId keeps that conversation's tasks only; an empty one is no filter", async () => {
    using _ = interceptOutbound();
    const caller = newCaller();
    const a = await send(caller, { contextId: "ctx-a" });
    const b1 = await send(caller, { contextId: "ctx-b" });
    const b2 = await send(caller, { contextId: "ctx-b" });
    expect((await list(caller, { contextId: "ctx-b" })).result).toMatchObject({ totalSize: 2, nextPageToken: "", pageSize: 50 });
    expect(ids(await list(caller, { contextId: "ctx-b" }))).toEqual([b2.id, b1.id]);
    expect(ids(await list(caller, { contextId: "ctx-a" }))).toEqual([a.id]);
    expect((await list(caller, { contextId: "ctx-none" })).result).toMatchObject({ tasks: [], totalSize: 0 });
    expect(ids(await list(caller, { contextId: "" }))).toEqual([b2.id, b1.id, a.id]);
  });

  it("status keeps tasks in that TaskState, by name or by number; unspecified is no filter, an unknown one -32602", async () => {
    using _ = interceptOutbound();
    const caller = newCaller();
    const kept = await send(caller);
    const canceled = await send(caller);
    await call("CancelTask", { id: canceled.id }, { mint: caller });
    expect(ids(await list(caller, { status: "TASK_STATE_CANCELED" }))).toEqual([canceled.id]);
    expect(ids(await list(caller, { status: TaskState.TASK_STATE_CANCELED }))).toEqual([canceled.id]);
    expect(ids(await list(caller, { status: "TASK_STATE_SUBMITTED" }))).toEqual([kept.id]);
    expect((await list(caller, { status: "TASK_STATE_COMPLETED" })).result).toMatchObject({ tasks: [], totalSize: 0 });
    expect(ids(await list(caller, { status: "TASK_STATE_UNSPECIFIED" }))).toEqual([canceled.id, kept.id]);
    expect(ids(await list(caller, { status: 0 }))).toEqual([canceled.id, kept.id]);
    for (const status of ["TASK_STATE_BOGUS", 99, "submitted", true]) {
      const refused = await list(caller, { status });
      expect(refused.error.code, String(status)).toBe(-32602);
      expect(refused.error.message, String(status)).toContain("params.status");
    }
  });

  it("statusTimestampAfter keeps tasks whose status is at or after it: Z or an offset, up to nanoseconds", async () => {
    using _ = interceptOutbound();
    const caller = newCaller();
    const early = await send(caller);
    const late = await send(caller);
    const at = late.status.timestamp;
    expect(at).toMatch(/\.\d{3}Z$/);
    const shifted = (iso: string, offset: string) => {
      const sign = offset.startsWith("-") ? -1 : 1;
      const [h, m] = offset.slice(1).split(":").map(Number) as [number, number];
      return `${new Date(Date.parse(iso) + sign * (h * 60 + m) * 60_000).toISOString().slice(0, -1)}${offset}`;
    };
    for (const after of [at, at.replace("Z", "000000Z"), shifted(at, "+05:30"), shifted(at, "-08:00"), at.replace("T", "t").replace("Z", "z")]) {
      const body = await list(caller, { statusTimestampAfter: after });
      expect(ids(body), after).toEqual([late.id]);
      expect(body.result.totalSize, after).toBe(1);
    }
    // A nanosecond after the late task's status keeps nothing; well before keeps both.
    expect(ids(await list(caller, { statusTimestampAfter: at.replace("Z", "000001Z") }))).toEqual([]);
    expect(ids(await list(caller, { statusTimestampAfter: early.status.timestamp }))).toEqual([late.id, early.id]);
    expect(ids(await list(caller, { statusTimestampAfter: "2026-01-01T00:00:00Z" }))).toEqual([late.id, early.id]);
    for (const bad of [
      "yesterday",
      "2026-12-01T10:00:00",
      "2026-02-30T00:00:00Z",
      "2026-12-01T24:00:00Z",
      "2026-12-01T10:00:00.1234567890Z",
      "2026-12-01T10:00:00+25:00",
      1764583200,
    ]) {
      const refused = await list(caller, { statusTimestampAfter: bad });
      expect(refused.error?.code, String(bad)).toBe(-32602);
      expect(refused.error.message, String(bad)).toContain("params.statusTimestampAfter");
    }
  });

  it("includeArtifacts: artifacts only when true (the default is false)", async () => {
    using _ = interceptOutbound();
    const caller = newCaller();
    const task = await send(caller);
    await objectOf(caller).finishTurn(task.id, { state: "TASK_STATE_COMPLETED", text: "done" });
    expect((await call("GetTask", { id: task.id }, { mint: caller })).body.result.artifacts).toHaveLength(1);
    for (const params of [{}, { includeArtifacts: false }]) {
      const [listed] = (await list(caller, params)).result.tasks;
      expect(listed.id).toBe(task.id);
      expect(listed, JSON.stringify(params)).not.toHaveProperty("artifacts");
    }
    const [withArtifacts] = (await list(caller, { includeArtifacts: true })).result.tasks;
    expect(withArtifacts.artifacts).toHaveLength(1);
    expect(withArtifacts.artifacts[0].parts).toEqual([{ text: "done" }]);
    expect((await list(caller, { includeArtifacts: "yes" })).error.code).toBe(-32602);
  });

  it("historyLength keeps each task's newest N messages, 0 none, unset all; an int32 may come as a string", async () => {
    using _ = interceptOutbound();
    const caller = newCaller();
    const task = await send(caller);
    await objectOf(caller).finishTurn(task.id, { state: "TASK_STATE_COMPLETED", text: "done" });
    const history = async (params: Record<string, unknown>) => (await list(caller, params)).result.tasks[0].history;
    const all = await history({});
    expect(all.length).toBeGreaterThanOrEqual(2);
    expect(await history({ historyLength: 0 })).toBeUndefined();
    expect(await history({ historyLength: 1 })).toEqual(all.slice(-1));
    expect(await history({ historyLength: "1" })).toEqual(all.slice(-1));
    expect(await history({ historyLength: 100 })).toEqual(all);
    for (const historyLength of [-1, 1.5, "one", null]) {
      expect((await list(caller, { historyLength })).error?.code, String(historyLength)).toBe(-32602);
    }
  });

  it("pageSize and pageToken walk the filtered tasks, newest first, each once; bad values are -32602", async () => {
    using _ = interceptOutbound();
    const caller = newCaller();
    const sent: string[] = [];
    for (let i = 0; i < 5; i++) sent.push((await send(caller, { contextId: "paged" })).id);
    await send(caller, { contextId: "other" });
    const seen: string[] = [];
    const tokens: string[] = [];
    let pageToken: string | undefined;
    do {
      const body = await list(caller, { contextId: "paged", pageSize: "2", ...(pageToken ? { pageToken } : {}) });
      expect(body.result).toMatchObject({ pageSize: 2, totalSize: 5 });
      expect(body.result.tasks.length).toBeLessThanOrEqual(2);
      seen.push(...ids(body));
      pageToken = body.result.nextPageToken;
      tokens.push(pageToken!);
    } while (pageToken);
    expect(seen).toEqual([...sent].reverse());
    expect(tokens.at(-1)).toBe("");
    expect(tokens).toHaveLength(3);
    expect((await list(caller, { pageSize: 100 })).result).toMatchObject({ pageSize: 100, totalSize: 6 });
    for (const params of [{ pageSize: 0 }, { pageSize: 101 }, { pageSize: 2.5 }, { pageSize: "ten" }, { pageToken: "!!" }, { pageToken: 7 }]) {
      const refused = await list(caller, params);
      expect(refused.error?.code, JSON.stringify(params)).toBe(-32602);
    }
  });

  it("combines every filter", async () => {
    using _ = interceptOutbound();
    const caller = newCaller();
    await send(caller, { contextId: "mix" });
    const cutoff = new Date().toISOString();
    await new Promise((r) => setTimeout(r, 3));
    const wanted = await send(caller, { contextId: "mix" });
    const canceled = await send(caller, { contextId: "mix" });
    await call("CancelTask", { id: canceled.id }, { mint: caller });
    await send(caller, { contextId: "elsewhere" });
    const body = await list(caller, {
      contextId: "mix",
      status: "TASK_STATE_SUBMITTED",
      statusTimestampAfter: cutoff,
      pageSize: 1,
      historyLength: 0,
      includeArtifacts: true,
    });
    expect(body.result).toEqual({ tasks: [expect.objectContaining({ id: wanted.id })], nextPageToken: "", pageSize: 1, totalSize: 1 });
    expect(body.result.tasks[0]).not.toHaveProperty("history");
  });
});
