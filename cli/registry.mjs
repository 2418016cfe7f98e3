// Registers a tenant in the repository's tenant registry (src/tenants.ts):
// an import of its registration after the last import, an `export *` of its
// agent class after the last such export (or the imports), and its entry at
// the end of the `tenants` map.

const IDENTIFIER = /^[A-Za-z_$][\w$]*$/;

/**
 * @param {string} text src/tenants.ts
 * @param {{ tenant: string, camel: string }} names
 * @returns {string} the registry with the tenant added
 */
export function registerTenant(text, { tenant, camel }) {
  const lines = text.split("\n");
  const module = `./tenants/${tenant}/index.js`;
  if (text.includes(`"${module}"`)) throw new Error(`src/tenants.ts already registers ${tenant}`);

  // The end of the last import statement (one may span lines).
  let lastImport = -1;
  for (let at = 0; at < lines.length; at++) {
    if (!/^import\s/.test(lines[at])) continue;
    while (at < lines.length && !/from\s+["'][^"']+["'];?\s*$/.test(lines[at])) at++;
    lastImport = at;
  }
  const open = lines.findIndex((line) => /^(?:export\s+)?const\s+tenants\b.*=\s*\{\s*(?:\};?)?\s*$/.test(line));
  // A formatter writes the empty map as `= {};`: open it up first.
  if (open !== -1 && /\}\s*;?\s*$/.test(lines[open])) lines.splice(open, 1, lines[open].replace(/\}\s*(;?)\s*$/, ""), "};");
  const close = open === -1 ? -1 : lines.findIndex((line, at) => at > open && /^\};?\s*$/.test(line));
  if (lastImport === -1 || close === -1) {
    throw new Error(
      `src/tenants.ts: expected imports and a \`const tenants … = {\` map closed by \`};\` on a line of its own; add by hand:\n` +
        `  import ${camel}Tenant from "${module}";\n  export * from "${module}";\n  and the entry ${entryKey(tenant)}: ${camel}Tenant`,
    );
  }
  const lastExport = lines.findLastIndex((line) => /^export \* from "\.\/tenants\//.test(line));
  // From the bottom up, so each index still points where it did.
  lines.splice(close, 0, `  ${entryKey(tenant)}: ${camel}Tenant,`);
  lines.splice(Math.max(lastExport, lastImport) + 1, 0, `export * from "${module}";`);
  lines.splice(lastImport + 1, 0, `import ${camel}Tenant from "${module}";`);
  return lines.join("\n");
}

const entryKey = (tenant) => (IDENTIFIER.test(tenant) ? tenant : JSON.stringify(tenant));
