export { SubtaskCanceled, SubtaskOverBudget } from "./errors.js";
export { RecipeSubagentBase } from "./recipe-subagent.js";
