export { TaskAgent } from "./task-agent.js";
export type { TaskAgentRpc } from "./task-agent-rpc.js";
