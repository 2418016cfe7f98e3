import { invalidParams } from "./errors.js";

// Proto-JSON names of the requests (docs/protocol.md "Wire"): a reader must
// take each field by its lowerCamelCase JSON name and by its original proto
// name. The table is a2a.proto's request messages and every message they
// hold, by proto name; `OPAQUE` fields (google.protobuf.Struct / Value:
// `metadata`, a `data` part) are the client's own JSON and never renamed.

const SCALAR = 0;
const OPAQUE = 1;
type Field = typeof SCALAR | typeof OPAQUE | MessageName;

/** The request messages of a2a.proto and the messages they hold. */
export type MessageName =
  | "SendMessageRequest"
  | "SendMessageConfiguration"
  | "Message"
  | "Part"
  | "TaskPushNotificationConfig"
  | "AuthenticationInfo"
  | "GetTaskRequest"
  | "ListTasksRequest"
  | "CancelTaskRequest"
  | "SubscribeToTaskRequest"
  | "GetTaskPushNotificationConfigRequest"
  | "DeleteTaskPushNotificationConfigRequest"
  | "ListTaskPushNotificationConfigsRequest"
  | "GetExtendedAgentCardRequest";

const MESSAGES: Readonly<Record<MessageName, Readonly<Record<string, Field>>>> = {
  SendMessageRequest: { tenant: SCALAR, message: "Message", configuration: "SendMessageConfiguration", metadata: OPAQUE },
  SendMessageConfiguration: {
    accepted_output_modes: SCALAR,
    task_push_notification_config: "TaskPushNotificationConfig",
    history_length: SCALAR,
    return_immediately: SCALAR,
  },
  Message: {
    message_id: SCALAR,
    context_id: SCALAR,
    task_id: SCALAR,
    role: SCALAR,
    parts: "Part",
    metadata: OPAQUE,
    extensions: SCALAR,
    reference_task_ids: SCALAR,
  },
  Part: { text: SCALAR, raw: SCALAR, url: SCALAR, data: OPAQUE, metadata: OPAQUE, filename: SCALAR, media_type: SCALAR },
  TaskPushNotificationConfig: { tenant: SCALAR, id: SCALAR, task_id: SCALAR, url: SCALAR, token: SCALAR, authentication: "AuthenticationInfo" },
  AuthenticationInfo: { scheme: SCALAR, credentials: SCALAR },
  GetTaskRequest: { tenant: SCALAR, id: SCALAR, history_length: SCALAR },
  ListTasksRequest: {
    tenant: SCALAR,
    context_id: SCALAR,
    status: SCALAR,
    page_size: SCALAR,
    page_token: SCALAR,
    history_length: SCALAR,
    status_timestamp_after: SCALAR,
    include_artifacts: SCALAR,
  },
  CancelTaskRequest: { tenant: SCALAR, id: SCALAR, metadata: OPAQUE },
  // `history_length` is not in a2a.proto's SubscribeToTaskRequest: the platform also shapes the snapshot by it (docs/protocol.md "Wire").
  SubscribeToTaskRequest: { tenant: SCALAR, id: SCALAR, history_length: SCALAR },
  GetTaskPushNotificationConfigRequest: { tenant: SCALAR, task_id: SCALAR, id: SCALAR },
  DeleteTaskPushNotificationConfigRequest: { tenant: SCALAR, task_id: SCALAR, id: SCALAR },
  ListTaskPushNotificationConfigsRequest: { tenant: SCALAR, task_id: SCALAR, page_size: SCALAR, page_token: SCALAR },
  GetExtendedAgentCardRequest: { tenant: SCALAR },
};

/** protoc's JSON name: each `_x` becomes `X` (`task_push_notification_config` → `taskPushNotificationConfig`). */
const jsonName = (protoName: string) => protoName.replace(/_([a-z0-9])/g, (_, c: string) => c.toUpperCase());

/** Per message: every spelling a field answers to → its JSON name and kind. */
const SPELLINGS = new Map<MessageName, ReadonlyMap<string, { name: string; field: Field }>>(
  Object.entries(MESSAGES).map(([message, fields]) => {
    const spellings = new Map<string, { name: string; field: Field }>();
    for (const [protoName, field] of Object.entries(fields)) {
      const name = jsonName(protoName);
      spellings.set(name, { name, field });
      spellings.set(protoName, { name, field });
    }
    return [message as MessageName, spellings];
  }),
);

const isPlainObject = (value: unknown): value is Record<string, unknown> => value !== null && typeof value === "object" && !Array.isArray(value);

/**
 * `value`, read as a `message`, with every field a2a.proto declares under its
 * lowerCamelCase JSON name, at every depth (lists of messages included).
 * Members it does not declare, and everything inside an opaque field, stay
 * as they came. A field given under both names is -32602 naming it. Works
 * as well on a flat object of query parameters (values left as they are).
 */
export function readProtoNames(value: Record<string, unknown>, message: MessageName, path = "params"): Record<string, unknown> {
  const spellings = SPELLINGS.get(message)!;
  const out: Record<string, unknown> = {};
  const given = new Map<string, string>();
  for (const [key, member] of Object.entries(value)) {
    const known = spellings.get(key);
    if (!known) {
      put(out, key, member);
      continue;
    }
    const other = given.get(known.name);
    if (other !== undefined) {
      throw invalidParams(`Invalid params: ${path}.${known.name} is given twice, as "${other}" and as "${key}": send one`);
    }
    given.set(known.name, key);
    put(out, known.name, typeof known.field === "string" ? readNested(member, known.field, `${path}.${known.name}`) : member);
  }
  return out;
}

/** A member defined as JSON.parse defines it: a key `__proto__` stays a member, never the prototype. */
const put = (out: Record<string, unknown>, key: string, value: unknown) =>
  Object.defineProperty(out, key, { value, enumerable: true, writable: true, configurable: true });

/** A message-typed member: an object read as that message, a list element by element; anything else for the schema to refuse. */
function readNested(member: unknown, message: MessageName, path: string): unknown {
  if (isPlainObject(member)) return readProtoNames(member, message, path);
  if (Array.isArray(member)) return member.map((item, index) => (isPlainObject(item) ? readProtoNames(item, message, `${path}.${index}`) : item));
  return member;
}
