import { drizzle, type DrizzleSqliteDODatabase } from "drizzle-orm/durable-sqlite";
import { migrate } from "drizzle-orm/durable-sqlite/migrator";
import migrations from "../../migrations/migrations.js";
import { ConversationStore } from "./conversation-store.js";
import { DirectReplyStore } from "./direct-replies.js";
import { eraseRows, type EraseHooks } from "./erase-rows.js";
import { ErasureStore, type ErasureRecord } from "./erasure-store.js";
import { HitlStore } from "./hitl-store.js";
import { PriorSends } from "./prior-sends.js";
import { PushConfigStore } from "./push-config-store.js";
import { RedeliveryQueue } from "./redelivery-queue.js";
import { SubtaskStore } from "./subtask-store.js";
import { TaskEventLog, type NewTaskEvent, type TaskEventRow } from "./task-event-log.js";
import { TaskStore, type NewPushConfig, type NewTask, type TaskWrite, type WriteVerdict } from "./task-store.js";
import { ToolJournal } from "./tool-journal.js";
import { TurnLedger } from "./turn-ledger.js";
import { UsageStore, type Usage } from "./usage-store.js";

/** A status write's verdict: written with the `seq` of its event, or refused as the task store says. */
export type StatusWriteVerdict = { kind: "written"; seq: number } | Exclude<WriteVerdict, { kind: "written" }>;

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
  readonly events: TaskEventLog;
  readonly directReplies: DirectReplyStore;
  readonly redeliveries: RedeliveryQueue;
  readonly usage: UsageStore;
  readonly priorSends: PriorSends;
  readonly erasures: ErasureStore;

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
    this.events = new TaskEventLog(this.db, now);
    this.directReplies = new DirectReplyStore(this.db, now);
    this.redeliveries = new RedeliveryQueue(this.db, now);
    this.usage = new UsageStore(this.db, now);
    this.erasures = new ErasureStore(this.db, now);
    this.priorSends = new PriorSends(this.db);
    this.#now = now ?? Date.now;
  }

  readonly #now: () => number;
  #appended: (row: TaskEventRow) => void = () => {};

  /** Called with each event once it is stored (the object's live streams and waiters hang here). */
  onEventAppended(listener: (row: TaskEventRow) => void): void {
    this.#appended = listener;
  }

  /** A new task and its first event, together (see `TaskStore.insert`). */
  insertTask(task: NewTask, event: NewTaskEvent, pushConfig?: NewPushConfig): void {
    const row = this.db.transaction(() => {
      this.tasks.insert(task, pushConfig);
      return this.events.append(task.id, event);
    });
    if (row) this.#appended(row);
  }

  /**
   * Counts the model calls a subtask's subagent reported (all of them so far,
   * in order) past those counted before, in its task's turn and today's total,
   * together; returns how many were counted before. A run answered again from
   * the subagent's record reports the same calls, and nothing is counted twice.
   */
  countSubtaskCalls(subtaskId: string, taskId: string, calls: readonly Omit<Usage, "modelCalls">[]): number {
    return this.db.transaction(() => {
      const counted = this.subtasks.get(subtaskId)?.modelCalls;
      // A subtask erased meanwhile has no turn left to count in.
      if (counted === undefined || calls.length <= counted) return calls.length;
      const fresh = calls.slice(counted);
      this.subtasks.countCalls(subtaskId, calls.length);
      this.usage.record(taskId, {
        inputTokens: fresh.reduce((sum, call) => sum + call.inputTokens, 0),
        outputTokens: fresh.reduce((sum, call) => sum + call.outputTokens, 0),
        modelCalls: fresh.length,
        cachedInputTokens: fresh.reduce((sum, call) => sum + (call.cachedInputTokens ?? 0), 0),
        reasoningTokens: fresh.reduce((sum, call) => sum + (call.reasoningTokens ?? 0), 0),
      });
      return counted;
    });
  }

  /** A task's guarded write and its event, together: the event exists exactly when the write happened (its `seq` is the verdict's). */
  writeTask(task: TaskWrite, event: NewTaskEvent): StatusWriteVerdict {
    let appended: TaskEventRow | undefined;
    const verdict = this.db.transaction((): StatusWriteVerdict => {
      const written = this.tasks.write(task);
      if (written.kind !== "written") return written;
      appended = this.events.append(task.id, event);
      // The task was just written, so the event's guard lets it in.
      return { kind: "written", seq: appended!.seq };
    });
    if (appended) this.#appended(appended);
    return verdict;
  }

  /**
   * A working task's progress: its document (the status message showing the
   * latest progress) and, unless `event` is absent (past the task's cap), its
   * progress event, together; nothing once the task left `task.state`.
   * Returns whether the task was written, and the event's row.
   */
  writeProgress(task: TaskWrite, event: NewTaskEvent | undefined): { written: boolean; row?: TaskEventRow } {
    const row = this.db.transaction(() => {
      if (!this.tasks.restate(task)) return false;
      return event ? this.events.append(task.id, event) : undefined;
    });
    if (row) this.#appended(row);
    return row === false ? { written: false } : { written: true, ...(row ? { row } : {}) };
  }

  /** An event that changes no status (an artifact chunk); none for a task that is gone. */
  appendEvent(taskId: string, event: NewTaskEvent): void {
    const row = this.events.append(taskId, event);
    if (row) this.#appended(row);
  }

  /**
   * The rows phase of an erasure (`eraseRows`): the record as it ends, in
   * `cleanup`. Under the object's `blockConcurrencyWhile`, after the scope's
   * `messageId` hashes were read (`erasures.hashesOf`).
   */
  eraseRows(record: ErasureRecord, hashes: ReadonlyMap<string, string>, hooks: EraseHooks): ErasureRecord {
    return eraseRows(this.db, this.erasures, record, hashes, hooks, this.#now());
  }

  /** Applies core migrations; idempotent, and cheap once applied. */
  migrate(): Promise<void> {
    return migrate(this.db, migrations);
  }
}
