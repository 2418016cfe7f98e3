// Edits the starter's vitest.config.ts for a tenant that needs more of the
// test pool than a binding: a delegating tenant's subagent class in
// `additionalExports` (the pool cannot see a class the Worker only
// re-exports, and the runtime then cannot make its facets), and an MCP
// tenant's spec server in `mcpServers`. Line-based, as cli/registry.mjs is:
// it finds the block by its first line and adds the entry before the line
// that closes it, leaving everything else as it was.

/**
 * @param {string} text vitest.config.ts
 * @param {string} subagentClass
 * @returns {string} the config with the class in `additionalExports`
 */
export function withSubagentExport(text, subagentClass) {
  return addToBlock(text, {
    opener: /^(\s*)additionalExports:\s*\{\s*(\},?)?\s*$/,
    close: "}",
    entry: [`${subagentClass}: "DurableObject",`],
    taken: new RegExp(`^\\s*${subagentClass}:`, "m"),
    what: `additionalExports: { ${subagentClass}: "DurableObject" } in cloudflareTest's options`,
  });
}

/**
 * @param {string} text vitest.config.ts
 * @param {{ tenant: string }} names
 * @returns {string} the config with an MCP server named after the tenant in `mcpServers`, one skeleton tool `lookup`
 */
export function withMcpServer(text, { tenant }) {
  const entry = [
    `testMcpServer(${JSON.stringify(tenant)}, [`,
    "  {",
    '    name: "lookup",',
    '    description: "Looks up what the user asks about.",',
    '    inputSchema: { type: "object", properties: { query: { type: "string", description: "what to look up" } }, required: ["query"] },',
    "    // A skeleton: answer as your real MCP server's tool would.",
    // biome-ignore lint/suspicious/noTemplateCurlyInString: the generated code's own template literal
    "    handler: ({ query }) => `nothing yet about ${query}: this tool is a skeleton`,",
    "  },",
    "]),",
  ];
  return addToBlock(text, {
    opener: /^(\s*)(?:export\s+)?const\s+mcpServers\b[^=]*=\s*\[\s*(\];?)?\s*$/,
    close: "]",
    entry,
    // A tenant name is lower-case letters, digits and hyphens: nothing a pattern reads specially.
    taken: new RegExp(`testMcpServer\\("${tenant}"`),
    what: `testMcpServer(${JSON.stringify(tenant)}, [/* its tools */]) in the mcpServers array`,
  });
}

/**
 * `text` with `entry` (lines) added at the end of the block opened on the line matching `opener` (its indent
 * in group 1; group 2 when the block also closes on that line) and closed by `close` at the same indent.
 * @param {string} text
 * @param {{ opener: RegExp, close: string, entry: string[], taken: RegExp, what: string }} block
 */
function addToBlock(text, { opener, close, entry, taken, what }) {
  const lines = text.split("\n");
  const open = lines.findIndex((line) => opener.test(line));
  if (open === -1) throw new Error(`vitest.config.ts: cannot find where to add ${what}; add it by hand`);
  if (taken.test(text)) throw new Error(`vitest.config.ts already has ${what}`);
  const match = /** @type {RegExpExecArray} */ (opener.exec(lines[open]));
  const indent = match[1];
  if (match[2]) {
    // A formatter writes the empty block on one line: open it up first.
    const closing = lines[open].slice(lines[open].lastIndexOf(close));
    lines.splice(open, 1, lines[open].slice(0, lines[open].lastIndexOf(close)).trimEnd(), `${indent}${closing}`);
  }
  const end = lines.findIndex((line, at) => at > open && line.startsWith(`${indent}${close}`));
  if (end === -1) throw new Error(`vitest.config.ts: the block for ${what} is not closed by "${close}" on a line of its own; add it by hand`);
  lines.splice(end, 0, ...entry.map((line) => `${indent}  ${line}`));
  return lines.join("\n");
}
