export { callerObjectName, type CallerObjectKey } from "./caller-object.js";
export { A2A_PATH, CARD_PATH, createA2AWorker } from "./create-worker.js";
export type { A2AWorkerOptions, EdgeEnv, TaskAgentStub, TenantConfig } from "./options.js";
