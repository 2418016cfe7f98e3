export { classifyPushStatus, deliverPush, type PushAttempt } from "../a2a/push-delivery.js";
export { TurnWorkflowBase } from "./turn-workflow.js";
