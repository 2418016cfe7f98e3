import { drizzle, type DrizzleSqliteDODatabase } from "drizzle-orm/durable-sqlite";
import { migrate } from "drizzle-orm/durable-sqlite/migrator";
import migrations from "../../migrations/migrations.js";
import { ConversationStore } from "./conversation-store.js";
import { HitlStore } from "./hitl-store.js";
import { PushConfigStore } from "./push-config-store.js";
import { SubtaskStore } from "./subtask-store.js";
import { TaskStore } from "./task-store.js";
import { ToolJournal } from "./tool-journal.js";
import { TurnLedger } from "./turn-ledger.js";

/** The core tables of an agent Durable Object, migrated before first use. */
export class AgentDB {
  readonly db: DrizzleSqliteDODatabase;
  readonly tasks: TaskStore;
  readonly pushConfigs: PushConfigStore;
  readonly turns: TurnLedger;
  readonly subtasks: SubtaskStore;
  readonly conversations: ConversationStore;
  readonly toolCalls: ToolJournal;
  readonly hitl: HitlStore;

  /** `finalStates`: the task states after which a stored task is never written again. */
  constructor(storage: DurableObjectStorage, finalStates: readonly string[], now?: () => number) {
    this.db = drizzle(storage);
    this.tasks = new TaskStore(this.db, finalStates, now);
    this.pushConfigs = new PushConfigStore(this.db, now);
    this.turns = new TurnLedger(this.db, now);
    this.subtasks = new SubtaskStore(this.db, now);
    this.conversations = new ConversationStore(this.db, now);
    this.toolCalls = new ToolJournal(this.db, now);
    this.hitl = new HitlStore(this.db, now);
  }

  /** Applies core migrations; idempotent, and cheap once applied. */
  migrate(): Promise<void> {
    return migrate(this.db, migrations);
  }
}
