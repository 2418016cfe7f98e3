import { env } from "cloudflare:workers";
import { evictDurableObject, runInDurableObject } from "cloudflare:test";
import { generateWithFallback, resolveConfig } from "@dynamicagents/core/agent";
import { TERMINAL_STATE_NAMES, newTrace, turnTrace } from "@dynamicagents/core/a2a";
import { AgentDB, ensurePluginStores, type SubtaskRow } from "@dynamicagents/core/db";
import { ConfigError } from "@dynamicagents/core/errors";
import {
  PLUGIN_CONTRACT_VERSION,
  PluginContractError,
  REDACTION_FAILED_STUB,
  Workspace,
  WorkspaceLimitError,
  createAgentRuntime,
  definePlugin,
  memoryWorkspaceBacking,
  redactToolResults,
  type PluginStore,
} from "@dynamicagents/core/plugin";
import { redactSubtaskRows, renderSubtaskResults } from "@dynamicagents/core/subtasks";
import { callsOf, mockModel, scriptedChoices } from "@dynamicagents/core/testing";
import { APICallError, stepCountIs, tool } from "ai";
import { isTransient } from "../src/agent/model-retry.js";
import { droppedConnection } from "./support/outbound.js";
import { durableWorkspacePlugin } from "../reference/plugins/durable-workspace.js";
import { describe, expect, it } from "vitest";
import { z } from "zod";

const config = resolveConfig();
const runtimeOf = (plugins: ReturnType<typeof definePlugin>[], bindings: Record<string, unknown> = {}) =>
  createAgentRuntime({ plugins, env: bindings, config });
const echoFamily = (name: string) => () => ({ tools: { [name]: tool({ inputSchema: z.object({}), execute: async () => name }) } });

const noArtifacts = (): never => {
  throw new Error("these specs add no artifacts");
};

describe("resolveConfig", () => {
  it("fills in safe defaults", () => {
    expect(config.turn.maxSteps).toBeGreaterThan(0);
    expect(config.history.keepRecentTokens).toBeLessThan(config.history.compactAfterTokens);
  });

  it("refuses an unknown key at any depth as a ConfigError naming it, rather than ignoring it", () => {
    const cases: Array<[Record<string, unknown>, string]> = [
      [{ turn: { maxStep: 3 } }, "turn.maxStep"],
      [{ model: { chatModelID: "@cf/x" } }, "model.chatModelID"],
      [{ history: { compactAfter: 100 } }, "history.compactAfter"],
      [{ rounds: { maxRound: 2 } }, "rounds.maxRound"],
      [{ workspace: { maxFile: 1 } }, "workspace.maxFile"],
      [{ histroy: {} }, "histroy"],
    ];
    for (const [input, name] of cases) {
      let refused: unknown;
      try {
        resolveConfig(input);
      } catch (error) {
        refused = error;
      }
      expect(refused).toBeInstanceOf(ConfigError);
      expect(refused).toMatchObject({ code: "ERR_CONFIG_INVALID", culprit: { kind: "config", name } });
      expect((refused as Error).message).toContain(name);
    }
    // The keys it knows still work at every depth.
    expect(resolveConfig({ turn: { maxSteps: 3 }, rounds: { maxRounds: 2 } }).turn.maxSteps).toBe(3);
  });

  it("names every invalid field in one readable error", () => {
    const attempt = () => resolveConfig({ turn: { maxSteps: 0 }, model: { chatModelId: "" } });
    expect(attempt).toThrow(/^agentConfig\(\) is invalid: /);
    expect(attempt).toThrow(/turn\.maxSteps/);
    expect(attempt).toThrow(/model\.chatModelId/);
    expect(() => resolveConfig({ tunr: {} } as never)).toThrow(/Unrecognized key.*tunr/);
    expect(() => resolveConfig({ history: { compactAfterTokens: 1000, keepRecentTokens: 2000 } })).toThrow(/keepRecentTokens/);
  });
});

describe("createAgentRuntime fails at start-up with a sentence naming the culprit", () => {
  it("on a duplicate plugin key", () => {
    expect(() => runtimeOf([definePlugin({ key: "a" }), definePlugin({ key: "a" })])).toThrow(
      new PluginContractError({ kind: "plugin", name: "a" }, 'Plugin "a" is installed twice: plugin keys must be unique', { code: "ERR_PLUGIN_DUPLICATE" }),
    );
  });

  it("on a duplicate tool family", () => {
    expect(() =>
      runtimeOf([definePlugin({ key: "a", toolFamilies: { web: echoFamily("x") } }), definePlugin({ key: "b", toolFamilies: { web: echoFamily("y") } })]),
    ).toThrow(/Plugin "b" declares tool family "web", which plugin "a" already declares/);
  });

  it("on a missing declared binding or secret", () => {
    expect(() => runtimeOf([definePlugin({ key: "s", requires: { secrets: ["SCRAPER_KEY"] } })])).toThrow(/Plugin "s" requires the secret SCRAPER_KEY/);
    expect(() => runtimeOf([definePlugin({ key: "b", requires: { bindings: ["VECTORS"] } })])).toThrow(/Plugin "b" requires the binding VECTORS/);
    expect(() => runtimeOf([definePlugin({ key: "s", requires: { secrets: ["SCRAPER_KEY"] } })], { SCRAPER_KEY: "k" })).not.toThrow();
  });

  it("on a contract-version mismatch", () => {
    expect(() => runtimeOf([definePlugin({ key: "future", contractVersion: PLUGIN_CONTRACT_VERSION + 1 })])).toThrow(
      new RegExp(
        `Plugin "future" was built for plugin contract version ${PLUGIN_CONTRACT_VERSION + 1}, but this core speaks versions \\d+ to ${PLUGIN_CONTRACT_VERSION}`,
      ),
    );
  });

  it("on a second workspace backing", () => {
    expect(() =>
      runtimeOf([definePlugin({ key: "a", workspaceBacking: memoryWorkspaceBacking }), definePlugin({ key: "b", workspaceBacking: memoryWorkspaceBacking })]),
    ).toThrow(/Plugin "b" supplies a workspace backing, but plugin "a" already does/);
  });

  it("and otherwise assembles tools, capabilities and a workspace", async () => {
    const runtime = runtimeOf([
      definePlugin({ key: "a", capability: "Can A.", toolFamilies: { fa: echoFamily("ta") } }),
      definePlugin({ key: "b", capability: "Can B.", toolFamilies: { fb: echoFamily("tb") } }),
    ]);
    expect(runtime.capabilities).toBe("Can A.\nCan B.");
    expect(
      Object.keys(
        (
          await runtime.tools(
            { taskId: "t", contextId: "c", origin: "https://o.test", addArtifact: noArtifacts, trace: turnTrace(newTrace()) },
            { cutNote: "cut" },
          )
        ).tools,
      ).sort(),
    ).toEqual(["ta", "tb"]);
    // No plugin supplies a backing: memory, behind the configured caps.
    const workspace = runtime.workspace({ storage: {} as DurableObjectStorage });
    expect(workspace.caps).toEqual(config.workspace);
    await workspace.write("notes/a.txt", "kept");
    expect(await workspace.read("notes/a.txt")).toBe("kept");
  });
});

describe("plugin-owned tables", () => {
  it("hand ensureTables the version last recorded, across two lifetimes of the object", async () => {
    const stub = env.ASSISTANT.get(env.ASSISTANT.idFromName(crypto.randomUUID()));
    const seen: number[] = [];
    const store = (version: number): PluginStore => ({
      plugin: "spec-store",
      version,
      ensureTables(sql, from) {
        seen.push(from);
        sql.exec("CREATE TABLE IF NOT EXISTS spec_items (id TEXT PRIMARY KEY)");
        if (from < 2 && version >= 2) sql.exec("ALTER TABLE spec_items ADD COLUMN body TEXT");
      },
    });
    await runInDurableObject(stub, (_i, state) => {
      const db = new AgentDB(state.storage, TERMINAL_STATE_NAMES);
      ensurePluginStores(db.db, state.storage.sql, [store(1)]);
      ensurePluginStores(db.db, state.storage.sql, [store(1)]);
      state.storage.sql.exec("INSERT INTO spec_items (id) VALUES ('n1')");
    });
    await evictDurableObject(stub);
    await runInDurableObject(stub, (_i, state) => {
      const db = new AgentDB(state.storage, TERMINAL_STATE_NAMES);
      ensurePluginStores(db.db, state.storage.sql, [store(2)]);
      state.storage.sql.exec("UPDATE spec_items SET body = 'kept' WHERE id = 'n1'");
      expect(state.storage.sql.exec("SELECT body FROM spec_items").toArray()).toEqual([{ body: "kept" }]);
      expect(state.storage.sql.exec("SELECT plugin, version FROM plugin_migrations WHERE plugin = 'spec-store'").toArray()).toEqual([
        { plugin: "spec-store", version: 2 },
      ]);
      expect(() => ensurePluginStores(db.db, state.storage.sql, [store(1)])).toThrow(/downgrade/);
    });
    expect(seen).toEqual([0, 1, 1]);
  });
});

describe("the workspace", () => {
  const caps = { maxFiles: 2, maxFileBytes: 8, maxTotalBytes: 12 };

  it("enforces bytes per file, file count and total bytes, writing nothing when refused", async () => {
    const ws = new Workspace(memoryWorkspaceBacking(), caps);
    await ws.write("a.txt", "12345678");
    await expect(ws.write("big.txt", "123456789")).rejects.toThrow(WorkspaceLimitError);
    await expect(ws.write("b.txt", "12345")).rejects.toThrow(/limit is 12/);
    await ws.write("b.txt", "1234");
    await expect(ws.write("c.txt", "1")).rejects.toThrow(/2 files/);
    await ws.write("a.txt", "1"); // replacing a file frees its bytes
    expect((await ws.list()).map((f) => f.path).sort()).toEqual(["a.txt", "b.txt"]);
    expect(await ws.read("big.txt")).toBeUndefined();
  });

  it("counts UTF-8 bytes and refuses paths outside the workspace", async () => {
    const ws = new Workspace(memoryWorkspaceBacking(), caps);
    await expect(ws.write("e.txt", "ééééé")).rejects.toThrow(/10 bytes/);
    await expect(ws.write("../escape", "x")).rejects.toThrow(/not a path inside/);
  });
});

describe("tool-result redaction", () => {
  const tools = { secret: tool({ inputSchema: z.object({}), execute: async () => ({ token: "sk-live-1234567890abcdef" }) }) };
  const cap = { maxBytes: 4096, note: "cut" };
  const run = (set: typeof tools) => (set.secret.execute as (i: unknown, o: unknown) => Promise<unknown>)({}, { toolCallId: "c", messages: [] });

  it("replaces what the model sees", async () => {
    const redacted = redactToolResults(tools, [() => ({ token: "[redacted]" })], { cap });
    expect(await run(redacted)).toEqual({ token: "[redacted]" });
  });

  it("keeps the result when the redactor returns undefined", async () => {
    expect(await run(redactToolResults(tools, [() => undefined], { cap }))).toEqual({ token: "sk-live-1234567890abcdef" });
  });

  it("fails closed: a redactor that throws yields the stub, never the original", async () => {
    const result = await run(
      redactToolResults(
        tools,
        [
          () => {
            throw new Error("redactor bug");
          },
        ],
        { cap },
      ),
    );
    expect(result).toEqual(REDACTION_FAILED_STUB);
    expect(JSON.stringify(result)).not.toContain("sk-live");
  });
});

describe("the cap on a tool's result (redactToolResults)", () => {
  const cap = { maxBytes: 4096, note: "NOTE" };
  const bytes = (value: unknown) => new TextEncoder().encode(JSON.stringify(value)).byteLength;
  const runOne = async (execute: () => unknown, redactors: Parameters<typeof redactToolResults>[1] = []) => {
    const tools = redactToolResults({ t: tool({ inputSchema: z.object({}), execute: async () => execute() }) }, redactors, { cap });
    return (tools.t.execute as (i: unknown, o: unknown) => Promise<unknown>)({}, { toolCallId: "c", messages: [] });
  };

  it("passes a result that fits unchanged, and wraps one that does not, the whole within the cap", async () => {
    expect(await runOne(() => ({ small: "result" }))).toEqual({ small: "result" });
    const big = await runOne(() => "x".repeat(10_000));
    expect(big).toEqual({ truncated: true, note: "NOTE", result: expect.stringMatching(/^x{3000,}$/) });
    expect(bytes(big)).toBeLessThanOrEqual(cap.maxBytes);
  });

  it("counts JSON's escapes and UTF-8, and never splits a surrogate pair", async () => {
    for (const unit of ['"', "\u0001", "é", "😀", "\n"]) {
      const result = (await runOne(() => ({ text: unit.repeat(5_000) }))) as { result: { text: string } };
      expect(bytes(result)).toBeLessThanOrEqual(cap.maxBytes);
      expect(bytes(result)).toBeGreaterThan(cap.maxBytes - 16);
      expect(result.result.text.length % unit.length).toBe(0);
    }
  });

  it("keeps the first elements of a long array, and cuts a cyclic result rather than failing", async () => {
    const many = (await runOne(() => Array.from({ length: 100_000 }, (_, i) => i))) as { result: number[] };
    expect(many.result.slice(0, 3)).toEqual([0, 1, 2]);
    expect(bytes(many)).toBeLessThanOrEqual(cap.maxBytes);
    const cyclic: Record<string, unknown> = { name: "loop" };
    cyclic.self = cyclic;
    const cut = (await runOne(() => cyclic)) as { truncated: boolean; result: { name: string } };
    expect(cut).toMatchObject({ truncated: true, result: { name: "loop" } });
    expect(bytes(cut)).toBeLessThanOrEqual(cap.maxBytes);
  });

  it("the redactors see four times the cap: past the final cut, not the whole of a huge result", async () => {
    let seen = 0;
    await runOne(
      () => "y".repeat(1_000_000),
      [
        ({ output }) => {
          seen = bytes(output);
          return undefined;
        },
      ],
    );
    expect(seen).toBeGreaterThan(3 * cap.maxBytes);
    expect(seen).toBeLessThanOrEqual(4 * cap.maxBytes);
  });

  it("a thrown error with no redactor stays a throw, its message cut to the cap and the note after it", async () => {
    const error = (await runOne(() => {
      throw new RangeError("z".repeat(100_000));
    }).catch((e: unknown) => e)) as Error;
    expect(error).toBeInstanceOf(Error);
    expect(error.name).toBe("RangeError");
    expect(error.message).toMatch(/^z{3000,}\n\nNOTE$/);
    expect(new TextEncoder().encode(error.message).byteLength).toBeLessThanOrEqual(cap.maxBytes);
  });
});

describe("redaction without holes", () => {
  const MARKER = "MARKER-7f3a";
  const replaceMarker = definePlugin({
    key: "marker-redactor",
    onToolResult: ({ output }) => JSON.parse(JSON.stringify(output ?? null).replaceAll(MARKER, "[replaced]")),
  });
  const throwingRedactor = definePlugin({
    key: "broken-redactor",
    onToolResult: () => {
      throw new Error("redactor bug");
    },
  });
  const failingTool = definePlugin({
    key: "failing",
    toolFamilies: {
      f: () => ({
        tools: {
          lookup: tool({
            description: "looks something up",
            inputSchema: z.object({}),
            execute: async (): Promise<string> => {
              throw new Error(`upstream said: token ${MARKER} is invalid`);
            },
          }),
        },
      }),
    },
  });

  /** One turn whose model calls `lookup` once, then answers; returns what the model was sent the second time. */
  async function secondPrompt(plugins: ReturnType<typeof definePlugin>[]): Promise<string> {
    const runtime = runtimeOf(plugins);
    const model = mockModel([{ toolCalls: [{ toolName: "lookup", input: {} }] }, "done"]);
    const result = await generateWithFallback({
      env: {},
      config: config.model,
      messages: [{ role: "user", content: "look it up" }],
      tools: (
        await runtime.tools(
          { taskId: "t", contextId: "c", origin: "https://o.test", addArtifact: noArtifacts, trace: turnTrace(newTrace()) },
          { cutNote: "cut" },
        )
      ).tools,
      stopWhen: stepCountIs(3),
      models: scriptedChoices(model),
    });
    expect(result.ok).toBe(true);
    expect(callsOf(model)).toHaveLength(2);
    return JSON.stringify(callsOf(model)[1]!.prompt.filter((m) => m.role === "tool"));
  }

  it("a tool that throws: its error text reaches the model through the redactors", async () => {
    const seen = await secondPrompt([failingTool, replaceMarker]);
    expect(seen).toContain("upstream said: token [replaced] is invalid");
    expect(seen).not.toContain(MARKER);
  });

  it("a tool that throws, with a redactor that throws: the model gets the stub", async () => {
    const seen = await secondPrompt([failingTool, throwingRedactor]);
    expect(seen).toContain(JSON.stringify(REDACTION_FAILED_STUB));
    expect(seen).not.toContain(MARKER);
  });

  it("runtime.redact is that same step: in turn, failing closed", async () => {
    const event = { toolName: "read_page", input: {}, output: { summary: `it says ${MARKER}` } };
    expect(await runtimeOf([replaceMarker]).redact(event)).toEqual({ summary: "it says [replaced]" });
    expect(await runtimeOf([replaceMarker, throwingRedactor]).redact(event)).toEqual(REDACTION_FAILED_STUB);
    expect(await runtimeOf([]).redact(event)).toEqual(event.output);
  });

  describe("subtask results and errors, as the next round reads them", () => {
    const row = (over: Partial<SubtaskRow>): SubtaskRow =>
      ({
        id: "s",
        taskId: "t",
        round: 1,
        ordinal: 0,
        type: "read_page",
        paramsJson: '{"url":"https://x.test/"}',
        fingerprint: "f",
        status: "done",
        resultJson: null,
        error: null,
        createdAt: 0,
        updatedAt: 0,
        ...over,
      }) as SubtaskRow;
    const rows = [
      row({ resultJson: JSON.stringify({ summary: `the page quotes ${MARKER}` }) }),
      row({ ordinal: 1, status: "failed", error: `fetch failed near ${MARKER}` }),
    ];

    it("pass through the redactors", async () => {
      const redact = runtimeOf([replaceMarker]).redact;
      const text = renderSubtaskResults(await redactSubtaskRows(rows, redact));
      expect(text).toContain("the page quotes [replaced]");
      expect(text).toContain("fetch failed near [replaced]");
      expect(text).not.toContain(MARKER);
    });

    it("fail closed to the stub", async () => {
      const text = renderSubtaskResults(await redactSubtaskRows(rows, runtimeOf([throwingRedactor]).redact));
      expect(text).not.toContain(MARKER);
      expect(text.split(JSON.stringify(REDACTION_FAILED_STUB))).toHaveLength(3);
    });

    it("render exactly as before when nothing is redacted", async () => {
      expect(renderSubtaskResults(await redactSubtaskRows(rows, runtimeOf([]).redact))).toBe(renderSubtaskResults(rows));
    });
  });
});

describe("a workspace backing", () => {
  const runtime = createAgentRuntime({ plugins: [durableWorkspacePlugin()], env: {}, config });

  it("supplied by a plugin is built over the object's own storage, and a durable one survives eviction", async () => {
    const stub = env.RESEARCHER.get(env.RESEARCHER.idFromName(crypto.randomUUID()));
    await runInDurableObject(stub, (_i, state) => runtime.workspace({ storage: state.storage }).write("pages/a.txt", "kept"));
    await evictDurableObject(stub);
    expect(await runInDurableObject(stub, (_i, state) => runtime.workspace({ storage: state.storage }).read("pages/a.txt"))).toBe("kept");
    // The memory default keeps nothing across two workspaces, let alone an eviction.
    const memory = createAgentRuntime({ plugins: [], env: {}, config });
    await runInDurableObject(stub, (_i, state) => memory.workspace({ storage: state.storage }).write("pages/b.txt", "lost"));
    expect(await runInDurableObject(stub, (_i, state) => memory.workspace({ storage: state.storage }).read("pages/b.txt"))).toBeUndefined();
  });

  it("stays behind core's caps", async () => {
    const small = createAgentRuntime({ plugins: [durableWorkspacePlugin()], env: {}, config: resolveConfig({ workspace: { maxFiles: 1 } }) });
    const stub = env.RESEARCHER.get(env.RESEARCHER.idFromName(crypto.randomUUID()));
    await expect(
      runInDurableObject(stub, async (_i, state) => {
        const workspace = small.workspace({ storage: state.storage });
        await workspace.write("one.txt", "1");
        await workspace.write("two.txt", "2");
      }),
    ).rejects.toThrow(/already holds 1 files/);
  });
});

describe("transient model failures", () => {
  const apiError = (statusCode: number | undefined, isRetryable = false) =>
    new APICallError({ message: "m", url: "https://model.test/v1/chat/completions", requestBodyValues: {}, statusCode, isRetryable });

  it("are 408, 429, 5xx and network errors; the rest would fail the same way again", () => {
    for (const status of [408, 429, 500, 502, 503]) expect(isTransient(apiError(status)), String(status)).toBe(true);
    for (const status of [400, 401, 404, 422]) expect(isTransient(apiError(status)), String(status)).toBe(false);
    expect(isTransient(new TypeError("fetch failed"))).toBe(true);
    expect(isTransient(new DOMException("model call timed out", "TimeoutError"))).toBe(false);
    expect(isTransient(new Error("invalid JSON"))).toBe(false);
  });

  it("include a connection the runtime reports lost, also as the cause of the SDK's error; not its other errors, an overload or our timeout", async () => {
    // The runtime's own error for a connection the far end closed: a plain Error, not a TypeError.
    const lost: unknown = await droppedConnection().then(
      () => undefined,
      (error: unknown) => error,
    );
    expect(lost).toBeInstanceOf(Error);
    expect(lost).not.toBeInstanceOf(TypeError);
    expect(lost).toMatchObject({ message: "Network connection lost.", retryable: true });
    expect(isTransient(lost)).toBe(true);
    // Lost while the answer was read: the SDK wraps it, with the answer's status.
    const wrapped = new APICallError({
      message: "Failed to process successful response",
      url: "https://model.test/v1/chat/completions",
      requestBodyValues: {},
      statusCode: 200,
      cause: lost,
    });
    expect(isTransient(wrapped)).toBe(true);
    // The same words without the flag (an error rebuilt across a boundary) still say so.
    expect(isTransient(new Error("Network connection lost."))).toBe(true);
    expect(isTransient(Object.assign(new Error("Overloaded."), { retryable: true, overloaded: true }))).toBe(false);
    expect(isTransient(new Error("internal error; reference = 0123456789abcdef"))).toBe(false);
    expect(isTransient(new APICallError({ message: "m", url: "u", requestBodyValues: {}, statusCode: 200, cause: new Error("invalid JSON") }))).toBe(false);
    expect(isTransient(new DOMException("model call timed out", "TimeoutError"))).toBe(false);
  });

  it("are retried with the same request before the fallback, each attempt counted", async () => {
    const flaky = mockModel([apiError(503, true), apiError(429, true), "third time"]);
    const fallback = mockModel(["fallback"]);
    const result = await generateWithFallback({
      env: {},
      config: { ...config.model, retryDelayMs: 0 },
      messages: [{ role: "user", content: "hi" }],
      models: scriptedChoices(flaky, fallback),
    });
    expect(result).toMatchObject({ ok: true, text: "third time", fellBack: false, exchanges: 3 });
    expect(callsOf(fallback)).toHaveLength(0);
  });
});
