export { SubtaskCanceled } from "./errors.js";
export { RecipeSubagentBase } from "./recipe-subagent.js";
