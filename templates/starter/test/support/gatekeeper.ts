import { GATEKEEPER_FIXTURE_JWK, interceptGatekeeper, publicHalf } from "@dynamicagents/core/testing";

/**
 * Plays the gatekeeper for one spec, until disposed (`using`): serves its key
 * set and takes the pushes. `respond` answers any other request the Worker
 * makes first (the fake model of ./model.ts). createAgentHarness signs as this
 * gatekeeper by default, and vitest.config.ts trusts it (GATEKEEPER_ORIGINS).
 */
export const playGatekeeper = (respond?: (request: Request) => Promise<Response | undefined>) =>
  interceptGatekeeper({ gatekeeper: "https://gatekeeper.test", jwks: [publicHalf(GATEKEEPER_FIXTURE_JWK)], respond });
