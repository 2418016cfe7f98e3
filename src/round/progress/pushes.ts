import { loadGatekeeperOrigins } from "../../a2a/gatekeeper-origins.js";
import { deliverPush, type PushAttempt } from "../../a2a/push-delivery.js";
import { loadSigningKey } from "../../a2a/signing-key.js";
import type { TraceContext } from "../../a2a/trace-context.js";
import type { PushConfigJson, StreamEventJson } from "../../boundary/index.js";
import type { LoopEvents, ProgressPushEnv } from "../deps.js";

interface Ready {
  seq: number;
  body: StreamEventJson;
  config: PushConfigJson;
}

/**
 * A task's progress events as pushes, best effort (docs/protocol.md
 * "Progress"): one attempt each, no retry, no dead letter. A config has at
 * most one attempt in flight; the event ready behind it is replaced by a
 * later one, and the replaced one is superseded. `settle` drops what is still
 * waiting and waits for the attempts in flight: the round's caller pushes
 * what comes next only after it, so nothing reaches a config after a later
 * event did.
 */
export class ProgressPushes {
  readonly #flying = new Map<string, Promise<void>>();
  readonly #waiting = new Map<string, Ready>();

  constructor(
    private readonly deps: { taskId: string; origin: string; env: ProgressPushEnv; events: LoopEvents; trace?: TraceContext; send?: typeof deliverPush },
  ) {}

  /** Event `seq` to each config (`id`, the config) whose request activated progress. */
  offer(seq: number, body: StreamEventJson, configs: readonly { id: string; config: PushConfigJson }[]): void {
    for (const { id, config } of configs) {
      if (!this.#flying.has(id)) {
        this.#fly(id, { seq, body, config });
        continue;
      }
      const replaced = this.#waiting.get(id);
      if (replaced) this.#superseded(id, replaced.seq);
      this.#waiting.set(id, { seq, body, config });
    }
  }

  /** Drops every event still waiting (superseded by what the caller pushes next) and waits for the attempts in flight. */
  async settle(): Promise<void> {
    for (const [id, ready] of this.#waiting) this.#superseded(id, ready.seq);
    this.#waiting.clear();
    await Promise.all(this.#flying.values());
  }

  #fly(id: string, ready: Ready): void {
    const flight = this.#attempt(id, ready).finally(() => {
      this.#flying.delete(id);
      const next = this.#waiting.get(id);
      this.#waiting.delete(id);
      if (next) this.#fly(id, next);
    });
    this.#flying.set(id, flight);
  }

  async #attempt(configId: string, { seq, body, config }: Ready): Promise<void> {
    const { taskId, origin, env, events } = this.deps;
    const began = Date.now();
    let attempt: PushAttempt;
    try {
      attempt = await (this.deps.send ?? deliverPush)({
        config,
        body,
        seq,
        key: await loadSigningKey(env.A2A_SIGNING_KEY),
        origin,
        allowlist: loadGatekeeperOrigins(env.GATEKEEPER_ORIGINS),
        taskId,
        trace: this.deps.trace,
      });
    } catch (error) {
      console.warn(`progress push for ${taskId} failed (best effort)${this.deps.trace ? ` (trace ${this.deps.trace.traceId})` : ""}`, error);
      attempt = { kind: "skipped" };
    }
    const status = "status" in attempt ? attempt.status : 0;
    events.emit("push.attempt", taskId, { configId, seq, attempt: 1, status, outcome: attempt.kind, durationMs: Date.now() - began }, [
      "progress push",
      configId,
      seq,
    ]);
  }

  #superseded(configId: string, seq: number): void {
    this.deps.events.emit("push.superseded", this.deps.taskId, { configId, seq }, ["progress push", configId, seq, "superseded"]);
  }
}
