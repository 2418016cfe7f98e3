// Human in the loop, one module beside the loop: the request (request.ts),
// the answer (answer.ts), the expiry (expiry.ts) and parking a task, a
// parent's on its subagent's question too (parking.ts). What changes a task's
// status comes back as data; the object writes it and wakes the turn.
export { answer, answerOf, takeAnswers } from "./answer.js";
export { expire } from "./expiry.js";
export { park, subtaskAnswers, subtaskRequest, type SubtaskAnswer, type SubtaskAsk } from "./parking.js";
export { ASK_USER_TOOL, askUserTool, pendingTarget, requestBody, requestIdOf, type HitlTarget, type RequestBody } from "./request.js";
