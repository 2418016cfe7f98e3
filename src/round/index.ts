// The one turn loop, for authors: the delegation seam (`Subagents`,
// `SubagentClass`, the bounded runner) and, for an object of their own, the
// loop's exports (`runTurn`, `runHandleTask` and what they are handed).
export { runBounded } from "./bounded.js";
export type { LoopDeps, LoopEvents, RoundStep, RoundSubtasks, TurnContext } from "./deps.js";
export { SubtaskRunner, subagentFacets, type SubagentClass, type SubagentFacets, type Subagents, type SubtaskRunnerDeps } from "./subtasks.js";
export { runHandleTask, runTurn } from "./turn.js";
