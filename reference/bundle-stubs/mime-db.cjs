// Stands in for `mime-db` in the reference bundle (wrangler.jsonc `alias`):
// the agents SDK's e-mail replies (mimetext → mime-types) are its only user,
// and this deployment sends no e-mail. An empty database keeps mime-types
// loading as before; leaving the 200 KB table out keeps the Worker under its
// size budget (scripts/check/bundle-size.mjs).
module.exports = {};
