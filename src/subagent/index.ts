export { SubtaskCanceled, type Recipe, type RecipeContext, type SubtaskRunResult, type SubtaskSpec } from "./recipe.js";
export { RecipeSubagentBase } from "./recipe-subagent.js";
