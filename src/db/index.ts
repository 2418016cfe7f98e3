export { AgentDB } from "./agent-db.js";
export { pluginMigrations, pushConfigs, rounds, subtasks, tasks, turns } from "./schema.js";
export { SubtaskStore, type DelegateVerdict, type NewSubtask, type RoundDecision, type SubtaskRow, type SubtaskStatus } from "./subtask-store.js";
export {
  TaskStore,
  type BeginTaskInput,
  type BeginTaskResult,
  type ListTasksPage,
  type ListTasksQuery,
  type PushConfigJson,
  type SaveVerdict,
  type TaskJson,
} from "./task-store.js";
export { ensurePluginStores } from "./plugin-stores.js";
export { shapeTask } from "./task-shape.js";
