import { TaskPushNotificationConfig } from "@a2a-js/sdk";
import { ErrorCode, RpcError, contentTypeNotSupported } from "../a2a/errors.js";
import { assertContentWithinLimit } from "../a2a/limits.js";
import { acceptsMediaType, partMediaType } from "../a2a/parts.js";
import { DELETE_CALLER_DATA_METHOD, DELETE_CONTEXT_METHOD, isMethod, requestOf, type Method as MethodName } from "../a2a/methods.js";
import { readProtoNames } from "../a2a/proto-names.js";
import { validateCallerPushConfig } from "../a2a/push-config.js";
import type { SigningKey } from "../a2a/signing-key.js";
import type { TraceContext } from "../a2a/trace-context.js";
import { HITL_RESPONSE_TYPE } from "../a2a/wire.js";
import { unwrap, type CallerObject, type MessageJson, type PartJson, type PushConfigJson, type TurnToStart } from "../boundary/index.js";
import type { CardCache } from "./card-cache.js";
import { EventStream } from "./event-stream.js";
import {
  parseCancelTask,
  parseDeleteContext,
  parseGetTask,
  parseLastEventId,
  parseListTasks,
  parsePushConfigRef,
  parsePushConfigTask,
  parseSendMessage,
  parseSubscribeToTask,
} from "./params.js";

/** Everything a method needs, resolved by the edge after the caller was verified. */
export interface CallContext {
  tenant: string;
  origin: string;
  /**
   * Who is calling (the verified token's identity): the one who answers a
   * human-in-the-loop request. `gatekeeper`: the token's `iss`, the one origin
   * the caller's push configs may name.
   */
  caller: { key: string; name?: string; gatekeeper: string };
  allowlist: ReadonlySet<string>;
  /** The tenant card's `defaultInputModes`: a message part of any other media type is refused at the edge (-32005). */
  inputModes: readonly string[];
  /** The caller's own Durable Object; only addressed once a method needs it. `fresh`: a new stub (the last one saw its object reset). */
  agent: (fresh?: boolean) => CallerObject;
  /** The request's `Last-Event-ID` header (SubscribeToTask). */
  lastEventId?: string;
  /** The request activated progress (`A2A-Extensions`): its stream and push config carry progress events. */
  progress?: boolean;
  /** The request's well-formed `traceparent` (and `tracestate`): a turn a send starts continues it. */
  trace?: TraceContext;
  /** Starts a turn the object accepted, past the reply (never delays it). */
  startTurn: (turn: TurnToStart) => void;
  signingKey: () => Promise<SigningKey>;
  cards: CardCache;
}

type Method = (params: Record<string, unknown>, ctx: CallContext) => Promise<unknown>;

/** The caller's push config, validated (on their own gatekeeper), in the wire form the object stores. */
const pushConfigJson = (raw: unknown, ctx: CallContext, where?: string): PushConfigJson => {
  const config = validateCallerPushConfig(raw, { allowlist: ctx.allowlist, gatekeeper: ctx.caller.gatekeeper }, where);
  const { url, ...rest } = TaskPushNotificationConfig.toJSON(config) as { url: string };
  return { url, ...rest };
};

/**
 * Accepts a send: the task, and its turn started (only a turn this call
 * created: a retried messageId starts nothing), or the message the agent
 * answered with instead.
 */
async function accept(params: Record<string, unknown>, ctx: CallContext, stream = false) {
  const input = parseSendMessage(params);
  assertContentWithinLimit(input.message);
  assertPartsAccepted(input.messageJson, ctx);
  // Validated before the task exists: a refused push config creates nothing.
  const pushConfig = input.pushConfig === undefined ? undefined : pushConfigJson(input.pushConfig, ctx);
  const begun = unwrap(
    await ctx.agent().beginTask({
      tenant: ctx.tenant,
      origin: ctx.origin,
      message: input.messageJson,
      ...(pushConfig ? { pushConfig } : {}),
      historyLength: input.historyLength,
      caller: ctx.caller,
      immediate: input.returnImmediately,
      ...(input.acceptedOutputModes ? { acceptedOutputModes: input.acceptedOutputModes } : {}),
      ...(stream ? { stream: true as const } : {}),
      ...(ctx.progress ? { progress: true as const } : {}),
      ...(ctx.trace ? { trace: ctx.trace } : {}),
    }),
  );
  if ("message" in begun) return { input, message: begun.message };
  if (begun.turn) ctx.startTurn(begun.turn);
  return { input, task: begun.task, settledBefore: begun.settledBefore === true, streamSlot: begun.streamSlot };
}

/**
 * -32005 for a part whose media type the tenant's card does not take, before
 * any object is addressed. The platform's own `hitl/response` part, on a
 * message to a task, answers a request the platform made: every tenant takes it.
 */
function assertPartsAccepted(message: MessageJson, ctx: CallContext): void {
  for (const [index, part] of message.parts.entries()) {
    if (message.taskId && isHitlResponse(part)) continue;
    const mediaType = partMediaType(part);
    if (acceptsMediaType(ctx.inputModes, mediaType)) continue;
    throw contentTypeNotSupported(
      `params.message.parts.${index} is ${mediaType}, which tenant ${JSON.stringify(ctx.tenant)} does not accept (its card's defaultInputModes: ${ctx.inputModes.join(", ")})`,
    );
  }
}

const isHitlResponse = (part: PartJson) => part.data !== null && typeof part.data === "object" && (part.data as { type?: unknown }).type === HITL_RESPONSE_TYPE;

/** How often a blocking send asks again after its object reset under it (the new instance reads the task). */
const WAIT_ATTEMPTS = 3;

/**
 * A blocking send's wait (docs/protocol.md "SendMessage"): held until the
 * task is terminal or interrupted. A refusal is the answer; a thrown error is
 * the object resetting under the wait, and a fresh stub asks again.
 */
async function held(ctx: CallContext, taskId: string, historyLength: number | undefined) {
  for (let attempt = 1; ; attempt++) {
    let verdict: Awaited<ReturnType<CallerObject["awaitTask"]>>;
    try {
      verdict = await ctx.agent(attempt > 1).awaitTask({ taskId, historyLength });
    } catch (error) {
      if (attempt >= WAIT_ATTEMPTS) throw error;
      continue;
    }
    return unwrap(verdict);
  }
}

const sendMessage: Method = async (params, ctx) => {
  const { input, task, message, settledBefore } = await accept(params, ctx);
  if (message) return { message };
  // A repeated or losing answer to a human-in-the-loop request gets the task as it is, at once.
  if (input.returnImmediately || settledBefore) return { task };
  return { task: await held(ctx, task.id, input.historyLength) };
};

const sendStreamingMessage: Method = async (params, ctx) => {
  const { input, task, message, settledBefore, streamSlot } = await accept(params, ctx, true);
  // A message answer is the stream's one event; so is the task of a repeated or losing answer.
  if (message) return EventStream.single({ message });
  if (settledBefore) return EventStream.single({ task });
  return eventStream(
    ctx,
    await ctx.agent().streamTask({
      taskId: task.id,
      historyLength: input.historyLength,
      purpose: "send",
      ...(streamSlot ? { slot: streamSlot } : {}),
      ...(ctx.progress ? { progress: true as const } : {}),
    }),
  );
};

const subscribeToTask: Method = async (params, ctx) => {
  const p = parseSubscribeToTask(params);
  const afterSeq = parseLastEventId(ctx.lastEventId);
  return eventStream(
    ctx,
    await ctx.agent().streamTask({
      taskId: p.id,
      historyLength: p.historyLength,
      purpose: "subscribe",
      ...(afterSeq === undefined ? {} : { afterSeq }),
      ...(ctx.progress ? { progress: true as const } : {}),
    }),
  );
};

/** The object's stream, for the edge to relay; the release tells the object when the client went away. */
function eventStream(ctx: CallContext, verdict: Awaited<ReturnType<CallerObject["streamTask"]>>): EventStream {
  const { streamId, lines } = unwrap(verdict);
  return new EventStream(lines, () => ctx.agent().releaseStream(streamId));
}

const getTask: Method = async (params, ctx) => {
  const p = parseGetTask(params);
  return unwrap(await ctx.agent().getTask({ taskId: p.id, historyLength: p.historyLength }));
};

const listTasks: Method = async (params, ctx) => unwrap(await ctx.agent().listTasks(parseListTasks(params)));

const cancelTask: Method = async (params, ctx) => unwrap(await ctx.agent().cancelTask(parseCancelTask(params).id));

const getExtendedAgentCard: Method = async (_params, ctx) => (await ctx.cards.tenantCard(ctx.origin, ctx.tenant, await ctx.signingKey())).card;

const createPushConfig: Method = async (params, ctx) => {
  const taskId = parsePushConfigTask(params);
  const from = { tenant: ctx.tenant, origin: ctx.origin, ...(ctx.progress ? { progress: true as const } : {}) };
  return unwrap(await ctx.agent().putPushConfig(taskId, pushConfigJson(params, ctx, "params"), from));
};

const getPushConfig: Method = async (params, ctx) => {
  const p = parsePushConfigRef(params);
  return unwrap(await ctx.agent().getPushConfig(p.taskId, p.id));
};

const listPushConfigs: Method = async (params, ctx) => ({
  configs: unwrap(await ctx.agent().listPushConfigs(parsePushConfigTask(params))),
  nextPageToken: "",
});

const deletePushConfig: Method = async (params, ctx) => {
  const p = parsePushConfigRef(params);
  return unwrap(await ctx.agent().deletePushConfig(p.taskId, p.id));
};

const deleteContext: Method = async (params, ctx) => unwrap(await ctx.agent().deleteContext(parseDeleteContext(params)));

const deleteCallerData: Method = async (_params, ctx) => unwrap(await ctx.agent().deleteCallerData());

/** Each method's implementation; the methods' table says which a2a.proto message its params are (read by either name of each field). */
const METHODS: Record<MethodName, Method> = {
  SendMessage: sendMessage,
  GetTask: getTask,
  ListTasks: listTasks,
  CancelTask: cancelTask,
  GetExtendedAgentCard: getExtendedAgentCard,
  CreateTaskPushNotificationConfig: createPushConfig,
  GetTaskPushNotificationConfig: getPushConfig,
  ListTaskPushNotificationConfigs: listPushConfigs,
  DeleteTaskPushNotificationConfig: deletePushConfig,
  SendStreamingMessage: sendStreamingMessage,
  SubscribeToTask: subscribeToTask,
  [DELETE_CONTEXT_METHOD]: deleteContext,
  [DELETE_CALLER_DATA_METHOD]: deleteCallerData,
};

/** One call, whichever binding it came by: the same method answers the same params the same way. */
export async function dispatch(method: string, params: Record<string, unknown>, ctx: CallContext): Promise<unknown> {
  if (!isMethod(method)) throw new RpcError(ErrorCode.METHOD_NOT_FOUND, `Method not found: ${JSON.stringify(method)}`);
  const request = requestOf(method);
  return METHODS[method](request ? readProtoNames(params, request) : params, ctx);
}
