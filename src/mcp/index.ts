// What the host installs for an agent whose config lists MCP servers (docs/mcp.md).
export { credentialedFetch } from "./fetch.js";
export { mcpServersPlugin } from "./plugin.js";
export { McpRefused } from "./servers.js";
