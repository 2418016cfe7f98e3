// The contracts across the boundaries between the edge, the turn Workflow,
// the caller's Durable Object and its subagents: one place, typed end to end.
export type { AgentNamespace, AgentObject } from "./agent-object.js";
export type { BeginTask, Begun, CallerObject, TaskListPage, TaskListQuery, TaskQuery, TurnToStart } from "./caller-object.js";
export type { HumanAnswer, SubagentObject, SubagentRefusal, SubtaskQuestion, SubtaskRunResult, SubtaskSpec, WorkspaceCaps } from "./subagent.js";
export {
  turnInstanceId,
  type Delivery,
  type Finished,
  type StatusUpdateJson,
  type TurnObject,
  type TurnOutcome,
  type TurnParams,
  type TurnStart,
  type TurnStep,
} from "./turn-object.js";
export { accepted, refused, settle, unwrap, type Verdict } from "./verdict.js";
export type { MessageJson, PartJson, PushConfigJson, TaskJson, TaskStatusJson } from "./wire-json.js";
