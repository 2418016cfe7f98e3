import { HITL_REQUEST_TYPE, HITL_RESPONSE_TYPE, TERMINAL_STATE_NAMES } from "../a2a/wire.js";
import { GATEKEEPER_FIXTURE_JWK, fixtureKey, publicHalf, type FixtureKey } from "./jwk-fixtures.js";
import { makeGatekeeperToken } from "./gatekeeper-token.js";
import { interceptGatekeeper, type GatekeeperIntercept, type InterceptOptions } from "./intercept-gatekeeper.js";
import type { ScriptedChatModel } from "./scripted-model.js";
import { rpcCall } from "./rpc-client.js";
import { assertResultShape } from "./wire-round-trip.js";

/** What the harness hands a Worker as its context: background work is let go, as a gatekeeper would. */
type HarnessContext = Pick<ExecutionContext, "waitUntil" | "passThroughOnException">;
type Handler = { fetch(request: Request, env: any, ctx: HarnessContext): Response | Promise<Response> };
type Loopback = { fetch(request: Request): Promise<Response> };

export interface AgentHarnessOptions {
  /** The Worker: `exports.default` from `cloudflare:workers`, or a handler object together with `env`. */
  worker: Handler | Loopback;
  /** Needed when `worker` is a handler object. */
  env?: unknown;
  tenant: string;
  /** The agent's origin as requests reach it. Default `https://agent.test`. */
  origin?: string;
  /** The simulated gatekeeper; must be in the Worker's GATEKEEPER_ORIGINS. Default `https://gatekeeper.test`. */
  gatekeeper?: string;
  /** Who is calling. Default a fresh identity per harness. */
  identity?: { key: string; name?: string; kind?: string; workspaceId?: string };
}

/**
 * An answer to what a task asks (docs/protocol.md "Human in the loop"): an
 * option (`approve` or `reject` for an approval, with an optional reason in
 * `text`; a choice's option id), or words (a question; a choice that allows
 * them).
 */
export type HarnessAnswer = { optionId: string; text?: string } | { text: string };

export interface AgentHarness {
  /** Sends one turn exactly as a gatekeeper does and returns the accepted task. */
  send(text: string, options?: { messageId?: string; contextId?: string }): Promise<any>;
  /**
   * Answers the request task `taskId` waits on, as its caller: waits (polling
   * `GetTask`, at most `timeoutMs`, default 10 s) until the task is in
   * `TASK_STATE_INPUT_REQUIRED`, then sends the answer to that request and
   * returns the task as the answer left it (back at work). Throws when the
   * task ends or the time runs out without a request, or the answer is refused.
   */
  answer(taskId: string, answer: HarnessAnswer, options?: { timeoutMs?: number }): Promise<any>;
  /** Any JSON-RPC method as this caller; resolves with the whole JSON-RPC reply. */
  call(method: string, params?: Record<string, unknown>): Promise<{ result?: any; error?: { code: number; message: string } }>;
  /**
   * Serves the gatekeeper's JWKS and captures pushes until disposed
   * (`using`); `model` answers the agent's model calls (a
   * {@link scriptedChatModel}), `respond` any other request first.
   */
  interceptGatekeeper(options?: { model?: ScriptedChatModel; respond?: InterceptOptions["respond"] }): GatekeeperIntercept;
}

const ctx: HarnessContext = { waitUntil() {}, passThroughOnException() {} };

/**
 * Drives an agent the way a gatekeeper does, with the four facts every
 * hand-written version gets wrong once: the audience is the endpoint, not
 * the origin; the tenant claim matches `params.tenant`; SendMessage carries
 * a push config on the gatekeeper's origin; and the gatekeeper's JWKS must be
 * reachable or every call is a 401 about something else.
 */
export function createAgentHarness(options: AgentHarnessOptions): AgentHarness {
  const origin = options.origin ?? "https://agent.test";
  const gatekeeper = options.gatekeeper ?? "https://gatekeeper.test";
  const endpoint = `${origin}/a2a`;
  const identity = options.identity ?? { key: `harness-${crypto.randomUUID()}`, name: "Harness", kind: "user", workspaceId: "test" };
  let key: Promise<FixtureKey> | undefined;
  let ids = 0;
  const toWorker = (request: Request) =>
    options.env === undefined ? (options.worker as Loopback).fetch(request) : Promise.resolve((options.worker as Handler).fetch(request, options.env, ctx));

  const call: AgentHarness["call"] = async (method, params = {}) => {
    const token = await makeGatekeeperToken({
      key: await (key ??= fixtureKey(GATEKEEPER_FIXTURE_JWK)),
      gatekeeper,
      endpoint,
      tenant: options.tenant,
      identity,
    });
    const answer = await rpcCall(endpoint, method, params, { token, tenant: options.tenant, id: ++ids, fetch: toWorker });
    if (answer.json === undefined) throw new Error(`${method}: HTTP ${answer.status}, not JSON-RPC: ${answer.text.slice(0, 300)}`);
    // A result that is not exactly its A2A type fails here, naming the stray key.
    if (answer.reply?.result !== undefined) assertResultShape(method, answer.reply.result);
    return answer.json as Awaited<ReturnType<AgentHarness["call"]>>;
  };

  /** The task once it waits for an answer, with the request it waits on. */
  const asking = async (taskId: string, timeoutMs: number) => {
    const deadline = Date.now() + timeoutMs;
    for (;;) {
      const reply = await call("GetTask", { id: taskId });
      if (reply.error) throw new Error(`GetTask ${taskId} refused: ${reply.error.code} ${reply.error.message}`);
      const task = reply.result;
      const state: string = task.status.state;
      if (state === "TASK_STATE_INPUT_REQUIRED") {
        const parts: Array<{ data?: { type?: string; requestId?: string } }> = task.status.message?.parts ?? [];
        const request = parts.find((part) => part.data?.type === HITL_REQUEST_TYPE)?.data;
        if (request?.requestId) return { task, requestId: request.requestId };
      }
      if (TERMINAL_STATE_NAMES.includes(state)) throw new Error(`task ${taskId} ended (${state}) without asking anything`);
      if (Date.now() > deadline) throw new Error(`task ${taskId} asked nothing within ${timeoutMs} ms (it is ${state})`);
      await new Promise((resolve) => setTimeout(resolve, 20));
    }
  };

  return {
    call,
    async answer(taskId, answer, { timeoutMs = 10_000 } = {}) {
      const { task, requestId } = await asking(taskId, timeoutMs);
      const reply = await call("SendMessage", {
        message: {
          messageId: crypto.randomUUID(),
          role: "ROLE_USER",
          taskId,
          contextId: task.contextId,
          parts: [{ data: { type: HITL_RESPONSE_TYPE, requestId, ...answer } }],
        },
        configuration: { returnImmediately: true },
      });
      if (reply.error) throw new Error(`the answer to task ${taskId} was refused: ${reply.error.code} ${reply.error.message}`);
      return reply.result.task;
    },
    async send(text, sendOptions = {}) {
      const reply = await call("SendMessage", {
        message: {
          messageId: sendOptions.messageId ?? crypto.randomUUID(),
          role: "ROLE_USER",
          parts: [{ text }],
          ...(sendOptions.contextId ? { contextId: sendOptions.contextId } : {}),
        },
        configuration: {
          returnImmediately: true,
          taskPushNotificationConfig: { url: `${gatekeeper}/a2a/notifications`, token: `harness-${crypto.randomUUID()}` },
        },
      });
      if (reply.error) throw new Error(`SendMessage refused: ${reply.error.code} ${reply.error.message}`);
      return reply.result.task;
    },
    interceptGatekeeper: ({ model, respond } = {}) =>
      interceptGatekeeper({
        gatekeeper,
        jwks: [publicHalf(GATEKEEPER_FIXTURE_JWK)],
        // `respond` reads a copy: what it leaves, the model still reads whole.
        respond: async (request) => (await respond?.(model ? request.clone() : request)) ?? (await model?.respond(request)),
      }),
  };
}
