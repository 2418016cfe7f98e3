import { and, eq, isNull, ne } from "drizzle-orm";
import type { DrizzleSqliteDODatabase } from "drizzle-orm/durable-sqlite";
import { hitlRequests } from "./schema.js";

export type HitlRow = typeof hitlRequests.$inferSelect;

export interface NewHitlRequest {
  requestId: string;
  taskId: string;
  round: number;
  request: unknown;
  target: unknown;
  expiresAt: number;
}

/** How an answer (or an expiry, or a cancel) was taken: the first wins, the others are told. */
export type SettleVerdict = { kind: "settled"; row: HitlRow } | { kind: "already"; row: HitlRow } | { kind: "missing" };

/** Requests to the human behind a caller, as rows; the first answer wins. */
export class HitlStore {
  constructor(
    private readonly db: DrizzleSqliteDODatabase,
    private readonly now: () => number = Date.now,
  ) {}

  /** Records a request; idempotent on its id (a re-run round asks the same question). */
  open(request: NewHitlRequest): HitlRow {
    this.db
      .insert(hitlRequests)
      .values({
        requestId: request.requestId,
        taskId: request.taskId,
        round: request.round,
        requestJson: JSON.stringify(request.request),
        targetJson: JSON.stringify(request.target),
        expiresAt: request.expiresAt,
        status: "open",
        createdAt: this.now(),
      })
      .onConflictDoNothing()
      .run();
    return this.get(request.requestId)!;
  }

  get(requestId: string): HitlRow | undefined {
    return this.db.select().from(hitlRequests).where(eq(hitlRequests.requestId, requestId)).get();
  }

  /** The task's request still waiting for an answer, if any. */
  openOf(taskId: string): HitlRow | undefined {
    return this.db
      .select()
      .from(hitlRequests)
      .where(and(eq(hitlRequests.taskId, taskId), eq(hitlRequests.status, "open")))
      .get();
  }

  /** Settles an open request (answered, expired, canceled), first come first served, in one statement. */
  settle(requestId: string, status: "answered" | "expired" | "canceled", answer: unknown): SettleVerdict {
    const settled = this.db
      .update(hitlRequests)
      .set({ status, answerJson: JSON.stringify(answer ?? null) })
      .where(and(eq(hitlRequests.requestId, requestId), eq(hitlRequests.status, "open")))
      .returning()
      .get();
    if (settled) return { kind: "settled", row: settled };
    const row = this.get(requestId);
    return row ? { kind: "already", row } : { kind: "missing" };
  }

  /** The turn's Workflow took the settlement in: it needs no more waking. */
  resumed(requestId: string): void {
    this.db
      .update(hitlRequests)
      .set({ resumedAt: this.now() })
      .where(and(eq(hitlRequests.requestId, requestId), ne(hitlRequests.status, "open"), isNull(hitlRequests.resumedAt)))
      .run();
  }

  /** Settled requests whose turn has not taken them in yet (its wake was lost): the object wakes them again. */
  unresumed(): HitlRow[] {
    return this.db
      .select()
      .from(hitlRequests)
      .where(and(ne(hitlRequests.status, "open"), isNull(hitlRequests.resumedAt)))
      .all();
  }

  /** The task's settled request for `round` that the round has not resumed through yet. */
  ofRound(taskId: string, round: number): HitlRow[] {
    return this.db
      .select()
      .from(hitlRequests)
      .where(and(eq(hitlRequests.taskId, taskId), eq(hitlRequests.round, round)))
      .all();
  }
}
