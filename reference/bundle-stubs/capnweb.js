// Stands in for `capnweb` in the reference bundle (wrangler.jsonc `alias`).
// The agents SDK starts a Cap'n Web session only for a WebSocket upgrade that
// reaches an agent object's `fetch` asking for it (`?__agents_transport=capnweb`).
// This deployment's objects are reached by RPC alone: the edge answers every
// request itself and never forwards one to an object's `fetch`
// (test/bundle-stubs.spec.ts), so no session is ever started. Leaving it out
// keeps the Worker under its size budget (scripts/check/bundle-size.mjs).
export function newWebSocketRpcSession() {
  throw new Error("this deployment takes no WebSocket connections: capnweb is not bundled (wrangler.jsonc alias)");
}
