// Node realm only: the cassette recorder behind the test pool's outbound
// service. Never import this from a spec (specs run in workerd).
export { VCR_CONTROL_ORIGIN, createVcr, recordFromEnv, type Cassette, type Interaction, type Vcr, type VcrOptions } from "./vcr.js";
export { createMcpServer, type McpStats, type McpTestServer, type McpTool, type McpToolExtra } from "./mcp-server.js";
