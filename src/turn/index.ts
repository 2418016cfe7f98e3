export { PushRejected, PushUnreachable, deliverPush, type PushAttempt } from "./push-delivery.js";
export { TurnWorkflowBase } from "./turn-workflow.js";
