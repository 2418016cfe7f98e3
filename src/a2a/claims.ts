/** Private claim names the gatekeeper mints (docs/protocol.md "The gatekeeper token"). */
export const TENANT_CLAIM = "https://dynamicagents.dev/tenant";
export const IDENTITY_CLAIM = "https://dynamicagents.dev/identity";

/** Who is calling, as the gatekeeper vouches for it. `key` picks the Durable Object. */
export interface GatekeeperIdentity {
  key: string;
  name?: string;
  kind?: string;
  workspaceId?: string;
}
