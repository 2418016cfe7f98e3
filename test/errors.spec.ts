import { env } from "cloudflare:workers";
import { introspectWorkflow, type WorkflowIntrospector } from "cloudflare:test";
import {
  ErrorCode,
  RpcError,
  agentStartFailed,
  extendedAgentCardNotConfigured,
  invalidAgentResponse,
  pushNotificationNotSupported,
  quotaExceeded,
} from "@dynamicagents/core/a2a";
import { settle, unwrap, type AgentNamespace } from "@dynamicagents/core/boundary";
import { ConfigError, DynamicAgentsError } from "@dynamicagents/core/errors";
import { callerHash } from "@dynamicagents/core/telemetry";
import { callerObjectName, createA2AWorker } from "@dynamicagents/core/worker";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { assistantManifest, deployment } from "../reference/manifests.js";
import { markerTenants } from "./support/agents.js";
import { GATEKEEPER, PUSH_URL } from "./support/constants.js";
import { captureConsole } from "./support/console-capture.js";
import { isolatedEdge, stubAgent } from "./support/isolated-edge.js";
import { eventually, interceptOutbound } from "./support/outbound.js";
import { call, post, sendParams, userMessage } from "./support/rpc.js";
import { driven, type DrivenObject } from "./support/turns.js";

const ERROR_INFO = "type.googleapis.com/google.rpc.ErrorInfo";
const a2aInfo = (reason: string, metadata?: Record<string, string>) => [
  { "@type": ERROR_INFO, reason, domain: "a2a-protocol.org", ...(metadata ? { metadata } : {}) },
];
const newCaller = () => ({ identity: { key: `caller-${crypto.randomUUID()}` } });
/** What an error crossing the Durable Object boundary goes through: settled to a value, cloned, re-raised by the edge. */
function acrossTheBoundary(error: RpcError): RpcError {
  const outcome = structuredClone(
    settle(() => {
      throw error;
    }),
  );
  try {
    unwrap(outcome);
  } catch (raised) {
    return raised as RpcError;
  }
  throw new Error("unwrap did not raise the error");
}

// Accepted turns are held at their first step: these specs are about the errors.
let workflows: WorkflowIntrospector;
beforeEach(async () => {
  workflows = await introspectWorkflow(env.TURN_WORKFLOW);
  await workflows.modifyAll(async (m) => {
    await m.disableRetryDelays();
    await m.mockStepError({ name: "run" }, new Error("held by the error specs"));
  });
});
afterEach(() => workflows.dispose());

describe("ErrorInfo on every A2A error (A2A 1.0 §9.5)", () => {
  it("-32001 TaskNotFound, from the caller's object (across the DO boundary) and from the edge", async () => {
    using _ = interceptOutbound();
    const fromObject = await call("CancelTask", { id: "no-such-task" }, { mint: newCaller() });
    expect(fromObject.body.error).toEqual({ code: -32001, message: expect.any(String), data: a2aInfo("TASK_NOT_FOUND") });
    const fromEdge = await call("GetTask", { id: "no-such-task" }, { mint: newCaller() });
    expect(fromEdge.body.error).toEqual({ code: -32001, message: expect.any(String), data: a2aInfo("TASK_NOT_FOUND") });
  });

  it("-32002 TaskNotCancelable across the DO boundary, with the task's state", async () => {
    using _ = interceptOutbound();
    const caller = newCaller();
    const task = (await call("SendMessage", sendParams("hi"), { mint: caller })).body.result.task;
    // The turns here are held: the spec finishes this one as its Workflow would.
    const object: DrivenObject = driven(
      env.ASSISTANT.get(env.ASSISTANT.idFromName(callerObjectName({ gatekeeper: GATEKEEPER, tenant: "assistant", key: caller.identity.key }))),
    );
    await object.finishTurn(task.id, { state: "TASK_STATE_COMPLETED", text: "done" });
    const late = await call("CancelTask", { id: task.id }, { mint: caller });
    expect(late.body.error).toEqual({ code: -32002, message: expect.any(String), data: a2aInfo("TASK_NOT_CANCELABLE", { taskState: "TASK_STATE_COMPLETED" }) });
  });

  it("-32004 UnsupportedOperation, from the edge and across the DO boundary", async () => {
    using _ = interceptOutbound();
    const caller = newCaller();
    const task = (await call("SendMessage", sendParams("hi"), { mint: caller })).body.result.task;
    await call("CancelTask", { id: task.id }, { mint: caller });
    // SubscribeToTask on a terminal task, without Last-Event-ID: nothing left to follow.
    const subscribe = await call("SubscribeToTask", { id: task.id }, { mint: caller });
    expect(subscribe.body.error).toMatchObject({
      code: -32004,
      data: [expect.objectContaining({ reason: "UNSUPPORTED_OPERATION", domain: "a2a-protocol.org", metadata: { taskState: "TASK_STATE_CANCELED" } })],
    });

    const followUp = { ...sendParams("more"), message: userMessage("more", undefined, { taskId: task.id, contextId: task.contextId }) };
    const reply = await call("SendMessage", followUp, { mint: caller });
    expect(reply.body.error).toMatchObject({ code: -32004, data: a2aInfo("UNSUPPORTED_OPERATION") });
  });

  it("-32005 ContentTypeNotSupported and -32009 VersionNotSupported, from the edge", async () => {
    using _ = interceptOutbound();
    const body = JSON.stringify({ jsonrpc: "2.0", id: 1, method: "GetTask", params: { tenant: "assistant", id: "x" } });
    const type = await post(body, { headers: { "Content-Type": "text/plain" } });
    expect(type.body.error).toEqual({ code: -32005, message: expect.any(String), data: a2aInfo("CONTENT_TYPE_NOT_SUPPORTED") });
    const version = await post(body, { headers: { "A2A-Version": "0.3" } });
    expect(version.body.error).toEqual({ code: -32009, message: expect.any(String), data: a2aInfo("VERSION_NOT_SUPPORTED") });
  });

  it("-32003, -32006 and -32007 as built, and unchanged by the DO boundary's value form", () => {
    const cases: Array<[RpcError, number, string]> = [
      [pushNotificationNotSupported("no pushes here"), -32003, "PUSH_NOTIFICATION_NOT_SUPPORTED"],
      [invalidAgentResponse("the agent answered nonsense"), -32006, "INVALID_AGENT_RESPONSE"],
      [extendedAgentCardNotConfigured("no extended card"), -32007, "EXTENDED_AGENT_CARD_NOT_CONFIGURED"],
    ];
    for (const [error, code, reason] of cases) {
      expect(error).toMatchObject({ code, data: a2aInfo(reason) });
      const crossed = acrossTheBoundary(error);
      expect(crossed).toBeInstanceOf(RpcError);
      expect({ code: crossed.code, message: crossed.message, data: crossed.data }).toEqual({ code, message: error.message, data: a2aInfo(reason) });
    }
  });

  it("-32003 and -32007, which this deployment never raises, get their ErrorInfo over the edge even when the object's refusal has none", async () => {
    using _ = interceptOutbound();
    const cases: Array<[number, string, unknown]> = [
      [-32003, "PUSH_NOTIFICATION_NOT_SUPPORTED", undefined],
      [-32007, "EXTENDED_AGENT_CARD_NOT_CONFIGURED", []],
      [-32001, "TASK_NOT_FOUND", [{ "@type": "type.googleapis.com/google.rpc.DebugInfo", detail: "kept" }]],
    ];
    for (const [code, reason, data] of cases) {
      // A refusal as a plain value, the way it crosses the Durable Object boundary.
      const error = { code, message: `refused with ${code}`, ...(data === undefined ? {} : { data }) };
      const edge = isolatedEdge({ resolveAgent: () => stubAgent({ getTask: () => ({ ok: false, error }) }) });
      const reply = await call("GetTask", { id: "t" }, { worker: edge.fetch, id: code });
      expect(reply.status, reason).toBe(200);
      expect(reply.body, reason).toEqual({
        jsonrpc: "2.0",
        id: code,
        error: { code, message: error.message, data: [...a2aInfo(reason), ...(Array.isArray(data) ? data : [])] },
      });
    }
  });

  it("-32007 is never raised here: every tenant has a card, and an unknown tenant is refused at the edge's step 8", async () => {
    using _ = interceptOutbound();
    for (const tenant of ["assistant", "researcher"]) {
      const reply = await call("GetExtendedAgentCard", {}, { mint: { tenant } });
      expect(reply.body.error, tenant).toBeUndefined();
      expect(reply.body.result.capabilities.extendedAgentCard, tenant).toBe(true);
    }
    const unknown = await call("GetExtendedAgentCard", {}, { mint: { tenant: "ghost" } });
    expect(unknown.status).toBe(404);
    expect(unknown.body.error.code).toBe(-32602);
  });

  it("is there however the error was built, and JSON-RPC's own errors carry none", () => {
    expect(new RpcError(ErrorCode.TASK_NOT_FOUND, "built bare").data).toEqual(a2aInfo("TASK_NOT_FOUND"));
    expect(new RpcError(ErrorCode.VERSION_NOT_SUPPORTED, "built bare").data).toEqual(a2aInfo("VERSION_NOT_SUPPORTED"));
    expect(new RpcError(ErrorCode.INVALID_PARAMS, "bad").data).toBeUndefined();
  });
});

describe("the platform's own refusals", () => {
  it("quotaExceeded: -32000 with ErrorInfo QUOTA_EXCEEDED in dynamicagents.dev and the wait in whole seconds", () => {
    const error = quotaExceeded({ message: "too many turns in flight", retryAfterSeconds: 2.5, metadata: { limit: "turns" } });
    expect({ code: error.code, message: error.message, data: error.data }).toEqual({
      code: -32000,
      message: "too many turns in flight",
      data: [{ "@type": ERROR_INFO, reason: "QUOTA_EXCEEDED", domain: "dynamicagents.dev", metadata: { limit: "turns", retryAfterSeconds: "3" } }],
    });
  });

  it("the edge answers a quota refusal from the caller's object with HTTP 429, Retry-After, and the error intact", async () => {
    using _ = interceptOutbound();
    const refusal = quotaExceeded({ message: "too many turns in flight", retryAfterSeconds: 30 });
    const refuse = () =>
      settle(() => {
        throw refusal;
      });
    const edge = isolatedEdge({ resolveAgent: () => stubAgent({ listTasks: refuse }) });
    const reply = await call("ListTasks", {}, { worker: edge.fetch, id: 5 });
    expect(reply.status).toBe(429);
    expect(reply.headers.get("Retry-After")).toBe("30");
    expect(reply.body).toEqual({ jsonrpc: "2.0", id: 5, error: { code: -32000, message: refusal.message, data: refusal.data } });
  });

  it("agentStartFailed: -32603 with ErrorInfo AGENT_START_FAILED naming the culprit, never the configuration error's message", () => {
    const cause = new ConfigError({ kind: "secret", name: "NOTES_KEY" }, "NOTES_KEY sk-do-not-echo is not a key");
    const error = agentStartFailed("assistant", cause);
    expect(error.code).toBe(-32603);
    expect(error.data).toEqual([
      {
        "@type": ERROR_INFO,
        reason: "AGENT_START_FAILED",
        domain: "dynamicagents.dev",
        metadata: { tenant: "assistant", culpritKind: "secret", culpritName: "NOTES_KEY", code: "ERR_CONFIG_INVALID" },
      },
    ]);
    expect(JSON.stringify({ message: error.message, data: error.data })).not.toContain("sk-do-not-echo");
  });

  it("the edge answers a tenant whose agent cannot be resolved with -32603 AGENT_START_FAILED, HTTP 200", async () => {
    using _ = interceptOutbound();
    const custom = isolatedEdge({
      resolveAgent: () => {
        throw new ConfigError({ kind: "binding", name: "NOTES_DB" }, "NOTES_DB sk-do-not-echo is unbound");
      },
    });
    const reply = await call("GetTask", { id: "t" }, { worker: custom.fetch });
    expect(reply.status).toBe(200);
    expect(reply.body.error).toMatchObject({
      code: -32603,
      data: [{ reason: "AGENT_START_FAILED", domain: "dynamicagents.dev", metadata: { culpritKind: "binding", culpritName: "NOTES_DB" } }],
    });
    expect(JSON.stringify(reply.body)).not.toContain("sk-do-not-echo");

    // The default resolver says the same of a tenant whose namespace is not bound.
    const unbound = isolatedEdge({ tenants: { assistant: { manifest: assistantManifest, agent: () => undefined as unknown as AgentNamespace } } });
    const again = await call("GetTask", { id: "t" }, { worker: unbound.fetch });
    expect(again.status).toBe(200);
    expect(again.body.error).toMatchObject({
      code: -32603,
      data: [{ reason: "AGENT_START_FAILED", metadata: { culpritKind: "binding", culpritName: "tenants.assistant.agent", code: "ERR_CONFIG_MISSING" } }],
    });
  });
});

describe("an agent that cannot start", () => {
  it("answers every method with AGENT_START_FAILED naming the culprit and its code, and says so in events, never quoting the secret", async () => {
    using _ = interceptOutbound();
    using output = captureConsole();
    const edge = isolatedEdge({ tenants: markerTenants });
    const key = `caller-${crypto.randomUUID()}`;
    const mint = { tenant: "broken", identity: { key } };
    // What the broken agent's check refused, and quotes in its message (test/support/agents.ts).
    const secret = env.SPEC_BROKEN_SECRET!;
    const methods: Array<[string, Record<string, unknown>]> = [
      ["SendMessage", sendParams("hello")],
      ["SendStreamingMessage", { message: userMessage("hello") }],
      ["SubscribeToTask", { id: "t" }],
      ["GetTask", { id: "t" }],
      ["ListTasks", {}],
      ["CancelTask", { id: "t" }],
      ["CreateTaskPushNotificationConfig", { taskId: "t", id: "c1", url: PUSH_URL }],
      ["GetTaskPushNotificationConfig", { taskId: "t", id: "c1" }],
      ["ListTaskPushNotificationConfigs", { taskId: "t" }],
      ["DeleteTaskPushNotificationConfig", { taskId: "t", id: "c1" }],
    ];
    for (const [method, params] of methods) {
      const reply = await call(method, params, { worker: edge.fetch, mint });
      expect(reply.status, method).toBe(200);
      expect(reply.body.error, method).toEqual({
        code: -32603,
        message: expect.any(String),
        data: [
          {
            "@type": ERROR_INFO,
            reason: "AGENT_START_FAILED",
            domain: "dynamicagents.dev",
            metadata: {
              // Known to the object only where the call hands it the tenant.
              ...(method.startsWith("Send") ? { tenant: "broken" } : {}),
              culpritKind: "secret",
              culpritName: "SPEC_BROKEN_SECRET",
              code: "ERR_SPEC_NOT_A_KEY",
            },
          },
        ],
      });
      expect(JSON.stringify(reply.body), method).not.toContain(secret);
    }
    await edge.backgroundSettled();

    // Once per start of the object, whatever number of calls it refused; the edge's refusal for each.
    const started = await eventually(
      () => output.events().filter((e) => e.event === "agent.start_failed"),
      (events) => events.length > 0,
      "the agent.start_failed event",
    );
    expect(started).toEqual([expect.objectContaining({ data: { code: "ERR_SPEC_NOT_A_KEY", culpritKind: "secret", culpritName: "SPEC_BROKEN_SECRET" } })]);
    const caller = await callerHash(env.A2A_SIGNING_KEY, { gatekeeper: GATEKEEPER, tenant: "broken", key });
    expect(output.events().filter((e) => e.event === "edge.refused")).toEqual(
      methods.map(([method]) => expect.objectContaining({ tenant: "broken", caller, data: { check: "agent-start", status: 200, code: -32603, method } })),
    );
    const lines = output.lines();
    expect(lines.some((line) => line.includes("SPEC_BROKEN_SECRET"))).toBe(true);
    expect(lines.join("\n")).not.toContain(secret);
  });
});

describe("errors with codes", () => {
  it("DynamicAgentsError and ConfigError carry a stable code, static and on the instance", () => {
    const error = new ConfigError({ kind: "setting", name: "GATEKEEPER_ORIGINS" }, "wrong");
    expect(error).toBeInstanceOf(DynamicAgentsError);
    expect(error).toBeInstanceOf(Error);
    expect(error).toMatchObject({ name: "ConfigError", code: "ERR_CONFIG_INVALID", culprit: { kind: "setting", name: "GATEKEEPER_ORIGINS" } });
    expect(ConfigError.code).toBe("ERR_CONFIG_INVALID");
    expect(new ConfigError({ kind: "secret", name: "X" }, "unset", { code: ConfigError.MISSING }).code).toBe("ERR_CONFIG_MISSING");
    expect(new DynamicAgentsError("plain").code).toBe("ERR_DYNAMICAGENTS");
  });

  it("createA2AWorker refuses a bad manifest or no tenants as a ConfigError naming the manifest", () => {
    const refusal = (build: () => unknown) => {
      try {
        build();
      } catch (error) {
        return error;
      }
      throw new Error("expected a refusal");
    };
    const bad = refusal(() =>
      createA2AWorker({ deployment: { ...deployment, skills: [] }, tenants: { assistant: { manifest: assistantManifest, agent: (e: Env) => e.ASSISTANT } } }),
    );
    expect(bad).toBeInstanceOf(ConfigError);
    expect((bad as ConfigError).culprit).toEqual({ kind: "manifest", name: "deployment" });
    const badTenant = refusal(() =>
      createA2AWorker({ deployment, tenants: { assistant: { manifest: { ...assistantManifest, name: " " }, agent: (e: Env) => e.ASSISTANT } } }),
    );
    expect((badTenant as ConfigError).culprit).toEqual({ kind: "manifest", name: "tenants.assistant" });
    const none = refusal(() => createA2AWorker({ deployment, tenants: {} }));
    expect(none).toMatchObject({ code: "ERR_CONFIG_MISSING", culprit: { kind: "manifest", name: "tenants" } });
  });

  it("a misconfigured deployment answers 500 naming the culprit and its code, never the value", async () => {
    using _ = interceptOutbound();
    const noKey = await isolatedEdge({}, { A2A_SIGNING_KEY: undefined }).fetch(new Request("https://agents.test/.well-known/agent-card.json"));
    expect(noKey.status).toBe(500);
    expect(await noKey.json()).toMatchObject({
      error: "server_misconfigured",
      code: "ERR_CONFIG_MISSING",
      culprit: { kind: "secret", name: "A2A_SIGNING_KEY" },
    });

    const origins = await call("GetTask", { id: "t" }, { worker: isolatedEdge({}, { GATEKEEPER_ORIGINS: '["ftp://gatekeeper.test"]' }).fetch });
    expect(origins.status).toBe(500);
    expect(origins.body).toMatchObject({ error: "server_misconfigured", code: "ERR_CONFIG_INVALID", culprit: { kind: "setting", name: "GATEKEEPER_ORIGINS" } });
  });
});

type Env = import("../reference/env.js").Env;
