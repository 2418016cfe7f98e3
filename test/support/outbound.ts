import { env } from "cloudflare:workers";
import {
  chatCompletionBody,
  chatCompletionEvents,
  interceptGatekeeper,
  readChatRequest,
  type CapturedPush,
  type ModelRequest,
  type SentRequest,
} from "@dynamicagents/core/testing";
import { GATEKEEPER, LOOPBACK_GATEKEEPER, OTHER_GATEKEEPER } from "./constants.js";
import { gatekeeperKey } from "./gatekeeper.js";

const MODEL_BASE = "https://model.test/v1";
const MCP_ORIGINS = ["https://mcp.test", "https://mcp-down.test", "https://mcp-slow.test"];

/** One request the fake model received (the harness's reading of it). */
export type ModelCall = ModelRequest;

export interface Outbound {
  /**
   * Every request the code under test sent out, in order. Plain records, not
   * Request objects: those belong to the Durable Object that made them and
   * cannot be read from the spec while that object is still busy.
   */
  requests: SentRequest[];
  /** What the gatekeepers' JWKS endpoints currently serve (both gatekeepers publish the same keys). */
  jwks: { keys: unknown[] };
  /** Responses for specific URLs (pushes or anything else), given the request; a push URL answers 200 otherwise. */
  pushReplies: Map<string, (request: Request) => Response | Promise<Response>>;
  /** Web pages by URL (GET), for agents that read the web. */
  pages: Map<string, () => Response | Promise<Response>>;
  /** Pushes the gatekeepers received (a 2xx answer), in order. */
  pushes: CapturedPush[];
  /** Chat-completion requests the model received. */
  modelCalls: ModelCall[];
  /** How the fake OpenAI-compatible model answers; default: "echo: <last user text>". */
  model: (call: ModelCall) => Response | Promise<Response>;
  restore(): void;
  [Symbol.dispose](): void;
}

export const chatCompletion = (text: string, model = "primary-model"): Response => Response.json(chatCompletionBody({ content: text }, model));

/** A chat completion that calls one tool. */
export const chatToolCall = (name: string, args: unknown, model = "primary-model"): Response =>
  Response.json(chatCompletionBody({ toolCalls: [{ name, arguments: args }] }, model));

/** One model step that makes several tool calls at once (the SDK runs them in parallel). */
export const chatToolCalls = (calls: Array<{ name: string; args: unknown }>, model: string): Response =>
  Response.json(chatCompletionBody({ toolCalls: calls.map((c) => ({ name: c.name, arguments: c.args })) }, model));

/**
 * A request whose connection the far end closes before answering (a model
 * endpoint dropping a keep-alive connection): it rejects with the runtime's
 * own error for that, raised by a real connection (vitest.config.ts's
 * CONNECTION_DROPPER). A fake model returns it to fail one request so.
 */
export function droppedConnection(): Promise<Response> {
  const dropper = env.CONNECTION_DROPPER;
  if (!dropper) throw new Error("the test worker's CONNECTION_DROPPER binding is missing (vitest.config.ts)");
  return dropper.fetch("http://dropped.test/v1/chat/completions", { method: "POST" });
}

const lastUserText = (call: ModelCall) => String([...call.messages].reverse().find((m) => m.role === "user")?.content ?? "");

/**
 * Replaces the network for one spec, on top of the harness's own gatekeeper
 * interception: the simulated gatekeepers' JWKS and push endpoints, a fake
 * OpenAI-compatible model, and pages. Anything else fails like an unreachable
 * host. Every request is recorded so a spec can assert on it.
 */
export function interceptOutbound(): Outbound {
  const gatekeeper = interceptGatekeeper({
    gatekeeper: GATEKEEPER,
    jwks: [gatekeeperKey.publicJwk],
    pushOrigins: [OTHER_GATEKEEPER, LOOPBACK_GATEKEEPER],
    respond: async (request) => {
      const reply = outbound.pushReplies.get(request.url);
      if (reply) return reply(request);
      // The other gatekeepers publish the same keys at their own JWKS URLs.
      if (request.method === "GET" && [OTHER_GATEKEEPER, LOOPBACK_GATEKEEPER].some((origin) => request.url === `${origin}/.well-known/jwks.json`)) {
        return Response.json({ keys: gatekeeper.jwks });
      }
      if (request.url.startsWith(`${MODEL_BASE}/`)) {
        const call = await readChatRequest(request);
        if (!call) return new Response("not a chat completion", { status: 404 });
        outbound.modelCalls.push(call);
        const reply = await outbound.model(call);
        // The agents stream their answers: a scripted JSON completion is sent as the events it would stream as.
        if (!call.stream || reply.status !== 200 || !reply.headers.get("Content-Type")?.includes("json")) return reply;
        return new Response(chatCompletionEvents(await reply.json()), { headers: { "Content-Type": "text/event-stream" } });
      }
      const page = outbound.pages.get(request.url);
      if (request.method === "GET" && page) return page();
      // The MCP servers are the pool's (test/support/mcp-fixture.mjs, in vitest.config.ts's outbound service).
      const known = [GATEKEEPER, OTHER_GATEKEEPER, LOOPBACK_GATEKEEPER, ...MCP_ORIGINS].includes(new URL(request.url).origin);
      if (!known) throw new TypeError(`network blocked in tests: ${request.method} ${request.url}`);
      return undefined;
    },
  });
  const outbound: Outbound = {
    requests: gatekeeper.requests,
    get jwks() {
      return { keys: gatekeeper.jwks };
    },
    set jwks(value: { keys: unknown[] }) {
      gatekeeper.jwks = value.keys as never;
    },
    pushReplies: new Map(),
    pages: new Map(),
    pushes: gatekeeper.pushes,
    modelCalls: [],
    model: (call) => chatCompletion(`echo: ${lastUserText(call)}`, call.model),
    restore: () => gatekeeper.restore(),
    [Symbol.dispose]: () => gatekeeper.restore(),
  };
  return outbound;
}

/** Polls until `predicate` holds; the engine runs Workflows in the background. */
export async function eventually<T>(probe: () => T | Promise<T>, predicate: (value: T) => boolean, what: string, tries = 400): Promise<T> {
  for (let i = 0; i < tries; i++) {
    const value = await probe();
    if (predicate(value)) return value;
    await new Promise((resolve) => setTimeout(resolve, 25));
  }
  throw new Error(`timed out waiting for ${what}`);
}

/** A model call held by {@link holdModel}: what it was asked, and how the spec answers it. */
export interface HeldCall {
  call: ModelCall;
  release(text?: string): void;
}

/**
 * Model calls held until the spec releases them; an aborted request (a
 * cancel) fails as a network read does. They poll: a promise made inside the
 * object cannot be settled from the spec (workerd binds it to the object's
 * I/O context).
 */
export function holdModel(outbound: Outbound): HeldCall[] {
  const held: HeldCall[] = [];
  outbound.model = async (c) => {
    let text: string | undefined;
    held.push({ call: c, release: (answer = "held answer") => void (text = answer) });
    while (text === undefined) {
      if (c.signal.aborted) throw c.signal.reason;
      await new Promise((resolve) => setTimeout(resolve, 10));
    }
    return chatCompletion(text, c.model);
  };
  return held;
}
