#!/usr/bin/env node
// The package's command: `npx @dynamicagents/core new DIR` starts a repository
// of agents, `npx dynamicagents add-tenant NAME` adds one inside it, and
// `npx dynamicagents start` runs the local stack for it (cli/start.mjs), and
// `npx dynamicagents keys` prints a signing key. Plain Node 20, no build step:
// the first command runs before the new repository has its own Node 24.
import { parseArgs } from "node:util";
import { addTenant } from "./add-tenant.mjs";
import { createRepository } from "./new-repo.mjs";

const USAGE = `usage:
  dynamicagents new DIR [--tenant NAME] [--core SPEC]
      a new repository of agents in DIR, with one tenant (default "assistant");
      --core: how it depends on @dynamicagents/core: a version (default this one's), or a local
      package, file:PATH or a path to the tarball \`npm pack\` wrote, read from the folder you run
      this in (refused if it is not there) and written relative to DIR
  dynamicagents add-tenant NAME [--round | --mcp] [--root DIR]
      another tenant in the repository at DIR (default here): its agent, plugin and spec,
      its binding and migration in wrangler.jsonc, its entry in src/tenants.ts;
      --round: one that delegates subtasks to subagents (its subagent class also goes into
      vitest.config.ts's additionalExports); --mcp: one whose tools come from MCP servers
      (MCP_SERVERS, src/mcp.ts), its spec's server in vitest.config.ts
  dynamicagents start [OPTIONS]
      the whole local stack for the repository here (the Worker under wrangler dev --local, a dev
      gatekeeper, the offline stand-in model, a dev MCP server when a tenant reads MCP_SERVERS)
      and a chat with the tenants of its tenant registry; the starter's \`npm start\`.
      \`dynamicagents start --help\` lists the options
  dynamicagents keys
      a fresh private Ed25519 JWK for the A2A_SIGNING_KEY secret
`;

async function main(argv) {
  // The stack's options are its own (scripts/dev/start.mjs reads them).
  if (argv[0] === "start") {
    const { start } = await import("./start.mjs");
    return start(argv.slice(1));
  }
  const { values, positionals } = parseArgs({
    args: argv,
    allowPositionals: true,
    options: {
      tenant: { type: "string" },
      core: { type: "string" },
      root: { type: "string" },
      round: { type: "boolean" },
      mcp: { type: "boolean" },
      help: { type: "boolean", short: "h" },
    },
  });
  const [command, target, ...extra] = positionals;
  if (values.help || !command) return void process.stdout.write(USAGE);
  if (command === "keys" && !target) {
    const { freshSigningJwk } = await import("../scripts/keys.mjs");
    return void process.stdout.write(`${JSON.stringify(await freshSigningJwk())}\n`);
  }
  if (command === "new" && target && !extra.length) {
    const { root, tenant, core } = await createRepository({ dir: target, tenant: values.tenant, core: values.core });
    const depends = core ? ` It depends on @dynamicagents/core ${core}.` : "";
    return void process.stdout.write(
      `Wrote ${root}, with the tenant ${tenant}.${depends} Next:\n  cd ${target}\n` +
        "  npm install       as it is: never --legacy-peer-deps here, which would leave out @modelcontextprotocol/client (agents needs it)\n" +
        "  npm test          the tenant's spec, inside workerd\n  npm run check     the types\n",
    );
  }
  if (command === "add-tenant" && target && !extra.length && !(values.round && values.mcp)) {
    const kind = values.round ? "round" : values.mcp ? "mcp" : "plain";
    const { names, written, edited } = addTenant({ root: values.root ?? process.cwd(), tenant: target, kind });
    const list = (paths) => paths.map((p) => `  ${p}`).join("\n");
    return void process.stdout.write(
      `Added the tenant ${names.tenant} (${names.agentClass}, bound as ${names.binding}).\nWrote:\n${list(written)}\nEdited:\n${list(edited)}\n`,
    );
  }
  process.stderr.write(USAGE);
  process.exitCode = 2;
}

main(process.argv.slice(2)).catch((error) => {
  process.stderr.write(`dynamicagents: ${error.message}\n`);
  process.exitCode = 1;
});
