// The package.json of a new repository. Every version comes from this
// package's own manifest, so a starter always pins what this release was
// built and tested with: the host SDKs at the lowest version of their peer
// range, the toolchain at this repository's exact pins.
import { readFileSync } from "node:fs";

const own = JSON.parse(readFileSync(new URL("../package.json", import.meta.url), "utf8"));

/**
 * The toolchain a starter needs, pinned as here: node@24 because wrangler needs Node 22+ and npm
 * scripts run on the one in node_modules/.bin; vite exactly, because a newer one pulled in by vitest
 * leaves an optional dependency out of the lockfile and `npm ci` then fails.
 */
const TOOLCHAIN = ["@cloudflare/workers-types", "node", "typescript", "vite", "wrangler"];

/** The lowest version a `^x.y.z` peer range allows. */
function lowestOf(range) {
  const match = /^\^(\d+\.\d+\.\d+)$/.exec(range);
  if (!match) throw new Error(`peer range ${JSON.stringify(range)} is not ^x.y.z`);
  return match[1];
}

const sorted = (entries) => Object.fromEntries(entries.sort(([a], [b]) => a.localeCompare(b)));

/**
 * @param {{ name: string, core?: string }} options `core`: how to depend on this package (a version,
 *   a range, or `file:…/dynamicagents-core-x.y.z.tgz`); default this version exactly
 */
export function starterPackage({ name, core = own.version }) {
  const optional = new Set(Object.keys(own.peerDependenciesMeta ?? {}).filter((peer) => own.peerDependenciesMeta[peer].optional));
  const peers = Object.entries(own.peerDependencies).map(([peer, range]) => [peer, lowestOf(range)]);
  const manifest = {
    name,
    version: "0.1.0",
    private: true,
    type: "module",
    scripts: {
      start: "dynamicagents start",
      check: "tsc --noEmit",
      test: "vitest run",
      deploy: "wrangler deploy",
      keys: "dynamicagents keys",
      "add-tenant": "dynamicagents add-tenant",
    },
    dependencies: sorted([[own.name, core], ...peers.filter(([peer]) => !optional.has(peer))]),
    devDependencies: sorted([...peers.filter(([peer]) => optional.has(peer)), ...TOOLCHAIN.map((tool) => [tool, own.devDependencies[tool]])]),
  };
  return `${JSON.stringify(manifest, null, 2)}\n`;
}
