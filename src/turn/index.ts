export { classifyPushStatus, deliverPush, type PushAttempt } from "./push-delivery.js";
export { TurnWorkflowBase } from "./turn-workflow.js";
