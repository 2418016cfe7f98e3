import { asc, eq, inArray, isNull, lt, or, sql } from "drizzle-orm";
import type { DrizzleSqliteDODatabase } from "drizzle-orm/durable-sqlite";
import { idSlices } from "./id-slices.js";
import { acceptedMessages, directReplies, erasedMessages, erasureKey, erasures, tasks } from "./schema.js";

/** What an erasure covers: one context of the caller, or the whole caller (docs/retention.md "Erasure"). */
export type ErasureScope = { kind: "context"; contextId: string } | { kind: "caller" };

/** What an erasure removed, as its answer counts it. */
export interface ErasedCounts {
  tasks: number;
  events: number;
  messages: number;
  toolCalls: number;
  hitlRequests: number;
  pushConfigs: number;
  subagents: number;
  plugins: number;
}

/** What of the scope lives outside these tables, found before its rows go: the cleanup's work. */
interface ErasurePending {
  /** Workflow instances of the scope's open turns: terminated. */
  instances: string[];
  /** Subtasks whose subagent (a facet) still exists: deleted with its storage. */
  subagents: string[];
}

/** An erasure under way, as its record holds it. */
export interface ErasureRecord {
  id: number;
  scope: ErasureScope;
  state: "rows" | "cleanup";
  counts: ErasedCounts;
  pending: ErasurePending;
  startedAt: number;
}

const NOTHING_ERASED: ErasedCounts = { tasks: 0, events: 0, messages: 0, toolCalls: 0, hitlRequests: 0, pushConfigs: 0, subagents: 0, plugins: 0 };
const NOTHING_PENDING: ErasurePending = { instances: [], subagents: [] };

type RecordRow = typeof erasures.$inferSelect;
const recordOf = (row: RecordRow): ErasureRecord => ({
  id: row.id,
  scope: row.contextId === null ? { kind: "caller" } : { kind: "context", contextId: row.contextId },
  state: row.state === "cleanup" ? "cleanup" : "rows",
  counts: JSON.parse(row.countsJson) as ErasedCounts,
  pending: JSON.parse(row.pendingJson) as ErasurePending,
  startedAt: row.startedAt,
});

const encoder = new TextEncoder();
const hex = (bytes: ArrayBuffer) => [...new Uint8Array(bytes)].map((b) => b.toString(16).padStart(2, "0")).join("");

/**
 * The erasures of one caller's object: their records (written first, deleted
 * last, so a reset mid-way finishes on the next wake) and the keyed hashes of
 * erased `messageId`s, which a retry is checked against. The key is the
 * object's own, made at its first erasure; an object that never erased has
 * none, and hashes nothing.
 */
export class ErasureStore {
  #key: Promise<CryptoKey | undefined> | undefined;

  constructor(
    private readonly db: DrizzleSqliteDODatabase,
    private readonly now: () => number = Date.now,
  ) {}

  /** The erasures a reset cut short, oldest first. */
  running(): ErasureRecord[] {
    return this.db.select().from(erasures).orderBy(asc(erasures.id)).all().map(recordOf);
  }

  /** The record of an erasure of `scope`: the one under way, or a new one. */
  begin(scope: ErasureScope): ErasureRecord {
    const contextId = scope.kind === "context" ? scope.contextId : null;
    const existing = this.db
      .select()
      .from(erasures)
      .where(contextId === null ? isNull(erasures.contextId) : eq(erasures.contextId, contextId))
      .get();
    if (existing) return recordOf(existing);
    const row = this.db
      .insert(erasures)
      .values({ contextId, state: "rows", countsJson: JSON.stringify(NOTHING_ERASED), pendingJson: JSON.stringify(NOTHING_PENDING), startedAt: this.now() })
      .returning()
      .get();
    return recordOf(row);
  }

  /** Writes what the erasure did so far (inside the transaction of the batch that did it). */
  save(record: ErasureRecord): void {
    this.db
      .update(erasures)
      .set({ state: record.state, countsJson: JSON.stringify(record.counts), pendingJson: JSON.stringify(record.pending) })
      .where(eq(erasures.id, record.id))
      .run();
  }

  /** The erasure is over: its record (which names its context) goes. */
  finish(id: number): void {
    this.db.delete(erasures).where(eq(erasures.id, id)).run();
  }

  /**
   * The keyed hash of a `messageId`, as a retry's is compared; "" when this
   * object never erased anything (no hash can equal it).
   */
  async hashOf(messageId: string): Promise<string> {
    const key = await this.#loadKey(false);
    return key ? hex(await crypto.subtle.sign("HMAC", key, encoder.encode(messageId))) : "";
  }

  /**
   * The hashes of every `messageId` the scope's erasure will forget (its
   * tasks' and its direct replies'), keyed by `messageId`, the key made if
   * this is the object's first erasure. Read before its rows go, under the
   * object's `blockConcurrencyWhile`, so no message of the scope is accepted
   * in between.
   */
  async hashesOf(scope: ErasureScope): Promise<Map<string, string>> {
    const key = (await this.#loadKey(true))!;
    const ids = [...this.#acceptedOf(scope).map((row) => row.messageId), ...this.#repliesOf(scope).map((row) => row.messageId)];
    const hashes = new Map<string, string>();
    for (const id of ids) hashes.set(id, hex(await crypto.subtle.sign("HMAC", key, encoder.encode(id))));
    return hashes;
  }

  /**
   * Forgets the scope's `messageId`s that are not a task's any more
   * (retention took it) and its direct replies, keeping their hashes; the
   * tasks' own go with their batch (`forgetTaskMessages`). Returns nothing:
   * these rows are not counted.
   */
  forgetLeftovers(scope: ErasureScope, hashes: ReadonlyMap<string, string>): void {
    const accepted = this.#acceptedOf(scope);
    const replies = this.#repliesOf(scope);
    this.#keepHashes([...accepted.map((r) => ({ id: r.messageId, at: r.acceptedAt })), ...replies.map((r) => ({ id: r.messageId, at: r.createdAt }))], hashes);
    for (const slice of idSlices(accepted.map((r) => r.messageId))) this.db.delete(acceptedMessages).where(inArray(acceptedMessages.messageId, slice)).run();
    for (const slice of idSlices(replies.map((r) => r.messageId))) this.db.delete(directReplies).where(inArray(directReplies.messageId, slice)).run();
  }

  /** The `messageId` records of these tasks go, their hashes stay. */
  forgetTaskMessages(taskIds: readonly string[], hashes: ReadonlyMap<string, string>): void {
    for (const slice of idSlices(taskIds)) {
      const rows = this.db
        .select({ id: acceptedMessages.messageId, at: acceptedMessages.acceptedAt })
        .from(acceptedMessages)
        .where(inArray(acceptedMessages.taskId, slice))
        .all();
      this.#keepHashes(rows, hashes);
      this.db.delete(acceptedMessages).where(inArray(acceptedMessages.taskId, slice)).run();
    }
  }

  /** Retention: forgets up to `limit` hashes of `messageId`s accepted before `before`. Returns how many. */
  forgetHashes(before: number, limit: number): number {
    const hashes = this.db
      .select({ hash: erasedMessages.hash })
      .from(erasedMessages)
      .where(lt(erasedMessages.acceptedAt, before))
      .orderBy(asc(erasedMessages.acceptedAt))
      .limit(limit)
      .all()
      .map((row) => row.hash);
    for (const slice of idSlices(hashes)) this.db.delete(erasedMessages).where(inArray(erasedMessages.hash, slice)).run();
    return hashes.length;
  }

  #keepHashes(rows: readonly { id: string; at: number }[], hashes: ReadonlyMap<string, string>): void {
    for (const { id, at } of rows) {
      const hash = hashes.get(id);
      // Only a message accepted after the hashes were read lacks one: the erasure runs under blockConcurrencyWhile.
      if (!hash) throw new Error("an erased messageId has no hash: the erasure must run under the object's blockConcurrencyWhile");
      this.db.insert(erasedMessages).values({ hash, acceptedAt: at }).onConflictDoNothing().run();
    }
  }

  /** The scope's `messageId` records: every one for the caller; a context's by the context each was written with, or by its task's. */
  #acceptedOf(scope: ErasureScope) {
    const query = this.db.select().from(acceptedMessages);
    if (scope.kind === "caller") return query.all();
    const ofContext = this.db.select({ id: tasks.id }).from(tasks).where(eq(tasks.contextId, scope.contextId));
    return query.where(or(eq(acceptedMessages.contextId, scope.contextId), inArray(acceptedMessages.taskId, ofContext))).all();
  }

  /** The scope's direct replies: every one for the caller; a context's by the context its reply names. */
  #repliesOf(scope: ErasureScope) {
    const query = this.db.select({ messageId: directReplies.messageId, createdAt: directReplies.createdAt }).from(directReplies);
    if (scope.kind === "caller") return query.all();
    return query.where(sql`json_extract(${directReplies.replyJson}, '$.contextId') = ${scope.contextId}`).all();
  }

  /** The object's HMAC key, read once per instance; `make`: created now if it has none (its first erasure). */
  async #loadKey(make: boolean): Promise<CryptoKey | undefined> {
    this.#key ??= this.#import(this.db.select().from(erasureKey).get()?.secret);
    const key = await this.#key;
    if (key || !make) return key;
    // Stored before any hash is made with it; a key another call made meanwhile stands.
    this.db
      .insert(erasureKey)
      .values({ id: 1, secret: hex(crypto.getRandomValues(new Uint8Array(32)).buffer) })
      .onConflictDoNothing()
      .run();
    this.#key = this.#import(this.db.select().from(erasureKey).get()?.secret);
    return this.#key;
  }

  #import(secret: string | undefined): Promise<CryptoKey | undefined> {
    if (!secret) return Promise.resolve(undefined);
    return crypto.subtle.importKey("raw", encoder.encode(secret), { name: "HMAC", hash: "SHA-256" }, false, ["sign"]);
  }
}
