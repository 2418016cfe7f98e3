import { WorkflowEntrypoint, type WorkflowEvent, type WorkflowStep, type WorkflowStepConfig } from "cloudflare:workers";
import { loadGatekeeperOrigins } from "../a2a/gatekeeper-origins.js";
import { loadSigningKey } from "../a2a/signing-key.js";
import { isTerminalName } from "../a2a/task-state.js";
import type { AgentNamespace, TurnObject, TurnParams } from "../boundary/index.js";
import { deliverPush } from "./push-delivery.js";

/** The model call: a couple of retries for a crashed isolate; the fallback model is tried inside. */
const RUN_STEP: WorkflowStepConfig = { retries: { limit: 2, delay: "5 seconds", backoff: "exponential" }, timeout: "10 minutes" };
/** A webhook that is down gets exponential backoff (2 s, 4 s, … about 34 minutes in all) before the instance errors. */
const DELIVER_STEP = { retries: { limit: 10, delay: 2_000, backoff: "exponential" }, timeout: "30 seconds" } satisfies WorkflowStepConfig;
/** The wait before the retry that follows attempt `attempt` of DELIVER_STEP. */
const deliveryBackoffMs = (attempt: number) => DELIVER_STEP.retries.delay * 2 ** Math.max(0, attempt - 1);
/** A progress push is best effort: one attempt, and its failure is swallowed. */
const PROGRESS_STEP: WorkflowStepConfig = { retries: { limit: 0, delay: "1 second" }, timeout: "30 seconds" };
/** A guard against a turn that never ends; the agent's own round budget is far below it. */
const MAX_ROUNDS = 64;
/** A guard against a turn that asks forever. */
const MAX_PARKS = 64;
/** How long past a request's expiry the Workflow waits for the object's event before asking it itself. */
const WAIT_MARGIN_MS = 10 * 60_000;
const QUICK_STEP: WorkflowStepConfig = { retries: { limit: 5, delay: "1 second", backoff: "exponential" }, timeout: "30 seconds" };

/**
 * The durable turn: mark working, run the tenant's turn in the caller's
 * Durable Object, make the guarded terminal write, announce the result to
 * every push config. Each side effect is its own step, so a retry of a later
 * step never repeats an earlier one; a task canceled meanwhile is announced
 * as canceled because the terminal write says it was refused.
 */
export abstract class TurnWorkflowBase<Env extends { A2A_SIGNING_KEY?: string; GATEKEEPER_ORIGINS?: string }> extends WorkflowEntrypoint<Env, TurnParams> {
  /** The namespace holding `tenant`'s agents. */
  protected abstract agentNamespace(tenant: string): AgentNamespace;

  override async run(event: Readonly<WorkflowEvent<TurnParams>>, step: WorkflowStep): Promise<{ state: string }> {
    const turn = event.payload;
    // The stub, seen through the boundary's interface: plain verdicts, typed.
    const agent = (): TurnObject => {
      const namespace = this.agentNamespace(turn.tenant);
      return namespace.get(namespace.idFromString(turn.agentId));
    };

    // Step names are stable across deploys: an instance in flight replays its
    // finished steps by name, so a renamed step would run twice.
    const started = await step.do("start", QUICK_STEP, () => agent().turnStarted(turn.taskId, turn.origin));
    let state = started.ok ? started.value.state : "TASK_STATE_UNSPECIFIED";
    // Waits for a human so far in this turn; each has steps of its own.
    let parks = 0;
    // Whether this run of the round follows a wait: it then has a name of its own.
    let afterPark = false;
    for (let round = 1; started.ok && started.value.proceed && round <= MAX_ROUNDS && parks <= MAX_PARKS; ) {
      // Each round is its own step (a retry of round 3 never re-runs rounds 1
      // and 2), and so is each run of a round after a wait for a human.
      const name = afterPark ? `run round ${round} after ${parks}` : round === 1 ? "run" : `run round ${round}`;
      const ran = await step.do(name, RUN_STEP, () => agent().runTurn(turn.taskId, turn.origin, round));
      if (!ran.ok) break;
      const result = ran.value;
      if (result.kind === "ended") {
        state = result.state;
        break;
      }
      if (result.kind === "done") {
        const verdict = await step.do("save", QUICK_STEP, () => agent().finishTurn(turn.taskId));
        if (verdict.ok) state = verdict.value.state;
        break;
      }
      if (result.kind === "interrupted") {
        // Parked: announce it, wait for the object's event (answered, expired,
        // canceled), tell what came of it, and run the same round again.
        parks++;
        await step.do(`ask ${parks}`, QUICK_STEP, () => this.#announce(agent(), turn));
        try {
          await step.waitForEvent(`answer ${parks}`, { type: result.eventType, timeout: Math.max(60_000, result.expiresAt - Date.now() + WAIT_MARGIN_MS) });
        } catch {
          // Timed out: the object decides what that means (it expires the request).
        }
        const resumed = await step.do(`resume ${parks}`, QUICK_STEP, () => agent().turnResumed(turn.taskId, result.requestId));
        if (resumed.ok && resumed.value.announce) await step.do(`resumed ${parks}`, PROGRESS_STEP, () => this.#announce(agent(), turn));
        afterPark = true;
        continue;
      }
      if (result.announce) await step.do(`progress ${round}`, PROGRESS_STEP, () => this.#announce(agent(), turn));
      round++;
      afterPark = false;
    }
    // No turn is announced in between: one that ran out of rounds (or came
    // back neither terminal nor interrupted) is failed first.
    if (started.ok && started.value.proceed && !isTerminalName(state)) {
      const verdict = await step.do("unfinished", QUICK_STEP, () => agent().endUnfinished(turn.taskId));
      if (verdict.ok) state = verdict.value.state;
    }

    const delivery = await step.do("targets", QUICK_STEP, async () => {
      const found = await agent().deliveryOf(turn.taskId);
      return found.ok ? found.value.configs.map((config) => String(config.id)) : [];
    });
    for (const configId of delivery) {
      await step.do(`deliver ${configId}`, DELIVER_STEP, async (ctx) => {
        const found = await agent().deliveryOf(turn.taskId);
        const config = found.ok ? found.value.configs.find((c) => c.id === configId) : undefined;
        // Deleted since: nobody is waiting at that URL any more.
        if (!found.ok || !config) return { skipped: true };
        try {
          return await deliverPush({
            config,
            body: { task: found.value.task },
            seq: found.value.status.seq,
            key: await loadSigningKey(this.env.A2A_SIGNING_KEY),
            origin: turn.origin,
            allowlist: this.#gatekeeperOrigins(),
          });
        } catch (error) {
          // In backoff is alive: the object waits for the next attempt before calling the turn lost.
          await agent().turnProgress(turn.taskId, deliveryBackoffMs(ctx.attempt));
          throw error;
        }
      });
    }
    await step.do("delivered", QUICK_STEP, () => agent().turnDelivered(turn.taskId));
    return { state };
  }

  /**
   * The gatekeepers trusted now, read at every delivery rather than when the
   * turn began: an origin removed from `GATEKEEPER_ORIGINS` meanwhile is no
   * longer called (the SSRF rule of docs/protocol.md "SendMessage").
   */
  #gatekeeperOrigins(): ReadonlySet<string> {
    return loadGatekeeperOrigins(this.env.GATEKEEPER_ORIGINS);
  }

  /**
   * The task's latest status event (progress, waiting for a human) as a
   * `statusUpdate` to every push config, once each; a failure is logged,
   * never thrown. Nothing is announced once the task is terminal: no progress
   * follows a cancel.
   */
  async #announce(agent: TurnObject, turn: TurnParams): Promise<{ sent: number }> {
    let sent = 0;
    try {
      const verdict = await agent.deliveryOf(turn.taskId);
      if (!verdict.ok || isTerminalName(verdict.value.task.status.state)) return { sent };
      const found = verdict.value;
      const { seq, statusUpdate } = found.status;
      const key = await loadSigningKey(this.env.A2A_SIGNING_KEY);
      const allowlist = this.#gatekeeperOrigins();
      for (const config of found.configs) {
        try {
          if ("status" in (await deliverPush({ config, body: { statusUpdate }, seq, key, origin: turn.origin, allowlist }))) sent++;
        } catch (error) {
          console.warn(`status push for ${turn.taskId} failed (best effort)`, error);
        }
      }
    } catch (error) {
      console.warn(`status of ${turn.taskId} could not be announced (best effort)`, error);
    }
    return { sent };
  }
}
