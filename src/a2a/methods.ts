// The methods this platform serves, in one table both bindings read
// (docs/protocol.md "Wire"): each A2A method's a2a.proto request message (its
// params, read by either proto-JSON name) and its HTTP+JSON rule, the
// `google.api.http` binding of a2a.proto under `/a2a/rest/{tenant}`; then the
// methods of the platform's own extensions, whose params are read as sent. It
// imports only a type, so the Node tooling loads it as it is (Node strips the
// types), as it does `wire.ts`.
import type { MessageName } from "./proto-names.js";

/**
 * An HTTP+JSON rule: the verbs and the path under `/{tenant}` (`{field}` a
 * path parameter). The fields the path does not name travel in the query
 * and, on a POST, in its JSON body (a2a.proto's `body: "*"`).
 */
interface HttpRule {
  verbs: readonly ("GET" | "POST" | "DELETE")[];
  path: string;
}

interface MethodSpec {
  /** The a2a.proto message of an A2A method's params; an extension's method has none. */
  request?: MessageName;
  http: HttpRule;
}

const A2A_METHODS = {
  SendMessage: { request: "SendMessageRequest", http: { verbs: ["POST"], path: "/message:send" } },
  SendStreamingMessage: { request: "SendMessageRequest", http: { verbs: ["POST"], path: "/message:stream" } },
  GetTask: { request: "GetTaskRequest", http: { verbs: ["GET"], path: "/tasks/{id}" } },
  ListTasks: { request: "ListTasksRequest", http: { verbs: ["GET"], path: "/tasks" } },
  CancelTask: { request: "CancelTaskRequest", http: { verbs: ["POST"], path: "/tasks/{id}:cancel" } },
  // a2a.proto binds GET; clients POST it too (`@a2a-js/sdk`'s REST transport does), so both are served.
  SubscribeToTask: { request: "SubscribeToTaskRequest", http: { verbs: ["GET", "POST"], path: "/tasks/{id}:subscribe" } },
  CreateTaskPushNotificationConfig: {
    request: "TaskPushNotificationConfig",
    http: { verbs: ["POST"], path: "/tasks/{taskId}/pushNotificationConfigs" },
  },
  GetTaskPushNotificationConfig: {
    request: "GetTaskPushNotificationConfigRequest",
    http: { verbs: ["GET"], path: "/tasks/{taskId}/pushNotificationConfigs/{id}" },
  },
  ListTaskPushNotificationConfigs: {
    request: "ListTaskPushNotificationConfigsRequest",
    http: { verbs: ["GET"], path: "/tasks/{taskId}/pushNotificationConfigs" },
  },
  DeleteTaskPushNotificationConfig: {
    request: "DeleteTaskPushNotificationConfigRequest",
    http: { verbs: ["DELETE"], path: "/tasks/{taskId}/pushNotificationConfigs/{id}" },
  },
  GetExtendedAgentCard: { request: "GetExtendedAgentCardRequest", http: { verbs: ["GET"], path: "/extendedAgentCard" } },
} as const satisfies Record<string, MethodSpec>;

export type A2AMethod = keyof typeof A2A_METHODS;

/** The erasure extension's methods (docs/retention.md "Erasure"): their results are their own, not A2A types. */
export const DELETE_CONTEXT_METHOD = "dynamicagents/DeleteContext";
export const DELETE_CALLER_DATA_METHOD = "dynamicagents/DeleteCallerData";

/** Every method served here: A2A's, then the extensions'. */
export const METHODS = {
  ...A2A_METHODS,
  [DELETE_CONTEXT_METHOD]: { http: { verbs: ["DELETE"], path: "/contexts/{contextId}" } },
  [DELETE_CALLER_DATA_METHOD]: { http: { verbs: ["DELETE"], path: "/caller" } },
} as const satisfies Record<string, MethodSpec>;

export type Method = keyof typeof METHODS;

/** Whether `name` is one of the methods served here. */
export const isMethod = (name: string): name is Method => Object.hasOwn(METHODS, name);

/** The a2a.proto message of a method's params; none for an extension's. */
export const requestOf = (method: Method): MessageName | undefined => (METHODS[method] as MethodSpec).request;
