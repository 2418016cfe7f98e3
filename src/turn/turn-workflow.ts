import { WorkflowEntrypoint, type WorkflowEvent, type WorkflowStep, type WorkflowStepConfig } from "cloudflare:workers";
import { loadSigningKey } from "../a2a/signing-key.js";
import { deliverPush } from "./push-delivery.js";
import type { TurnAgentRpc, TurnParams } from "./turn-protocol.js";

/** The model call: a couple of retries for a crashed isolate; the fallback model is tried inside. */
const RUN_STEP: WorkflowStepConfig = { retries: { limit: 2, delay: "5 seconds", backoff: "exponential" }, timeout: "10 minutes" };
/** A webhook that is down gets about an hour of exponential backoff before the instance errors. */
const DELIVER_STEP: WorkflowStepConfig = { retries: { limit: 10, delay: "2 seconds", backoff: "exponential" }, timeout: "30 seconds" };
const QUICK_STEP: WorkflowStepConfig = { retries: { limit: 5, delay: "1 second", backoff: "exponential" }, timeout: "30 seconds" };

/**
 * The durable turn: mark working, run the tenant's turn in the caller's
 * Durable Object, make the guarded terminal write, announce the result to
 * every push config. Each side effect is its own step, so a retry of a later
 * step never repeats an earlier one; a task canceled meanwhile is announced
 * as canceled because the terminal write says it was refused.
 */
export abstract class TurnWorkflowBase<Env extends { A2A_SIGNING_KEY?: string }> extends WorkflowEntrypoint<Env, TurnParams> {
  /** The namespace holding `tenant`'s agents. */
  protected abstract agentNamespace(tenant: string): DurableObjectNamespace;

  override async run(event: Readonly<WorkflowEvent<TurnParams>>, step: WorkflowStep): Promise<{ state: string }> {
    const turn = event.payload;
    const agent = () => {
      const namespace = this.agentNamespace(turn.tenant);
      return namespace.get(namespace.idFromString(turn.agentId)) as unknown as TurnAgentRpc;
    };

    const started = await step.do("start", QUICK_STEP, () => agent().turnStarted(turn.taskId, turn.origin));
    let state = started.proceed ? "TASK_STATE_WORKING" : started.state;
    if (started.proceed) {
      const outcome = await step.do("run", RUN_STEP, () => agent().runTurn(turn.taskId, turn.origin));
      if (outcome) {
        const verdict = await step.do("save", QUICK_STEP, () => agent().finishTurn(turn.taskId, outcome));
        state = verdict.state;
      }
    }

    const delivery = await step.do("targets", QUICK_STEP, async () => {
      const found = await agent().deliveryOf(turn.taskId);
      return found ? found.configs.map((config) => String(config.id)) : [];
    });
    for (const configId of delivery) {
      await step.do(`deliver ${configId}`, DELIVER_STEP, async () => {
        const found = await agent().deliveryOf(turn.taskId);
        const config = found?.configs.find((c) => c.id === configId);
        // Deleted since: nobody is waiting at that URL any more.
        if (!found || !config) return { skipped: true };
        try {
          return await deliverPush({
            config,
            body: { task: found.task },
            key: await loadSigningKey(this.env.A2A_SIGNING_KEY),
            origin: turn.origin,
          });
        } catch (error) {
          await agent().turnProgress(turn.taskId);
          throw error;
        }
      });
    }
    await step.do("delivered", QUICK_STEP, () => agent().turnDelivered(turn.taskId));
    return { state };
  }
}
