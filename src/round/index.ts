export { runBounded } from "./bounded.js";
export { validateRoundPolicy, type RoundPolicy } from "./policy.js";
export { RoundAgentBase, type SubagentClass } from "./round-agent.js";
