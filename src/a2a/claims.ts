/** Who is calling, as the gatekeeper vouches for it. `key` picks the Durable Object. */
export interface GatekeeperIdentity {
  key: string;
  name?: string;
  kind?: string;
  workspaceId?: string;
}
