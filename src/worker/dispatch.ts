import { TaskPushNotificationConfig } from "@a2a-js/sdk";
import { ErrorCode, RpcError, unsupportedOperation } from "../a2a/errors.js";
import { assertTextWithinLimit } from "../a2a/limits.js";
import { validatePushConfig } from "../a2a/push-config.js";
import type { SigningKey } from "../a2a/signing-key.js";
import { unwrap, type CallerObject, type PushConfigJson, type TurnToStart } from "../boundary/index.js";
import type { CardCache } from "./card-cache.js";
import { parseCancelTask, parseGetTask, parseListTasks, parsePushConfigRef, parsePushConfigTask, parseSendMessage } from "./params.js";

/** Everything a method needs, resolved by the edge after the caller was verified. */
export interface CallContext {
  tenant: string;
  origin: string;
  /** Who is calling (the verified token's identity): the one who answers a human-in-the-loop request. */
  caller: { key: string; name?: string };
  allowlist: ReadonlySet<string>;
  /** The caller's own Durable Object; only addressed once a method needs it. */
  agent: () => CallerObject;
  /** Starts a turn the object accepted, past the reply (never delays it). */
  startTurn: (turn: TurnToStart) => void;
  signingKey: () => Promise<SigningKey>;
  cards: CardCache;
}

type Method = (params: Record<string, unknown>, ctx: CallContext) => Promise<unknown>;

/** A validated push config in the wire form the object stores. */
const pushConfigJson = (config: TaskPushNotificationConfig): PushConfigJson => {
  const { url, ...rest } = TaskPushNotificationConfig.toJSON(config) as { url: string };
  return { url, ...rest };
};

const sendMessage: Method = async (params, ctx) => {
  const input = parseSendMessage(params);
  assertTextWithinLimit(input.message);
  // Validated before the task exists: a refused push config creates nothing.
  const pushConfig = pushConfigJson(validatePushConfig(input.pushConfig, ctx.allowlist));
  const { task, turn } = unwrap(
    await ctx.agent().beginTask({
      tenant: ctx.tenant,
      origin: ctx.origin,
      message: input.messageJson,
      pushConfig,
      historyLength: input.historyLength,
      caller: ctx.caller,
    }),
  );
  // Only a turn this call created comes back: a retried messageId starts nothing.
  if (turn) ctx.startTurn(turn);
  return { task };
};

const getTask: Method = async (params, ctx) => {
  const p = parseGetTask(params);
  return unwrap(await ctx.agent().getTask({ taskId: p.id, historyLength: p.historyLength }));
};

const listTasks: Method = async (params, ctx) => unwrap(await ctx.agent().listTasks(parseListTasks(params)));

const cancelTask: Method = async (params, ctx) => unwrap(await ctx.agent().cancelTask(parseCancelTask(params).id));

const getExtendedAgentCard: Method = async (_params, ctx) => (await ctx.cards.tenantCard(ctx.origin, ctx.tenant, await ctx.signingKey())).card;

const createPushConfig: Method = async (params, ctx) => {
  const taskId = parsePushConfigTask(params);
  const config = validatePushConfig(params, ctx.allowlist, "params");
  return unwrap(await ctx.agent().putPushConfig(taskId, pushConfigJson(config)));
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

const streamingUnsupported: Method = async () => {
  throw unsupportedOperation("Streaming is not supported (capabilities.streaming is false): use SendMessage, the result arrives by push notification");
};

const METHODS: Record<string, Method> = {
  SendMessage: sendMessage,
  GetTask: getTask,
  ListTasks: listTasks,
  CancelTask: cancelTask,
  GetExtendedAgentCard: getExtendedAgentCard,
  CreateTaskPushNotificationConfig: createPushConfig,
  GetTaskPushNotificationConfig: getPushConfig,
  ListTaskPushNotificationConfigs: listPushConfigs,
  DeleteTaskPushNotificationConfig: deletePushConfig,
  SendStreamingMessage: streamingUnsupported,
  SubscribeToTask: streamingUnsupported,
};

export async function dispatch(method: string, params: Record<string, unknown>, ctx: CallContext): Promise<unknown> {
  const run = Object.hasOwn(METHODS, method) ? METHODS[method] : undefined;
  if (!run) throw new RpcError(ErrorCode.METHOD_NOT_FOUND, `Method not found: ${JSON.stringify(method)}`);
  return run(params, ctx);
}
