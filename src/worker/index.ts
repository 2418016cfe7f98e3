export { A2A_PATH, CARD_PATH } from "../a2a/wire.js";
export { callerObjectName, type CallerObjectKey } from "./caller-object.js";
export { createA2AWorker } from "./create-worker.js";
export type { A2AWorkerOptions, EdgeEnv, TenantConfig } from "./options.js";
