import {
  AgentCard,
  CancelTaskRequest,
  DeleteTaskPushNotificationConfigRequest,
  GetTaskPushNotificationConfigRequest,
  GetTaskRequest,
  ListTaskPushNotificationConfigsRequest,
  ListTasksRequest,
  ListTasksResponse,
  SendMessageRequest,
  StreamResponse,
  SubscribeToTaskRequest,
  Task,
  TaskPushNotificationConfig,
  verifyAgentCardSignature,
} from "@a2a-js/sdk";
import { type CallInterceptor, type Client, ClientFactory, ClientFactoryOptions, JsonRpcTransportFactory, RestTransportFactory } from "@a2a-js/sdk/client";
import { TaskNotCancelableError, TaskNotFoundError, UnsupportedOperationError } from "@a2a-js/sdk/errors";
import { importJWK, type JWK } from "jose";
import { describe, expect, it } from "vitest";
import { ENDPOINT, ORIGIN, PUSH_URL } from "./support/constants.js";
import { mintToken } from "./support/gatekeeper.js";
import { chatCompletion, eventually, holdModel } from "./support/outbound.js";
import { checkedRestResponse } from "./support/rest.js";
import { call, checkedResponse, referenceWorker } from "./support/rpc.js";
import { useTurnHarness } from "./support/turn-harness.js";

// `@a2a-js/sdk` 1.3's own client, with its defaults, against the edge
// (docs/protocol.md): built from a tenant's extended card, whose interface
// names the tenant, so the SDK puts it in every call's `params.tenant`
// (its ClientFactory wraps the transport in a TenantTransportDecorator).
// The one thing added is the gatekeeper's token: an interceptor sets the
// `Authorization` service parameter, freshly minted for each call.

const harness = useTurnHarness();

interface SeenRequest {
  method: string;
  params: Record<string, any>;
  authorization: string | null;
  version: string | null;
  accept: string | null;
}

/** The `assistant` tenant's card for a new caller, and the interceptor that gives each of the caller's calls a token of its own. */
async function newCaller(): Promise<{ card: Record<string, any>; bearer: CallInterceptor }> {
  const mint = { identity: { key: `sdk-${crypto.randomUUID()}` } };
  // A unique `jti` per token: two tokens minted in the same second still differ.
  const token = () => mintToken({ ...mint, claims: { jti: crypto.randomUUID() } });
  const reply = await call("GetExtendedAgentCard", {}, { mint });
  expect(reply.status).toBe(200);
  // The SDK's service parameters travel as HTTP headers; this adds the one the edge needs.
  const bearer: CallInterceptor = {
    async before(args) {
      args.options = { ...args.options, serviceParameters: { ...args.options?.serviceParameters, Authorization: `Bearer ${await token()}` } };
    },
    async after() {},
  };
  return { card: reply.body.result, bearer };
}

/** A client of the `assistant` tenant for a new caller, and every request it sent. */
async function sdkClient(): Promise<{ client: Client; seen: SeenRequest[]; card: Record<string, any> }> {
  const { card, bearer } = await newCaller();
  const seen: SeenRequest[] = [];
  const fetchImpl = async (input: RequestInfo | URL, init?: RequestInit) => {
    const request = new Request(input, init);
    const body = (await request.clone().json()) as { method: string; params: Record<string, any> };
    seen.push({
      method: body.method,
      params: body.params,
      authorization: request.headers.get("Authorization"),
      version: request.headers.get("A2A-Version"),
      accept: request.headers.get("Accept"),
    });
    // What the SDK reads is exactly A2A: it would drop a stray key without a word.
    return checkedResponse(body.method, await referenceWorker(request));
  };
  const factory = new ClientFactory(
    ClientFactoryOptions.createFrom(ClientFactoryOptions.default, {
      transports: [new JsonRpcTransportFactory({ fetchImpl: fetchImpl as typeof fetch })],
      clientConfig: { interceptors: [bearer] },
    }),
  );
  return { client: await factory.createFromAgentCard(AgentCard.fromJSON(card)), seen, card };
}

const send = (text: string, configuration: Record<string, unknown> = {}) =>
  SendMessageRequest.fromJSON({ message: { messageId: crypto.randomUUID(), role: "ROLE_USER", parts: [{ text }] }, configuration });

/** A stream's events in wire form (`{task}`, `{statusUpdate}`, `{artifactUpdate}`). */
async function wireEvents(stream: AsyncIterable<StreamResponse>): Promise<any[]> {
  const events: any[] = [];
  for await (const event of stream) events.push(StreamResponse.toJSON(event));
  return events;
}

const stateOf = (event: any): string | undefined => event.task?.status?.state ?? event.statusUpdate?.status?.state;
const chunkText = (events: any[]) =>
  events
    .filter((e) => e.artifactUpdate)
    .map((e) => e.artifactUpdate.artifact.parts.map((p: { text: string }) => p.text).join(""))
    .join("");

describe("@a2a-js/sdk 1.3's client", () => {
  it("from the tenant's card: every call carries params.tenant, A2A-Version and a token of its own", async () => {
    const { client, seen, card } = await sdkClient();
    // JSON-RPC first, the SDK's pick when both are there.
    expect(card.supportedInterfaces).toEqual([
      { url: ENDPOINT, protocolBinding: "JSONRPC", tenant: "assistant", protocolVersion: "1.0" },
      { url: `${ENDPOINT}/rest`, protocolBinding: "HTTP+JSON", tenant: "assistant", protocolVersion: "1.0" },
    ]);
    expect(card.capabilities.streaming).toBe(true);
    // Client.getAgentCard asks GetExtendedAgentCard with an empty tenant; the decorator fills it in.
    const again = await client.getAgentCard();
    expect(AgentCard.toJSON(again)).toMatchObject({ name: card.name, supportedInterfaces: card.supportedInterfaces });
    await client.sendMessage(send("hello"));
    expect(seen.map((r) => r.method)).toEqual(["GetExtendedAgentCard", "SendMessage"]);
    for (const request of seen) {
      expect(request.params.tenant).toBe("assistant");
      expect(request.version).toBe("1.0");
      expect(request.authorization).toMatch(/^Bearer [\w-]+\.[\w-]+\.[\w-]+$/);
    }
    expect(new Set(seen.map((r) => r.authorization)).size).toBe(seen.length);
  });

  it("Client.getAgentCard's own verifier refuses the card: it verifies what the SDK decoded, which lost the security scheme", async () => {
    const { client, card } = await sdkClient();
    const jwks = (await (await referenceWorker(new Request(`${ORIGIN}/.well-known/jwks.json`))).json()) as { keys: JWK[] };
    const verify = verifyAgentCardSignature(async (kid) => (await importJWK(jwks.keys.find((k) => k.kid === kid)!, "EdDSA")) as CryptoKey);
    // The wire JSON verifies (docs/protocol.md "Card signatures"); the SDK's client hands its verifier a decoded
    // card, whose second decode drops the oneof (a2a-js), so the same card fails there. Pinned to notice an SDK fix.
    await expect(verify(card as AgentCard)).resolves.toBeUndefined();
    const debug = console.debug;
    console.debug = () => {};
    try {
      await expect(client.getAgentCard(undefined, verify)).rejects.toThrow(/No valid signatures/);
    } finally {
      console.debug = debug;
    }
  });

  it("sendMessage blocks by default: the completed task comes back with its answer", async () => {
    const { client, seen } = await sdkClient();
    const result = await client.sendMessage(send("hello"));
    // The SDK's default is a blocking send: it leaves returnImmediately out.
    expect(seen.at(-1)!.params.configuration?.returnImmediately).toBeUndefined();
    expect("status" in result).toBe(true);
    const task = Task.toJSON(result as Task) as any;
    expect(task.status.state).toBe("TASK_STATE_COMPLETED");
    expect(task.artifacts[0].artifactId).toBe("answer");
    expect(task.artifacts[0].parts[0].text).toBe("echo: hello");
  });

  it("sendMessageStream: the snapshot, the status changes, the answer as chunks, then the terminal status", async () => {
    harness.outbound.model = (c) => chatCompletion("one two three four five six", c.model);
    const { client, seen } = await sdkClient();
    const events = await wireEvents(client.sendMessageStream(send("stream it")));
    expect(seen.at(-1)).toMatchObject({ method: "SendStreamingMessage", accept: "text/event-stream" });
    expect(events[0].task.status.state).toBe("TASK_STATE_SUBMITTED");
    expect(events.map(stateOf).filter(Boolean)).toEqual(["TASK_STATE_SUBMITTED", "TASK_STATE_WORKING", "TASK_STATE_COMPLETED"]);
    const chunks = events.filter((e) => e.artifactUpdate).map((e) => e.artifactUpdate);
    expect(chunks.length).toBeGreaterThan(0);
    expect(chunks.every((c) => c.artifact.artifactId === "answer" && c.taskId === events[0].task.id)).toBe(true);
    expect(chunks[0].append).toBeUndefined(); // false, left out on the wire
    expect(chunks.slice(1).every((c) => c.append === true)).toBe(true);
    expect(chunks.at(-1).lastChunk).toBe(true);
    expect(chunkText(events)).toBe("one two three four five six");
    // Every chunk before the terminal status, which is the stream's last event.
    expect(events.findLastIndex((e) => e.artifactUpdate)).toBeLessThan(events.length - 1);
    expect(events.at(-1).statusUpdate.status.state).toBe("TASK_STATE_COMPLETED");
  });

  it("resubscribeTask (SubscribeToTask) follows a running task to its end", async () => {
    const held = holdModel(harness.outbound);
    const { client, seen } = await sdkClient();
    const sent = (await client.sendMessage(send("slow", { returnImmediately: true }))) as Task;
    expect(Task.toJSON(sent)).toMatchObject({ status: { state: "TASK_STATE_SUBMITTED" } });
    await eventually(
      () => held.length,
      (n) => n > 0,
      "the model call",
    );
    const subscription = client.resubscribeTask(SubscribeToTaskRequest.fromJSON({ id: sent.id }));
    // The first event is read before the model is let go: the stream is open on a working task.
    const first = await subscription.next();
    expect(seen.at(-1)).toMatchObject({ method: "SubscribeToTask", params: { tenant: "assistant", id: sent.id } });
    expect(StreamResponse.toJSON(first.value as StreamResponse)).toMatchObject({ task: { id: sent.id, status: { state: "TASK_STATE_WORKING" } } });
    held[0]!.release("the late answer");
    const rest = await wireEvents({ [Symbol.asyncIterator]: () => subscription });
    expect(chunkText(rest)).toBe("the late answer");
    expect(rest.at(-1).statusUpdate.status.state).toBe("TASK_STATE_COMPLETED");
  });

  it("resubscribeTask with Last-Event-ID as a service parameter replays a finished task's events", async () => {
    const { client, seen } = await sdkClient();
    const done = (await client.sendMessage(send("replay me"))) as Task;
    // The SDK's SSE reader drops each event's `id:`, so its caller cannot learn a seq from a stream; 0 replays them all.
    const replayed = await wireEvents(
      client.resubscribeTask(SubscribeToTaskRequest.fromJSON({ id: done.id }), { serviceParameters: { "Last-Event-ID": "0" } }),
    );
    expect(seen.at(-1)!.method).toBe("SubscribeToTask");
    expect(replayed[0].task.status.state).toBe("TASK_STATE_COMPLETED");
    expect(replayed.slice(1).map(stateOf).filter(Boolean)).toEqual(["TASK_STATE_SUBMITTED", "TASK_STATE_WORKING", "TASK_STATE_COMPLETED"]);
    expect(chunkText(replayed.slice(1))).toBe("echo: replay me");
    // Without it a finished task has nothing to follow: the SDK's UnsupportedOperationError.
    await expect(wireEvents(client.resubscribeTask(SubscribeToTaskRequest.fromJSON({ id: done.id })))).rejects.toBeInstanceOf(UnsupportedOperationError);
  });

  it("getTask reads a task, and an unknown one is the SDK's TaskNotFoundError", async () => {
    const { client } = await sdkClient();
    const done = (await client.sendMessage(send("read me back"))) as Task;
    const read = Task.toJSON(await client.getTask(GetTaskRequest.fromJSON({ id: done.id }))) as any;
    expect(read).toMatchObject({ id: done.id, status: { state: "TASK_STATE_COMPLETED" } });
    expect(read.artifacts[0].parts[0].text).toBe("echo: read me back");
    await expect(client.getTask(GetTaskRequest.fromJSON({ id: crypto.randomUUID() }))).rejects.toBeInstanceOf(TaskNotFoundError);
  });

  it("cancelTask cancels a running task, and again returns it as it is", async () => {
    const held = holdModel(harness.outbound);
    const { client } = await sdkClient();
    const sent = (await client.sendMessage(send("never mind", { returnImmediately: true }))) as Task;
    await eventually(
      () => held.length,
      (n) => n > 0,
      "the model call",
    );
    const canceled = Task.toJSON(await client.cancelTask(CancelTaskRequest.fromJSON({ id: sent.id }))) as any;
    expect(canceled).toMatchObject({ id: sent.id, status: { state: "TASK_STATE_CANCELED" } });
    const twice = Task.toJSON(await client.cancelTask(CancelTaskRequest.fromJSON({ id: sent.id }))) as any;
    expect(twice.status.state).toBe("TASK_STATE_CANCELED");
    const read = Task.toJSON(await client.getTask(GetTaskRequest.fromJSON({ id: sent.id }))) as any;
    expect(read.status.state).toBe("TASK_STATE_CANCELED");
  });
});

interface SeenRestRequest {
  verb: string;
  path: string;
  body: string;
  contentType: string | null;
  authorization: string | null;
  version: string | null;
}

/** The same client over its REST transport, unmodified: chosen by the card's HTTP+JSON interface, the tenant in the path. */
async function sdkRestClient(): Promise<{ client: Client; seen: SeenRestRequest[] }> {
  const { card, bearer } = await newCaller();
  const seen: SeenRestRequest[] = [];
  const fetchImpl = async (input: RequestInfo | URL, init?: RequestInit) => {
    const request = new Request(input, init);
    const url = new URL(request.url);
    seen.push({
      verb: request.method,
      path: `${url.pathname}${url.search}`,
      body: await request.clone().text(),
      contentType: request.headers.get("Content-Type"),
      authorization: request.headers.get("Authorization"),
      version: request.headers.get("A2A-Version"),
    });
    return checkedRestResponse(request, await referenceWorker(request));
  };
  const factory = new ClientFactory(
    ClientFactoryOptions.createFrom(ClientFactoryOptions.default, {
      transports: [new RestTransportFactory({ fetchImpl: fetchImpl as typeof fetch })],
      preferredTransports: ["HTTP+JSON"],
      clientConfig: { interceptors: [bearer] },
    }),
  );
  return { client: await factory.createFromAgentCard(AgentCard.fromJSON(card)), seen };
}

describe("@a2a-js/sdk 1.3's client over its REST transport (HTTP+JSON)", () => {
  it("calls <origin>/a2a/rest/assistant/…: a token of its own and A2A-Version on every call; a blocking send holds to the answer", async () => {
    const { client, seen } = await sdkRestClient();
    const result = await client.sendMessage(send("hello"));
    const task = Task.toJSON(result as Task) as any;
    expect(task.status.state).toBe("TASK_STATE_COMPLETED");
    expect(task.artifacts[0].parts[0].text).toBe("echo: hello");
    expect(seen).toEqual([expect.objectContaining({ verb: "POST", path: "/a2a/rest/assistant/message:send", version: "1.0" })]);
    // The SDK puts the card's tenant in the body too: the same tenant, so the edge takes it.
    expect(JSON.parse(seen[0]!.body)).toMatchObject({ tenant: "assistant", message: { parts: [{ text: "hello" }] } });
    const again = await client.getTask(GetTaskRequest.fromJSON({ id: task.id, historyLength: 1 }));
    expect(Task.toJSON(again)).toMatchObject({ id: task.id, history: [expect.objectContaining({ role: "ROLE_AGENT" })] });
    expect(seen[1]).toMatchObject({ verb: "GET", path: `/a2a/rest/assistant/tasks/${task.id}?historyLength=1` });
    expect(new Set(seen.map((r) => r.authorization)).size).toBe(seen.length);
  });

  it("sendMessageStream: the snapshot, the status changes, the answer as chunks, the terminal status", async () => {
    harness.outbound.model = (c) => chatCompletion("one two three four five six", c.model);
    const { client, seen } = await sdkRestClient();
    const events = await wireEvents(client.sendMessageStream(send("stream it")));
    expect(seen.at(-1)).toMatchObject({ verb: "POST", path: "/a2a/rest/assistant/message:stream" });
    expect(events.map(stateOf).filter(Boolean)).toEqual(["TASK_STATE_SUBMITTED", "TASK_STATE_WORKING", "TASK_STATE_COMPLETED"]);
    expect(chunkText(events)).toBe("one two three four five six");
    expect(events.at(-1).statusUpdate.status.state).toBe("TASK_STATE_COMPLETED");
  });

  it("resubscribeTask (POST :subscribe, no body) follows a running task to its end; cancelTask (POST :cancel, no body) cancels another", async () => {
    const held = holdModel(harness.outbound);
    const { client, seen } = await sdkRestClient();
    const sent = (await client.sendMessage(send("slow", { returnImmediately: true }))) as Task;
    await eventually(
      () => held.length,
      (n) => n > 0,
      "the model call",
    );
    const subscription = client.resubscribeTask(SubscribeToTaskRequest.fromJSON({ id: sent.id }));
    const first = await subscription.next();
    expect(seen.at(-1)).toMatchObject({ verb: "POST", path: `/a2a/rest/assistant/tasks/${sent.id}:subscribe`, body: "" });
    expect(StreamResponse.toJSON(first.value as StreamResponse)).toMatchObject({ task: { id: sent.id, status: { state: "TASK_STATE_WORKING" } } });
    held[0]!.release("the late answer");
    const rest = await wireEvents({ [Symbol.asyncIterator]: () => subscription });
    expect(chunkText(rest)).toBe("the late answer");
    expect(rest.at(-1).statusUpdate.status.state).toBe("TASK_STATE_COMPLETED");

    const other = (await client.sendMessage(send("never mind", { returnImmediately: true }))) as Task;
    await eventually(
      () => held.length,
      (n) => n > 1,
      "the second model call",
    );
    const canceled = Task.toJSON(await client.cancelTask(CancelTaskRequest.fromJSON({ id: other.id }))) as any;
    // As the SDK sends it: Content-Type JSON and no body, which the edge takes (docs/protocol.md "HTTP+JSON").
    expect(seen.at(-1)).toMatchObject({ verb: "POST", path: `/a2a/rest/assistant/tasks/${other.id}:cancel`, body: "", contentType: "application/json" });
    expect(canceled).toMatchObject({ id: other.id, status: { state: "TASK_STATE_CANCELED" } });
    const twice = Task.toJSON(await client.cancelTask(CancelTaskRequest.fromJSON({ id: other.id }))) as any;
    expect(twice.status.state).toBe("TASK_STATE_CANCELED");
  });

  it("listTasks with its filters in the query", async () => {
    const { client, seen } = await sdkRestClient();
    const done = (await client.sendMessage(send("list me"))) as Task;
    const page = ListTasksResponse.toJSON(
      await client.listTasks(ListTasksRequest.fromJSON({ contextId: done.contextId, status: "TASK_STATE_COMPLETED", pageSize: 10, includeArtifacts: true })),
    ) as any;
    expect(seen.at(-1)!.verb).toBe("GET");
    expect(new URL(`${ORIGIN}${seen.at(-1)!.path}`).searchParams.get("status")).toBe("TASK_STATE_COMPLETED");
    expect(page.tasks.map((t: any) => t.id)).toEqual([done.id]);
    expect(page.tasks[0].artifacts[0].parts[0].text).toBe("echo: list me");
    const none = ListTasksResponse.toJSON(
      await client.listTasks(ListTasksRequest.fromJSON({ contextId: done.contextId, status: "TASK_STATE_WORKING" })),
    ) as any;
    expect(none.tasks ?? []).toEqual([]);
  });

  it("push configs: create, get, list, delete", async () => {
    const { client, seen } = await sdkRestClient();
    const task = (await client.sendMessage(send("push me", { returnImmediately: true }))) as Task;
    const config = { taskId: task.id, id: "sdk-config", url: PUSH_URL, token: "notify-secret" };
    const created = TaskPushNotificationConfig.toJSON(await client.createTaskPushNotificationConfig(TaskPushNotificationConfig.fromJSON(config)));
    expect(created).toMatchObject(config);
    expect(seen.at(-1)).toMatchObject({ verb: "POST", path: `/a2a/rest/assistant/tasks/${task.id}/pushNotificationConfigs` });
    const read = await client.getTaskPushNotificationConfig(GetTaskPushNotificationConfigRequest.fromJSON({ taskId: task.id, id: "sdk-config" }));
    expect(TaskPushNotificationConfig.toJSON(read)).toMatchObject(config);
    const listed = await client.listTaskPushNotificationConfig(ListTaskPushNotificationConfigsRequest.fromJSON({ taskId: task.id }));
    expect(listed.configs.map((c) => c.id)).toEqual(["sdk-config"]);
    await client.deleteTaskPushNotificationConfig(DeleteTaskPushNotificationConfigRequest.fromJSON({ taskId: task.id, id: "sdk-config" }));
    expect(seen.at(-1)).toMatchObject({ verb: "DELETE", path: `/a2a/rest/assistant/tasks/${task.id}/pushNotificationConfigs/sdk-config` });
    const after = await client.listTaskPushNotificationConfig(ListTaskPushNotificationConfigsRequest.fromJSON({ taskId: task.id }));
    expect(after.configs).toEqual([]);
  });

  it("a refused call is the SDK's own error, with the HTTP status of the spec: TaskNotFound 404, TaskNotCancelable 409, UnsupportedOperation 400", async () => {
    const { client } = await sdkRestClient();
    await expect(client.getTask(GetTaskRequest.fromJSON({ id: crypto.randomUUID() }))).rejects.toSatisfy(
      (error) => error instanceof TaskNotFoundError && (error as { statusCode?: number }).statusCode === 404,
    );
    const done = (await client.sendMessage(send("finished"))) as Task;
    await expect(client.cancelTask(CancelTaskRequest.fromJSON({ id: done.id }))).rejects.toSatisfy(
      (error) => error instanceof TaskNotCancelableError && (error as { statusCode?: number }).statusCode === 409,
    );
    await expect(wireEvents(client.resubscribeTask(SubscribeToTaskRequest.fromJSON({ id: done.id })))).rejects.toSatisfy(
      (error) => error instanceof UnsupportedOperationError && (error as { statusCode?: number }).statusCode === 400,
    );
  });
});
