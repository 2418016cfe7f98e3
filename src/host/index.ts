export { SelfOrigin } from "./self-origin.js";
export { TaskAgent, type TurnContext } from "./task-agent.js";
export type { TaskAgentRpc } from "./task-agent-rpc.js";
export { requestText, terminalTask } from "./terminal-task.js";
export { DEFAULT_TURN_POLICY, TURN_ABANDONED_MESSAGE, type TurnPolicy } from "./turn-policy.js";
export { DynamicAgent } from "./dynamic-agent.js";
export type { AgentPlugin, PluginHost } from "../plugin/contract.js";
