import type { Outcome } from "../a2a/outcome.js";
import type {
  BeginTaskInput,
  BeginTaskResult,
  ListTasksPage,
  ListTasksQuery,
  PushConfigJson,
  SaveVerdict,
  TaskJson,
} from "../db/task-store.js";

/**
 * The task-lifecycle RPC surface the edge calls on an agent Durable Object,
 * stated structurally so the edge never imports an agent's class. `TaskAgent`
 * implements it, so the two cannot drift apart.
 */
export interface TaskAgentRpc {
  beginTask(input: BeginTaskInput & { tenant: string; origin: string }): Promise<Outcome<BeginTaskResult>>;
  getTask(taskId: string, historyLength?: number): Promise<TaskJson | null>;
  saveTask(task: TaskJson): Promise<SaveVerdict>;
  cancelTask(taskId: string): Promise<Outcome<TaskJson>>;
  listTasks(query: ListTasksQuery): Promise<Outcome<ListTasksPage>>;
  putPushConfig(taskId: string, config: PushConfigJson): Promise<Outcome<PushConfigJson>>;
  getPushConfig(taskId: string, id: string): Promise<Outcome<PushConfigJson>>;
  listPushConfigs(taskId: string): Promise<Outcome<PushConfigJson[]>>;
  deletePushConfig(taskId: string, id: string): Promise<Outcome<null>>;
}
