// Stands in for `@ai-sdk/gateway` in the reference bundle (wrangler.jsonc `alias`).
// `ai` reaches that provider only for a model named by a string; this
// deployment always hands `ai` a provider's model object (src/agent/providers.ts),
// so the gateway is never called, and leaving it out keeps the Worker under
// its size budget (scripts/check/bundle-size.mjs). Its errors are never seen.
class NeverRaised extends Error {
  static isInstance() {
    return false;
  }
}
export const GatewayError = NeverRaised;
export const GatewayAuthenticationError = NeverRaised;
const unavailable = () => {
  throw new Error("this deployment names no model by string: the AI Gateway provider is not bundled (wrangler.jsonc alias)");
};
export const createGateway = unavailable;
export const gateway = new Proxy(unavailable, { get: () => unavailable });
