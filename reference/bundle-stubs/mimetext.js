// Stands in for `mimetext` in the reference bundle (wrangler.jsonc `alias`):
// the agents SDK's e-mail replies (`replyToEmail`) are its only user, and this
// deployment sends no e-mail. Leaving it out drops it and what it pulls in
// (mime-types, a Babel runtime and core-js polyfills for what workerd has)
// and keeps the Worker under its size budget (scripts/check/bundle-size.mjs).
export function createMimeMessage() {
  throw new Error("this deployment sends no e-mail: mimetext is not bundled (wrangler.jsonc alias)");
}
