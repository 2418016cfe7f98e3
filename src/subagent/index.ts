export { SubtaskCanceled, SubtaskOverBudget, type SubagentErrorCode } from "./errors.js";
export { RecipeSubagentBase } from "./recipe-subagent.js";
