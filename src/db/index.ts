export { AgentDB, type StatusWriteVerdict } from "./agent-db.js";
export { ConversationStore, type ConversationWindow, type EntryRow } from "./conversation-store.js";
export { HitlStore, type HitlRow, type NewHitlRequest, type SettleVerdict } from "./hitl-store.js";
export { ToolJournal, type ToolCallRow } from "./tool-journal.js";
export { ensurePluginStores, type OwnedTables } from "./plugin-stores.js";
export {
  acceptedMessages,
  conversationEntries,
  conversationState,
  hitlRequests,
  pluginMigrations,
  pushConfigs,
  rounds,
  subtasks,
  taskCounts,
  taskTotals,
  tasks,
  toolCalls,
  turns,
  usageDays,
} from "./schema.js";
export { PriorSends, type PriorSend } from "./prior-sends.js";
export { PushConfigStore, type PushConfigRow, type PutVerdict } from "./push-config-store.js";
export { SubtaskStore, type DelegateVerdict, type NewSubtask, type RoundDecision, type SubtaskRow, type SubtaskStatus } from "./subtask-store.js";
export { TaskStore, type NewTask, type TaskPage, type TaskPageQuery, type TaskRow, type TaskWrite, type WriteVerdict } from "./task-store.js";
export { TurnLedger, type TurnRow } from "./turn-ledger.js";
export { UsageStore, usageDay, type Usage } from "./usage-store.js";
