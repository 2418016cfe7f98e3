import { env } from "cloudflare:workers";
import { runInDurableObject } from "cloudflare:test";
import { TERMINAL_STATE_NAMES, newTrace, turnTrace } from "@dynamicagents/core/a2a";
import { resolveConfig, type AgentConfig, type AgentConfigInput, type AgentPolicy } from "@dynamicagents/core/agent";
import { AgentDB } from "@dynamicagents/core/db";
import { createAgentRuntime, definePlugin } from "@dynamicagents/core/plugin";
import { callsOf, mockModel, scriptedChoices, type ScriptedReply } from "@dynamicagents/core/testing";
import { tool, type ToolSet } from "ai";
import type { MockLanguageModelV4 } from "ai/test";
import { describe, expect, it } from "vitest";
import { z } from "zod";
import { FIND_TOOLS_TOOL } from "../src/round/tools/find-tools.js";
import { exposureOf, planExposure } from "../src/round/tools/exposure.js";
import { rankTools } from "../src/round/tools/ranker.js";
import { runRound, type RoundInput } from "../src/round/loop.js";
import { assistantPolicy } from "../reference/policy.js";

const FIND_WORDS = "Finds the tools that fit a task: say what you need done.";
const searchingPolicy: AgentPolicy = { ...assistantPolicy, tools: { findToolsDescription: FIND_WORDS } };

/** How often each tool really ran (the test pool runs the objects in the specs' isolate). */
const runs = new Map<string, number>();
const counted = (name: string, description: string, needsApproval = false) =>
  tool({
    description,
    inputSchema: z.object({}),
    needsApproval,
    execute: async () => {
      runs.set(name, (runs.get(name) ?? 0) + 1);
      return `${name} ran`;
    },
  });

const pad = (n: number) => String(n).padStart(3, "0");

/**
 * 200 tools: ten `always_*`, `weather_forecast`, `secret_admin` (never) and
 * 188 `tool_NNN`, each of which says its number (so a query of numbers finds
 * exactly those).
 */
function manyTools(prefix: string): ToolSet {
  const tools: ToolSet = {};
  for (let n = 0; n < 10; n++) tools[`always_${n}`] = counted(`${prefix}always_${n}`, `Always there, number ${n}.`);
  tools.weather_forecast = counted(`${prefix}weather_forecast`, "Tells the weather forecast for a city.");
  tools.secret_admin = counted(`${prefix}secret_admin`, "Administers the weather secrets.");
  for (let n = 0; n < 188; n++) tools[`tool_${pad(n)}`] = counted(`${prefix}tool_${pad(n)}`, `Handles records of kind ${n}.`);
  return tools;
}

const exposureConfig: AgentConfigInput = {
  turn: { maxSteps: 10 },
  tools: { defaultExposure: "search", exposure: { "always_*": "always", secret_admin: "never" } },
};

/** One round of the turn loop inside a fresh caller's object, its tools from one plugin, its model scripted. */
async function roundOf(options: {
  tools: ToolSet;
  model: MockLanguageModelV4 | MockLanguageModelV4[];
  config?: AgentConfig;
  policy?: AgentPolicy;
  object?: DurableObjectStub;
  taskId?: string;
  before?: (db: AgentDB) => void;
}) {
  const config = options.config ?? resolveConfig(exposureConfig);
  const taskId = options.taskId ?? crypto.randomUUID();
  const object = options.object ?? env.ASSISTANT.get(env.ASSISTANT.idFromName(crypto.randomUUID()));
  const plugin = definePlugin({ key: "many", toolFamilies: { many: () => ({ tools: options.tools }) } });
  const result = await runInDurableObject(object, (_instance, state) => {
    const db = new AgentDB(state.storage, TERMINAL_STATE_NAMES);
    if (!db.tasks.get(taskId)) db.tasks.insert({ id: taskId, messageId: taskId, contextId: "c", state: "TASK_STATE_WORKING", statusAt: 1, json: "{}" });
    options.before?.(db);
    const input: RoundInput = {
      taskId,
      contextId: "c",
      round: 1,
      text: "hello",
      parts: [{ text: "hello" }],
      addArtifact: () => {
        throw new Error("these specs add no artifacts");
      },
      origin: "https://o.test",
      soul: "You are a test agent.",
      config,
      policy: options.policy ?? searchingPolicy,
      runtime: createAgentRuntime({ plugins: [plugin], env: {}, config }),
      conversation: { store: db.conversations, id: "c" },
      journal: db.toolCalls,
      hitl: db.hitl,
      rounds: db.subtasks,
      delegates: false,
      env: {},
      models: scriptedChoices(...(Array.isArray(options.model) ? options.model : [options.model])),
      trace: turnTrace(newTrace()),
    };
    return runRound(input);
  });
  return { result, object, taskId };
}

/** The names of the tools each model request was sent. */
const sentTools = (model: MockLanguageModelV4) => callsOf(model).map((c) => (c.tools ?? []).map((t) => t.name));
const call = (toolName: string, input: unknown = {}): ScriptedReply => ({ toolCalls: [{ toolName, input }] });
const find = (query: string) => call(FIND_TOOLS_TOOL, { query });

describe("the tool ranker", () => {
  const tools = [
    { name: "github__create_issue", description: "Opens an issue in a repository." },
    { name: "github__list_issues", description: "Lists the issues of a repository." },
    { name: "jira-create-ticket", description: "Creates a ticket, which is like an issue." },
    { name: "weather", description: "Tells the weather." },
  ];

  it("orders fixed inputs the same every time, whatever order the tools come in", () => {
    const first = rankTools("create an issue", tools, 10);
    // Whole terms only: "issues" is not "issue".
    expect(first.map((t) => t.name)).toEqual(["github__create_issue", "jira-create-ticket"]);
    expect(rankTools("create an issue", tools, 10)).toEqual(first);
    expect(rankTools("create an issue", [...tools].reverse(), 10)).toEqual(first);
    // Case and punctuation do not matter; names split on `_`, `-` and `__`.
    expect(rankTools("CREATE, issue!", tools, 10)).toEqual(first);
    expect(rankTools("ticket", tools, 10)).toEqual([tools[2]]);
    expect(rankTools("issues", tools, 10)).toEqual([tools[1]]);
  });

  it("counts a term in the name three times one in the description", () => {
    const boosted = [
      { name: "alpha", description: "mentions notes notes" },
      { name: "notes_beta", description: "nothing else" },
    ];
    // 3 (in the name) beats 2 (twice in the description)...
    expect(rankTools("notes", boosted, 5).map((t) => t.name)).toEqual(["notes_beta", "alpha"]);
    // ...and 4 beats 3.
    const more = [{ ...boosted[0]!, description: "notes notes notes notes" }, boosted[1]!];
    expect(rankTools("notes", more, 5).map((t) => t.name)).toEqual(["alpha", "notes_beta"]);
  });

  it("breaks ties by name, leaves out what no term matches, and keeps to the limit", () => {
    const tied = ["zeta", "Beta", "alpha", "beta"].map((name) => ({ name, description: "reads mail" }));
    // Plain code-unit order: upper case first.
    expect(rankTools("mail", tied, 10).map((t) => t.name)).toEqual(["Beta", "alpha", "beta", "zeta"]);
    expect(rankTools("mail", tied, 2).map((t) => t.name)).toEqual(["Beta", "alpha"]);
    expect(rankTools("calendar", tied, 10)).toEqual([]);
    expect(rankTools("  ", tied, 10)).toEqual([]);
  });
});

describe("tool exposure", () => {
  const config = resolveConfig({
    tools: { defaultExposure: "search", exposure: { "github__*": "always", "github__delete*": "never", github__delete_readme: "always", weather: "never" } },
  }).tools;

  it("takes the exact key, else the longest matching prefix, else the default", () => {
    expect(exposureOf("github__list_issues", config)).toBe("always");
    expect(exposureOf("github__delete_repo", config)).toBe("never");
    expect(exposureOf("github__delete_readme", config)).toBe("always");
    expect(exposureOf("weather", config)).toBe("never");
    expect(exposureOf("weather_forecast", config)).toBe("search");
    expect(exposureOf("jira__create", resolveConfig().tools)).toBe("always");
  });

  it("removes never-tools entirely, sends the always-tools, and searches the rest", () => {
    const names = ["weather", "github__delete_repo", "github__list_issues", "github__delete_readme", "jira__create", "weather_forecast"];
    const tools = Object.fromEntries(names.map((name) => [name, counted(name, `does ${name}`)]));
    const plan = planExposure({ tools, controls: ["ask_user"], config, searchWords: true });
    expect(Object.keys(plan.tools).sort()).toEqual(["github__delete_readme", "github__list_issues", "jira__create", "weather_forecast"]);
    expect(plan.always).toEqual(["github__delete_readme", "github__list_issues"]);
    expect(plan.searchable.map((t) => t.name)).toEqual(["jira__create", "weather_forecast"]);
    expect(plan.controls).toEqual(["ask_user", FIND_TOOLS_TOOL]);
    // 24 schemas, less ask_user and find_tools.
    expect(plan.budget).toBe(22);
  });

  it("treats the always-tools past the budget as search tools, leaving room for what a search finds", () => {
    const tools = Object.fromEntries(Array.from({ length: 30 }, (_, n) => [`t_${pad(n)}`, counted(`t_${pad(n)}`, `tool ${n}`)]));
    const plan = planExposure({ tools, controls: ["ask_user"], config: resolveConfig().tools, searchWords: true });
    // 24 less ask_user and find_tools is 22, of which one search's results (6) are kept free.
    expect(plan.always).toEqual(Object.keys(tools).slice(0, 16));
    expect(plan.searchable.map((t) => t.name)).toEqual(Object.keys(tools).slice(16));
    // Without find_tools's words nothing is searched: the budget is all the always-tools'.
    const unsearched = planExposure({ tools, controls: ["ask_user"], config: resolveConfig().tools, searchWords: false });
    expect(unsearched.always).toHaveLength(23);
    expect(unsearched.searchable).toEqual([]);
    expect(unsearched.controls).toEqual(["ask_user"]);
  });
});

describe("a turn with 200 tools", () => {
  it("sends at most 24 tool schemas in every request, control tools included, the newest finds first", async () => {
    const model = mockModel([find("001 002 003 004 005 006"), find("011 012 013 014 015 016"), find("021 022 023 024 025 026"), call("tool_021"), "done"]);
    const { result } = await roundOf({ tools: manyTools("budget:"), model });
    expect(result).toMatchObject({ kind: "answer", text: "done" });
    const sent = sentTools(model);
    expect(sent).toHaveLength(5);
    for (const names of sent) expect(names.length).toBeLessThanOrEqual(24);
    const always = Array.from({ length: 10 }, (_, n) => `always_${n}`);
    expect(sent[0]!.sort()).toEqual(["ask_user", FIND_TOOLS_TOOL, ...always].sort());
    expect(sent[1]).toEqual(expect.arrayContaining(["tool_001", "tool_006"]));
    // 24 less ask_user, find_tools and ten always-tools leaves twelve: the two newest searches.
    expect(sent[3]).toHaveLength(24);
    expect(sent[3]).toEqual(expect.arrayContaining(["tool_011", "tool_016", "tool_021", "tool_026"]));
    expect(sent[3]).not.toContain("tool_001");
    expect(runs.get("budget:tool_021")).toBe(1);
  });

  it("with every tool always and no search words, still sends at most 24", async () => {
    const model = mockModel(["done"]);
    const { tools: _words, ...wordless } = assistantPolicy;
    await roundOf({ tools: manyTools("plain:"), model, config: resolveConfig(), policy: wordless });
    const [sent] = sentTools(model);
    expect(sent).toHaveLength(24);
    expect(sent).toContain("ask_user");
    expect(sent).not.toContain(FIND_TOOLS_TOOL);
  });

  it("with every tool always, searches the ones past the budget", async () => {
    const model = mockModel([find("150"), call("tool_150"), "done"]);
    await roundOf({ tools: manyTools("overflow:"), model, config: resolveConfig() });
    const sent = sentTools(model);
    for (const names of sent) expect(names.length).toBeLessThanOrEqual(24);
    expect(sent[0]).toContain(FIND_TOOLS_TOOL);
    expect(sent[0]).not.toContain("tool_150");
    expect(sent[1]).toContain("tool_150");
    expect(runs.get("overflow:tool_150")).toBe(1);
  });
});

describe("find_tools", () => {
  it("finds a tool, whose schema the next step is sent and which it can then call; a tool not found does not run", async () => {
    const model = mockModel([call("weather_forecast"), find("weather forecast"), call("weather_forecast"), "sunny"]);
    const { result } = await roundOf({ tools: manyTools("find:"), model });
    expect(result).toMatchObject({ kind: "answer", text: "sunny" });
    const calls = callsOf(model);
    const sent = sentTools(model);
    expect(sent[0]).not.toContain("weather_forecast");
    expect(sent[1]).not.toContain("weather_forecast");
    expect(sent[2]).toContain("weather_forecast");
    // The model called it before finding it: refused, not run, and told so.
    expect(calls[1]!.prompt.filter((m) => m.role === "tool")).toMatchObject([
      { content: [{ type: "tool-result", toolName: "weather_forecast", output: { type: "error-text" } }] },
    ]);
    // What find_tools answered: names and descriptions, no schemas; the never-tool is not among them.
    const found = calls[2]!.prompt.filter((m) => m.role === "tool").at(-1);
    expect(JSON.stringify(found)).toContain('{"name":"weather_forecast","description":"Tells the weather forecast for a city."}');
    expect(JSON.stringify(found)).not.toContain("secret_admin");
    expect(JSON.stringify(found)).not.toContain("inputSchema");
    expect(runs.get("find:weather_forecast")).toBe(1);
  });

  it("is described in the policy's words and offered only when something is on search", async () => {
    const model = mockModel(["done"]);
    await roundOf({ tools: manyTools("words:"), model });
    expect(callsOf(model)[0]!.tools?.find((t) => t.name === FIND_TOOLS_TOOL)).toMatchObject({ description: FIND_WORDS });
    const few = mockModel(["done"]);
    await roundOf({ tools: { weather_forecast: counted("few:weather_forecast", "weather") }, model: few, config: resolveConfig() });
    expect(sentTools(few)[0]!.sort()).toEqual(["ask_user", "weather_forecast"]);
  });

  it("never sends or runs a never-tool, even when the model calls it", async () => {
    const model = mockModel([find("secret admin"), call("secret_admin"), "done"]);
    await roundOf({ tools: manyTools("never:"), model });
    for (const names of sentTools(model)) expect(names).not.toContain("secret_admin");
    expect(runs.get("never:secret_admin")).toBeUndefined();
  });

  it("what a failed exchange found is found again when the fallback re-runs it, from the journal", async () => {
    const primary = mockModel([find("weather"), new Error("primary broke")]);
    const fallback = mockModel([find("weather"), call("weather_forecast"), "sunny"]);
    const { result, object, taskId } = await roundOf({ tools: manyTools("retry:"), model: [primary, fallback] });
    expect(result).toMatchObject({ kind: "answer", text: "sunny" });
    expect(sentTools(primary)[1]).toContain("weather_forecast");
    expect(sentTools(fallback)[1]).toContain("weather_forecast");
    expect(runs.get("retry:weather_forecast")).toBe(1);
    // One search in the journal: the fallback's call was the primary's, answered from its record.
    const journal = await runInDurableObject(object, (_i, state) => new AgentDB(state.storage, TERMINAL_STATE_NAMES).toolCalls.ofTask(taskId));
    expect(journal.filter((row) => row.toolName === FIND_TOOLS_TOOL).map((row) => row.status)).toEqual(["finished"]);
  });

  it("what an exchange found stays found in the next one: a found tool's approval, answered, runs it and keeps it sent", async () => {
    const tools = manyTools("approval:");
    tools.weather_forecast = counted("approval:weather_forecast", "Tells the weather forecast for a city.", true);
    const model = mockModel([find("weather"), call("weather_forecast"), "sunny after approval"]);
    const first = await roundOf({ tools, model });
    expect(first.result).toMatchObject({ kind: "ask", target: { kind: "approval", toolName: "weather_forecast" } });
    expect(runs.get("approval:weather_forecast")).toBeUndefined();
    if (first.result.kind !== "ask") throw new Error("expected the round to wait for an approval");
    const { target, body } = first.result;
    const second = await roundOf({
      tools,
      model,
      object: first.object,
      taskId: first.taskId,
      before: (db) => {
        db.hitl.open({ requestId: "r-1", taskId: first.taskId, round: 1, request: body, target, expiresAt: Date.now() + 60_000 });
        db.hitl.settle("r-1", "answered", { outcome: "answered", optionId: "approve", answeredBy: { key: "k" } });
      },
    });
    expect(second.result).toMatchObject({ kind: "answer", text: "sunny after approval" });
    expect(runs.get("approval:weather_forecast")).toBe(1);
    const sent = sentTools(model);
    expect(sent).toHaveLength(3);
    // The exchange after the approval was sent the tool found before it.
    expect(sent[2]).toContain("weather_forecast");
  });
});
