import { and, eq, isNull, ne, sql } from "drizzle-orm";
import type { DrizzleSqliteDODatabase } from "drizzle-orm/durable-sqlite";
import { onFirstUse } from "./on-first-use.js";
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

const requestId = sql.placeholder("requestId");
const taskId = sql.placeholder("taskId");

/** Requests to the human behind a caller, as rows; the first answer wins. */
export class HitlStore {
  constructor(
    private readonly db: DrizzleSqliteDODatabase,
    private readonly now: () => number = Date.now,
  ) {}

  // Read by every round: built once, on first use (drizzle's query building costs more than the query).
  readonly #open = onFirstUse(() =>
    this.db
      .insert(hitlRequests)
      .values({
        requestId,
        taskId,
        round: sql.placeholder("round"),
        requestJson: sql.placeholder("requestJson"),
        targetJson: sql.placeholder("targetJson"),
        expiresAt: sql.placeholder("expiresAt"),
        status: "open",
        createdAt: sql.placeholder("at"),
      })
      .onConflictDoNothing()
      .prepare(),
  );
  readonly #get = onFirstUse(() => this.db.select().from(hitlRequests).where(eq(hitlRequests.requestId, requestId)).prepare());
  readonly #openOf = onFirstUse(() =>
    this.db
      .select()
      .from(hitlRequests)
      .where(and(eq(hitlRequests.taskId, taskId), eq(hitlRequests.status, "open")))
      .prepare(),
  );
  readonly #settle = onFirstUse(() =>
    this.db
      .update(hitlRequests)
      .set({ status: sql`${sql.placeholder("status")}`, answerJson: sql`${sql.placeholder("answerJson")}` })
      .where(and(eq(hitlRequests.requestId, requestId), eq(hitlRequests.status, "open")))
      .returning()
      .prepare(),
  );
  readonly #resumed = onFirstUse(() =>
    this.db
      .update(hitlRequests)
      .set({ resumedAt: sql`${sql.placeholder("at")}` })
      .where(and(eq(hitlRequests.requestId, requestId), ne(hitlRequests.status, "open"), isNull(hitlRequests.resumedAt)))
      .prepare(),
  );
  readonly #unresumed = onFirstUse(() =>
    this.db
      .select()
      .from(hitlRequests)
      .where(and(ne(hitlRequests.status, "open"), isNull(hitlRequests.resumedAt)))
      .prepare(),
  );
  readonly #ofRound = onFirstUse(() =>
    this.db
      .select()
      .from(hitlRequests)
      .where(and(eq(hitlRequests.taskId, taskId), eq(hitlRequests.round, sql.placeholder("round"))))
      .prepare(),
  );

  /** Records a request; idempotent on its id (a re-run round asks the same question). `undefined`: its task is gone (erased). */
  open(request: NewHitlRequest): HitlRow | undefined {
    this.#open().run({
      requestId: request.requestId,
      taskId: request.taskId,
      round: request.round,
      requestJson: JSON.stringify(request.request),
      targetJson: JSON.stringify(request.target),
      expiresAt: request.expiresAt,
      at: this.now(),
    });
    return this.get(request.requestId);
  }

  get(requestId: string): HitlRow | undefined {
    return this.#get().get({ requestId });
  }

  /** The task's request still waiting for an answer, if any. */
  openOf(taskId: string): HitlRow | undefined {
    return this.#openOf().get({ taskId });
  }

  /** Settles an open request (answered, expired, canceled), first come first served, in one statement. */
  settle(requestId: string, status: "answered" | "expired" | "canceled", answer: unknown): SettleVerdict {
    const settled = this.#settle().get({ requestId, status, answerJson: JSON.stringify(answer ?? null) });
    if (settled) return { kind: "settled", row: settled };
    const row = this.get(requestId);
    return row ? { kind: "already", row } : { kind: "missing" };
  }

  /** The turn's Workflow took the settlement in: it needs no more waking. */
  resumed(requestId: string): void {
    this.#resumed().run({ requestId, at: this.now() });
  }

  /** Settled requests whose turn has not taken them in yet (its wake was lost): the object wakes them again. */
  unresumed(): HitlRow[] {
    return this.#unresumed().all();
  }

  /** The task's settled request for `round` that the round has not resumed through yet. */
  ofRound(taskId: string, round: number): HitlRow[] {
    return this.#ofRound().all({ taskId, round });
  }
}
