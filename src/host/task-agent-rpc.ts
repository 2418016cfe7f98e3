import type { Outcome } from "../a2a/outcome.js";
import type { BeginTaskInput, BeginTaskResult, ListTasksPage, ListTasksQuery, SaveVerdict, TaskJson } from "../db/task-store.js";

/**
 * The task-lifecycle RPC surface of an agent Durable Object, stated
 * structurally so the edge and the turn Workflow never import an agent's
 * class. `TaskAgent` implements it, so the two cannot drift apart.
 */
export interface TaskAgentRpc {
  beginTask(input: BeginTaskInput): Promise<Outcome<BeginTaskResult>>;
  getTask(taskId: string, historyLength?: number): Promise<TaskJson | null>;
  saveTask(task: TaskJson): Promise<SaveVerdict>;
  cancelTask(taskId: string): Promise<Outcome<TaskJson>>;
  listTasks(query: ListTasksQuery): Promise<Outcome<ListTasksPage>>;
}
