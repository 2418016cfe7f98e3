import { invalidParams, taskNotCancelable, taskNotFound } from "../a2a/errors.js";
import { accepted, refused, settle, type TaskJson, type TaskListPage, type TaskListQuery, type TaskQuery, type Verdict } from "../boundary/index.js";
import { agentMessage, taskOf, withState } from "../boundary/task-status.js";
import type { AgentDB } from "../db/agent-db.js";
import type { HitlRow } from "../db/hitl-store.js";
import type { ObjectParts } from "./lifecycle.js";
import { writeStatus } from "./task-events.js";
import { shapeTask } from "./task-wire.js";
import { wake } from "./turn-workflows.js";

/** The task as a reply shows it, with its artifacts. */
export function getTask(db: AgentDB, query: TaskQuery): Verdict<TaskJson> {
  const row = db.tasks.get(query.taskId);
  if (!row) return refused(taskNotFound(query.taskId));
  return accepted(shapeTask(taskOf(row), { historyLength: query.historyLength, includeArtifacts: true }));
}

/** The caller's tasks: read, listed, canceled. */
export class Tasks {
  constructor(
    private readonly parts: ObjectParts,
    /** Aborts the round a turn of the task runs in this instance now, if any. */
    private readonly abortRound: (taskId: string) => void,
  ) {}

  get(query: TaskQuery): Verdict<TaskJson> {
    return getTask(this.parts.db, query);
  }

  list(query: TaskListQuery): Verdict<TaskListPage> {
    const { contextId, state, statusAfter, pageSize, pageToken } = query;
    const page = this.parts.db.tasks.page({ contextId, state, statusAfter, limit: pageSize, pageToken });
    if (page.kind === "bad-page-token") {
      return refused(invalidParams("pageToken is not a token this server issued: pass the nextPageToken of a previous ListTasks reply"));
    }
    return accepted({ tasks: page.rows.map((row) => shapeTask(taskOf(row), query)), nextPageToken: page.nextPageToken, pageSize, totalSize: page.total });
  }

  /**
   * Cancels a task that is not terminal, and stops its work: the running
   * round's model call and tools are aborted, a wait for a human ends, and
   * nothing of the turn stays in the conversation. Idempotent: a canceled
   * task is returned as it is; another terminal one is -32002.
   */
  async cancel(taskId: string): Promise<Verdict<TaskJson>> {
    const { db, events, agent } = this.parts;
    let parked: HitlRow | undefined;
    const verdict = settle(() => {
      const row = db.tasks.get(taskId);
      if (!row) throw taskNotFound(taskId);
      const task = taskOf(row);
      if (row.state === "TASK_STATE_CANCELED") return task;
      if (db.tasks.isFinal(row.state)) throw taskNotCancelable(taskId, row.state);
      const now = Date.now();
      const canceled = withState(task, "TASK_STATE_CANCELED", now, agentMessage(task, agent.words().canceled));
      if (writeStatus(db, canceled, now).kind !== "written") throw taskNotFound(taskId);
      events.emit("task.canceled", taskId, { from: row.state }, ["canceled"], { contextId: row.contextId });
      db.conversations.discard(taskId);
      const open = db.hitl.openOf(taskId);
      if (open && db.hitl.settle(open.requestId, "canceled", { outcome: "canceled" }).kind === "settled") parked = open;
      this.abortRound(taskId);
      agent.canceled(taskId);
      return canceled;
    });
    if (parked) await wake(this.parts, parked);
    return verdict;
  }
}
