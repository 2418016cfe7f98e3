import { Message, Role } from "@a2a-js/sdk";
import { z } from "zod";
import { invalidParams } from "../a2a/errors.js";
import { parseStateName } from "../a2a/task-state.js";
import type { MessageJson, TaskListQuery } from "../boundary/index.js";

/** Turns a zod failure into -32602 naming the offending parameter. */
function parse<T>(schema: z.ZodType<T>, params: unknown): T {
  const result = schema.safeParse(params);
  if (result.success) return result.data;
  const issue = result.error.issues[0]!;
  const path = ["params", ...issue.path].join(".");
  throw invalidParams(`Invalid params: ${path}: ${issue.message}`);
}

const id = z.string().min(1, "must be a non-empty string");
const historyLength = z.number().int().min(0).optional();

const getTaskParams = z.object({ id, historyLength });
export const parseGetTask = (params: unknown) => parse(getTaskParams, params);

const cancelTaskParams = z.object({ id });
export const parseCancelTask = (params: unknown) => parse(cancelTaskParams, params);

/** A2A §3.1.4: 1–100, default 50; validated here and nowhere else. */
const DEFAULT_PAGE_SIZE = 50;

const listTasksParams = z.object({
  contextId: z.string().optional(),
  status: z.string().optional(),
  pageSize: z.number().int().min(1).max(100).optional(),
  pageToken: z.string().optional(),
  historyLength,
  statusTimestampAfter: z.iso.datetime({ offset: true }).optional(),
  includeArtifacts: z.boolean().optional(),
});

export function parseListTasks(params: unknown): TaskListQuery {
  const p = parse(listTasksParams, params);
  let state: string | undefined;
  // `@a2a-js/sdk`'s client sends an unset enum as "UNRECOGNIZED" (or the
  // proto default): both mean "no status filter", not a bad request.
  if (p.status !== undefined && p.status !== "TASK_STATE_UNSPECIFIED" && p.status !== "UNRECOGNIZED") {
    state = parseStateName(p.status);
    if (state === undefined) throw invalidParams(`Invalid params: params.status: unknown task state ${JSON.stringify(p.status)}`);
  }
  return {
    contextId: p.contextId || undefined,
    state,
    statusAfter: p.statusTimestampAfter === undefined ? undefined : Date.parse(p.statusTimestampAfter),
    pageSize: p.pageSize ?? DEFAULT_PAGE_SIZE,
    pageToken: p.pageToken || undefined,
    historyLength: p.historyLength,
    includeArtifacts: p.includeArtifacts ?? false,
  };
}

const part = z
  .object({
    text: z.string().optional(),
    data: z.unknown().optional(),
    url: z.string().optional(),
    raw: z.string().optional(),
  })
  .refine((p) => ["text", "data", "url", "raw"].filter((k) => k in p).length === 1, {
    message: "a part carries exactly one of text, data, url or raw",
  });

const sendMessageParams = z.object({
  message: z.object({
    messageId: id,
    role: z.literal("ROLE_USER", { message: 'must be "ROLE_USER"' }),
    parts: z.array(part).min(1, "must hold at least one part"),
    contextId: z.string().optional(),
    taskId: z.string().optional(),
  }),
  configuration: z
    .object({
      taskPushNotificationConfig: z.unknown().optional(),
      historyLength,
      returnImmediately: z.boolean().optional(),
    })
    .optional(),
});

export interface SendMessageInput {
  message: Message;
  /** The message in its normalized wire form (through the SDK's `fromJSON → toJSON`). */
  messageJson: MessageJson;
  pushConfig: unknown;
  historyLength?: number;
}

export function parseSendMessage(params: Record<string, unknown>): SendMessageInput {
  const p = parse(sendMessageParams, params);
  let message: Message;
  try {
    message = Message.fromJSON(params.message);
  } catch {
    throw invalidParams("Invalid params: params.message is not a valid A2A message");
  }
  if (message.role !== Role.ROLE_USER) throw invalidParams('Invalid params: params.message.role must be "ROLE_USER"');
  const pushConfig = p.configuration?.taskPushNotificationConfig;
  if (pushConfig === undefined || pushConfig === null) {
    throw invalidParams(
      "Invalid params: params.configuration.taskPushNotificationConfig is required: this agent accepts a turn and delivers the result by push notification",
    );
  }
  const { messageId, role, parts, ...rest } = Message.toJSON(message) as MessageJson;
  return {
    message,
    messageJson: { messageId, role, parts, ...rest },
    pushConfig,
    historyLength: p.configuration?.historyLength,
  };
}

const pushConfigTask = z.object({ taskId: id });
export const parsePushConfigTask = (params: unknown) => parse(pushConfigTask, params).taskId;

const pushConfigRef = z.object({ taskId: id, id });
export const parsePushConfigRef = (params: unknown) => parse(pushConfigRef, params);
