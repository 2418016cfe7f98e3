import { eq } from "drizzle-orm";
import type { DrizzleSqliteDODatabase } from "drizzle-orm/durable-sqlite";
import { ConfigError } from "../errors/index.js";
import type { StoreErasureScope } from "./erase-rows.js";
import { pluginMigrations } from "./schema.js";

/** A set of tables owned by one plugin (the plugin contract's `PluginStore`). */
export interface OwnedTables {
  plugin: string;
  version: number;
  ensureTables(sql: SqlStorage, fromVersion: number): void;
  /** Deletes the store's rows of `scope`; how many went. Absent: the store's rows are reported kept (`unerasedRows`). */
  erase?(sql: SqlStorage, scope: StoreErasureScope): number;
}

/** The tables each store's DDL creates, as seen when it ran at this object's start. */
const tablesOf = new WeakMap<OwnedTables, Set<string>>();
const CREATE_TABLE = /\bcreate\s+table\s+(?:if\s+not\s+exists\s+)?[`"[]?([\w$]+)/gi;

/**
 * Runs every plugin store's idempotent DDL with the version last recorded for
 * it, then records the current one. Runs at each start of the object, inside
 * its start-up gate. A store older than what the object already holds is a
 * downgrade, refused at start rather than run against tables it does not know.
 * The tables its DDL creates are noted: a store that cannot erase is reported
 * with their rows.
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
    const tables = new Set<string>();
    tablesOf.set(store, tables);
    const watched = new Proxy(sql, {
      get(target, prop) {
        if (prop !== "exec") {
          const value: unknown = Reflect.get(target, prop, target);
          return typeof value === "function" ? value.bind(target) : value;
        }
        return (query: string, ...bindings: unknown[]) => {
          for (const [, name] of query.matchAll(CREATE_TABLE)) tables.add(name!);
          return target.exec(query, ...bindings);
        };
      },
    });
    store.ensureTables(watched, recorded);
    if (recorded !== store.version) {
      db.insert(pluginMigrations)
        .values({ plugin: store.plugin, version: store.version, updatedAt: now })
        .onConflictDoUpdate({ target: pluginMigrations.plugin, set: { version: store.version, updatedAt: now } })
        .run();
    }
  }
}

/**
 * Every store with an erasure hook erases its rows of `scope` (inside the
 * erasure's batch); how many rows went. One whose hook throws is logged and
 * named in `failed`: its rows are reported kept.
 */
export function eraseStores(sql: SqlStorage, stores: readonly OwnedTables[], scope: StoreErasureScope, failed: Set<string>): number {
  let erased = 0;
  for (const store of stores) {
    if (!store.erase || failed.has(store.plugin)) continue;
    try {
      erased += store.erase(sql, scope);
    } catch (error) {
      console.error(`plugin store ${store.plugin}: its erasure hook failed; its rows are reported kept`, error);
      failed.add(store.plugin);
    }
  }
  return erased;
}

/** The stores an erasure could not erase (no hook, or one that failed), each with the rows its tables hold. */
export function unerasedRows(sql: SqlStorage, stores: readonly OwnedTables[], failed: ReadonlySet<string>): { plugin: string; rows: number }[] {
  return stores
    .filter((store) => !store.erase || failed.has(store.plugin))
    .map((store) => {
      let rows = 0;
      for (const table of tablesOf.get(store) ?? []) rows += Number(sql.exec<{ n: number }>(`SELECT count(*) AS n FROM "${table}"`).one().n);
      return { plugin: store.plugin, rows };
    });
}
