import { jwksUrlOf } from "../../src/a2a/wire.js";

export const ORIGIN = "https://agents.test";
export const ENDPOINT = `${ORIGIN}/a2a`;
export const GATEKEEPER = "https://gatekeeper.test";
export const OTHER_GATEKEEPER = "https://other-gatekeeper.test";
/** The third origin in the test pool's GATEKEEPER_ORIGINS: a gatekeeper on loopback. */
export const LOOPBACK_GATEKEEPER = "http://127.0.0.1:9999";
export const GATEKEEPER_JWKS = jwksUrlOf(GATEKEEPER);
export const PUSH_URL = `${GATEKEEPER}/a2a/notifications`;
export { IDENTITY_CLAIM, TENANT_CLAIM } from "../../src/a2a/wire.js";
