/** Where this deployment answers (docs/protocol.md "Wire"): JSON-RPC, the stub card, the JWKS. */
export const A2A_PATH = "/a2a";
export const CARD_PATH = "/.well-known/agent-card.json";
export const JWKS_PATH = "/.well-known/jwks.json";

/** The endpoint a token for the deployment at `origin` is minted for: `aud` compares to exactly this. */
export const endpointOf = (origin: string): string => `${origin}${A2A_PATH}`;

/**
 * Whether a `Content-Type` names JSON: `application/json` or any
 * `application/*+json` (RFC 6839 §3.1), parameters and case ignored.
 */
export function isJsonMediaType(contentType: string | null | undefined): boolean {
  const essence = (contentType ?? "").split(";", 1)[0]!.trim().toLowerCase();
  return essence === "application/json" || /^application\/[!#$&^_.+\-a-z0-9]+\+json$/.test(essence);
}
