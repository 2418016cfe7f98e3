import { index, integer, primaryKey, sqliteTable, text } from "drizzle-orm/sqlite-core";

/**
 * One row per A2A task of this Durable Object's caller. The full task lives in
 * `task_json` (its wire JSON); the other columns exist to be filtered and
 * ordered on without parsing it.
 */
export const tasks = sqliteTable(
  "tasks",
  {
    id: text("id").primaryKey(),
    /** The `messageId` that created the task: the idempotency key of `SendMessage`. */
    messageId: text("message_id").notNull().unique(),
    contextId: text("context_id").notNull(),
    /** Wire name, e.g. `TASK_STATE_WORKING`. */
    state: text("state").notNull(),
    /** `status.timestamp` in epoch milliseconds; ListTasks orders on it. */
    statusAt: integer("status_at").notNull(),
    createdAt: integer("created_at").notNull(),
    taskJson: text("task_json").notNull(),
  },
  (t) => [index("tasks_by_status_at").on(t.statusAt, t.id), index("tasks_by_context").on(t.contextId, t.statusAt, t.id)],
);

/**
 * Every `messageId` this object accepted, kept longer than its task: a retry
 * after retention deleted the task is TaskNotFound and starts nothing.
 */
export const acceptedMessages = sqliteTable(
  "accepted_messages",
  {
    messageId: text("message_id").primaryKey(),
    taskId: text("task_id").notNull(),
    acceptedAt: integer("accepted_at").notNull(),
  },
  (t) => [index("accepted_messages_by_time").on(t.acceptedAt)],
);

/**
 * How many tasks each (context, state) holds, kept by triggers on `tasks`
 * (migrations/0005): ListTasks' total is a sum over these rows, not a scan.
 */
export const taskCounts = sqliteTable(
  "task_counts",
  {
    contextId: text("context_id").notNull(),
    state: text("state").notNull(),
    n: integer("n").notNull(),
  },
  (t) => [primaryKey({ columns: [t.contextId, t.state] })],
);

/** Push configs per task (A2A §9: a task may have several, each gets every push). */
export const pushConfigs = sqliteTable(
  "push_configs",
  {
    taskId: text("task_id")
      .notNull()
      .references(() => tasks.id, { onDelete: "cascade" }),
    id: text("id").notNull(),
    configJson: text("config_json").notNull(),
    createdAt: integer("created_at").notNull(),
  },
  (t) => [primaryKey({ columns: [t.taskId, t.id] })],
);

/**
 * The turns this Durable Object has handed to the turn Workflow and not yet
 * seen delivered. While any row is here the object keeps an alarm, and the
 * alarm re-drives a Workflow instance that has errored, vanished or stalled.
 */
export const turns = sqliteTable(
  "turns",
  {
    taskId: text("task_id")
      .primaryKey()
      .references(() => tasks.id, { onDelete: "cascade" }),
    instanceId: text("instance_id").notNull(),
    /** The Workflow params, kept so an instance can be created again exactly. */
    paramsJson: text("params_json").notNull(),
    /**
     * The turn's result once the model produced it (wire JSON). A re-driven
     * Workflow that runs the turn step again gets this back instead of a
     * second model call.
     */
    outcomeJson: text("outcome_json"),
    /** How many times the reconciler has re-driven this turn. */
    attempts: integer("attempts").notNull().default(0),
    /** Last time a Workflow step reported in (epoch ms). */
    progressAt: integer("progress_at").notNull(),
    /**
     * When the turn's Workflow must report again (epoch ms), as its last report
     * said: a model call heartbeats it, a delivery in backoff pushes it past its
     * next attempt. A turn silent past it was lost.
     */
    expectedBy: integer("expected_by").notNull().default(0),
    createdAt: integer("created_at").notNull(),
  },
  (t) => [index("turns_by_progress").on(t.progressAt)],
);

/**
 * The version of each plugin store last set up in this object. Plugins stay
 * out of core's migration journal (one flat index space cannot serve
 * independently versioned packages); this row is how their DDL learns what
 * it is upgrading from.
 */
export const pluginMigrations = sqliteTable("plugin_migrations", {
  plugin: text("plugin").primaryKey(),
  version: integer("version").notNull(),
  updatedAt: integer("updated_at").notNull(),
});

/**
 * What the model decided in each round of a delegating turn, recorded before
 * anything it decided runs: a re-run round step reads its decision here
 * instead of asking the model again.
 */
export const rounds = sqliteTable(
  "rounds",
  {
    taskId: text("task_id")
      .notNull()
      .references(() => tasks.id, { onDelete: "cascade" }),
    round: integer("round").notNull(),
    /** `{kind: "delegate"}` or `{kind: "answer", text}`. */
    decisionJson: text("decision_json").notNull(),
    createdAt: integer("created_at").notNull(),
  },
  (t) => [primaryKey({ columns: [t.taskId, t.round] })],
);

/** Durable subtasks, recorded before they run; a finished one never runs again. */
export const subtasks = sqliteTable(
  "subtasks",
  {
    id: text("id").primaryKey(),
    taskId: text("task_id")
      .notNull()
      .references(() => tasks.id, { onDelete: "cascade" }),
    round: integer("round").notNull(),
    /** Position in its round's delegations: results are shown to the model in this order, every time. */
    ordinal: integer("ordinal").notNull().default(0),
    type: text("type").notNull(),
    paramsJson: text("params_json").notNull(),
    /** Of (type, params, recipe version): a finished result is valid for exactly this. */
    fingerprint: text("fingerprint").notNull(),
    /** pending | running | done | failed | canceled */
    status: text("status").notNull(),
    resultJson: text("result_json"),
    error: text("error"),
    createdAt: integer("created_at").notNull(),
    updatedAt: integer("updated_at").notNull(),
  },
  (t) => [index("subtasks_by_task").on(t.taskId, t.round)],
);
