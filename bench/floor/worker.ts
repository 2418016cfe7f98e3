// The bench's floor worker (bench/README.md "Floor"): the least a durable A2A
// turn can cost on this runtime, with the project's own checks. The edge
// verifies the gatekeeper token, the envelope and the tenant claim with the
// project's functions, and addresses one Durable Object per caller by the
// project's naming; `SendMessage` stores the task there (SQLite) and starts a
// Workflow of two steps: `run` (one RPC into the object: the model call and
// the guarded terminal write) and `deliver` (one RPC into the object: the
// push, signed with the project's callback JWT, through its delivery). Nothing
// else: no conversation, no idempotency by messageId, no recovery, no events.
import { DurableObject, WorkflowEntrypoint, type WorkflowEvent, type WorkflowStep } from "cloudflare:workers";
import { RpcError, invalidParams, taskNotFound, toRpcErrorValue, unsupportedOperation } from "../../src/a2a/errors.ts";
import { GatekeeperJwks } from "../../src/a2a/gatekeeper-jwks.ts";
import { loadGatekeeperOrigins } from "../../src/a2a/gatekeeper-origins.ts";
import { parseJsonRpc, rpcError, rpcResult, type JsonRpcId } from "../../src/a2a/jsonrpc.ts";
import { validatePushConfig } from "../../src/a2a/push-config.ts";
import { loadSigningKey } from "../../src/a2a/signing-key.ts";
import { TokenRefused, verifyGatekeeperToken } from "../../src/a2a/verify-token.ts";
import { A2A_PATH, CARD_PATH, JWKS_PATH, endpointOf, isJsonMediaType } from "../../src/a2a/wire.ts";
import { deliverPush } from "../../src/a2a/push-delivery.ts";
import { callerObjectName } from "../../src/worker/caller-object.ts";

interface Env {
  A2A_SIGNING_KEY?: string;
  GATEKEEPER_ORIGINS?: string;
  /** The bench's fake model (an OpenAI-compatible `/chat/completions`). */
  OPENAI_BASE_URL?: string;
  OPENAI_MODEL?: string;
  OPENAI_API_KEY?: string;
  FLOOR: DurableObjectNamespace<FloorCaller>;
  FLOOR_TURN: Workflow<TurnParams>;
}

interface TurnParams {
  /** The caller's object (`callerObjectName`). */
  object: string;
  taskId: string;
  /** This deployment's origin: the callback JWT's issuer. */
  origin: string;
}

/** A task in wire JSON, as far as the floor writes one. */
export interface TaskJson {
  id: string;
  contextId: string;
  status: { state: string; timestamp: string };
  artifacts?: { artifactId: string; parts: { text: string }[] }[];
}

/** What the edge hands the caller's object for a new task. */
export interface FloorBegin {
  taskId: string;
  contextId: string;
  /** The message's own id (the contract floor keeps sends idempotent on it; the floor does not read it). */
  messageId: string;
  text: string;
  push: unknown;
}

const CARD = {
  name: "floor",
  description: "The bench's floor worker: the same token checks as the project's edge, a two-step Workflow turn.",
  version: "0.0.0",
  capabilities: { pushNotifications: true, streaming: false },
  defaultInputModes: ["text/plain"],
  defaultOutputModes: ["text/plain"],
  skills: [],
};
const CARD_BODY = JSON.stringify(CARD);
const JSON_HEADERS = { "Content-Type": "application/json" };

const jwks = new GatekeeperJwks();
let jwksBody: Promise<string> | undefined;

const json = (body: string, status = 200) => new Response(body, { status, headers: JSON_HEADERS });
const rpcReply = (id: JsonRpcId, result: unknown) => json(JSON.stringify(rpcResult(id, result)));
const rpcRefusal = (id: JsonRpcId, error: RpcError, status = 200) => json(JSON.stringify(rpcError(id, toRpcErrorValue(error))), status);

export default {
  async fetch(request, env, ctx): Promise<Response> {
    const url = new URL(request.url);
    const origin = url.origin;
    if (request.method === "GET" && url.pathname === CARD_PATH) return json(CARD_BODY);
    if (request.method === "GET" && url.pathname === JWKS_PATH) {
      jwksBody ??= loadSigningKey(env.A2A_SIGNING_KEY).then((key) => JSON.stringify({ keys: [key.publicJwk] }));
      return json(await jwksBody);
    }
    if (request.method !== "POST" || url.pathname !== A2A_PATH) return json('{"error":"not_found"}', 404);

    const allowlist = loadGatekeeperOrigins(env.GATEKEEPER_ORIGINS);
    const bearer = /^Bearer (\S+)$/.exec(request.headers.get("Authorization") ?? "")?.[1];
    let caller: Awaited<ReturnType<typeof verifyGatekeeperToken>>;
    try {
      if (!bearer) throw new TokenRefused("bearer", "a gatekeeper-issued bearer token is required");
      caller = await verifyGatekeeperToken(bearer, { allowlist, audience: endpointOf(origin), jwks });
    } catch (error) {
      if (!(error instanceof TokenRefused)) throw error;
      return rpcRefusal(null, new RpcError(-32001, error.message), 401);
    }
    if (!isJsonMediaType(request.headers.get("Content-Type"))) return json('{"error":"unsupported_media_type"}', 415);
    const parsed = parseJsonRpc(await request.text());
    if (!parsed.ok) return rpcRefusal(parsed.id, parsed.error, 400);
    const { id, method, params } = parsed.call;
    if (params.tenant !== caller.tenant) return rpcRefusal(id, new RpcError(-32001, "params.tenant differs from the token's tenant claim"), 401);

    const object = callerObjectName({ gatekeeper: caller.issuer, tenant: caller.tenant, key: caller.identity.key });
    const stub = env.FLOOR.get(env.FLOOR.idFromName(object));
    try {
      switch (method) {
        case "GetExtendedAgentCard":
          return rpcReply(id, CARD);
        case "GetTask": {
          const task = await stub.read(String(params.id ?? ""));
          if (!task) throw taskNotFound(String(params.id));
          return rpcReply(id, task);
        }
        case "SendMessage": {
          const message = params.message as { messageId?: string; contextId?: string; parts?: { text?: string }[] } | undefined;
          const configuration = params.configuration as { returnImmediately?: boolean; taskPushNotificationConfig?: unknown } | undefined;
          if (configuration?.returnImmediately !== true) throw unsupportedOperation("the floor worker answers SendMessage with returnImmediately only");
          const push = validatePushConfig(configuration.taskPushNotificationConfig, allowlist);
          const text = (message?.parts ?? []).map((p) => p.text ?? "").join("");
          const messageId = message?.messageId ?? crypto.randomUUID();
          const task = await stub.begin({ taskId: crypto.randomUUID(), contextId: message?.contextId ?? crypto.randomUUID(), messageId, text, push });
          if (!task) throw invalidParams("a retry of params.message.messageId whose message differs");
          // As the project's edge starts its turn: past the reply, never delaying it.
          ctx.waitUntil(
            env.FLOOR_TURN.create({ id: task.id, params: { object, taskId: task.id, origin } }).catch((error: unknown) => {
              console.error(`floor: turn ${task.id} did not start: ${error instanceof Error ? error.message : String(error)}`);
            }),
          );
          return rpcReply(id, { task });
        }
        default:
          throw unsupportedOperation(`the floor worker does not serve ${method}`);
      }
    } catch (error) {
      if (error instanceof RpcError) return rpcRefusal(id, error);
      throw error;
    }
  },
} satisfies ExportedHandler<Env>;

/** One caller's tasks: one row a task, the task's wire JSON as it was last written. */
export class FloorCaller extends DurableObject<Env> {
  constructor(ctx: DurableObjectState, env: Env) {
    super(ctx, env);
    ctx.storage.sql.exec(
      "CREATE TABLE IF NOT EXISTS tasks (id TEXT PRIMARY KEY, state TEXT NOT NULL, task TEXT NOT NULL, text TEXT NOT NULL, push TEXT NOT NULL)",
    );
  }

  /** `null` only from the contract floor: a retried messageId whose message differs. */
  begin({ taskId, contextId, text, push }: FloorBegin): TaskJson | null {
    const task: TaskJson = { id: taskId, contextId, status: { state: "TASK_STATE_SUBMITTED", timestamp: new Date().toISOString() } };
    this.ctx.storage.sql.exec(
      "INSERT INTO tasks (id, state, task, text, push) VALUES (?, ?, ?, ?, ?)",
      taskId,
      task.status.state,
      JSON.stringify(task),
      text,
      JSON.stringify(push),
    );
    return task;
  }

  read(taskId: string): TaskJson | null {
    const row = this.ctx.storage.sql.exec<{ task: string }>("SELECT task FROM tasks WHERE id = ?", taskId).toArray()[0];
    return row ? (JSON.parse(row.task) as TaskJson) : null;
  }

  /** The Workflow's `run` step: the model call, then the terminal write, guarded (a task is completed once). */
  async run(taskId: string): Promise<void> {
    const row = this.ctx.storage.sql
      .exec<{ task: string; text: string; state: string }>("SELECT task, text, state FROM tasks WHERE id = ?", taskId)
      .toArray()[0];
    if (row?.state !== "TASK_STATE_SUBMITTED") return;
    const submitted = JSON.parse(row.task) as TaskJson;
    const answer = await this.answer(submitted, row.text);
    const task: TaskJson = {
      ...submitted,
      status: { state: "TASK_STATE_COMPLETED", timestamp: new Date().toISOString() },
      artifacts: [{ artifactId: "answer", parts: [{ text: answer }] }],
    };
    const written = this.ctx.storage.sql.exec(
      "UPDATE tasks SET state = ?, task = ? WHERE id = ? AND state = 'TASK_STATE_SUBMITTED'",
      task.status.state,
      JSON.stringify(task),
      taskId,
    ).rowsWritten;
    if (written > 0) this.finished(task, answer);
  }

  /** The model call: one chat completion of the user's text, a bare `fetch`. */
  protected async answer(_task: TaskJson, text: string): Promise<string> {
    const response = await fetch(`${this.env.OPENAI_BASE_URL}/chat/completions`, {
      method: "POST",
      headers: { "Content-Type": "application/json", Authorization: `Bearer ${this.env.OPENAI_API_KEY ?? ""}` },
      body: JSON.stringify({ model: this.env.OPENAI_MODEL, messages: [{ role: "user", content: text }] }),
    });
    if (!response.ok) throw new Error(`the model answered HTTP ${response.status}`);
    const completion = (await response.json()) as { choices?: { message?: { content?: string | null } }[] };
    return completion.choices?.[0]?.message?.content ?? "";
  }

  /** Written with the terminal write, in its commit (no await in between); the floor writes nothing more. */
  protected finished(_task: TaskJson, _answer: string): void {}

  /** The Workflow's `deliver` step: the signed push of the task as it stands; a failure is the step's to retry. */
  async deliver(taskId: string, origin: string): Promise<void> {
    const row = this.ctx.storage.sql.exec<{ task: string; push: string }>("SELECT task, push FROM tasks WHERE id = ?", taskId).toArray()[0];
    if (!row) return;
    // Parsed once: the push body and what `delivered` reads.
    const task = JSON.parse(row.task);
    const attempt = await deliverPush({
      config: JSON.parse(row.push),
      body: { task },
      seq: 1,
      key: await loadSigningKey(this.env.A2A_SIGNING_KEY),
      origin,
      allowlist: loadGatekeeperOrigins(this.env.GATEKEEPER_ORIGINS),
      taskId,
    });
    if (attempt.kind === "transient") throw new Error(`push answered HTTP ${attempt.status}`);
    this.delivered(task as TaskJson, "status" in attempt ? attempt.status : 0, attempt.kind);
  }

  /** After a push that needs no retry; the floor records nothing. */
  protected delivered(_task: TaskJson, _status: number, _outcome: string): void {}
}

/** A turn: two steps, each one RPC into the caller's object. */
export class FloorTurn extends WorkflowEntrypoint<Env, TurnParams> {
  override async run(event: WorkflowEvent<TurnParams>, step: WorkflowStep): Promise<void> {
    const { object, taskId, origin } = event.payload;
    const caller = () => this.env.FLOOR.get(this.env.FLOOR.idFromName(object));
    await step.do("run", () => caller().run(taskId));
    await step.do("deliver", () => caller().deliver(taskId, origin));
  }
}
