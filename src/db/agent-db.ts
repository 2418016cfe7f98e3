import { drizzle, type DrizzleSqliteDODatabase } from "drizzle-orm/durable-sqlite";
import { migrate } from "drizzle-orm/durable-sqlite/migrator";
import migrations from "../../migrations/migrations.js";
import { PushConfigStore } from "./push-config-store.js";
import { SubtaskStore } from "./subtask-store.js";
import { TaskStore } from "./task-store.js";
import { TurnLedger } from "./turn-ledger.js";

/** The core tables of an agent Durable Object, migrated before first use. */
export class AgentDB {
  readonly db: DrizzleSqliteDODatabase;
  readonly tasks: TaskStore;
  readonly pushConfigs: PushConfigStore;
  readonly turns: TurnLedger;
  readonly subtasks: SubtaskStore;

  /** `finalStates`: the task states after which a stored task is never written again. */
  constructor(storage: DurableObjectStorage, finalStates: readonly string[], now?: () => number) {
    this.db = drizzle(storage);
    this.tasks = new TaskStore(this.db, finalStates, now);
    this.pushConfigs = new PushConfigStore(this.db, now);
    this.turns = new TurnLedger(this.db, now);
    this.subtasks = new SubtaskStore(this.db, now);
  }

  /** Applies core migrations; idempotent, and cheap once applied. */
  migrate(): Promise<void> {
    return migrate(this.db, migrations);
  }
}
