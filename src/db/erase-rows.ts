import { and, asc, eq, inArray, notInArray, or, sql, type SQL } from "drizzle-orm";
import type { DrizzleSqliteDODatabase } from "drizzle-orm/durable-sqlite";
import type { SQLiteTable } from "drizzle-orm/sqlite-core";
import type { ErasedCounts, ErasureRecord, ErasureStore } from "./erasure-store.js";
import { idSlices } from "./id-slices.js";
import {
  conversationEntries,
  conversationState,
  hitlRequests,
  pushConfigs,
  redeliveries,
  rounds,
  subtasks,
  taskCounts,
  taskEvents,
  taskTotals,
  tasks,
  toolCalls,
  turns,
  usageDays,
} from "./schema.js";
import { DAY_MS, usageDay } from "./usage-store.js";

/** What a plugin store is handed to erase: a context and some of its tasks (each batch's; none in the last), or the whole caller. */
export type StoreErasureScope = { kind: "context"; contextId: string; taskIds: readonly string[] } | { kind: "caller" };

/** What the rows phase asks of the agent, synchronously, inside each batch's transaction. */
export interface EraseHooks {
  /** Which of these subtasks still have a subagent (a facet): they are deleted in the cleanup. */
  subagentsOf(subtaskIds: readonly string[]): string[];
  /** The plugins' stores erase their rows of `scope`; how many went. */
  plugins(scope: StoreErasureScope): number;
}

/** Tasks erased per transaction. */
const BATCH = 100;

/**
 * The rows phase of an erasure: the scope's tasks, a batch per transaction,
 * with everything keyed by them (events, push configs, the turn record,
 * rounds, subtasks, the journal, requests to a human, conversation entries,
 * `messageId` records, whose hashes stay), then what is the scope's without
 * a task: its conversations' rest and summaries, `messageId`s retention left,
 * direct replies, and for the caller everything else but today's and
 * yesterday's token totals. Each batch saves the record with it, and what
 * of the scope lives outside the tables (open turns' instances, subagents)
 * for the cleanup; the last one moves the record to `cleanup`. Synchronous
 * from start to end: no call sees the scope half erased. `hashes`: from
 * `ErasureStore.hashesOf`.
 */
export function eraseRows(
  db: DrizzleSqliteDODatabase,
  store: ErasureStore,
  record: ErasureRecord,
  hashes: ReadonlyMap<string, string>,
  hooks: EraseHooks,
  now: number,
): ErasureRecord {
  const { scope } = record;
  const counts: ErasedCounts = { ...record.counts };
  const pending = { instances: [...record.pending.instances], subagents: [...record.pending.subagents] };
  const inScope = scope.kind === "context" ? eq(tasks.contextId, scope.contextId) : undefined;
  for (;;) {
    const last = db.transaction(() => {
      const ids = db
        .select({ id: tasks.id })
        .from(tasks)
        .where(inScope)
        .orderBy(asc(tasks.id))
        .limit(BATCH)
        .all()
        .map((row) => row.id);
      const conversations = new Set<string>();
      for (const slice of idSlices(ids)) {
        pending.instances.push(
          ...db
            .select({ id: turns.instanceId })
            .from(turns)
            .where(inArray(turns.taskId, slice))
            .all()
            .map((r) => r.id),
        );
        const subtaskIds = db.select({ id: subtasks.id }).from(subtasks).where(inArray(subtasks.taskId, slice)).all();
        pending.subagents.push(...hooks.subagentsOf(subtaskIds.map((r) => r.id)));
        const touched = db
          .selectDistinct({ id: conversationEntries.conversationId })
          .from(conversationEntries)
          .where(inArray(conversationEntries.taskId, slice))
          .all();
        for (const row of touched) conversations.add(row.id);
        counts.events += deleted(db, taskEvents, inArray(taskEvents.taskId, slice));
        counts.toolCalls += deleted(db, toolCalls, inArray(toolCalls.taskId, slice));
        counts.hitlRequests += deleted(db, hitlRequests, inArray(hitlRequests.taskId, slice));
        counts.messages += deleted(db, conversationEntries, inArray(conversationEntries.taskId, slice));
        counts.pushConfigs += deleted(db, pushConfigs, inArray(pushConfigs.taskId, slice));
        db.delete(redeliveries).where(inArray(redeliveries.taskId, slice)).run();
        db.delete(rounds).where(inArray(rounds.taskId, slice)).run();
        db.delete(subtasks).where(inArray(subtasks.taskId, slice)).run();
        db.delete(turns).where(inArray(turns.taskId, slice)).run();
      }
      store.forgetTaskMessages(ids, hashes);
      for (const slice of idSlices(ids)) counts.tasks += deleted(db, tasks, inArray(tasks.id, slice));
      // A summary may hold the erased words (the caller's conversation, in its mode): it goes, and its conversation starts over from what is left.
      counts.messages += dropSummaries(db, [...conversations]);
      if (scope.kind === "context") counts.plugins += hooks.plugins({ kind: "context", contextId: scope.contextId, taskIds: ids });
      const done = ids.length < BATCH;
      if (done) {
        if (scope.kind === "context") counts.messages += eraseContextRest(db, scope.contextId);
        else {
          counts.plugins += hooks.plugins({ kind: "caller" });
          counts.messages += eraseCallerRest(db, now);
        }
        store.forgetLeftovers(scope, hashes);
      }
      const saved: ErasureRecord = { ...record, state: done ? "cleanup" : "rows", counts: { ...counts }, pending: { ...pending } };
      store.save(saved);
      return done ? saved : undefined;
    });
    if (last) return last;
  }
}

/** Deletes the rows `where` selects; how many. */
function deleted(db: DrizzleSqliteDODatabase, table: SQLiteTable, where: SQL | undefined): number {
  return db.delete(table).where(where).returning({ one: sql<number>`1` }).all().length;
}

/** The summaries of these conversations and their state (the summary's place, the lease); how many summaries. */
function dropSummaries(db: DrizzleSqliteDODatabase, conversations: readonly string[]): number {
  let dropped = 0;
  for (const slice of idSlices(conversations)) {
    dropped += deleted(db, conversationEntries, and(inArray(conversationEntries.conversationId, slice), eq(conversationEntries.kind, "summary")));
    db.delete(conversationState).where(inArray(conversationState.conversationId, slice)).run();
  }
  return dropped;
}

/**
 * A context's rows without a task: the entries of its tasks retention took
 * (by the context each was written with), the conversation named after it
 * (its summary too), and the summaries of the conversations those entries
 * were in. How many entries.
 */
function eraseContextRest(db: DrizzleSqliteDODatabase, contextId: string): number {
  const conversations = db
    .selectDistinct({ id: conversationEntries.conversationId })
    .from(conversationEntries)
    .where(eq(conversationEntries.contextId, contextId))
    .all()
    .map((row) => row.id);
  const entries = deleted(db, conversationEntries, or(eq(conversationEntries.contextId, contextId), eq(conversationEntries.conversationId, contextId)));
  db.delete(conversationState).where(eq(conversationState.conversationId, contextId)).run();
  return entries + dropSummaries(db, conversations);
}

/**
 * The caller's rows without a task: every conversation, and the day totals
 * but today's and yesterday's (counts, so a spent budget stays spent); the
 * task counts that are 0. How many entries.
 */
function eraseCallerRest(db: DrizzleSqliteDODatabase, now: number): number {
  const entries = deleted(db, conversationEntries, undefined);
  db.delete(conversationState).run();
  db.delete(usageDays)
    .where(notInArray(usageDays.day, [usageDay(now), usageDay(now - DAY_MS)]))
    .run();
  db.delete(taskCounts).where(sql`${taskCounts.n} <= 0`).run();
  db.delete(taskTotals).where(sql`${taskTotals.n} <= 0`).run();
  return entries;
}
