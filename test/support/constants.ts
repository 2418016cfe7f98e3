export const ORIGIN = "https://agents.test";
export const ENDPOINT = `${ORIGIN}/a2a`;
export const GATEKEEPER = "https://gatekeeper.test";
export const OTHER_GATEKEEPER = "https://other-gatekeeper.test";
export const GATEKEEPER_JWKS = `${GATEKEEPER}/.well-known/jwks.json`;
export const PUSH_URL = `${GATEKEEPER}/a2a/notifications`;
export const TENANT_CLAIM = "https://dynamicagents.dev/tenant";
export const IDENTITY_CLAIM = "https://dynamicagents.dev/identity";
