export { runBounded } from "./bounded.js";
export { RoundAgentBase, type SubagentClass } from "./round-agent.js";
