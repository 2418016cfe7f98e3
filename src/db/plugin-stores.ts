import { eq } from "drizzle-orm";
import type { DrizzleSqliteDODatabase } from "drizzle-orm/durable-sqlite";
import type { PluginStore } from "../plugin/contract.js";
import { pluginMigrations } from "./schema.js";

/**
 * Runs every plugin store's idempotent DDL with the version last recorded for
 * it, then records the current one. Runs at each start of the object, inside
 * its start-up gate. A store older than what the object already holds is a
 * downgrade, refused with a sentence rather than run against tables it does
 * not know.
 */
export function ensurePluginStores(db: DrizzleSqliteDODatabase, sql: SqlStorage, stores: readonly PluginStore[], now = Date.now()): void {
  for (const store of stores) {
    const recorded = db.select().from(pluginMigrations).where(eq(pluginMigrations.plugin, store.plugin)).get()?.version ?? 0;
    if (recorded > store.version) {
      throw new Error(
        `Plugin store ${JSON.stringify(store.plugin)} is at version ${store.version}, but this object's tables are already at version ${recorded}: a downgrade is not supported`,
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
