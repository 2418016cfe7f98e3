// What the host installs for an agent whose config lists MCP servers (docs/mcp.md).
export { credentialedFetch } from "./fetch.js";
export { mcpPlugin } from "./plugin.js";
export { McpRefused, McpServers } from "./servers.js";
