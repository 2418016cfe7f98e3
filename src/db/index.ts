export { AgentDB } from "./agent-db.js";
export { ensurePluginStores, type OwnedTables } from "./plugin-stores.js";
export { pluginMigrations, pushConfigs, rounds, subtasks, tasks, turns } from "./schema.js";
export { PushConfigStore, type PushConfigRow, type PutVerdict } from "./push-config-store.js";
export { SubtaskStore, type DelegateVerdict, type NewSubtask, type RoundDecision, type SubtaskRow, type SubtaskStatus } from "./subtask-store.js";
export { TaskStore, type NewTask, type TaskPage, type TaskPageQuery, type TaskRow, type TaskWrite, type WriteVerdict } from "./task-store.js";
export { TurnLedger, type TurnRow } from "./turn-ledger.js";
