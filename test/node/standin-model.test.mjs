// The offline stand-in model: its decisions (standin-model.mjs), its HTTP
// face (model-server.mjs), and that the very client the Worker uses (ai +
// @ai-sdk/openai-compatible) runs a tool loop against it to the end.
import { createOpenAICompatible } from "@ai-sdk/openai-compatible";
import { createDelegateTool, renderSubtaskResults } from "@dynamicagents/core/subtasks";
import { generateText, stepCountIs, tool } from "ai";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { z } from "zod";
import { roundResultHead } from "../../src/a2a/wire.ts";
import { startStandInModel } from "../../scripts/dev/model-server.mjs";
import { STANDIN_MARK, standInReply } from "../../scripts/dev/standin-model.mjs";

const system = (name) => ({ role: "system", content: `You are ${name}, a helpful agent.` });
const user = (content) => ({ role: "user", content });
const clockTool = {
  type: "function",
  function: {
    name: "current_time",
    description: "The time now.",
    parameters: { type: "object", properties: { timeZone: { type: "string", default: "UTC" } } },
  },
};
const fetchTool = {
  type: "function",
  function: { name: "fetch_page", parameters: { type: "object", properties: { url: { type: "string" } }, required: ["url"] } },
};
// As the core's delegate tool describes itself: a catalogue of subtask types with their params' JSON schema.
const delegateTool = {
  type: "function",
  function: {
    name: "delegate",
    // As the core's delegate tool writes its catalogue: JSON, on a line of the agent's words.
    description: `Delegate durable subtasks. Subtask types:\n${JSON.stringify([
      {
        type: "research",
        description: "Looks one question up",
        params: { type: "object", properties: { question: { type: "string" } }, required: ["question"] },
      },
      { type: "summarise", description: "Summarises", params: { type: "object" } },
    ])}`,
    parameters: {
      type: "object",
      properties: {
        subtasks: {
          type: "array",
          minItems: 1,
          items: {
            type: "object",
            properties: { type: { type: "string" }, params: { type: "object", additionalProperties: {} } },
            required: ["type", "params"],
          },
        },
      },
      required: ["subtasks"],
    },
  },
};

// The reference assistant's notes tools and the platform's ask_user control tool, as a request offers them.
/** @param {string} [description] */
const fn = (name, properties = {}, required = [], description) => ({
  type: "function",
  function: { name, ...(description ? { description } : {}), parameters: { type: "object", properties, required } },
});
const saveNoteTool = fn("save_note", { text: { type: "string" } }, ["text"]);
const listNotesTool = fn("list_notes");
const askUserTool = fn("ask_user", { question: { type: "string" }, choices: { type: "array" }, allowFreeform: { type: "boolean" } }, ["question"]);
const assistantTools = [clockTool, saveNoteTool, listNotesTool, askUserTool];
/** The one tool call the stand-in makes for `text` with the assistant's tools: [name, arguments], or undefined for text. */
const callFor = (text, tools = assistantTools) => {
  const [call] = standInReply({ messages: [system("Assistant"), user(text)], tools }).toolCalls;
  return call ? [call.function.name, JSON.parse(call.function.arguments)] : undefined;
};

/** Runs the stand-in as a tool loop would, each call answered by `results[name]` (else a stock result), until it answers. */
/** @param {string} text @param {any[]} [tools] @param {Record<string, string>} [results] @param {{ system?: string, pageOrigin?: string }} [options] */
function converse(text, tools = assistantTools, results = {}, { system: who = "Assistant", pageOrigin } = {}) {
  const calls = [];
  const history = [system(who), user(text)];
  for (let step = 0; step < 20; step++) {
    const reply = standInReply({ messages: history, tools }, { pageOrigin });
    if (reply.finishReason === "stop") return { calls, answer: reply.content ?? "", history };
    expect(reply.toolCalls).toHaveLength(1);
    const [call] = reply.toolCalls;
    calls.push([call.function.name, JSON.parse(call.function.arguments)]);
    history.push({ role: "assistant", content: null, tool_calls: reply.toolCalls });
    history.push({ role: "tool", tool_call_id: call.id, content: results[call.function.name] ?? `{"ran":"${call.function.name}"}` });
  }
  throw new Error("the stand-in never answered");
}

describe("standInReply: trigger words", () => {
  it('"remember" and "note" call save_note with the words after them', () => {
    expect(callFor("remember to buy milk")).toEqual(["save_note", { text: "to buy milk" }]);
    expect(callFor("Note: call Bob at 5")).toEqual(["save_note", { text: "call Bob at 5" }]);
    expect(callFor("please note that the door code is 1234")).toEqual(["save_note", { text: "the door code is 1234" }]);
    // Nothing after the word: the whole message is the note.
    expect(callFor("remember")).toEqual(["save_note", { text: "remember" }]);
  });

  it('"notes" calls list_notes', () => {
    expect(callFor("list my notes")).toEqual(["list_notes", {}]);
    expect(callFor("What NOTES do I have?")).toEqual(["list_notes", {}]);
  });

  it('"ask me" calls ask_user with three choices and free text; "ask me a question" with an open question', () => {
    expect(callFor("ask me how to answer")).toEqual([
      "ask_user",
      {
        question: 'How should I answer "ask me how to answer"?',
        choices: [
          { id: "brief", label: "Briefly" },
          { id: "detailed", label: "In detail" },
          { id: "skip", label: "Never mind" },
        ],
        allowFreeform: true,
      },
    ]);
    expect(callFor("Ask me a question about dinner")).toEqual([
      "ask_user",
      { question: 'What should I know before I answer "Ask me a question about dinner"?' },
    ]);
  });

  it("never calls ask_user or save_note without their words: other messages go on as before", () => {
    for (const text of ["hello", "what time is it?", "my notebook is full", "annotate this", "she was asking me", "noted"]) {
      expect(callFor(text), text).toEqual(["current_time", { timeZone: "UTC" }]);
    }
    // The words, but their tool is not offered: the next rule applies (the other tools, each once).
    expect(callFor("remember to buy milk", [clockTool])).toEqual(["current_time", { timeZone: "UTC" }]);
    expect(callFor("ask me", [clockTool, saveNoteTool])).toEqual(["current_time", { timeZone: "UTC" }]);
    expect(callFor("remember to buy milk", [listNotesTool])).toEqual(["list_notes", {}]);
    // Not even once every other tool has run: without their words the turn ends in an answer.
    expect(converse("hello").calls.map(([name]) => name)).toEqual(["current_time", "list_notes"]);
    // tool_choice still rules: "none" calls nothing even with trigger words.
    expect(standInReply({ messages: [user("remember to buy milk")], tools: assistantTools, tool_choice: "none" }).finishReason).toBe("stop");
  });

  it("calls the triggered tool first, then the others, and answers quoting each result: saved, denied, or the user's answer", () => {
    const saved = converse("remember to buy milk", assistantTools, { save_note: '{"saved":"to buy milk","id":"n1"}', list_notes: '{"notes":["to buy milk"]}' });
    expect(saved.calls.map(([name]) => name)).toEqual(["save_note", "current_time", "list_notes"]);
    expect(saved.answer).toContain('I called save_note, which returned {"saved":"to buy milk","id":"n1"}; then current_time');
    expect(saved.answer).toContain('then list_notes, which returned {"notes":["to buy milk"]}.');
    // A rejected approval comes back as the tool's result: the platform's words, as text.
    const denied = converse("remember to buy milk", assistantTools, { save_note: "The user did not approve this tool call: it was not run." });
    expect(denied.answer).toContain('I called save_note, which returned "The user did not approve this tool call: it was not run."');
    const asked = converse("ask me", assistantTools, { ask_user: '{"optionId":"brief","label":"Briefly"}' });
    expect(asked.calls.map(([name]) => name)).toEqual(["ask_user", "current_time", "list_notes"]);
    expect(asked.answer).toContain('I called ask_user, and you answered {"optionId":"brief","label":"Briefly"};');
  });
});

describe("standInReply: an author's tools", () => {
  // As the starter's tenant and a newcomer's weather tenant offer them: plugin tools with zod-made schemas.
  const forecastTool = fn(
    "forecast",
    {
      city: { type: "string" },
      days: { type: "integer", minimum: 1, maximum: 3 },
      units: { type: "string", enum: ["metric", "imperial"] },
      note: { type: "string" },
    },
    ["city", "days"],
    "Tomorrow's weather forecast for a city.",
  );
  const lookupTool = fn("lookup", { query: { type: "string", maxLength: 10 } }, ["query"]);

  it("calls a custom tool with arguments synthesised from its schema, each tool once, then answers quoting the results", () => {
    const { calls, answer } = converse("weather in Paris", [forecastTool, lookupTool, clockTool], {
      forecast: '{"city":"Paris","forecast":"sunny, 21 °C"}',
      lookup: '{"found":"nothing yet"}',
    });
    // Required properties and those with an enum; strings the likely phrase of the user's words (within maxLength;
    // test/node/standin-phrase.test.mjs), numbers the smallest valid.
    expect(calls).toEqual([
      ["forecast", { city: "Paris", days: 1, units: "metric" }],
      ["lookup", { query: "Paris" }],
      ["current_time", { timeZone: "UTC" }],
    ]);
    expect(answer.startsWith(STANDIN_MARK)).toBe(true);
    expect(answer).toContain(
      'I called forecast, which returned {"city":"Paris","forecast":"sunny, 21 °C"}; then lookup, which returned {"found":"nothing yet"}; then current_time',
    );
    expect(answer).toContain("I am no language model: I called each tool I was offered once");
    // Deterministic, and each tool once per message of the person's: a second message calls them again.
    expect(converse("weather in Paris", [forecastTool, lookupTool, clockTool]).calls).toEqual(calls);
  });

  it("calls ask_user, find_tools and approval-gated tools only when the user's words name them", () => {
    const findTools = fn("find_tools", { query: { type: "string" } }, ["query"]);
    const payTool = fn("pay_invoice", { id: { type: "string" } }, ["id"], "Pays an invoice. Needs the user's approval.");
    const tools = [askUserTool, findTools, saveNoteTool, payTool, lookupTool];
    expect(converse("hello", tools).calls.map(([name]) => name)).toEqual(["lookup"]);
    // Their words: the trigger rows, or the tool's name outright.
    expect(converse("find tools for maps", tools).calls[0]).toEqual(["find_tools", { query: "maps" }]);
    expect(converse("please pay_invoice 42", tools).calls[0]).toEqual(["pay_invoice", { id: "please pay_invoice 42" }]);
    expect(converse("run save_note please", tools).calls[0]).toEqual(["save_note", { text: "run save_note please" }]);
    expect(converse("ask me a question", tools).calls.map(([name]) => name)).toEqual(["ask_user", "lookup"]);
  });

  it("delegates as before: at most once per request, never again after the round's results, the other tools before it", () => {
    const first = converse("compare A2A and MCP", [delegateTool, lookupTool], {}, { system: "Researcher" });
    expect(first.calls.map(([name]) => name)).toEqual(["lookup", "delegate"]);
    // The round's results come back as a user message: no second delegation, no tool called again; the answer quotes them.
    const head = roundResultHead(1, "research", '{"question":"compare A2A and MCP"}', "done");
    const results = user(`Results of the subtasks delegated so far:\n\n${head}\n{"summary":"A2A is agent-to-agent"}`);
    const reply = standInReply({ messages: [...first.history, results], tools: [delegateTool, lookupTool] });
    expect(reply.finishReason).toBe("stop");
    expect(reply.content).toContain("1 delegated subtask reported");
    expect(reply.content).toContain('I called lookup, which returned {"ran":"lookup"}');
    expect(reply.content).not.toContain("delegate, which returned");
  });
});

describe("standInReply", () => {
  it("answers a plain request in marked, deterministic text that names the agent", () => {
    const request = { model: "offline-stand-in", messages: [system("Assistant"), user("hello there")] };
    const reply = standInReply(request);
    expect(reply).toMatchObject({ toolCalls: [], finishReason: "stop" });
    expect(reply.content?.startsWith(STANDIN_MARK)).toBe(true);
    expect(reply.content).toContain("Assistant's offline stand-in");
    expect(reply.content).toContain('"hello there"');
    expect(standInReply(structuredClone(request))).toEqual(reply);
  });

  it("calls each offered tool once, a page fetch with a loopback URL only, then answers from the results", () => {
    const messages = [system("Assistant"), user("what time is it?")];
    const fetch = standInReply({ messages, tools: [fetchTool, clockTool] }, { pageOrigin: "http://127.0.0.1:8791" });
    expect(fetch.toolCalls).toEqual([
      { id: "call_standin_1", type: "function", function: { name: "fetch_page", arguments: '{"url":"http://127.0.0.1:8791/pages/what-time-is-it"}' } },
    ]);
    const call = standInReply({ messages, tools: [clockTool] });
    expect(call.finishReason).toBe("tool_calls");
    expect(call.content).toBeNull();
    expect(call.toolCalls).toEqual([{ id: "call_standin_1", type: "function", function: { name: "current_time", arguments: '{"timeZone":"UTC"}' } }]);

    const answer = standInReply({
      messages: [
        ...messages,
        { role: "assistant", content: null, tool_calls: call.toolCalls },
        { role: "tool", tool_call_id: "call_standin_1", content: '{"utc":"2026-01-01T00:00:00Z"}' },
      ],
      tools: [clockTool],
    });
    expect(answer.finishReason).toBe("stop");
    expect(answer.content).toMatch(/^\[offline stand-in model\] .*current_time, which returned \{"utc":"2026-01-01T00:00:00Z"\}/);
    expect(standInReply({ messages, tools: [clockTool], tool_choice: "none" }).finishReason).toBe("stop");
  });

  it("calls the tool again for the next user message of a continuing conversation", () => {
    const first = standInReply({ messages: [system("Assistant"), user("one")], tools: [clockTool] });
    const history = [
      system("Assistant"),
      user("one"),
      { role: "assistant", content: null, tool_calls: first.toolCalls },
      { role: "tool", tool_call_id: first.toolCalls[0].id, content: "12:00" },
      { role: "assistant", content: "answer one" },
      user("two"),
    ];
    const second = standInReply({ messages: history, tools: [clockTool] });
    expect(second.finishReason).toBe("tool_calls");
    expect(second.toolCalls[0].id).toBe("call_standin_3");
  });

  it("delegates after the other tools, once, with a subtask of the first listed type and its params filled from the request", () => {
    const { calls } = converse("compare A2A and MCP", [delegateTool, clockTool], {}, { system: "Researcher" });
    expect(calls).toEqual([
      ["current_time", { timeZone: "UTC" }],
      ["delegate", { subtasks: [{ type: "research", params: { question: "compare A2A and MCP" } }] }],
    ]);
    const reply = standInReply({ messages: [system("Researcher"), user("compare A2A and MCP")], tools: [delegateTool] });
    expect(reply.toolCalls[0].function.name).toBe("delegate");
  });

  it("answers from delegated results, quoting the question, instead of delegating again", () => {
    const head = roundResultHead(1, "research", '{"question":"compare A2A and MCP"}', "done");
    const results = `Results of the subtasks delegated so far:\n\n${head}\n{"summary":"A2A is agent-to-agent"}`;
    const reply = standInReply({ messages: [system("Researcher"), user("compare A2A and MCP"), user(results)], tools: [delegateTool] });
    expect(reply.finishReason).toBe("stop");
    expect(reply.content?.startsWith(STANDIN_MARK)).toBe(true);
    expect(reply.content).toContain('You asked: "compare A2A and MCP"');
    expect(reply.content).toContain("1 delegated subtask reported");
    expect(reply.content).toContain("A2A is agent-to-agent");
  });

  it("puts only loopback URLs in tool calls: never a public site the instructions name", () => {
    const readPage = {
      type: "function",
      function: {
        name: "delegate",
        description: `Subtask types:\n${JSON.stringify([
          {
            type: "read_page",
            description: "Read one page",
            params: {
              type: "object",
              properties: { url: { type: "string", format: "uri" }, question: { type: "string", minLength: 1 } },
              required: ["url", "question"],
            },
          },
        ])}`,
        parameters: delegateTool.function.parameters,
      },
    };
    const subtask = (systemText, pageOrigin) =>
      JSON.parse(
        standInReply({ messages: [{ role: "system", content: systemText }, user("What is A2A?")], tools: [readPage] }, { pageOrigin }).toolCalls[0].function
          .arguments,
      ).subtasks[0];
    expect(subtask("You are Researcher. Sites: https://a2a-protocol.org, https://developers.cloudflare.com.", "http://127.0.0.1:8791")).toEqual({
      type: "read_page",
      params: { url: "http://127.0.0.1:8791/pages/what-is-a2a", question: "What is A2A?" },
    });
    expect(subtask("You are Researcher. Sites: http://127.0.0.1:9999.", undefined).params.url).toBe("http://127.0.0.1:9999/pages/what-is-a2a");
    expect(subtask("You are Researcher.", undefined).params.url).toBe("http://127.0.0.1/pages/what-is-a2a");
  });
});

describe("the stand-in over HTTP", () => {
  let model;
  beforeAll(async () => {
    model = await startStandInModel({ port: 0 });
  });
  afterAll(() => model.close());

  const post = (body) =>
    fetch(`${model.baseUrl}/chat/completions`, { method: "POST", headers: { "Content-Type": "application/json" }, body: JSON.stringify(body) });

  it("answers chat completions in the OpenAI shape", async () => {
    const response = await post({ model: "offline-stand-in", messages: [system("Assistant"), user("hi")] });
    expect(response.status).toBe(200);
    const body = /** @type {any} */ (await response.json());
    expect(body).toMatchObject({
      object: "chat.completion",
      model: "offline-stand-in",
      choices: [{ index: 0, finish_reason: "stop", message: { role: "assistant" } }],
    });
    expect(body.choices[0].message.content.startsWith(STANDIN_MARK)).toBe(true);
    expect(body.usage.total_tokens).toBeGreaterThan(0);
  });

  it("answers stream: true as server-sent events ending in [DONE]", async () => {
    const response = await post({ messages: [user("hi")], tools: [clockTool], stream: true, stream_options: { include_usage: true } });
    expect(response.headers.get("content-type")).toMatch(/^text\/event-stream/);
    const events = (await response.text())
      .split("\n\n")
      .filter(Boolean)
      .map((e) => e.replace(/^data: /, ""));
    expect(events.at(-1)).toBe("[DONE]");
    const chunks = events.slice(0, -1).map((e) => JSON.parse(e));
    expect(chunks[0].choices[0].delta.tool_calls[0]).toMatchObject({ index: 0, function: { name: "current_time" } });
    expect(chunks[1].choices[0].finish_reason).toBe("tool_calls");
    expect(chunks[2].usage.total_tokens).toBeGreaterThan(0);
  });

  it("serves pages that say they are stand-ins, for page-reading subtasks offline", async () => {
    const response = await fetch(`${model.origin}/pages/what-is-a2a`);
    expect(response.headers.get("content-type")).toMatch(/^text\/html/);
    expect(await response.text()).toContain("offline stand-in");
  });

  it("refuses what is not a chat completion", async () => {
    expect((await post({ nope: true })).status).toBe(400);
    expect((await fetch(`${model.origin}/v1/embeddings`, { method: "POST" })).status).toBe(404);
    expect(/** @type {any} */ (await (await fetch(`${model.baseUrl}/models`)).json()).data[0].id).toBe("offline-stand-in");
  });

  it("runs the Worker's own client (ai + @ai-sdk/openai-compatible) through a tool loop to a final answer", async () => {
    const provider = createOpenAICompatible({ name: "openai-compatible", baseURL: model.baseUrl });
    const calls = [];
    const result = await generateText({
      model: provider.chatModel("offline-stand-in"),
      instructions: "You are Assistant, a helpful agent.",
      messages: [{ role: "user", content: "what time is it?" }],
      tools: {
        current_time: tool({
          description: "The current time",
          inputSchema: z.object({ timeZone: z.string().default("UTC") }),
          execute: async (input) => {
            calls.push(input);
            return { utc: "2026-01-01T00:00:00.000Z" };
          },
        }),
      },
      stopWhen: stepCountIs(4),
    });
    expect(calls).toEqual([{ timeZone: "UTC" }]);
    expect(result.steps).toHaveLength(2);
    expect(result.text).toContain(STANDIN_MARK);
    expect(result.text).toContain("2026-01-01T00:00:00.000Z");
  });

  it("takes an approval and a question through the Worker's own client: asks once, then answers from the outcome", async () => {
    const provider = createOpenAICompatible({ name: "openai-compatible", baseURL: model.baseUrl });
    const saved = [];
    const tools = {
      save_note: tool({
        description: "Saves a note",
        inputSchema: z.object({ text: z.string() }),
        needsApproval: true,
        execute: async ({ text }) => (saved.push(text), { saved: text }),
      }),
      // As the platform's control tool: no execute, the turn pauses for the user.
      ask_user: tool({ description: "Ask the user", inputSchema: z.object({ question: z.string(), choices: z.array(z.any()).optional() }) }),
    };
    const run = (messages) =>
      generateText({ model: provider.chatModel("offline-stand-in"), instructions: "You are Assistant.", messages, tools, stopWhen: stepCountIs(4) });

    const asked = [{ role: "user", content: "remember to buy milk" }];
    const first = await run(asked);
    const approval = first.steps.at(-1)?.content.find((part) => part.type === "tool-approval-request");
    expect(approval?.toolCall).toMatchObject({ toolName: "save_note", input: { text: "to buy milk" } });
    expect(saved).toEqual([]);
    const respond = (approved) => [
      ...asked,
      ...first.responseMessages,
      {
        role: "tool",
        content: [{ type: "tool-approval-response", approvalId: approval?.approvalId, approved, ...(approved ? {} : { reason: "Not run: denied." }) }],
      },
    ];
    const denied = await run(/** @type {any} */ (respond(false)));
    expect(saved).toEqual([]);
    expect(denied.steps).toHaveLength(1);
    expect(denied.text).toContain('save_note, which returned "Not run: denied."');
    const approved = await run(/** @type {any} */ (respond(true)));
    expect(saved).toEqual(["to buy milk"]);
    expect(approved.steps).toHaveLength(1);
    expect(approved.text).toContain('save_note, which returned {"saved":"to buy milk"}');

    const question = [{ role: "user", content: "ask me" }];
    const paused = await run(question);
    const call = paused.toolCalls.find((c) => c.toolName === "ask_user");
    expect(call?.input).toMatchObject({ choices: [{ id: "brief" }, { id: "detailed" }, { id: "skip" }] });
    const answer = {
      role: "tool",
      content: [{ type: "tool-result", toolCallId: call?.toolCallId, toolName: "ask_user", output: { type: "json", value: { optionId: "detailed" } } }],
    };
    const answered = await run(/** @type {any} */ ([...question, ...paused.responseMessages, answer]));
    expect(answered.steps).toHaveLength(1);
    expect(answered.text).toContain('ask_user, and you answered {"optionId":"detailed"}');
  });

  it("delegates through the core's own delegate tool, then answers from the results as the core renders them", async () => {
    // The coupling this pins: the stand-in reads the subtask catalogue from the
    // delegate tool's description and spots results by how renderSubtaskResults writes them.
    const provider = createOpenAICompatible({ name: "openai-compatible", baseURL: model.baseUrl });
    const readPage = {
      key: "read_page",
      description: "Read one web page on an allowlisted site and summarise what it says about a question.",
      params: z.object({ url: z.url(), question: z.string().min(1) }),
      recipeVersion: 1,
      recipe: async () => ({}),
    };
    const recorded = [];
    // The agent's words around the catalogue, which the core writes itself.
    const words = {
      description: ({ catalogue, max }) => `Delegate at most ${max} subtasks. Subtask types:\n${catalogue}`,
      invalid: ({ problems }) => `Nothing was delegated:\n${problems.join("\n")}`,
      tooMany: ({ requested, max }) => `Too many subtasks: ${requested} of at most ${max}.`,
      overCap: ({ existing, max }) => `This round has ${existing} of at most ${max} subtasks already.`,
      accepted: "Results arrive in the next round.",
    };
    const delegate = createDelegateTool({
      types: new Map([["read_page", readPage]]),
      maxSubtasks: 4,
      words,
      record: (d) => (recorded.push(...d), { recorded: true, count: recorded.length }),
    });
    const instructions = "You are Researcher. You can read pages on these sites only: https://a2a-protocol.org.";
    const round1 = await generateText({
      model: provider.chatModel("offline-stand-in"),
      instructions,
      messages: [{ role: "user", content: "What is A2A?" }],
      tools: { delegate },
      stopWhen: [() => recorded.length > 0, stepCountIs(4)],
    });
    expect(round1.steps).toHaveLength(1);
    expect(recorded.map((d) => [d.type, d.params])).toEqual([["read_page", { url: `${model.origin}/pages/what-is-a2a`, question: "What is A2A?" }]]);

    const rows = /** @type {any[]} */ ([
      {
        round: 1,
        type: "read_page",
        paramsJson: JSON.stringify(recorded[0].params),
        status: "done",
        resultJson: '{"summary":"A2A lets agents talk"}',
        error: null,
      },
    ]);
    const round2 = await generateText({
      model: provider.chatModel("offline-stand-in"),
      instructions,
      messages: [
        { role: "user", content: "What is A2A?" },
        { role: "user", content: `Results of the subtasks delegated so far:\n\n${renderSubtaskResults(rows)}` },
      ],
      tools: { delegate },
      stopWhen: stepCountIs(4),
    });
    expect(recorded).toHaveLength(1);
    expect(round2.text).toContain('You asked: "What is A2A?"');
    expect(round2.text).toContain("A2A lets agents talk");
  });
});
