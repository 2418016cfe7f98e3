import { DurableObject } from "cloudflare:workers";
import { settle, type Outcome } from "../a2a/outcome.js";
import { AgentDB } from "../db/agent-db.js";
import type { TaskAgentRpc } from "./task-agent-rpc.js";
import type {
  BeginTaskInput,
  BeginTaskResult,
  ListTasksPage,
  ListTasksQuery,
  SaveVerdict,
  TaskJson,
} from "../db/task-store.js";

/**
 * The Durable Object of one verified caller of one tenant: it owns that
 * caller's tasks. The edge reaches it only after the caller's token verified,
 * and only under the caller's own `identity.key`, so another caller's task is
 * simply not in this table.
 */
export class TaskAgent<Env = unknown> extends DurableObject<Env> implements TaskAgentRpc {
  protected readonly agentDb: AgentDB;

  constructor(ctx: DurableObjectState, env: Env) {
    super(ctx, env);
    this.agentDb = new AgentDB(ctx.storage);
    // Input gates hold every RPC until this resolves: no call sees a table
    // that is not there yet.
    void ctx.blockConcurrencyWhile(() => this.agentDb.migrate());
  }

  /** Records the `submitted` task of a turn, or returns the one already recorded for this `messageId`. */
  async beginTask(input: BeginTaskInput): Promise<Outcome<BeginTaskResult>> {
    return settle(() => this.agentDb.tasks.begin(input));
  }

  async getTask(taskId: string, historyLength?: number): Promise<TaskJson | null> {
    return this.agentDb.tasks.get(taskId, historyLength);
  }

  /** Refuses (and says so) once the task is terminal. */
  async saveTask(task: TaskJson): Promise<SaveVerdict> {
    return this.agentDb.tasks.save(task);
  }

  async cancelTask(taskId: string): Promise<Outcome<TaskJson>> {
    return settle(() => this.agentDb.tasks.cancel(taskId));
  }

  async listTasks(query: ListTasksQuery): Promise<Outcome<ListTasksPage>> {
    return settle(() => this.agentDb.tasks.list(query));
  }
}
