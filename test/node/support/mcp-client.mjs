// An MCP client as the Worker's is: @modelcontextprotocol/client (the version
// the agents SDK pins) over streamable HTTP, probing for the newest protocol
// first (`versionNegotiation: auto`, the agents SDK's default), so the dev
// server's fallback to `initialize` is exercised as the Worker meets it.
import { Client, StreamableHTTPClientTransport } from "@modelcontextprotocol/client";

/**
 * A connected client of the MCP endpoint at `url`.
 * @param {string} url
 * @param {{ fetch?: (input: any, init?: any) => Promise<Response>, headers?: Record<string, string> }} [options]
 */
export async function connectMcp(url, { fetch, headers } = {}) {
  const client = new Client({ name: "dynamicagents-node-test", version: "0.0.0" }, { versionNegotiation: { mode: "auto" } });
  const transport = new StreamableHTTPClientTransport(new URL(url), { ...(fetch ? { fetch } : {}), ...(headers ? { requestInit: { headers } } : {}) });
  await client.connect(transport);
  return client;
}
