// The wire-shape check of the specs (docs/protocol.md "Wire"): every result,
// stream event and push of an A2A method is exactly an A2A 1.0 object. Each is
// decoded with the `@a2a-js/sdk` proto type and encoded again, and must come
// back as it went: a key the type lacks is dropped on the way and named here.
// A field sent with its proto default (`nextPageToken: ""`, `append: false`),
// which the encoder leaves out, counts as known when the same field with
// another value survives the round trip. Errors are exempt (their `data` is
// ErrorInfo), and so are the erasure methods' results (their own shape).
import {
  AgentCard,
  ListTaskPushNotificationConfigsResponse,
  ListTasksResponse,
  SendMessageResponse,
  StreamResponse,
  Task,
  TaskPushNotificationConfig,
} from "@a2a-js/sdk";

interface ProtoType {
  fromJSON(object: any): unknown;
  toJSON(message: any): unknown;
}

/** The proto type of each A2A method's JSON-RPC `result` (a streaming method's events are StreamResponses). */
const RESULT_TYPES: Readonly<Record<string, ProtoType | "null">> = {
  SendMessage: SendMessageResponse,
  SendStreamingMessage: StreamResponse,
  SubscribeToTask: StreamResponse,
  GetTask: Task,
  CancelTask: Task,
  ListTasks: ListTasksResponse,
  GetExtendedAgentCard: AgentCard,
  CreateTaskPushNotificationConfig: TaskPushNotificationConfig,
  GetTaskPushNotificationConfig: TaskPushNotificationConfig,
  ListTaskPushNotificationConfigs: ListTaskPushNotificationConfigsResponse,
  // google.protobuf.Empty, which the JSON-RPC binding answers as `null` (as the SDK's own server does).
  DeleteTaskPushNotificationConfig: "null",
};

/** A result, event or push that is not exactly its A2A type: the message names every stray or altered key. */
export class WireShapeError extends Error {
  override name = "WireShapeError";
}

type Path = Array<string | number>;

const isObject = (value: unknown): value is Record<string, unknown> => value !== null && typeof value === "object" && !Array.isArray(value);
const show = (path: Path) => (path.length ? path.join(".") : "(the whole value)");

/** A non-default value of the same JSON kind: what a known field keeps through the round trip. */
function witnesses(value: unknown): unknown[] {
  if (value === "" || value === null) return ["x"];
  if (value === 0) return [1];
  if (value === false) return [true];
  if (Array.isArray(value)) return [["x"], [{}]];
  return [];
}

/** The value at `path`, list indices read as the first element (where {@link probe} puts its witness). */
function at(value: unknown, path: Path): unknown {
  let here = value;
  for (const step of path) {
    if (typeof step === "number") here = Array.isArray(here) ? here[0] : undefined;
    else here = isObject(here) ? here[step] : undefined;
  }
  return here;
}

/** Whether the type keeps a field at `path` when it holds `witness`: the field is one the type declares. */
function probe(type: ProtoType, path: Path, witness: unknown): boolean {
  let built: unknown = witness;
  for (const step of [...path].reverse()) built = typeof step === "number" ? [built] : { [step]: built };
  try {
    return at(type.toJSON(type.fromJSON(built)), path) !== undefined;
  } catch {
    return false;
  }
}

function compare(type: ProtoType, sent: unknown, back: unknown, path: Path, problems: string[]): void {
  if (isObject(sent)) {
    if (!isObject(back)) return void problems.push(`${show(path)}: an object that comes back as ${JSON.stringify(back)}`);
    for (const [key, value] of Object.entries(sent)) {
      const here = [...path, key];
      if (Object.hasOwn(back, key)) compare(type, value, back[key], here, problems);
      else if (!witnesses(value).some((w) => probe(type, here, w))) problems.push(`stray key "${key}" at ${show(here)}: the A2A type drops it`);
    }
    for (const key of Object.keys(back)) if (!Object.hasOwn(sent, key)) problems.push(`${show([...path, key])}: absent, but the type's encoding adds it`);
    return;
  }
  if (Array.isArray(sent)) {
    if (!Array.isArray(back) || back.length !== sent.length) return void problems.push(`${show(path)}: a list that comes back as ${JSON.stringify(back)}`);
    for (const [index, item] of sent.entries()) compare(type, item, back[index], [...path, index], problems);
    return;
  }
  if (sent !== back) problems.push(`${show(path)}: ${JSON.stringify(sent)} comes back as ${JSON.stringify(back)}`);
}

/** What keeps `json` from being exactly its proto type's JSON; empty when it is. */
export function wireShapeProblems(type: ProtoType, json: unknown): string[] {
  let back: unknown;
  try {
    back = type.toJSON(type.fromJSON(json));
  } catch (error) {
    return [`the type does not decode it: ${(error as Error).message}`];
  }
  const problems: string[] = [];
  compare(type, json, back, [], problems);
  return problems;
}

/** Throws a {@link WireShapeError} naming `what` unless `json` is exactly its type's JSON. */
function assertShape(what: string, type: ProtoType | "null", json: unknown): void {
  const problems = type === "null" ? (json === null ? [] : [`expected null, got ${JSON.stringify(json)}`]) : wireShapeProblems(type, json);
  if (problems.length) throw new WireShapeError(`${what} is not exactly its A2A 1.0 type: ${problems.join("; ")}\n${JSON.stringify(json)}`);
}

/** A JSON-RPC `result` of `method`; a method that is not A2A's (an extension's) is not checked. */
export function assertResultShape(method: string, result: unknown): void {
  const type = Object.hasOwn(RESULT_TYPES, method) ? RESULT_TYPES[method] : undefined;
  if (type) assertShape(`the result of ${method}`, type, result);
}

/** One stream event's `result`, or one push's body: a StreamResponse. */
export function assertStreamResponseShape(what: string, json: unknown): void {
  assertShape(what, StreamResponse, json);
}
