import { Message, Role } from "@a2a-js/sdk";
import { z } from "zod";
import { invalidParams } from "../a2a/errors.js";
import { essenceOf, isBase64 } from "../a2a/parts.js";
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

/** A proto3 JSON int32, which a client may send as a number or a decimal string (the only form a query string has). */
const int32 = (schema: z.ZodNumber) => z.preprocess((v) => (typeof v === "string" && /^-?\d{1,10}$/.test(v) ? Number(v) : v), schema);

/** A bool, or the `true` / `false` a query string carries it as. */
const bool = () => z.preprocess((v) => (v === "true" ? true : v === "false" ? false : v), z.boolean());

const historyLength = int32(z.number().int().min(0)).optional();

const getTaskParams = z.object({ id, historyLength });
export const parseGetTask = (params: unknown) => parse(getTaskParams, params);

const deleteContextParams = z.object({ contextId: id });
export const parseDeleteContext = (params: unknown) => parse(deleteContextParams, params).contextId;

const cancelTaskParams = z.object({ id });
export const parseCancelTask = (params: unknown) => parse(cancelTaskParams, params);

const subscribeParams = z.object({ id, historyLength });
export const parseSubscribeToTask = (params: unknown) => parse(subscribeParams, params);

/** `Last-Event-ID` as SubscribeToTask takes it: a `seq` this server sent, or absent. */
export function parseLastEventId(header: string | undefined): number | undefined {
  if (header === undefined || header.trim() === "") return undefined;
  const seq = Number(header.trim());
  if (!Number.isSafeInteger(seq) || seq < 0)
    throw invalidParams(`Last-Event-ID must be the id of an event this server sent (a non-negative integer), not ${JSON.stringify(header)}`);
  return seq;
}

/** A2A §3.1.4: 1–100, default 50; validated here and nowhere else. */
const DEFAULT_PAGE_SIZE = 50;

const listTasksParams = z.object({
  contextId: z.string().optional(),
  // A TaskState by name (`TASK_STATE_WORKING`) or, as proto JSON allows, by number.
  status: z.union([z.string(), z.number().int()]).optional(),
  pageSize: int32(z.number().int().min(1).max(100)).optional(),
  pageToken: z.string().optional(),
  historyLength,
  statusTimestampAfter: z.string().optional(),
  includeArtifacts: bool().optional(),
});

// A protobuf Timestamp in JSON: RFC 3339, `Z` or an offset, 0–9 fractional digits, years 1–9999.
const TIMESTAMP = /^(\d{4})-(\d{2})-(\d{2})[Tt](\d{2}):(\d{2}):(\d{2})(?:\.(\d{1,9}))?(?:[Zz]|([+-])(\d{2}):(\d{2}))$/;

/**
 * Epoch ms of a Timestamp, rounded up: tasks' status times are whole
 * milliseconds and the filter keeps those at or after it, so `…00.0005Z`
 * must not keep a task at `…00.000Z`. `undefined` when it is not one.
 */
function timestampCeilMs(value: string): number | undefined {
  const m = TIMESTAMP.exec(value);
  if (!m) return undefined;
  const [year, month, day, hours, minutes, seconds] = m.slice(1, 7).map(Number) as [number, number, number, number, number, number];
  const at = new Date(0);
  at.setUTCFullYear(year, month - 1, day);
  at.setUTCHours(hours, minutes, seconds, 0);
  const exact =
    year >= 1 &&
    at.getUTCFullYear() === year &&
    at.getUTCMonth() === month - 1 &&
    at.getUTCDate() === day &&
    at.getUTCHours() === hours &&
    at.getUTCMinutes() === minutes &&
    at.getUTCSeconds() === seconds;
  const [offsetHours, offsetMinutes] = [Number(m[9] ?? 0), Number(m[10] ?? 0)];
  if (!exact || offsetHours > 23 || offsetMinutes > 59) return undefined;
  const fraction = (m[7] ?? "").padEnd(9, "0");
  const ms = Number(fraction.slice(0, 3)) + (Number(fraction.slice(3)) > 0 ? 1 : 0);
  const offset = (m[8] === "-" ? -1 : 1) * (offsetHours * 60 + offsetMinutes) * 60_000;
  return at.getTime() + ms - offset;
}

export function parseListTasks(params: unknown): TaskListQuery {
  const p = parse(listTasksParams, params);
  let state: string | undefined;
  // `@a2a-js/sdk`'s client sends an unset enum as "UNRECOGNIZED" (or the
  // proto default): both mean "no status filter", not a bad request.
  if (p.status !== undefined && p.status !== "TASK_STATE_UNSPECIFIED" && p.status !== "UNRECOGNIZED" && p.status !== 0) {
    state = parseStateName(p.status);
    if (state === undefined) throw invalidParams(`Invalid params: params.status: unknown task state ${JSON.stringify(p.status)}`);
  }
  let statusAfter: number | undefined;
  if (p.statusTimestampAfter !== undefined) {
    statusAfter = timestampCeilMs(p.statusTimestampAfter);
    if (statusAfter === undefined) {
      throw invalidParams(
        `Invalid params: params.statusTimestampAfter: ${JSON.stringify(p.statusTimestampAfter)} is not an RFC 3339 timestamp with a Z or an offset (2026-12-01T10:00:00Z)`,
      );
    }
  }
  return {
    contextId: p.contextId || undefined,
    state,
    statusAfter,
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
    // Bytes in proto3 JSON; checked here because the SDK's decoder skips what is not base64 instead of refusing it.
    raw: z.string().refine(isBase64, "must be base64").optional(),
    mediaType: z.string().optional(),
    filename: z.string().optional(),
  })
  .refine((p) => ["text", "data", "url", "raw"].filter((k) => k in p).length === 1, {
    message: "a part carries exactly one of text, data, url or raw",
  });

/** A media range a client names (`type/subtype`, `type/*`, `*\/*`), parameters allowed. */
const mediaRange = z.string().refine((m) => essenceOf(m) !== undefined, "must be a media type such as text/plain or image/*");

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
      acceptedOutputModes: z.array(mediaRange).optional(),
    })
    .optional(),
});

export interface SendMessageInput {
  message: Message;
  /** The message in its normalized wire form (through the SDK's `fromJSON → toJSON`). */
  messageJson: MessageJson;
  /** The call's push config as sent, still to be validated; absent when none was given (it is optional). */
  pushConfig?: unknown;
  historyLength?: number;
  /** `configuration.returnImmediately`: reply with the submitted task at once instead of holding the call. */
  returnImmediately: boolean;
  /** `configuration.acceptedOutputModes`; absent (or empty): the client takes every part. */
  acceptedOutputModes?: string[];
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
  const pushConfig = p.configuration?.taskPushNotificationConfig ?? undefined;
  const { messageId, role, parts, ...rest } = Message.toJSON(message) as MessageJson;
  return {
    message,
    messageJson: { messageId, role, parts, ...rest },
    ...(pushConfig === undefined ? {} : { pushConfig }),
    historyLength: p.configuration?.historyLength,
    returnImmediately: p.configuration?.returnImmediately === true,
    ...(p.configuration?.acceptedOutputModes?.length ? { acceptedOutputModes: p.configuration.acceptedOutputModes } : {}),
  };
}

const pushConfigTask = z.object({ taskId: id });
export const parsePushConfigTask = (params: unknown) => parse(pushConfigTask, params).taskId;

const pushConfigRef = z.object({ taskId: id, id });
export const parsePushConfigRef = (params: unknown) => parse(pushConfigRef, params);
