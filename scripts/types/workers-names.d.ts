// The Workers' type names that src/ modules loaded by the Node tooling mention
// (the package's own subpaths, imported by test/node/), for tsconfig.tools.json:
// taken one by one from @cloudflare/workers-types, so that the rest of the
// program keeps Node's globals (its URL, fetch and streams), not the Workers'.
// Node itself has these at run time, or the code never touches them there.
type CryptoKey = import("node:crypto").webcrypto.CryptoKey;
type SqlStorage = import("@cloudflare/workers-types").SqlStorage;
type DurableObjectStorage = import("@cloudflare/workers-types").DurableObjectStorage;
type Ai = import("@cloudflare/workers-types").Ai;
