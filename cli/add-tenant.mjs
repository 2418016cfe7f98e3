// `dynamicagents add-tenant NAME [--round | --mcp]`: a new tenant in an
// existing repository made by `dynamicagents new`. It writes the tenant's
// folder (agent class, plugin skeleton, registration) and spec, and edits
// wrangler.jsonc (the Durable Object binding and its migration) and
// src/tenants.ts (the registration). `--round` makes a delegating tenant (a
// subtask type, its subagent class and the round loop's words) and lists the
// subagent class in vitest.config.ts's additionalExports; `--mcp` a tenant
// whose tools come from MCP servers (MCP_SERVERS, src/mcp.ts), with a spec
// server in vitest.config.ts. Everything is worked out before anything is written.
import { existsSync, readFileSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { appendToArray, parseJsonc, plain } from "./jsonc.mjs";
import { placeholders, tenantNames } from "./names.mjs";
import { registerTenant } from "./registry.mjs";
import { renderTree, writeFiles } from "./templates.mjs";
import { withMcpServer, withSubagentExport } from "./test-pool.mjs";

/** Each kind of tenant: its template tree and its edit of the test pool's config, if it needs one. */
const KINDS = {
  plain: { tree: "tenant", pool: undefined },
  round: { tree: "tenant-round", pool: (text, names) => withSubagentExport(text, names.subagentClass) },
  mcp: { tree: "tenant-mcp", pool: withMcpServer },
};

/** An MCP server's name is at most 24 characters (the agent's config), and the spec's server is named after the tenant. */
const MCP_NAME_MAX = 24;

/**
 * @param {{ root: string, tenant: string, kind?: "plain" | "round" | "mcp" }} options
 * @returns {{ names: ReturnType<typeof tenantNames>, written: string[], edited: string[] }}
 */
export function addTenant({ root, tenant, kind = "plain" }) {
  const names = tenantNames(tenant);
  const { tree, pool } = KINDS[kind] ?? {};
  if (!tree) throw new Error(`unknown kind of tenant ${JSON.stringify(kind)}: plain, round or mcp`);
  if (kind === "mcp" && tenant.length > MCP_NAME_MAX) {
    throw new Error(
      `tenant name ${JSON.stringify(tenant)}: an MCP tenant's spec server is named after it, and an MCP server's name is at most ${MCP_NAME_MAX} characters`,
    );
  }
  const wranglerPath = join(root, "wrangler.jsonc");
  const registryPath = join(root, "src/tenants.ts");
  const poolPath = join(root, "vitest.config.ts");
  for (const path of [wranglerPath, registryPath, ...(pool ? [poolPath] : [])]) {
    if (!existsSync(path)) throw new Error(`${path} not found: run this in a repository made by \`dynamicagents new\``);
  }

  const edits = [
    [wranglerPath, withAgentClass(readFileSync(wranglerPath, "utf8"), names)],
    [registryPath, registerTenant(readFileSync(registryPath, "utf8"), names)],
    ...(pool ? [[poolPath, pool(readFileSync(poolPath, "utf8"), names)]] : []),
  ];
  const files = renderTree(tree, root, placeholders(names));

  writeFiles(files);
  for (const [path, text] of edits) writeFileSync(path, text);
  return { names, written: files.map(([path]) => path), edited: edits.map(([path]) => path) };
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
