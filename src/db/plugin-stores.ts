import { eq } from "drizzle-orm";
import type { DrizzleSqliteDODatabase } from "drizzle-orm/durable-sqlite";
import { ConfigError } from "../errors/index.js";
import { pluginMigrations } from "./schema.js";

/** A set of tables owned by one plugin (the plugin contract's `PluginStore`). */
export interface OwnedTables {
  plugin: string;
  version: number;
  ensureTables(sql: SqlStorage, fromVersion: number): void;
}

/**
 * Runs every plugin store's idempotent DDL with the version last recorded for
 * it, then records the current one. Runs at each start of the object, inside
 * its start-up gate. A store older than what the object already holds is a
 * downgrade, refused at start rather than run against tables it does not know.
 */
export function ensurePluginStores(db: DrizzleSqliteDODatabase, sql: SqlStorage, stores: readonly OwnedTables[], now = Date.now()): void {
  for (const store of stores) {
    const recorded = db.select().from(pluginMigrations).where(eq(pluginMigrations.plugin, store.plugin)).get()?.version ?? 0;
    if (recorded > store.version) {
      throw new ConfigError(
        { kind: "plugin", name: store.plugin },
        `Plugin store ${JSON.stringify(store.plugin)} is at version ${store.version}, but this object's tables are already at version ${recorded}: a downgrade is not supported`,
        { code: "ERR_PLUGIN_STORE_DOWNGRADE" },
      );
    }
    store.ensureTables(sql, recorded);
    if (recorded !== store.version) {
      db.insert(pluginMigrations)
        .values({ plugin: store.plugin, version: store.version, updatedAt: now })
        .onConflictDoUpdate({ target: pluginMigrations.plugin, set: { version: store.version, updatedAt: now } })
        .run();
    }
  }
}
