import { PROGRESS_EXTENSION } from "../../a2a/progress.js";
import type { StatusUpdateJson, StreamEventJson, TaskStatusJson } from "../../boundary/index.js";
import { agentMessage, taskOf } from "../../boundary/task-status.js";
import type { AgentDB } from "../../db/agent-db.js";
import type { ProgressPushes } from "./pushes.js";
import type { ProgressSink } from "./recorder.js";

/** Past this many progress events a task gets no more: its status message alone keeps the latest (docs/protocol.md "Progress"). */
const MAX_PROGRESS_EVENTS = 256;

const WORKING = "TASK_STATE_WORKING";

/**
 * Where a round's snapshots go: the working task's status (every reader sees
 * the latest in `status.message`, and it never joins the history) and its
 * progress event, under the extension's URI in both; each event goes to the
 * push configs that activated progress (but `held`). A task no longer working takes
 * nothing, and `stopped` is told.
 */
export function progressOutlet(options: {
  db: Pick<AgentDB, "tasks" | "events" | "pushConfigs" | "writeProgress">;
  taskId: string;
  pushes: ProgressPushes;
  /** Configs an earlier push is still pending at: nothing later goes to them before it. */
  held?: readonly string[];
  stopped: () => void;
}): ProgressSink {
  const { db, taskId, pushes } = options;
  // Counted once, when the first snapshot is written: a round with none reads nothing.
  let events: number | undefined;
  return ({ text, payload }) => {
    const row = db.tasks.get(taskId);
    if (row?.state !== WORKING) return options.stopped();
    const task = taskOf(row);
    const now = Date.now();
    const metadata = { [PROGRESS_EXTENSION]: payload };
    const status: TaskStatusJson = { state: WORKING, message: { ...agentMessage(task, text), metadata }, timestamp: new Date(now).toISOString() };
    const statusUpdate: StatusUpdateJson = { taskId, contextId: task.contextId, status, metadata };
    events ??= db.events.count(taskId, "progress");
    const event = events < MAX_PROGRESS_EVENTS ? { kind: "progress" as const, json: JSON.stringify({ statusUpdate } satisfies StreamEventJson) } : undefined;
    const written = db.writeProgress({ id: taskId, state: WORKING, statusAt: now, json: JSON.stringify({ ...task, status }) }, event);
    if (!written.written) return options.stopped();
    if (!written.row) return;
    events++;
    const configs = db.pushConfigs.all(taskId).filter((config) => config.progress === 1 && !options.held?.includes(config.id));
    if (configs.length)
      pushes.offer(
        written.row.seq,
        { statusUpdate },
        configs.map((config) => ({ id: config.id, config: JSON.parse(config.configJson) })),
      );
  };
}
