import { index, integer, primaryKey, sqliteTable, text, uniqueIndex } from "drizzle-orm/sqlite-core";

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
    /** When a delivery of this task was last given up (epoch ms): retention keeps the task a day past it. */
    deadLetterAt: integer("dead_letter_at"),
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
    /** What the message was (a digest), so a retry that differs is told apart; absent on rows older than it. */
    fingerprint: text("fingerprint"),
    /** Its task's context, read from the task as the row is written: a context's erasure finds it after retention took the task. */
    contextId: text("context_id"),
  },
  (t) => [index("accepted_messages_by_time").on(t.acceptedAt)],
);

/**
 * How many tasks each (context, state) holds, kept by triggers on `tasks`
 * (migrations/0005, 0010): ListTasks' total for a context is a sum over its
 * rows, not a scan. A row at 0 (a state its tasks passed through) stays until
 * one of the context's tasks is deleted, so a context holds at most a row per
 * state, and one whose tasks are all gone holds none.
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

/**
 * How many tasks each state holds over every context, kept by the same
 * triggers (migrations/0010): ListTasks' total without a context is a sum over
 * a row per state, however many contexts the caller has.
 */
export const taskTotals = sqliteTable("task_totals", {
  state: text("state").primaryKey(),
  n: integer("n").notNull(),
});

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
    /** 1 when the request that set it activated progress: it is sent progress events (docs/protocol.md "Progress"). */
    progress: integer("progress").notNull().default(0),
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
    /** What the turn's model calls cost so far (every run of every round): the task's usage at its terminal write. */
    inputTokens: integer("input_tokens").notNull().default(0),
    outputTokens: integer("output_tokens").notNull().default(0),
    modelCalls: integer("model_calls").notNull().default(0),
    /** Of those input tokens, the ones the provider served from its cache; of the output tokens, the ones spent reasoning. */
    cachedInputTokens: integer("cached_input_tokens").notNull().default(0),
    reasoningTokens: integer("reasoning_tokens").notNull().default(0),
  },
  (t) => [index("turns_by_progress").on(t.progressAt)],
);

/**
 * This caller's model usage per UTC day: what a daily token budget is held
 * against. One row a day; old days are kept as the caller's history (a few
 * bytes each).
 */
export const usageDays = sqliteTable("usage_days", {
  /** `YYYY-MM-DD`, UTC. */
  day: text("day").primaryKey(),
  inputTokens: integer("input_tokens").notNull().default(0),
  outputTokens: integer("output_tokens").notNull().default(0),
  modelCalls: integer("model_calls").notNull().default(0),
  cachedInputTokens: integer("cached_input_tokens").notNull().default(0),
  reasoningTokens: integer("reasoning_tokens").notNull().default(0),
});

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
    /** pending | running | waiting | done | failed | unstarted | canceled */
    status: text("status").notNull(),
    resultJson: text("result_json"),
    error: text("error"),
    /** How many of its subagent's model calls (in order) are counted in the turn's and the caller's usage: a call is counted once. */
    modelCalls: integer("model_calls").notNull().default(0),
    createdAt: integer("created_at").notNull(),
    updatedAt: integer("updated_at").notNull(),
  },
  (t) => [index("subtasks_by_task").on(t.taskId, t.round)],
);

/**
 * The conversations of this caller: one per A2A context (or one for the
 * caller, when the agent opts in). Each entry is one model message (the
 * user's, the model's, a tool result) of one task's turn; a turn's entries
 * are `committed` once the turn ends, so a concurrent turn never reads
 * another's in-flight messages. A compaction summary is an entry too.
 */
export const conversationEntries = sqliteTable(
  "conversation_entries",
  {
    id: integer("id").primaryKey({ autoIncrement: true }),
    conversationId: text("conversation_id").notNull(),
    taskId: text("task_id").notNull(),
    /** Idempotency of an append: a re-run step writes the same keys. */
    entryKey: text("entry_key").notNull().unique(),
    /** `message` or `summary`. */
    kind: text("kind").notNull(),
    /** The message in its model form (the `ai` SDK's ModelMessage). */
    messageJson: text("message_json").notNull(),
    /** A rough token count (bytes / 4), for the window and compaction. */
    tokens: integer("tokens").notNull(),
    committed: integer("committed").notNull().default(0),
    createdAt: integer("created_at").notNull(),
    /** The task's context, read from the task as the entry is written (none on a summary): a context's erasure finds its words after retention took the task. */
    contextId: text("context_id"),
  },
  (t) => [index("conversation_entries_window").on(t.conversationId, t.committed, t.id), index("conversation_entries_by_task").on(t.taskId)],
);

/** Per conversation: where its summary is, and who is compacting it (a lease, so at most one at a time). */
export const conversationState = sqliteTable("conversation_state", {
  conversationId: text("conversation_id").primaryKey(),
  /** The latest summary entry; the window reads only what came after what it folded. */
  summaryEntryId: integer("summary_entry_id"),
  /** The last entry the summary folded. */
  foldedThrough: integer("folded_through").notNull().default(0),
  /** Epoch ms until which a compaction holds the lease. */
  compactingUntil: integer("compacting_until").notNull().default(0),
});

/**
 * The tool-call journal: every tool call of a turn and its (redacted) result,
 * recorded before the model continues. A re-run of the same call (a retried
 * step, the fallback model) gets the recorded result; one that started and
 * never finished is reported as interrupted, never run again.
 */
export const toolCalls = sqliteTable(
  "tool_calls",
  {
    taskId: text("task_id").notNull(),
    /** Of (round, resume point, tool, canonical input, occurrence). */
    callKey: text("call_key").notNull(),
    toolName: text("tool_name").notNull(),
    /** `started` | `finished` */
    status: text("status").notNull(),
    outputJson: text("output_json"),
    startedAt: integer("started_at").notNull(),
    finishedAt: integer("finished_at"),
  },
  (t) => [primaryKey({ columns: [t.taskId, t.callKey] })],
);

/**
 * A question to the human behind the caller (human in the loop): the object
 * owns it, its first answer wins, and its expiry is the object's own alarm.
 */
export const hitlRequests = sqliteTable(
  "hitl_requests",
  {
    requestId: text("request_id").primaryKey(),
    taskId: text("task_id").notNull(),
    round: integer("round").notNull(),
    /** The wire request (kind, prompt, options, expiry) as announced. */
    requestJson: text("request_json").notNull(),
    /** What the answer resolves: the model's tool call or approval request, or a subagent's question. */
    targetJson: text("target_json").notNull(),
    expiresAt: integer("expires_at").notNull(),
    /** `open` | `answered` | `expired` | `canceled` */
    status: text("status").notNull(),
    answerJson: text("answer_json"),
    /** When the turn's Workflow took the settlement in (`turnResumed`); until then the object keeps waking it. */
    resumedAt: integer("resumed_at"),
    createdAt: integer("created_at").notNull(),
  },
  (t) => [index("hitl_requests_by_task").on(t.taskId, t.status)],
);

/**
 * Every event of a task, in order: its status changes and its artifact
 * chunks, as the wire JSON the streams and pushes send. `seq` counts per task
 * from 1; `id` orders all of this object's events, so what is new since a
 * moment is one range read.
 */
export const taskEvents = sqliteTable(
  "task_events",
  {
    id: integer("id").primaryKey({ autoIncrement: true }),
    taskId: text("task_id").notNull(),
    seq: integer("seq").notNull(),
    /** `status` | `artifact` | `progress` (a working status that only streams and configs activating progress are sent) */
    kind: text("kind").notNull(),
    eventJson: text("event_json").notNull(),
    createdAt: integer("created_at").notNull(),
  },
  (t) => [uniqueIndex("task_events_by_seq").on(t.taskId, t.seq)],
);

/** Sends an agent answered with a message instead of a task: a retry of the `messageId` gets the same message. */
export const directReplies = sqliteTable(
  "direct_replies",
  {
    messageId: text("message_id").primaryKey(),
    replyJson: text("reply_json").notNull(),
    createdAt: integer("created_at").notNull(),
    /** The digest of the message answered; absent on rows older than it. */
    fingerprint: text("fingerprint"),
  },
  (t) => [index("direct_replies_by_time").on(t.createdAt)],
);

/**
 * Push configs set on a task that has dead letters, each waiting to be sent
 * those events once (`seqs`, in order). A re-delivery turn takes them.
 */
export const redeliveries = sqliteTable(
  "redeliveries",
  {
    taskId: text("task_id")
      .notNull()
      .references(() => tasks.id, { onDelete: "cascade" }),
    configId: text("config_id").notNull(),
    seqsJson: text("seqs_json").notNull(),
    createdAt: integer("created_at").notNull(),
  },
  (t) => [primaryKey({ columns: [t.taskId, t.configId] })],
);

/**
 * An erasure under way (docs/retention.md): written first, deleted last, so
 * one a reset cut short is finished on the object's next wake. `contextId`
 * null: the whole caller.
 */
export const erasures = sqliteTable("erasures", {
  id: integer("id").primaryKey(),
  contextId: text("context_id"),
  /** `rows` (its rows are being deleted) | `cleanup` (rows gone; Workflow instances, subagents and plugins' state left). */
  state: text("state").notNull(),
  /** What it erased so far (`ErasedCounts`), written with each batch. */
  countsJson: text("counts_json").notNull(),
  /** What lives outside these tables and goes in the cleanup: open turns' instances, subagents, requests' expiry schedules. */
  pendingJson: text("pending_json").notNull(),
  startedAt: integer("started_at").notNull(),
});

/**
 * Keyed hashes of erased `messageId`s (HMAC under `erasure_key`): a retry of
 * one starts nothing, and the hash names no message to anyone without the
 * key. Kept as the `messageId` would have been (`retention.messageIdDays`
 * from `acceptedAt`).
 */
export const erasedMessages = sqliteTable(
  "erased_messages",
  {
    hash: text("hash").primaryKey(),
    acceptedAt: integer("accepted_at").notNull(),
  },
  (t) => [index("erased_messages_by_time").on(t.acceptedAt)],
);

/** The object's own HMAC key for erased `messageId`s: one row, made at its first erasure (a key rotation of the deployment's cannot orphan the hashes). */
export const erasureKey = sqliteTable("erasure_key", {
  id: integer("id").primaryKey(),
  secret: text("secret").notNull(),
});
