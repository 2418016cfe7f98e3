export { AgentDB } from "./agent-db.js";
export { pushConfigs, tasks } from "./schema.js";
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
