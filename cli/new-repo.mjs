// `dynamicagents new DIR`: a new repository of agents. It writes the starter
// (wrangler.jsonc, the Worker, its env, the tenant registry, the turn
// Workflow, the policy's words, the test config and harness helpers, a README),
// its package.json, a .dev.vars for `npm start`, and then its first tenant
// exactly as `dynamicagents add-tenant` would.
import { existsSync, readdirSync, writeFileSync } from "node:fs";
import { basename, join, resolve } from "node:path";
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

/**
 * @param {{ dir: string, tenant?: string, core?: string }} options
 * @returns {Promise<{ root: string, tenant: string }>}
 */
export async function createRepository({ dir, tenant = "assistant", core }) {
  tenantNames(tenant); // refused before anything is written
  const root = resolve(dir);
  if (existsSync(root) && readdirSync(root).length > 0) throw new Error(`${dir} exists and is not empty`);
  const name = workerName(basename(root));
  const files = renderTree("starter", root, { __worker__: name });
  // A tarball given relative to here means here, not the new repository: npm reads `file:` from the package.json's folder.
  const spec = core?.startsWith("file:") ? `file:${resolve(core.slice("file:".length))}` : core;
  files.push([join(root, "package.json"), starterPackage({ name, core: spec })]);
  writeFiles(files);
  // `npm start`'s Worker: its own signing key, and the local gatekeeper's origin. Git-ignored, for you alone.
  const key = JSON.stringify(await freshSigningJwk());
  writeFileSync(join(root, ".dev.vars"), `A2A_SIGNING_KEY='${key}'\nGATEKEEPER_ORIGINS='["http://127.0.0.1:8790"]'\n`, { mode: 0o600 });
  addTenant({ root, tenant });
  return { root, tenant };
}
