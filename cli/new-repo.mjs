// `dynamicagents new DIR`: a new repository of agents. It writes the starter
// (wrangler.jsonc, the Worker, its env, the tenant registry, the turn
// Workflow, the policy's words, the test config and harness helpers, a README),
// its package.json, a .dev.vars for `npm start`, and then its first tenant
// exactly as `dynamicagents add-tenant` would.
import { existsSync, readdirSync, writeFileSync } from "node:fs";
import { basename, join, relative, resolve, sep } from "node:path";
import { freshSigningJwk } from "../scripts/keys.mjs";
import { addTenant } from "./add-tenant.mjs";
import { tenantNames } from "./names.mjs";
import { starterPackage } from "./starter-package.mjs";
import { renderTree, writeFiles } from "./templates.mjs";

/** A Worker's and an npm package's name from a folder's: lower case, letters, digits and single hyphens. */
const workerName = (folder) =>
  folder
    .toLowerCase()
    .replace(/[^a-z0-9]+/g, "-")
    .replace(/^-+|-+$/g, "")
    .slice(0, 54) || "agents";

/** A `--core` that names a local package (a tarball or a folder), as npm reads one: `file:…`, a path, or a `.tgz`. */
const LOCAL = /^(?:file:|\.{1,2}(?:[\\/]|$)|[\\/~]|[A-Za-z]:[\\/])|\.(?:tgz|tar\.gz|tar)$/;

/**
 * How the new repository depends on this package. A version or range is written as given. A local
 * package (`file:PATH`, or a bare path such as `./dynamicagents-core-0.1.0.tgz`) is resolved against
 * the folder the command runs in (`cwd`), refused when nothing is there, and written as npm reads it:
 * `file:` and the path from the new repository's folder.
 * @param {string | undefined} core
 * @param {{ cwd: string, root: string }} where
 * @returns {string | undefined}
 */
export function coreDependency(core, { cwd, root }) {
  if (core === undefined || !LOCAL.test(core)) return core;
  const given = core.startsWith("file:") ? core.slice("file:".length) : core;
  const path = resolve(cwd, given);
  if (!existsSync(path)) {
    throw new Error(
      `--core ${core}: ${path} does not exist (a path is read from the folder you run this in, ${cwd}); \`npm pack\` in a clone writes the tarball`,
    );
  }
  return `file:${relative(root, path).split(sep).join("/")}`;
}

/**
 * @param {{ dir: string, tenant?: string, core?: string, cwd?: string }} options
 *   `core`: how to depend on this package (see coreDependency); `cwd`: where a relative path is read from (default here)
 * @returns {Promise<{ root: string, tenant: string, core: string | undefined }>}
 */
export async function createRepository({ dir, tenant = "assistant", core, cwd = process.cwd() }) {
  tenantNames(tenant); // refused before anything is written
  const root = resolve(cwd, dir);
  if (existsSync(root) && readdirSync(root).length > 0) throw new Error(`${dir} exists and is not empty`);
  const spec = coreDependency(core, { cwd, root });
  const name = workerName(basename(root));
  const files = renderTree("starter", root, { __worker__: name });
  files.push([join(root, "package.json"), starterPackage({ name, core: spec })]);
  writeFiles(files);
  // `npm start`'s Worker: its own signing key, and the local gatekeeper's origin. Git-ignored, for you alone.
  const key = JSON.stringify(await freshSigningJwk());
  writeFileSync(join(root, ".dev.vars"), `A2A_SIGNING_KEY='${key}'\nGATEKEEPER_ORIGINS='["http://127.0.0.1:8790"]'\n`, { mode: 0o600 });
  addTenant({ root, tenant });
  return { root, tenant, core: spec };
}
