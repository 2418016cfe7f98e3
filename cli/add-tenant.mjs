// `dynamicagents add-tenant NAME`: a new tenant in an existing repository made
// by `dynamicagents new`. It writes the tenant's folder (agent class, plugin
// skeleton, registration) and spec, and edits exactly two files: wrangler.jsonc
// (the Durable Object binding and its migration) and src/tenants.ts (the
// registration). Everything is worked out before anything is written.
import { existsSync, readFileSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { appendToArray, parseJsonc, plain } from "./jsonc.mjs";
import { placeholders, tenantNames } from "./names.mjs";
import { registerTenant } from "./registry.mjs";
import { renderTree, writeFiles } from "./templates.mjs";

/**
 * @param {{ root: string, tenant: string }} options
 * @returns {{ names: ReturnType<typeof tenantNames>, written: string[], edited: string[] }}
 */
export function addTenant({ root, tenant }) {
  const names = tenantNames(tenant);
  const wranglerPath = join(root, "wrangler.jsonc");
  const registryPath = join(root, "src/tenants.ts");
  for (const path of [wranglerPath, registryPath]) {
    if (!existsSync(path)) throw new Error(`${path} not found: run this in a repository made by \`dynamicagents new\``);
  }

  const wrangler = withAgentClass(readFileSync(wranglerPath, "utf8"), names);
  const registry = registerTenant(readFileSync(registryPath, "utf8"), names);
  const files = renderTree("tenant", root, placeholders(names));

  writeFiles(files);
  writeFileSync(wranglerPath, wrangler);
  writeFileSync(registryPath, registry);
  return { names, written: files.map(([path]) => path), edited: [wranglerPath, registryPath] };
}

/** wrangler.jsonc with the tenant's binding and a migration creating its class (SQLite-backed). */
function withAgentClass(text, { binding, agentClass }) {
  const config = plain(parseJsonc(text));
  const bindings = config.durable_objects?.bindings;
  const migrations = config.migrations;
  if (!Array.isArray(bindings) || !Array.isArray(migrations)) {
    throw new Error('wrangler.jsonc: expected "durable_objects": { "bindings": [...] } and "migrations": [...]');
  }
  const clash = bindings.find((b) => b.name === binding || b.class_name === agentClass);
  if (clash) throw new Error(`wrangler.jsonc already binds ${clash.name} (${clash.class_name})`);
  // The next free `vN`: a deployed migration is never edited, only followed by new ones.
  const tags = new Set(migrations.map((m) => m.tag));
  let n = migrations.length + 1;
  while (tags.has(`v${n}`)) n++;
  const quoted = JSON.stringify(agentClass);
  const withBinding = appendToArray(text, ["durable_objects", "bindings"], `{ "name": ${JSON.stringify(binding)}, "class_name": ${quoted} }`);
  return appendToArray(withBinding, ["migrations"], `{ "tag": "v${n}", "new_sqlite_classes": [${quoted}] }`);
}
