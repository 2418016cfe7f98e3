import type { A2AMethod } from "../src/a2a/methods.js";
import { describe, expect, it } from "vitest";
import { PUSH_URL } from "./support/constants.js";
import { restCall } from "./support/rest.js";
import { call, userMessage } from "./support/rpc.js";
import { useTurnHarness } from "./support/turn-harness.js";

// docs/protocol.md "HTTP+JSON": a method answers the same task, message or
// error on both bindings. One table of calls, each run through JSON-RPC and
// then HTTP+JSON by the same caller: a result must be the same JSON (an empty
// one `null` in JSON-RPC, `{}` in HTTP+JSON), an error the same message and
// ErrorInfo, at the status each binding gives it.

useTurnHarness();

interface Fixture {
  /** A completed task of the caller, and the message that opened it. */
  done: { id: string; contextId: string };
  opening: ReturnType<typeof userMessage>;
  /** The conformance tenant's message answer, and the message it answered. */
  asked: ReturnType<typeof userMessage>;
}

interface Row {
  name: string;
  method: A2AMethod;
  params: (f: Fixture) => Record<string, unknown>;
  tenant?: string;
  /** The HTTP statuses of an error: JSON-RPC's, then HTTP+JSON's; absent for a result. */
  error?: [number, number];
}

const ROWS: Row[] = [
  { name: "a task", method: "GetTask", params: (f) => ({ id: f.done.id }) },
  { name: "a task, its history cut (the query's number)", method: "GetTask", params: (f) => ({ id: f.done.id, historyLength: 1 }) },
  { name: "a task, by a field's proto name", method: "GetTask", params: (f) => ({ id: f.done.id, history_length: 0 }) },
  {
    name: "a list, by context, artifacts included (the query's bool)",
    method: "ListTasks",
    params: (f) => ({ contextId: f.done.contextId, includeArtifacts: true }),
  },
  { name: "a list, by state, one a page", method: "ListTasks", params: () => ({ status: "TASK_STATE_COMPLETED", pageSize: 1 }) },
  { name: "a retried send: the same task", method: "SendMessage", params: (f) => ({ message: f.opening }) },
  { name: "a retried send answered by a message: the same message", method: "SendMessage", tenant: "conformance", params: (f) => ({ message: f.asked }) },
  {
    name: "a push config, created (the second time replaced)",
    method: "CreateTaskPushNotificationConfig",
    params: (f) => ({ taskId: f.done.id, id: "both", url: PUSH_URL, token: "notify-secret" }),
  },
  { name: "a push config", method: "GetTaskPushNotificationConfig", params: (f) => ({ taskId: f.done.id, id: "both" }) },
  { name: "the push configs", method: "ListTaskPushNotificationConfigs", params: (f) => ({ taskId: f.done.id }) },
  { name: "a missing push config, deleted", method: "DeleteTaskPushNotificationConfig", params: (f) => ({ taskId: f.done.id, id: "never-there" }) },
  { name: "the tenant's card", method: "GetExtendedAgentCard", params: () => ({}) },
  { name: "an unknown task: TaskNotFound", method: "GetTask", params: () => ({ id: "no-such-task" }), error: [200, 404] },
  { name: "a finished task canceled: TaskNotCancelable", method: "CancelTask", params: (f) => ({ id: f.done.id }), error: [200, 409] },
  { name: "a finished task followed: UnsupportedOperation", method: "SubscribeToTask", params: (f) => ({ id: f.done.id }), error: [200, 400] },
  { name: "a bad param", method: "GetTask", params: (f) => ({ id: f.done.id, historyLength: -1 }), error: [200, 400] },
  { name: "a page token never issued", method: "ListTasks", params: () => ({ pageToken: "not-a-token" }), error: [200, 400] },
  {
    name: "a retry whose message differs",
    method: "SendMessage",
    params: (f) => ({ message: { ...f.opening, parts: [{ text: "something else" }] } }),
    error: [200, 400],
  },
  {
    name: "a part of a media type the tenant does not take",
    method: "SendMessage",
    params: () => ({ message: userMessage("x", undefined, { parts: [{ raw: "AAEC", mediaType: "image/png" }] }) }),
    error: [200, 415],
  },
];

describe("one call, both bindings, the same answer", () => {
  const mint = { identity: { key: `both-${crypto.randomUUID()}` } };
  // Made by the first spec, inside its harness (the network is faked per spec).
  let made: Promise<Fixture> | undefined;
  const fixture = () =>
    (made ??= (async () => {
      const opening = userMessage("hello from both");
      const sent = await call("SendMessage", { message: opening }, { mint });
      expect(sent.body.result.task.status.state).toBe("TASK_STATE_COMPLETED");
      const asked = userMessage("hi", `tck-message-response-${crypto.randomUUID()}`);
      expect((await call("SendMessage", { message: asked }, { mint: { ...mint, tenant: "conformance" } })).body.result.message).toBeDefined();
      return { done: sent.body.result.task, opening, asked };
    })());

  for (const row of ROWS) {
    it(row.name, async () => {
      const as = { mint: { ...mint, ...(row.tenant ? { tenant: row.tenant } : {}) } };
      const params = row.params(await fixture());
      const rpc = await call(row.method, params, as);
      const rest = await restCall(row.method, params, as);
      if (row.error) {
        const [rpcStatus, restStatus] = row.error;
        expect(rpc.status).toBe(rpcStatus);
        expect(rpc.body.error, "JSON-RPC answers an error").toBeDefined();
        expect(rest.status).toBe(restStatus);
        expect(rest.body).toEqual({
          error: { code: restStatus, status: expect.any(String), message: rpc.body.error.message, details: rpc.body.error.data ?? [] },
        });
        return;
      }
      expect(rpc.status).toBe(200);
      expect(rpc.body.error).toBeUndefined();
      expect(rest.status).toBe(200);
      expect(rest.headers.get("Content-Type")).toBe("application/json");
      expect(rest.body).toEqual(rpc.body.result ?? {});
    });
  }
});
