import { drizzle, type DrizzleSqliteDODatabase } from "drizzle-orm/durable-sqlite";
import { migrate } from "drizzle-orm/durable-sqlite/migrator";
import migrations from "../../migrations/migrations.js";
import { TaskStore } from "./task-store.js";

/** The core tables of an agent Durable Object, migrated before first use. */
export class AgentDB {
  readonly db: DrizzleSqliteDODatabase;
  readonly tasks: TaskStore;

  constructor(storage: DurableObjectStorage, now?: () => number) {
    this.db = drizzle(storage);
    this.tasks = new TaskStore(this.db, now);
  }

  /** Applies core migrations; idempotent, and cheap once applied. */
  migrate(): Promise<void> {
    return migrate(this.db, migrations);
  }
}
