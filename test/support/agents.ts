import type { AgentConfigInput, AgentPolicy } from "@dynamicagents/core/agent";
import type { AgentNamespace, MessageJson } from "@dynamicagents/core/boundary";
import { ConfigError } from "@dynamicagents/core/errors";
import { DynamicAgent, type AgentPlugin } from "@dynamicagents/core/host";
import { definePlugin, defineSubtaskType, type PluginHost } from "@dynamicagents/core/plugin";
import { analyticsSink, type AgentEvent, type EventSink } from "@dynamicagents/core/telemetry";
import type { Subagents } from "@dynamicagents/core/round";
import { RecipeSubagentBase } from "@dynamicagents/core/subagent";
import { TurnWorkflowBase } from "@dynamicagents/core/turn";
import type { TenantConfig } from "@dynamicagents/core/worker";
import { tool } from "ai";
import { z } from "zod";

// Agents of the specs' own, beside the reference deployment's, in the test
// worker (test/support/worker.ts): every word they say is a marker, so a spec
// can prove that what users and models read comes from the agent, never core.

function required<T>(binding: T | undefined): T {
  if (binding === undefined) throw new Error("the test worker's marker bindings are missing (vitest.config.ts)");
  return binding;
}

// The specs' own start-up check (BrokenAgent) names a code of its own, as a deployment's may.
declare module "@dynamicagents/core/errors" {
  interface ConfigErrorCodes {
    ERR_SPEC_NOT_A_KEY: true;
  }
}

/** A marker: a word no code of ours writes. */
export const mark = (name: string) => `⟦${name}⟧`;

export const markerPolicy: AgentPolicy = {
  messages: {
    failure: mark("failure"),
    emptyAnswer: mark("empty-answer"),
    abandoned: mark("abandoned"),
    unfinished: mark("unfinished"),
    canceled: mark("canceled"),
    summaryHeading: mark("summary"),
    summarize: mark("summarize"),
    toolInterrupted: mark("tool-interrupted"),
    toolResultCut: mark("tool-result-cut"),
  },
  hitl: {
    askUserDescription: mark("ask-user"),
    approvalPrompt: () => mark("approval-prompt"),
    approve: mark("approve"),
    reject: mark("reject"),
    requestText: () => mark("request-text"),
    denied: mark("denied"),
    expired: mark("expired"),
    timedOut: mark("timed-out"),
  },
  // The facts after each marker let a spec see what core handed the words.
  parts: {
    data: (part) => `${mark("data")}${JSON.stringify(part)}`,
    file: (file) => `${mark("file")}${JSON.stringify(file)}`,
    withheld: (part) => `${mark("withheld")}${JSON.stringify(part)}`,
  },
  // The facts after each marker let a spec see what core handed the words.
  progress: {
    tool: (call) => `${mark("tool")}${JSON.stringify(call)}`,
    subtask: (subtask) => `${mark("subtask")}${JSON.stringify(subtask)}`,
    round: (round) => `${mark("round")}${JSON.stringify(round)}`,
  },
  rounds: {
    contract: mark("contract"),
    lastRoundNote: mark("last-round"),
    resultsHeader: mark("results"),
    progress: () => mark("progress"),
    notStarted: (context) => `${mark("not-started")}${JSON.stringify(context)}`,
    delegate: {
      description: ({ catalogue }) => `${mark("delegate")}${catalogue}`,
      invalid: ({ problems }) => `${mark("invalid")}${JSON.stringify(problems)}`,
      tooMany: (context) => `${mark("too-many")}${JSON.stringify(context)}`,
      overCap: (context) => `${mark("over-cap")}${JSON.stringify(context)}`,
      accepted: mark("accepted"),
    },
  },
};

/**
 * A tool that holds until released or aborted, and says which: the specs of
 * cancel read it (the test pool runs the objects in the specs' isolate).
 */
export const heldTool = { started: 0, aborted: 0, finished: 0, release: () => {} };
const holding = definePlugin({
  key: "holding",
  toolFamilies: {
    hold: () => ({
      tools: {
        hold_tool: tool({
          description: "holds",
          inputSchema: z.object({}),
          execute: (_input, { abortSignal }) =>
            new Promise((resolve, reject) => {
              heldTool.started++;
              heldTool.release = () => (heldTool.finished++, resolve({ held: "released" }));
              abortSignal?.addEventListener("abort", () => (heldTool.aborted++, reject(abortSignal.reason)), { once: true });
            }),
        }),
      },
    }),
  },
});

/** The value the counting tool's redactor replaces wherever it appears (a tool's argument, a result, a progress message). */
export const COUNTING_SECRET = "sk-spec-counting-7f3e";

/**
 * A slow tool that reports its progress (`count_up`: `to` steps, `everyMs`
 * apart, each one `ctx.progress`), whose plugin shows its arguments and
 * results in its tracker, and whose redactor replaces a secret wherever it is.
 */
const counting = definePlugin({
  key: "counting",
  progress: { showArguments: true, showResults: true },
  onToolResult: ({ output }) => JSON.parse(JSON.stringify(output ?? null).replaceAll(COUNTING_SECRET, mark("redacted"))),
  toolFamilies: {
    count: (context) => ({
      tools: {
        count_up: tool({
          description: mark("count-up"),
          inputSchema: z.object({ to: z.number().int().min(1).max(100), everyMs: z.number().int().min(0).max(1_000), secret: z.string().optional() }),
          execute: async ({ to, everyMs, secret }) => {
            for (let n = 1; n <= to; n++) {
              context.progress({ progress: n, total: to, message: `at ${n}${secret ? ` with ${secret}` : ""}` });
              await new Promise((resolve) => setTimeout(resolve, everyMs));
            }
            return { counted: to, ...(secret ? { secret } : {}) };
          },
        }),
      },
    }),
  },
});

/** A 1×1 PNG, the file the `make_file` tool returns. */
export const PNG_BASE64 = "iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJAAAADUlEQVR42mP8z8BQDwAEhQGAhKmMIQAAAABJRU5ErkJggg==";

/** How often the artifact tools really ran (a replayed call does not run): the test pool runs the objects in the specs' isolate. */
export const artifactTools = { runs: 0 };

/** Tools that add artifacts to their task: one a data artifact, one a file (a PNG, or a Markdown text). */
const artifacts = definePlugin({
  key: "artifacts",
  toolFamilies: {
    artifacts: (context) => ({
      tools: {
        make_data: tool({
          description: mark("make-data"),
          inputSchema: z.object({ n: z.number() }),
          execute: async ({ n }) => {
            artifactTools.runs++;
            return context.addArtifact({ name: "figures", description: mark("figures"), parts: [{ data: { n, squared: n * n } }] });
          },
        }),
        make_file: tool({
          description: mark("make-file"),
          inputSchema: z.object({ kind: z.enum(["png", "markdown"]) }),
          execute: async ({ kind }) => {
            artifactTools.runs++;
            const part =
              kind === "png"
                ? { raw: PNG_BASE64, mediaType: "image/png", filename: "dot.png" }
                : { raw: btoa("# Report\nAll good."), mediaType: "text/markdown", filename: "report.md" };
            return context.addArtifact({ name: kind === "png" ? "chart" : "report", parts: [part] });
          },
        }),
      },
    }),
  },
});

/** A store made before erasure (no `erase`): an erasure reports its rows kept (test/erasure-marker.spec.ts). */
const keeper = definePlugin({
  key: "keeper",
  store: {
    plugin: "keeper",
    version: 1,
    ensureTables: (sql) => {
      sql.exec("CREATE TABLE IF NOT EXISTS keeper_rows (id TEXT PRIMARY KEY)");
      sql.exec("INSERT OR IGNORE INTO keeper_rows (id) VALUES ('kept')");
    },
  },
});

/** Declines any turn whose text says `#decline`. */
const gate = definePlugin({ key: "gate", shouldHandleTurn: ({ text }) => !text.includes("#decline") });

/** One subtask type whose recipe echoes its param. */
const echoTask = definePlugin({
  key: "echo-task",
  subtaskTypes: [
    defineSubtaskType({
      key: "echo_task",
      description: mark("echo-task"),
      params: z.object({ say: z.string() }),
      // Writes what it says to its workspace first: the parent's caps bound it.
      recipe: async (ctx, params) => {
        await ctx.workspace.write("said.txt", params.say);
        return ctx.chunk("echo", async () => ({ said: params.say }));
      },
    }),
  ],
});

/** A subtask type whose recipe asks the human which one, and returns what it was told. */
const askTask = definePlugin({
  key: "ask-task",
  subtaskTypes: [
    defineSubtaskType({
      key: "ask_task",
      description: mark("ask-task"),
      params: z.object({ about: z.string() }),
      recipe: async (ctx, params) => {
        const before = await ctx.chunk("before", async () => ({ looked: params.about }));
        const answer = await ctx.ask("which", {
          question: `${params.about}?`,
          choices: [
            { id: "a", label: "first" },
            { id: "b", label: "second" },
          ],
        });
        return { ...before, answer };
      },
    }),
  ],
});

/**
 * A subtask type whose recipe makes `calls` metered model calls, one per
 * chunk, and returns their answers; a call the model could not answer fails it.
 */
const modelTask = definePlugin({
  key: "model-task",
  subtaskTypes: [
    defineSubtaskType({
      key: "model_task",
      description: mark("model-task"),
      params: z.object({ calls: z.number().int().min(1).max(3) }),
      recipe: async (ctx, params) => {
        const answers: string[] = [];
        for (let n = 1; n <= params.calls; n++) {
          answers.push(
            await ctx.chunk(`call-${n}`, async () => {
              const result = await ctx.generate({ messages: [{ role: "user", content: `${mark("recipe-call")} ${n}` }] });
              if (!result.ok) throw new Error(result.errors.join("; "));
              return result.text;
            }),
          );
        }
        return { answers };
      },
    }),
  ],
});

/**
 * One log line per event (docs/telemetry.md "Which lines"), for the agents whose
 * every event a spec reads in the log: MarkerResearcher (test/telemetry.spec.ts,
 * test/subtask-budget.spec.ts), ObservedAgent (test/telemetry.spec.ts) and
 * McpMarkerAgent (test/mcp.spec.ts, test/trace.spec.ts). The others keep the
 * default, two lines a turn, as the reference agents do.
 */
export const EVERY_LINE = { eventLines: true };

/**
 * Small workspace caps, the parent's: its subagents get these, not their own
 * config's. Token budgets no spec reaches at 2 tokens a call
 * (src/testing/chat-completion.ts), only one whose model bills more
 * (test/subtask-budget.spec.ts).
 */
const MARKER_CONFIG: AgentConfigInput = {
  rounds: { maxRounds: 2 },
  telemetry: EVERY_LINE,
  workspace: { maxFileBytes: 64 },
  turn: { maxTokensPerTurn: 1_000 },
  limits: { tokensPerCallerPerDay: 1_500 },
};

export class MarkerAgent extends DynamicAgent<Cloudflare.Env> {
  /** Finished tasks go at the first sweep (their messageIds stay): retention, observable without a clock. Two streams at most. */
  protected override agentConfig(): AgentConfigInput {
    return {
      retention: { finishedTaskDays: 0, messageIdDays: 30 },
      limits: { maxOpenStreams: 2 },
      // Small caps, so the specs of parts reach them (test/parts.spec.ts).
      parts: { fetchAllowlist: ["https://files.test"], maxFetchBytes: 64, maxInlineFileBytes: 1024, modelFileTypes: ["image/*"] },
    };
  }
  protected override agentPlugins(): AgentPlugin[] {
    return [gate, holding, artifacts, counting, keeper];
  }
  /** A send saying `#message` is answered with a message, no task: each reply a fresh id, so a retry shows it is the recorded one. */
  protected override directReply(message: MessageJson): MessageJson | undefined {
    if (!message.parts.some((p) => p.text?.includes("#message"))) return undefined;
    return {
      messageId: crypto.randomUUID(),
      role: "ROLE_AGENT",
      parts: [{ text: mark("direct") }],
      ...(message.contextId ? { contextId: message.contextId } : {}),
    };
  }
  protected agentSoul(): string {
    return mark("soul");
  }
  protected agentPolicy(): AgentPolicy {
    return markerPolicy;
  }
  protected override turnWorkflow() {
    return required(this.env.MARKER_WORKFLOW);
  }
}

export class MarkerResearcher extends DynamicAgent<Cloudflare.Env> {
  protected override agentConfig(): AgentConfigInput {
    return MARKER_CONFIG;
  }
  /** Its own tools too (artifacts): a round may call one before it answers. */
  protected override agentPlugins(): AgentPlugin[] {
    return [gate, echoTask, askTask, modelTask, artifacts];
  }
  protected agentSoul(): string {
    return mark("soul");
  }
  protected agentPolicy(): AgentPolicy {
    return markerPolicy;
  }
  protected override subagents(): Subagents<Cloudflare.Env> {
    return { subagentClass: MarkerSubagent };
  }
  protected override turnWorkflow() {
    return required(this.env.MARKER_WORKFLOW);
  }
}

export class MarkerSubagent extends RecipeSubagentBase<Cloudflare.Env> {
  protected agentPlugins(): AgentPlugin[] {
    return [gate, echoTask, askTask, modelTask];
  }
}

/**
 * A researcher whose subagent class the runtime cannot find: the Worker
 * exports it (test/support/worker.ts), but the pool's `additionalExports`
 * does not list it (vitest.config.ts), as an author's pool might forget to.
 */
export class UnlistedResearcher extends MarkerResearcher {
  protected override subagents(): Subagents<Cloudflare.Env> {
    return { subagentClass: UnlistedSubagent };
  }
}

export class UnlistedSubagent extends MarkerSubagent {}

/**
 * An agent that cannot start: its plugin refuses its secret, and its check is
 * careless enough to quote the value, which is a canary (vitest.config.ts).
 * Neither a caller nor a log line may ever see it.
 */
export class BrokenAgent extends DynamicAgent<Cloudflare.Env> {
  protected override agentPlugins(): AgentPlugin[] {
    const secret = this.env.SPEC_BROKEN_SECRET ?? "";
    if (!secret.startsWith("sk-")) {
      throw new ConfigError({ kind: "secret", name: "SPEC_BROKEN_SECRET" }, `SPEC_BROKEN_SECRET ${secret} is not a key`, { code: "ERR_SPEC_NOT_A_KEY" });
    }
    return [definePlugin({ key: "needs-secret", requires: { secrets: ["SPEC_BROKEN_SECRET"] } })];
  }
  protected agentSoul(): string {
    return mark("soul");
  }
  protected agentPolicy(): AgentPolicy {
    return markerPolicy;
  }
}

const markerManifest = (name: string) => ({
  name,
  description: `The specs' ${name} agent.`,
  version: "0.0.0",
  skills: [{ id: "mark", name: "Mark", description: "Answers in markers.", tags: ["test"] }],
  // PDFs are taken but not given to the model (its modelFileTypes are images): it is told of them.
  defaultInputModes: ["text/plain", "application/json", "text/*", "image/*", "application/pdf"],
  defaultOutputModes: ["text/plain", "application/json", "text/markdown", "image/png"],
});

/** What the observing plugin heard and emitted (the test pool runs the objects in the specs' isolate). */
export const observed = { events: [] as AgentEvent[] };
/** The observed agent's plugin secret (vitest.config.ts): no event or log line may carry it. */
const OBSERVED_SECRET_NAME = "OBSERVED_SECRET";

/**
 * Subscribes to every event, and has a tool that reads its secret, emits an
 * event of its own quoting it (scrubbed on the way out), and whose result its
 * redactor replaces.
 */
const observing = (env: Cloudflare.Env) =>
  definePlugin({
    key: "observing",
    requires: { secrets: [OBSERVED_SECRET_NAME] },
    onEvent: (event) => void observed.events.push(event),
    onToolResult: ({ toolName, output }) => (toolName === "read_secret" ? { secret: mark("redacted") } : output),
    toolFamilies: {
      secret: (context) => ({
        tools: {
          read_secret: tool({
            description: mark("read-secret"),
            inputSchema: z.object({}),
            execute: async () => {
              context.emit("secret_read", { length: String(env.OBSERVED_SECRET).length, quoted: `it is ${env.OBSERVED_SECRET}` }, "read");
              return { secret: env.OBSERVED_SECRET };
            },
          }),
        },
      }),
    },
  });

/** An agent whose events a spec watches (test/telemetry.spec.ts): a plugin that subscribes and emits, and a small daily token budget. */
export class ObservedAgent extends DynamicAgent<Cloudflare.Env> {
  protected override agentConfig(): AgentConfigInput {
    // The fake model bills 2 tokens a call (src/testing/chat-completion.ts): three plain turns spend the budget.
    return { limits: { tokensPerCallerPerDay: 6 }, telemetry: EVERY_LINE };
  }
  protected override agentPlugins(host: PluginHost<Cloudflare.Env>): AgentPlugin[] {
    return [observing(host.env)];
  }
  protected agentSoul(): string {
    return mark("soul");
  }
  protected agentPolicy(): AgentPolicy {
    return markerPolicy;
  }
  protected override turnWorkflow() {
    return required(this.env.MARKER_WORKFLOW);
  }
}

/** The Analytics Engine data points the two-lines agent wrote (the test pool runs the objects in the specs' isolate). */
export const analyticsPoints: { blobs?: string[]; doubles?: number[] }[] = [];

/** The observed agent with the log's default, two lines a turn (test/turn-log.spec.ts), and an Analytics Engine dataset that records. */
export class TwoLinesAgent extends ObservedAgent {
  protected override agentConfig(): AgentConfigInput {
    return { ...super.agentConfig(), telemetry: {} };
  }
  protected override eventSinks(): EventSink[] {
    return [...super.eventSinks(), analyticsSink({ writeDataPoint: (point) => void analyticsPoints.push(point) })];
  }
}

/** The test agents as tenants of an edge a spec builds with `createA2AWorker`. */
export const markerTenants: Record<string, TenantConfig<Cloudflare.Env>> = {
  marker: { manifest: markerManifest("marker"), agent: (env) => required(env.MARKER_AGENT) },
  "marker-researcher": { manifest: markerManifest("marker-researcher"), agent: (env) => required(env.MARKER_RESEARCHER) },
  "marker-unlisted": { manifest: markerManifest("marker-unlisted"), agent: (env) => required(env.MARKER_UNLISTED) },
  broken: { manifest: markerManifest("broken"), agent: (env) => required(env.MARKER_BROKEN) },
  observed: { manifest: markerManifest("observed"), agent: (env) => required(env.MARKER_OBSERVED) },
  "two-lines": { manifest: markerManifest("two-lines"), agent: (env) => required(env.MARKER_TWO_LINES) },
  mcp: { manifest: markerManifest("mcp"), agent: (env) => required(env.MARKER_MCP) },
};

export class MarkerTurnWorkflow extends TurnWorkflowBase<Cloudflare.Env> {
  protected agentNamespace(tenant: string): AgentNamespace {
    const config = markerTenants[tenant];
    if (!config) throw new Error(`no test tenant ${tenant}`);
    return config.agent(this.env);
  }
}
