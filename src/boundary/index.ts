// The contracts across the boundaries between the edge, the turn Workflow,
// the caller's Durable Object and its subagents: one place, typed end to end.
export type { AgentNamespace, AgentObject } from "./agent-object.js";
export type {
  BeginTask,
  Begun,
  CallerObject,
  Erasure,
  EventLines,
  PushConfigFrom,
  Replied,
  StreamQuery,
  TaskListPage,
  TaskListQuery,
  TaskQuery,
  TurnToStart,
} from "./caller-object.js";
export type {
  HumanAnswer,
  SubagentObject,
  SubagentRefusal,
  SubtaskBudget,
  SubtaskChunk,
  SubtaskModelCall,
  SubtaskOutcome,
  SubtaskQuestion,
  SubtaskRunResult,
  SubtaskSpec,
  WorkspaceCaps,
} from "./subagent.js";
export {
  turnInstanceId,
  turnTraceOf,
  type DeadLetter,
  type Delivery,
  type Finished,
  type PushOut,
  type PushPlan,
  type PushTargets,
  type RedeliveryOutcome,
  type RedeliveryTarget,
  type TurnObject,
  type TurnOutcome,
  type TurnParams,
  type TurnStart,
  type TurnStep,
} from "./turn-object.js";
export { closingLine, eventLine, readEventLine } from "./event-lines.js";
export { accepted, refused, settle, unwrap, type Verdict } from "./verdict.js";
export type {
  ArtifactJson,
  ArtifactUpdateJson,
  MessageJson,
  PartJson,
  PushConfigJson,
  StatusUpdateJson,
  StreamEventJson,
  TaskJson,
  TaskStatusJson,
} from "./wire-json.js";
