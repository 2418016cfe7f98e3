import { env } from "cloudflare:workers";
import { introspectWorkflow, type WorkflowIntrospector } from "cloudflare:test";
import { afterEach, beforeEach } from "vitest";
import { interceptOutbound, type Outbound } from "./outbound.js";

export interface TurnHarness {
  /** The turn Workflow's instances started by the current spec. */
  workflows: WorkflowIntrospector;
  /** The faked network of the current spec. */
  outbound: Outbound;
}

/**
 * Per spec: the turn Workflow introspected with its sleeps and retry backoff
 * disabled (real time in production, only slowness here) and the network
 * intercepted. Read the fields inside a spec, after `beforeEach` ran.
 */
export function useTurnHarness(setup?: (harness: TurnHarness) => void, workflow: () => Workflow = () => env.TURN_WORKFLOW): TurnHarness {
  const harness = {} as TurnHarness;
  beforeEach(async () => {
    harness.workflows = await introspectWorkflow(workflow());
    await harness.workflows.modifyAll(async (m) => {
      await m.disableSleeps();
      await m.disableRetryDelays();
    });
    harness.outbound = interceptOutbound();
    setup?.(harness);
  });
  afterEach(async () => {
    try {
      // Throws if a push was not exactly a StreamResponse (src/testing/wire-round-trip.ts).
      harness.outbound.restore();
    } finally {
      await harness.workflows.dispose();
    }
  });
  return harness;
}

/** The same, for the specs' own agents (test/support/agents.ts) on their own turn Workflow, reached through {@link markerEdge}. */
export const useMarkerHarness = (setup?: (harness: TurnHarness) => void) => useTurnHarness(setup, () => env.MARKER_WORKFLOW!);
