// The stand-in model's MCP tools (standin-mcp.mjs, standin-model.mjs): each
// offered `<server>__<tool>` once per user message, with the plugin tools in
// the order offered, with arguments its JSON schema takes; then the usual
// answer, naming the MCP tools and quoting them. And through the Worker's own client against the
// dev MCP server, so the arguments are checked by the server's schemas.
import { createOpenAICompatible } from "@ai-sdk/openai-compatible";
import { generateText, jsonSchema, stepCountIs, tool } from "ai";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { roundResultHead } from "../../src/a2a/wire.ts";
import { startDevMcpServer } from "../../scripts/dev/mcp-devtools.mjs";
import { startStandInModel } from "../../scripts/dev/model-server.mjs";
import { mcpArguments } from "../../scripts/dev/standin-mcp.mjs";
import { STANDIN_MARK, standInReply } from "../../scripts/dev/standin-model.mjs";
import { connectMcp } from "./support/mcp-client.mjs";

const system = { role: "system", content: "You are Assistant, a helpful agent." };
/** How the stand-in's answer says what it did. */
const SAYS_SO = " (I am no language model: I called each tool I was offered once, with arguments made from its schema and your words.)";
const user = (content) => ({ role: "user", content });
const fn = (name, parameters = { type: "object", properties: {} }) => ({ type: "function", function: { name, parameters } });
const clockTool = fn("current_time", { type: "object", properties: { timeZone: { type: "string", default: "UTC" } } });
const saveNoteTool = fn("save_note", { type: "object", properties: { text: { type: "string" } }, required: ["text"] });
// As core offers a server's tools: `<server>__<tool>`, the server's JSON schema as it listed it.
const rollDice = fn("devtools__roll_dice", {
  type: "object",
  properties: { sides: { type: "integer", minimum: 2, maximum: 100 }, count: { type: "integer", minimum: 1, maximum: 10 } },
  required: ["sides", "count"],
});
const countWords = fn("devtools__count_words", { type: "object", properties: { text: { type: "string", maxLength: 100000 } }, required: ["text"] });
const tools = [clockTool, saveNoteTool, rollDice, countWords];

/** Runs the stand-in as a tool loop would, each call answered by `results[name]`, until it answers; returns the calls and the answer. */
function converse(messages, offered = tools, results = {}) {
  const calls = [];
  const history = [...messages];
  for (let step = 0; step < 10; step++) {
    const reply = standInReply({ messages: history, tools: offered });
    if (reply.finishReason === "stop") return { calls, answer: reply.content, history };
    const [call] = reply.toolCalls;
    expect(reply.toolCalls).toHaveLength(1);
    calls.push([call.function.name, JSON.parse(call.function.arguments)]);
    history.push({ role: "assistant", content: null, tool_calls: reply.toolCalls });
    history.push({ role: "tool", tool_call_id: call.id, content: results[call.function.name] ?? `"${call.function.name} ran"` });
  }
  throw new Error("the stand-in never answered");
}

describe("mcpArguments: from the schema alone", () => {
  it("fills the required properties only, each with a value its schema takes", () => {
    const schema = {
      type: "object",
      properties: {
        query: { type: "string" },
        short: { type: "string", maxLength: 5 },
        long: { type: "string", minLength: 12 },
        sides: { type: "integer", minimum: 2, maximum: 100 },
        ratio: { type: "number", exclusiveMinimum: 0, maximum: 0.5 },
        even: { type: "integer", minimum: 3, multipleOf: 2 },
        below: { type: "integer", maximum: -3 },
        strict: { type: "boolean" },
        mode: { type: "string", enum: ["fast", "slow"] },
        fixed: { const: "v1" },
        maybe: { anyOf: [{ type: "null" }, { type: "integer", minimum: 7 }] },
        tags: { type: "array", items: { type: "string" }, minItems: 2 },
        nested: { type: "object", properties: { id: { type: "integer" }, note: { type: "string" } }, required: ["id"] },
        optional: { type: "string" },
      },
      required: ["query", "short", "long", "sides", "ratio", "even", "below", "strict", "mode", "fixed", "maybe", "tags", "nested"],
    };
    expect(mcpArguments(schema, "find cats")).toEqual({
      query: "find cats",
      short: "find ",
      long: "find cats find cats",
      sides: 2,
      ratio: 0.5,
      even: 4,
      below: -3,
      strict: false,
      mode: "fast",
      fixed: "v1",
      maybe: 7,
      tags: ["find cats", "find cats"],
      nested: { id: 1 },
    });
    // No schema, or no required properties: no arguments. No words: a placeholder, never "".
    expect(mcpArguments(undefined, "x")).toEqual({});
    expect(mcpArguments({ type: "object", properties: { a: { type: "string" } } }, "x")).toEqual({});
    expect(mcpArguments({ type: "object", properties: { a: { type: "string" } }, required: ["a"] }, "")).toEqual({ a: "(no text)" });
  });
});

describe("standInReply: MCP tools", () => {
  it("calls each offered MCP tool once, one per response, in the order offered with the plugin tools, then answers naming them", () => {
    const { calls, answer } = converse([system, user("count these words")], tools, {
      devtools__roll_dice: '"rolled 1d2: 2 (total 2)"',
      devtools__count_words: '"3 words, 17 characters"',
      current_time: '{"utc":"2026-01-01T00:00:00Z"}',
    });
    expect(calls).toEqual([
      ["current_time", { timeZone: "UTC" }],
      ["devtools__roll_dice", { sides: 2, count: 1 }],
      ["devtools__count_words", { text: "count these words" }],
    ]);
    expect(answer?.startsWith(STANDIN_MARK)).toBe(true);
    expect(answer).toContain(
      'You said: "count these words". I called current_time, which returned {"utc":"2026-01-01T00:00:00Z"}. I used the MCP tools devtools__roll_dice ("rolled 1d2: 2 (total 2)") and devtools__count_words ("3 words, 17 characters").',
    );
  });

  it("quotes an MCP result's text, short, whatever its wrapping; a trigger's tool comes first", () => {
    const long = `"${"word ".repeat(40)}"`;
    const wrapped = JSON.stringify({ content: [{ type: "text", text: "from a content block" }] });
    const { calls, answer } = converse([system, user("remember to buy milk")], tools, {
      devtools__roll_dice: long,
      devtools__count_words: wrapped,
      save_note: '{"saved":"to buy milk"}',
    });
    expect(calls.map(([name]) => name)).toEqual(["save_note", "current_time", "devtools__roll_dice", "devtools__count_words"]);
    expect(calls[0]).toEqual(["save_note", { text: "to buy milk" }]);
    expect(answer).toMatch(/devtools__roll_dice \("(word ){15}.*…"\)/);
    expect(answer).toContain('devtools__count_words ("from a content block")');
    expect(answer).toContain('I called save_note, which returned {"saved":"to buy milk"}; then current_time, which returned "current_time ran".');
  });

  it("never calls an MCP tool twice for one message, whatever its result (an error too); the next message calls it again", () => {
    const { calls, history, answer } = converse([system, user("one")], [rollDice], { devtools__roll_dice: "lookup backend exploded" });
    expect(calls).toEqual([["devtools__roll_dice", { sides: 2, count: 1 }]]);
    // Only MCP tools: the answer right after their results.
    expect(answer).toBe(
      `${STANDIN_MARK} Assistant's offline stand-in here. You said: "one". I used the MCP tool devtools__roll_dice ("lookup backend exploded").${SAYS_SO}`,
    );
    expect(standInReply({ messages: history, tools: [rollDice] }).finishReason).toBe("stop");
    const next = converse([...history, { role: "assistant", content: answer }, user("two")], [rollDice]);
    expect(next.calls).toEqual([["devtools__roll_dice", { sides: 2, count: 1 }]]);
  });

  it("leaves MCP tools alone when tool_choice says none or names another tool", () => {
    expect(standInReply({ messages: [system, user("hi")], tools, tool_choice: "none" }).finishReason).toBe("stop");
    const named = standInReply({ messages: [system, user("hi")], tools, tool_choice: { type: "function", function: { name: "current_time" } } });
    expect(named.toolCalls.map((c) => c.function.name)).toEqual(["current_time"]);
  });

  it("calls them once per message of the person's: not again in a delegating agent's later round", () => {
    const head = roundResultHead(1, "read_page", '{"url":"http://127.0.0.1/pages/x"}', "done");
    const messages = [
      { role: "system", content: "You are Researcher." },
      user("compare A2A and MCP"),
      { role: "assistant", content: null, tool_calls: [{ id: "c1", type: "function", function: { name: "docs__search", arguments: "{}" } }] },
      { role: "tool", tool_call_id: "c1", content: '"two pages found"' },
      user(`Results of the subtasks delegated so far:\n\n${head}\n{"summary":"A2A is agent-to-agent"}`),
    ];
    const reply = standInReply({ messages, tools: [fn("docs__search"), fn("delegate")] });
    expect(reply.finishReason).toBe("stop");
    expect(reply.content).toContain("1 delegated subtask reported");
  });

  it("without MCP tools: the plugin tools alone, the approval-gated save_note not unasked", () => {
    const { calls, answer } = converse([system, user("hello")], [clockTool, saveNoteTool], { current_time: '{"utc":"2026-01-01T00:00:00Z"}' });
    expect(calls).toEqual([["current_time", { timeZone: "UTC" }]]);
    expect(answer).toBe(
      `${STANDIN_MARK} Assistant's offline stand-in here. You said: "hello". I called current_time, which returned {"utc":"2026-01-01T00:00:00Z"}.${SAYS_SO}`,
    );
    expect(standInReply({ messages: [system, user("hello")] }).content).not.toContain("MCP");
  });
});

describe("the stand-in and the dev MCP server, through the Worker's own clients", () => {
  let model;
  let devtools;
  let client;
  beforeAll(async () => {
    model = await startStandInModel({ port: 0 });
    devtools = await startDevMcpServer({ port: 0 });
    client = await connectMcp(devtools.url);
  });
  afterAll(async () => {
    await client?.close();
    await Promise.all([model?.close(), devtools?.close()]);
  });

  it("calls each devtools__ tool once with arguments the server's schemas take, then answers quoting their results", async () => {
    // As core offers them: `<server>__<tool>`, the listed JSON schema, the result's text for the model.
    const { tools: listed } = await client.listTools();
    const results = [];
    const offered = Object.fromEntries(
      listed.map((t) => [
        `devtools__${t.name}`,
        tool({
          description: t.description,
          inputSchema: jsonSchema(/** @type {any} */ (t.inputSchema)),
          execute: async (args) => {
            const result = await client.callTool({ name: t.name, arguments: args });
            results.push({ name: t.name, args, result });
            return result.content.map((block) => block.text).join("\n");
          },
        }),
      ]),
    );
    const provider = createOpenAICompatible({ name: "openai-compatible", baseURL: model.baseUrl });
    const run = await generateText({
      model: provider.chatModel("offline-stand-in"),
      instructions: "You are Assistant, a helpful agent.",
      messages: [{ role: "user", content: "how many words is this" }],
      tools: offered,
      stopWhen: stepCountIs(6),
    });
    expect(results.map((r) => [r.name, r.args])).toEqual([
      ["roll_dice", { sides: 2, count: 1 }],
      ["count_words", { text: "how many words is this" }],
    ]);
    for (const { result } of results) expect(result.isError).toBeFalsy();
    expect(run.steps).toHaveLength(3);
    expect(run.text).toMatch(
      /I used the MCP tools devtools__roll_dice \("rolled 1d2: [12] \(total [12]\)"\) and devtools__count_words \("5 words, 22 characters"\)\./,
    );
  });
});
