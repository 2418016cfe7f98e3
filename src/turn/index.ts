export { PushRejected, PushUnreachable, deliverPush, type PushAttempt } from "./push-delivery.js";
export { turnInstanceId, type TurnAgentRpc, type TurnOutcome, type TurnParams, type TurnStart, type TurnStep } from "./turn-protocol.js";
export { TurnWorkflowBase } from "./turn-workflow.js";
