import { ConfigError, DynamicAgentsError } from "../errors/index.js";
import type { TurnToStart } from "../boundary/index.js";
import type { EdgeEnv } from "./options.js";

/** The default `startTurn`: the turn's instance of `env.TURN_WORKFLOW`. */
export async function startOnTurnWorkflow(turn: TurnToStart, env: EdgeEnv): Promise<void> {
  const workflow = env.TURN_WORKFLOW;
  if (!workflow) {
    throw new ConfigError({ kind: "binding", name: "TURN_WORKFLOW" }, "no TURN_WORKFLOW binding and no startTurn option", {
      code: ConfigError.MISSING,
    });
  }
  try {
    await workflow.create({ id: turn.instanceId, params: turn.params });
  } catch (error) {
    // Already there (the object's reconciler, or a concurrent retry, got
    // there first) counts as started; asking is how we tell, not the message.
    await workflow.get(turn.instanceId).catch(() => {
      throw error;
    });
  }
}

/**
 * Runs `start` past the reply. A failure is logged with the instance id and
 * the error, never the turn's params; the object's alarm restarts an
 * instance that never appeared.
 */
export function startInBackground(ctx: { waitUntil(promise: Promise<unknown>): void }, turn: TurnToStart, start: () => Promise<void>): void {
  ctx.waitUntil(
    start().catch((error: unknown) => {
      const what =
        error instanceof DynamicAgentsError
          ? `${error.name} ${error.code}: ${error.message}`
          : error instanceof Error
            ? `${error.name}: ${error.message}`
            : "a non-Error value";
      console.error(`a2a edge: turn ${turn.instanceId} did not start (the caller's object will retry it): ${what}`);
    }),
  );
}
