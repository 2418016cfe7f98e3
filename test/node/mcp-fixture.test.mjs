// The workerd specs' MCP fixture (test/support/mcp-fixture.mjs), held to the
// contract the specs rely on, through the MCP client the Worker uses: keys
// as independent servers, the tools, the control endpoints, the servers that
// are down or slow, and the hosts it leaves to the recorder.
import { beforeEach, describe, expect, it } from "vitest";
import { createMcpFixture } from "../support/mcp-fixture.mjs";
import { connectMcp } from "./support/mcp-client.mjs";

// Built from parts, so that no line of this file is itself a canary.
const TOKEN = ["canary", "secret", "mcp", "token", "4b8e"].join("-");
const LEAKED = ["canary", "secret", "mcp", "leak", "9c2f"].join("-");

/** @type {ReturnType<typeof createMcpFixture>} */
let fixture;
beforeEach(() => {
  fixture = createMcpFixture();
});

/** What the pool's outboundService does: the fixture's answer, or (here) a failure for anything else. */
const viaFixture = async (input, init) => {
  const answer = fixture.answer(new Request(input, init));
  if (!answer) throw new TypeError(`not the fixture's: ${String(input)}`);
  return answer;
};
const connect = (key, headers) => connectMcp(`https://mcp.test/${key}/mcp`, { fetch: viaFixture, headers });
const stats = async (key) => /** @type {any} */ (await (await viaFixture(`https://mcp.test/${key}/__stats`)).json());
const textOf = (result) => result.content.map((block) => block.text).join("");

describe("the MCP fixture", () => {
  it("serves every key as its own server with the same tools, and counts each key's calls apart", async () => {
    const docs = await connect("docs");
    const other = await connect("other");
    expect((await docs.listTools()).tools.map((t) => t.name)).toEqual([
      "lookup",
      "fails",
      "slow",
      "leak",
      "steps",
      "whoami",
      "huge_structured",
      "huge_blocks",
      "many_blocks",
      "straddle",
    ]);
    expect(await docs.callTool({ name: "lookup", arguments: { term: "A2A" } })).toEqual({ content: [{ type: "text", text: "found: A2A" }] });
    expect(await docs.callTool({ name: "fails", arguments: {} })).toEqual({ isError: true, content: [{ type: "text", text: "lookup backend exploded" }] });
    expect(textOf(await other.callTool({ name: "leak", arguments: {} }))).toContain(LEAKED);
    expect(await stats("docs")).toEqual({
      calls: { lookup: 1, fails: 1, slow: 0, leak: 0, steps: 0, whoami: 0, huge_structured: 0, huge_blocks: 0, many_blocks: 0, straddle: 0 },
      cancelled: 0,
      sessions: 1,
      open: 1,
      lastAuthorized: false,
    });
    expect((await stats("other")).calls).toMatchObject({ lookup: 0, fails: 0, slow: 0, leak: 1, whoami: 0 });
    await Promise.all([docs.close(), other.close()]);
  });

  it("returns results of about 3 MB, and straddle's secrets where a 64 KiB cap cuts", async () => {
    const bulk = await connect("bulk");
    const call = (name) => bulk.callTool({ name, arguments: {} });
    const size = (value) => JSON.stringify(value).length;
    expect(size((await call("huge_structured")).structuredContent)).toBeGreaterThan(3_000_000);
    const blocks = (await call("huge_blocks")).content;
    expect(blocks).toHaveLength(3);
    expect(size(blocks)).toBeGreaterThan(3_000_000);
    const many = (await call("many_blocks")).content;
    expect(many).toHaveLength(50_001);
    expect(many.at(-1)).toMatchObject({ type: "image", mimeType: "image/png" });
    const text = textOf(await call("straddle"));
    expect(text.length).toBeGreaterThan(3_000_000);
    expect(text.slice(0, 60_000)).not.toContain("Q");
    expect(text.slice(60_000, 101_000)).toBe(`${"Q".repeat(40)} `.repeat(1_000));
    await bulk.close();
  });

  it("says whether a call carried the bearer token, never the header itself, and remembers the key's latest request", async () => {
    const withToken = await connect("auth", { Authorization: `Bearer ${TOKEN}` });
    const result = await withToken.callTool({ name: "whoami", arguments: {} });
    expect(result).toMatchObject({ structuredContent: { authorized: true } });
    expect(JSON.stringify(result)).not.toContain(TOKEN);
    expect((await stats("auth")).lastAuthorized).toBe(true);

    const wrong = await connect("auth", { Authorization: "Bearer something-else" });
    expect((await wrong.callTool({ name: "whoami", arguments: {} })).structuredContent).toEqual({ authorized: false });
    expect((await stats("auth")).lastAuthorized).toBe(false);
    await Promise.all([withToken.close(), wrong.close()]);
  });

  it("forgets a key's sessions on POST __drop: the next request gets 404, a new initialize works, and sessions counts both", async () => {
    const client = await connect("restart");
    await client.callTool({ name: "lookup", arguments: { term: "one" } });
    const dropped = await viaFixture("https://mcp.test/restart/__drop", { method: "POST" });
    expect(await dropped.json()).toEqual({ dropped: 1 });
    expect((await client.callTool({ name: "lookup", arguments: { term: "two" } }).catch((error) => error)).status).toBe(404);
    const again = await connect("restart");
    expect(textOf(await again.callTool({ name: "lookup", arguments: { term: "three" } }))).toBe("found: three");
    expect(await stats("restart")).toMatchObject({ calls: { lookup: 2 }, sessions: 2 });
    await again.close();
  });

  it("holds slow() until the call is cancelled, and counts the cancellation", async () => {
    const client = await connect("slow");
    const cancel = new AbortController();
    const call = client.callTool({ name: "slow", arguments: {} }, { signal: cancel.signal }).catch((error) => error);
    await expect.poll(async () => (await stats("slow")).calls.slow).toBe(1);
    cancel.abort();
    expect((await call).name).toMatch(/AbortError|SdkError/);
    await expect.poll(async () => (await stats("slow")).cancelled).toBe(1);
    await client.close();
  });

  it("answers 503 for mcp-down.test, holds mcp-slow.test's answer, and leaves every other host to the recorder", async () => {
    const down = await viaFixture("https://mcp-down.test/mcp", { method: "POST", body: "{}" });
    expect(down.status).toBe(503);
    await expect(connectMcp("https://mcp-down.test/mcp", { fetch: viaFixture })).rejects.toThrow();

    const gone = new AbortController();
    let answered = false;
    const slow = viaFixture("https://mcp-slow.test/mcp", { method: "POST", body: "{}", signal: gone.signal }).then((response) => {
      answered = true;
      return response;
    });
    await new Promise((resolve) => setTimeout(resolve, 300));
    expect(answered).toBe(false);
    gone.abort();
    expect((await slow).status).toBe(503);

    for (const url of ["https://model.test/v1/chat/completions", "http://mcp.test/docs/mcp", "https://mcp.test.example/docs/mcp"]) {
      expect(fixture.answer(new Request(url)), url).toBeUndefined();
    }
    expect((await viaFixture("https://mcp.test/docs/elsewhere")).status).toBe(404);
  });
});
