// npm start's dev MCP server (scripts/dev/mcp-devtools.mjs) and what the
// stack tells the Worker about it (stack.mjs `mcpVars`): MCP_SERVERS and
// MCP_ALLOWLIST as `--var`s, unless the dev secrets file sets them.
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { DEVTOOLS_SERVER, startDevMcpServer } from "../../scripts/dev/mcp-devtools.mjs";
import { mcpVars } from "../../scripts/dev/stack.mjs";
import { wranglerArgs } from "../../scripts/dev/wrangler.mjs";
import { connectMcp } from "./support/mcp-client.mjs";

const textOf = (result) => result.content.map((block) => block.text).join("");

describe("the dev MCP server", () => {
  let devtools;
  let client;
  beforeAll(async () => {
    devtools = await startDevMcpServer({ port: 0 });
    client = await connectMcp(devtools.url);
  });
  afterAll(async () => {
    await client?.close();
    await devtools?.close();
  });

  it("serves devtools on loopback at /mcp: roll_dice, count_words and count_down", async () => {
    expect(devtools.url).toMatch(/^http:\/\/127\.0\.0\.1:\d+\/mcp$/);
    expect(devtools.name).toBe(DEVTOOLS_SERVER);
    const { tools } = await client.listTools();
    expect(tools.map((t) => t.name)).toEqual(["roll_dice", "count_words", "count_down"]);
    expect(tools[0].inputSchema).toMatchObject({
      properties: { sides: { type: "integer", minimum: 2, maximum: 100 }, count: { type: "integer", minimum: 1, maximum: 10 } },
      required: ["sides", "count"],
    });
    expect(textOf(await client.callTool({ name: "roll_dice", arguments: { sides: 6, count: 3 } }))).toMatch(/^rolled 3d6: [1-6], [1-6], [1-6] \(total \d+\)$/);
    expect(textOf(await client.callTool({ name: "count_words", arguments: { text: "one two  three" } }))).toBe("3 words, 14 characters");
    expect(textOf(await client.callTool({ name: "count_words", arguments: { text: "" } }))).toBe("0 words, 0 characters");
    const refused = await client.callTool({ name: "roll_dice", arguments: { sides: 1, count: 1 } });
    expect(refused.isError).toBe(true);
  });

  it("counts down a second at a time, telling a caller who asks for progress how far it got", async () => {
    const heard = [];
    const result = await client.callTool({ name: "count_down", arguments: { seconds: 2 } }, { onprogress: (p) => heard.push(p) });
    expect(textOf(result)).toBe("counted down 2 s");
    expect(heard).toEqual([
      { progress: 1, total: 2, message: "1 s left" },
      { progress: 2, total: 2, message: "0 s left" },
    ]);
  });
});

describe("mcpVars: what the Worker is told", () => {
  const dev = { name: "devtools", url: "http://127.0.0.1:8793/mcp", origin: "http://127.0.0.1:8793", tools: ["roll_dice", "count_words"] };
  const DEV_SERVERS = '[{"name":"devtools","url":"http://127.0.0.1:8793/mcp","trustedTools":["roll_dice","count_words"]}]';

  it("names the dev server in MCP_SERVERS, its two tools trusted by name (no approval), and its origin in MCP_ALLOWLIST, both as --vars", () => {
    const vars = mcpVars(dev, {});
    expect(vars).toEqual({ MCP_SERVERS: DEV_SERVERS, MCP_ALLOWLIST: '["http://127.0.0.1:8793"]' });
    const args = wranglerArgs({ port: 8787, inspectorPort: 9229, vars });
    expect(args).toContain(`MCP_SERVERS:${DEV_SERVERS}`);
    expect(args).toContain('MCP_ALLOWLIST:["http://127.0.0.1:8793"]');
  });

  it("leaves out each one the dev secrets file sets, whose value then wins", () => {
    expect(mcpVars(dev, { MCP_SERVERS: '[{"name":"docs","url":"https://docs.example/mcp"}]' })).toEqual({ MCP_ALLOWLIST: '["http://127.0.0.1:8793"]' });
    expect(mcpVars(dev, { MCP_ALLOWLIST: '["https://docs.example"]' })).toEqual({ MCP_SERVERS: DEV_SERVERS });
    expect(mcpVars(dev, { MCP_SERVERS: "[]", MCP_ALLOWLIST: "[]" })).toEqual({});
  });
});
