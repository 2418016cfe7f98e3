import { z } from "zod";
import { essenceOf } from "../a2a/parts.js";
import { ConfigError } from "../errors/index.js";

/** An http(s) origin, exactly (`https://host[:port]`, no path). */
const origin = z.string().refine((o) => URL.canParse(o) && new URL(o).origin === o && /^https?:$/.test(new URL(o).protocol), "must be an http(s) origin");

/**
 * What an agent may configure, with the values core uses when it does not.
 * Core ships the shape and safe defaults; the values are the agent's.
 */
const configSchema = z.strictObject({
  model: z
    .strictObject({
      chatModelId: z.string().min(1).default("@cf/meta/llama-3.3-70b-instruct-fp8-fast"),
      fallbackChatModelId: z.string().min(1).optional(),
      timeoutMs: z.number().int().min(1_000).max(600_000).default(60_000),
      /** Retries of a transient failure (408, 429, 5xx, network) per model, before the fallback. */
      retries: z.number().int().min(0).max(5).default(2),
      retryDelayMs: z.number().int().min(0).max(10_000).default(250),
    })
    .prefault({}),
  turn: z
    .strictObject({
      /** Model steps (tool round trips) one turn may take. */
      maxSteps: z.number().int().min(1).max(64).default(8),
      /** Total tokens (input + output) one turn may spend before it must stop, its subtasks' model calls included. */
      maxTokensPerTurn: z.number().int().min(256).default(32_000),
    })
    .prefault({}),
  history: z
    .strictObject({
      /**
       * What a conversation is: one per A2A context (the default, as A2A
       * means contexts), or one per caller across all its contexts.
       */
      conversation: z.enum(["context", "caller"]).default("context"),
      /** Compaction folds older turns into a summary once the unfolded ones pass this estimate. */
      compactAfterTokens: z.number().int().min(512).default(24_000),
      /** The newest turns a compaction keeps verbatim, in tokens. */
      keepRecentTokens: z.number().int().min(128).default(6_000),
      /** The most committed messages a turn's model request carries (after the summary). */
      windowMessages: z.number().int().min(2).max(2_000).default(400),
    })
    .prefault({}),
  hitl: z
    .strictObject({
      /**
       * A question or approval left unanswered this long expires: an approval
       * is then denied, a question answered "no answer", and the turn goes on.
       * A day: people answer within hours, and a turn stays bounded.
       */
      expiresAfterMinutes: z
        .number()
        .min(1)
        .max(60 * 24 * 30)
        .default(24 * 60),
      /** Whether the model may ask the user (the `ask_user` control tool). */
      askUser: z.boolean().default(true),
      /** Tools that need no approval here even though their plugin asks for it. */
      approvalExempt: z.array(z.string().min(1)).default([]),
    })
    .prefault({}),
  tools: z
    .strictObject({
      /**
       * How each tool reaches the model, by name (an MCP tool's name is
       * `<server>__<tool>`; a key ending in `*` names every tool it prefixes):
       * offered on every request, offered once the `find_tools` control tool
       * found it, or never.
       */
      exposure: z.record(z.string().min(1), z.enum(["always", "search", "never"])).default({}),
      /** What a tool `exposure` does not name is. */
      defaultExposure: z.enum(["always", "search", "never"]).default("always"),
      /** Tool schemas one model request carries at most, control tools included (24: past that, models pick tools worse). */
      maxSchemas: z.number().int().min(2).max(24).default(24),
      /** Tools one `find_tools` call returns at most. */
      searchResults: z.number().int().min(1).max(20).default(6),
      /**
       * UTF-8 bytes of one tool result's JSON at most, as the model and the
       * tool-call journal get it (MCP results and plugin tools alike); a
       * longer one is cut, and the model told so in the policy's
       * `messages.toolResultCut`. 64 KiB: about 16k tokens, and far below
       * the 2 MB a Durable Object's SQLite row may hold.
       */
      maxResultBytes: z
        .number()
        .int()
        .min(1024)
        .max(512 * 1024)
        .default(64 * 1024),
    })
    .prefault({}),
  mcp: z
    .strictObject({
      /** Origins (`https://host[:port]`) MCP servers may be reached at; a server anywhere else is refused at start-up. */
      allowlist: z.array(origin).default([]),
      servers: z
        .array(
          z.strictObject({
            /** Names the server: its tools reach the model as `<name>__<tool>`. */
            name: z.string().regex(/^[a-z][a-z0-9-]{0,23}$/, "must be 1-24 lowercase letters, digits or '-', starting with a letter"),
            /** Its streamable-HTTP endpoint. */
            url: z.string().refine((u) => URL.canParse(u) && /^https?:$/.test(new URL(u).protocol), "must be an http(s) URL"),
            /** Request headers whose values are secrets of the Worker, by name: `{ "Authorization": "DOCS_MCP_TOKEN" }`. */
            headerSecrets: z.record(z.string().regex(/^[A-Za-z0-9-]+$/, "must be a header name"), z.string().min(1)).default({}),
            /** A secret sent as `Authorization: Bearer <value>`. */
            bearerSecret: z.string().min(1).optional(),
            /** Only these of its tools (by the server's own names); all when unset. */
            tools: z.array(z.string().min(1)).optional(),
            /**
             * Its tools (by the server's own names) that run without a human's
             * approval. Every other tool of the server waits for one at each
             * call, so a tool the server adds or renames later never runs
             * unapproved (docs/mcp.md "Trust").
             */
            trustedTools: z.array(z.string().min(1)).default([]),
          }),
        )
        .default([]),
      /** How long a turn waits for a server to connect; past it, its tools are absent from that turn and the connection goes on. */
      connectTimeoutMs: z.number().int().min(100).max(60_000).default(3_000),
      /** How long one MCP tool call may take. */
      callTimeoutMs: z.number().int().min(1_000).max(600_000).default(60_000),
    })
    .prefault({}),
  rounds: z
    .strictObject({
      /** Rounds a delegating turn may take; the last one must answer. */
      maxRounds: z.number().int().min(1).max(32).default(4),
      /** Subtasks run at once. */
      maxParallel: z.number().int().min(1).max(64).default(4),
      /** Subtasks one round may create, however many delegate calls it makes. */
      maxSubtasksPerRound: z.number().int().min(1).max(128).default(16),
    })
    .prefault({}),
  limits: z
    .strictObject({
      /**
       * Turns one caller may have running at once (their task submitted or working); a new task past it is
       * refused (429, QUOTA_EXCEEDED) and creates nothing. Turns parked for a human, or with only their
       * pushes left to deliver, count toward the two caps below instead.
       */
      maxInFlightTurns: z.number().int().min(1).max(1024).default(32),
      /** Tasks of one caller waiting for a human's answer at once; a new task past it is refused like one over `maxInFlightTurns`. */
      maxPendingQuestions: z.number().int().min(1).max(1024).default(32),
      /**
       * Finished tasks of one caller whose pushes are still being delivered (a gatekeeper down: each is
       * retried for up to an hour); a new task past it is refused like one over `maxInFlightTurns`.
       */
      maxPendingDeliveries: z.number().int().min(1).max(4096).default(256),
      /** Streams (SendStreamingMessage, SubscribeToTask) one caller may hold open at once; one more is refused like a turn over the cap. */
      maxOpenStreams: z.number().int().min(1).max(1024).default(16),
      /**
       * Tokens (input + output) one caller's model calls may spend per UTC
       * day; once spent, every send is refused (429, QUOTA_EXCEEDED) until the
       * day turns, with nothing created and no model call. A turn already
       * running finishes. Unset: no cap.
       */
      tokensPerCallerPerDay: z.number().int().min(1).optional(),
    })
    .prefault({}),
  telemetry: z
    .strictObject({
      /** Whether events carry message text (`task.accepted`, `turn.finished`): off, so logs hold none by default. */
      messageText: z.boolean().default(false),
      /**
       * One log line per event. Off: a turn writes two, `task.accepted` and a
       * wide `turn.finished` with its figures, besides refusals and failures
       * (docs/telemetry.md "Which lines"); plugins and Analytics Engine get every event either way.
       */
      eventLines: z.boolean().default(false),
    })
    .prefault({}),
  retention: z
    .strictObject({
      /**
       * A finished task (and what hangs off it) is deleted this long after it
       * ended and was delivered: a week covers a gatekeeper's outage and its
       * polling fallback, and keeps a caller's object bounded.
       */
      finishedTaskDays: z.number().min(0).max(3650).default(7),
      /** A deleted task's `messageId` is remembered this long, so a late retry is TaskNotFound and starts nothing. */
      messageIdDays: z.number().min(0).max(3650).default(30),
      /**
       * A conversation nobody added to this long is deleted whole (its
       * summary too; docs/retention.md): a context's words do not outlive
       * their use. The next message in its context starts an empty one.
       */
      conversationIdleDays: z.number().min(0).max(3650).default(90),
    })
    .prefault({}),
  parts: z
    .strictObject({
      /**
       * Origins (`https://host[:port]`) a file part's URL is fetched from for
       * the model; any other URL reaches the model as the URL itself.
       */
      fetchAllowlist: z.array(origin).default([]),
      /** Bytes of one fetched file read at most; the read stops there and a longer file is not given to the model. */
      maxFetchBytes: z
        .number()
        .int()
        .min(1)
        .max(1024 * 1024)
        .default(512 * 1024),
      /** URLs fetched for one message at most; later ones reach the model as URLs. */
      maxFetchesPerMessage: z.number().int().min(0).max(32).default(8),
      /**
       * Bytes of file content (text and bytes, all files of a message
       * together) the model's message carries; a file past it is described
       * instead. Bounded so the stored message stays within a row of SQLite.
       */
      maxInlineFileBytes: z
        .number()
        .int()
        .min(0)
        .max(1024 * 1024)
        .default(512 * 1024),
      /**
       * Media types (`image/*` allowed) of binary files the model is given as
       * file parts; any other binary file is described. None by default: only
       * a model that reads them should get them.
       */
      modelFileTypes: z.array(z.string().refine((m) => essenceOf(m) !== undefined, "must be a media type such as image/png or image/*")).default([]),
      /** Bytes of JSON all the artifacts a turn's tools add to one task may take together. */
      maxArtifactBytes: z
        .number()
        .int()
        .min(1)
        .max(1024 * 1024)
        .default(512 * 1024),
    })
    .prefault({}),
  workspace: z
    .strictObject({
      maxFiles: z.number().int().min(1).default(256),
      maxFileBytes: z
        .number()
        .int()
        .min(1)
        .default(1024 * 1024),
      maxTotalBytes: z
        .number()
        .int()
        .min(1)
        .default(16 * 1024 * 1024),
    })
    .prefault({}),
});

export type AgentConfig = z.output<typeof configSchema>;
export type AgentConfigInput = z.input<typeof configSchema>;

/**
 * Validates an agent's overrides and fills in the defaults. Every object is
 * strict, so a misspelt key (`turn.maxStep`) is refused by name at start-up
 * rather than silently ignored; the error names the first offending field as
 * its culprit and lists every problem.
 */
export function resolveConfig(input: AgentConfigInput = {}): AgentConfig {
  const result = configSchema.safeParse(input);
  if (result.success) {
    const config = result.data;
    if (config.history.keepRecentTokens >= config.history.compactAfterTokens) {
      throw new ConfigError(
        { kind: "config", name: "history.keepRecentTokens" },
        `agentConfig(): history.keepRecentTokens (${config.history.keepRecentTokens}) must be below history.compactAfterTokens (${config.history.compactAfterTokens}), or compaction could never shorten anything`,
      );
    }
    for (const [i, server] of config.mcp.servers.entries()) {
      if (!config.mcp.allowlist.includes(new URL(server.url).origin)) {
        throw new ConfigError(
          { kind: "config", name: `mcp.servers.${i}.url` },
          `agentConfig(): MCP server ${JSON.stringify(server.name)} is at ${new URL(server.url).origin}, which is not on mcp.allowlist: add the origin there to reach it`,
          { code: "ERR_MCP_NOT_ALLOWLISTED" },
        );
      }
      if (config.mcp.servers.findIndex((s) => s.name === server.name) !== i) {
        throw new ConfigError({ kind: "config", name: `mcp.servers.${i}.name` }, `agentConfig(): two MCP servers are named ${JSON.stringify(server.name)}`);
      }
    }
    return config;
  }
  const fields = result.error.issues.map((issue) => {
    const path = issue.path.join(".");
    // An unknown key is reported on its parent: name the key itself.
    const keys = issue.code === "unrecognized_keys" ? issue.keys : [];
    return keys.length ? keys.map((key) => (path ? `${path}.${key}` : key)) : [path || "(root)"];
  });
  const problems = result.error.issues.map((issue, i) => `${fields[i]!.join(", ")}: ${issue.message}`);
  throw new ConfigError({ kind: "config", name: fields[0]![0]! }, `agentConfig() is invalid: ${problems.join("; ")}`);
}
