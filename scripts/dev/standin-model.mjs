// The offline stand-in model: what `npm start` answers chat completions with
// when no real model is configured (no OPENAI_BASE_URL) and Workers AI cannot
// be reached (never, under `wrangler dev --local`).
//
// The contract is one pure function, `standInReply(request)`: an OpenAI
// chat-completions request body in, the assistant message the model "says" out.
// It is deterministic (the same request always gets the same answer), it never
// pretends to be a real model (every text starts with STANDIN_MARK), and it
// exercises the tools an agent is given, an author's own among them. The
// words and tool kinds are ONE table, standin-triggers.mjs (the README's
// trigger table mirrors it):
//
//   - no `tools` in the request          → a plain text answer;
//   - `tools` offered                    → one tool call per response, each
//       offered tool at most once since the person's last message (a block
//       of subtask results after it does not count as one), in this order:
//       1. a tool the user's words ask for (TRIGGERS: "remember …" →
//          `save_note`, "ask me" → `ask_user`, a tool's name → that tool…),
//          with arguments from the words or from its schema;
//       2. every other offered tool, plugin and MCP alike (an MCP tool is
//          named `<server>__<tool>`), in the order offered, with arguments
//          from its JSON schema (`fill`, standin-mcp.mjs for MCP tools):
//          strings the user's words (for a parameter that holds no text,
//          the likely phrase in them: standin-phrase.mjs), a URL only ever
//          a loopback one;
//          never the control tools (`ask_user`, `find_tools`) nor an
//          approval-gated tool (`save_note`, or a description speaking of
//          approval: standin-triggers.mjs says why) unless step 1 chose it,
//          so a `--once` turn never waits for a person unasked;
//       3. then `delegate…`, once per request: never again once results of
//          delegated subtasks (a line starting `[round N] `, as the core
//          renders them: ROUND_RESULT_PATTERN) are in the conversation;
//       `tool_choice` "none" calls nothing, naming a tool calls only it;
//   - nothing left to call               → a text answer that says which
//       tools it called and quotes what each returned: a tool's output, a
//       denial (the platform sends a rejected or expired approval back as
//       the tool's result, a text saying it was not run), the user's answer
//       to `ask_user`, the MCP tools' results in a sentence of their own,
//       and after delegation what the subtasks reported.
//
// So an agent loop driven by the stand-in always ends: at most one call of
// each offered tool per user message, at most one delegation per request.
//
// A URL is only ever a loopback one — the first in the user's message or the
// instructions, else a page the stand-in serves itself (`options.pageOrigin`)
// — so nothing the stand-in asks for makes an agent reach past this machine.
// The HTTP side (non-streaming and `stream: true`, and those pages) is in
// model-server.mjs.
import { ROUND_RESULT_PATTERN } from "../../src/a2a/wire.ts";
import { isMcpTool, mcpArguments, mcpSentence, smallNumber, fitLength } from "./standin-mcp.mjs";
import { stringArgument } from "./standin-phrase.mjs";
import { ASK_USER, DELEGATE_TOOL, onlyWhenAsked, quote, triggeredTool } from "./standin-triggers.mjs";

export const STANDIN_MARK = "[offline stand-in model]";
export const STANDIN_MODEL_ID = "offline-stand-in";
/** How an answer after tool calls says what the stand-in did. */
const SAYS_SO = "(I am no language model: I called each tool I was offered once, with arguments made from its schema and your words.)";

/**
 * @typedef {{ role: string, content?: unknown, tool_calls?: ToolCall[], tool_call_id?: string, name?: string }} ChatMessage
 * @typedef {{ id: string, type: "function", function: { name: string, arguments: string } }} ToolCall
 * @typedef {{ type?: string, function: { name: string, description?: string, parameters?: JsonSchema } }} ToolSpec
 * @typedef {{ type?: string | string[], properties?: Record<string, JsonSchema>, required?: string[], enum?: unknown[], default?: unknown }} JsonSchema
 * @typedef {{ model?: string, messages: ChatMessage[], tools?: ToolSpec[], tool_choice?: unknown, stream?: boolean }} ChatRequest
 * @typedef {{ content: string | null, toolCalls: ToolCall[], finishReason: "stop" | "tool_calls" }} StandInReply
 */

/**
 * The stand-in's answer to one chat-completions request.
 * @param {ChatRequest} request
 * @param {{ pageOrigin?: string }} [options]  where the stand-in serves pages of its own (loopback)
 * @returns {StandInReply}
 */
export function standInReply(request, options = {}) {
  if (!request || !Array.isArray(request.messages)) throw new TypeError("a chat-completions request needs `messages`");
  const messages = request.messages;
  const agent = agentName(messages);
  // What the person asked: the last user message that is not a block of subtask results.
  const asked = findLastIndex(messages, (m) => m.role === "user" && !ROUND_RESULT_PATTERN.test(textOf(m.content)));
  const userText = asked >= 0 ? textOf(messages[asked].content).trim() : "";
  const offered = (Array.isArray(request.tools) ? request.tools : []).filter((t) => typeof t?.function?.name === "string");
  /** @param {ToolSpec} tool @param {Record<string, unknown>} args @returns {StandInReply} */
  const callOf = (tool, args) => ({
    content: null,
    // Deterministic: the n-th assistant message of this conversation.
    toolCalls: [
      {
        id: `call_standin_${messages.filter((m) => m.role === "assistant").length + 1}`,
        type: "function",
        function: { name: tool.function.name, arguments: JSON.stringify(args) },
      },
    ],
    finishReason: "tool_calls",
  });

  // Each tool once per message of the person's: counted from that message, not from a block of
  // subtask results after it, so that a delegating agent's later rounds call none again.
  const sinceAsked = messages.slice(asked + 1);
  const called = new Set(sinceAsked.flatMap((m) => (m.tool_calls ?? []).map((call) => call.function?.name)));
  const everDelegated = messages.some((m) => ROUND_RESULT_PATTERN.test(textOf(m.content)));
  const delegatedNow = sinceAsked.some((m) => ROUND_RESULT_PATTERN.test(textOf(m.content)));
  const chosen = delegatedNow ? undefined : chooseTool(offered, request.tool_choice, { called, mayDelegate: !everDelegated, userText });
  if (chosen) {
    const { tool, args } = chosen;
    if (args) return callOf(tool, args);
    if (isMcpTool(tool.function.name)) return callOf(tool, mcpArguments(tool.function.parameters, userText));
    return callOf(tool, argumentsFor(tool, { userText, url: loopbackUrl(messages, userText, options.pageOrigin) }));
  }

  // Nothing left to call: the answer, from what the tools returned since the person's message.
  const results = toolResults(sinceAsked);
  // After delegation the subtasks' reports are the answer; the delegate call's own result is not news.
  if (everDelegated)
    return text(
      withTools(
        answerFromDelegation(agent, userText, messages),
        results.filter((r) => !DELEGATE_TOOL.test(r.name)),
      ),
    );
  return text(results.length > 0 ? answerFromTools(agent, userText, results) : plainAnswer(agent, userText));
}

/** An answer with the tools' sentences after it, when there are any. */
const withTools = (answer, results) => (results.length > 0 ? `${answer} ${toolSentences(results)}` : answer);

/** The tool a `tool_choice` names, if it names one. */
const namedChoice = (toolChoice) => /** @type {{ function?: { name?: string } }} */ (toolChoice)?.function?.name;

/** Rough token count for `usage`: words, at least one. */
export function roughTokens(value) {
  const words = String(value ?? "")
    .trim()
    .split(/\s+/)
    .filter(Boolean).length;
  return Math.max(1, words);
}

/** The text content of a message (a string, or OpenAI content parts). */
export function textOf(content) {
  if (typeof content === "string") return content;
  if (Array.isArray(content)) {
    return content.map((part) => (part && typeof part === "object" && typeof part.text === "string" ? part.text : "")).join("");
  }
  return "";
}

/**
 * @param {string} content
 * @returns {StandInReply}
 */
function text(content) {
  return { content, toolCalls: [], finishReason: "stop" };
}

function plainAnswer(agent, userText) {
  if (userText === "") return `${STANDIN_MARK} ${who(agent)} here. Your message had no text.`;
  const words = roughTokens(userText);
  return `${STANDIN_MARK} ${who(agent)} here. You said: "${quote(userText, 160)}" (${words} word${words === 1 ? "" : "s"}). I am no language model: set OPENAI_BASE_URL for real answers.`;
}

/** "You are Assistant, …" → "Assistant". */
function agentName(messages) {
  for (const m of messages) {
    if (m.role !== "system" && m.role !== "developer") continue;
    const match = /\bYou are ([A-Z][\w-]*)/.exec(textOf(m.content));
    if (match) return match[1];
  }
  return undefined;
}

/**
 * Which tool to call next, if any, and with what when the user's words chose it.
 * `tool_choice: "none"` calls nothing, a named choice only that tool; else a
 * tool the user's words ask for (standin-triggers.mjs), then every other tool
 * the stand-in calls unasked, in the order offered, then delegation. Each at
 * most once: `called` holds those called since the person's message.
 * @param {ToolSpec[]} offered
 * @param {unknown} toolChoice
 * @param {{ called: Set<string | undefined>, mayDelegate: boolean, userText: string }} options
 * @returns {{ tool: ToolSpec, args?: Record<string, unknown> } | undefined}
 */
function chooseTool(offered, toolChoice, { called, mayDelegate, userText }) {
  if (offered.length === 0 || toolChoice === "none") return undefined;
  const fresh = offered.filter((t) => !called.has(t.function.name));
  const delegates = (t) => DELEGATE_TOOL.test(t.function.name);
  const named = namedChoice(toolChoice);
  if (named) {
    const tool = fresh.find((t) => t.function.name === named);
    return tool ? (triggeredTool([tool], userText, () => true) ?? { tool }) : undefined;
  }
  const triggered = triggeredTool(fresh, userText, (t) => !delegates(t));
  if (triggered) return triggered;
  const unasked = fresh.find((t) => !delegates(t) && !onlyWhenAsked(t));
  if (unasked) return { tool: unasked };
  const delegate = mayDelegate ? fresh.find(delegates) : undefined;
  if (delegate) return { tool: delegate };
  // "required" means some tool must be called: the first one not called yet, in the order given.
  return toolChoice === "required" && fresh[0] ? { tool: fresh[0] } : undefined;
}

/**
 * Arguments that satisfy the tool's JSON schema, filled deterministically:
 * the required properties, and the optional ones that have a default, a
 * const or an enum; strings the user's words, or for a parameter that holds
 * no text the likely phrase in them (standin-phrase.mjs; within
 * min/maxLength; a URL a loopback one, a time zone UTC), numbers the smallest valid value from 1
 * (standin-mcp.mjs), booleans false, enums their first value, arrays
 * `minItems` items.
 *
 * A delegation tool whose items are `{type, params}` gets the first subtask
 * type its description lists, in the form the core's delegate tool writes
 * them (its `catalogue`): a JSON array of `{ type, description, params }`,
 * `params` a JSON Schema, on a line of the description.
 */
function argumentsFor(tool, { userText, url }) {
  const catalogue = subtaskCatalogue(tool.function.description ?? "");
  const args = fill(tool.function.parameters ?? { type: "object", properties: {} }, "", { userText, url, catalogue }, 0);
  return args && typeof args === "object" && !Array.isArray(args) ? args : {};
}

/** `…\n[{"type":"research","description":"…","params":{"type":"object",…}}]` → [{ key, params }]. */
function subtaskCatalogue(description) {
  for (const line of description.split("\n")) {
    const start = line.indexOf("[{");
    if (start < 0) continue;
    let listed;
    try {
      listed = JSON.parse(line.slice(start));
    } catch {
      continue;
    }
    if (Array.isArray(listed) && listed.every((t) => t && typeof t === "object" && typeof t.type === "string")) {
      return listed.map((t) => ({ key: t.type, params: t.params && typeof t.params === "object" ? t.params : undefined }));
    }
  }
  return [];
}

function fill(schema, name, ctx, depth) {
  if (!schema || typeof schema !== "object" || depth > 8) return undefined;
  if (schema.default !== undefined) return schema.default;
  if (schema.const !== undefined) return schema.const;
  if (Array.isArray(schema.enum) && schema.enum.length > 0) return schema.enum[0];
  const options = schema.anyOf ?? schema.oneOf;
  if (Array.isArray(options) && options.length > 0) return fill(options.find((o) => o?.type !== "null") ?? options[0], name, ctx, depth + 1);
  const type = Array.isArray(schema.type) ? schema.type.find((t) => t !== "null") : (schema.type ?? (schema.properties ? "object" : undefined));
  switch (type) {
    case "object": {
      const properties = schema.properties ?? {};
      if (properties.type && properties.params && ctx.catalogue.length > 0) {
        const [first] = ctx.catalogue;
        return { type: first.key, params: fill(first.params ?? { type: "object" }, "params", ctx, depth + 1) ?? {} };
      }
      const required = new Set(schema.required ?? []);
      const out = {};
      for (const [key, spec] of Object.entries(properties)) {
        const fixed = spec && typeof spec === "object" && (spec.default !== undefined || spec.const !== undefined || Array.isArray(spec.enum));
        if (!required.has(key) && !fixed) continue;
        out[key] = fill(spec, key, ctx, depth + 1) ?? "";
      }
      return out;
    }
    case "array": {
      const count = Math.max(0, Number(schema.minItems) || 0);
      return Array.from({ length: count }, () => fill(schema.items ?? {}, name, ctx, depth + 1));
    }
    case "number":
    case "integer":
      return smallNumber(schema, type === "integer");
    case "boolean":
      return false;
    case "string":
    case undefined:
      if (schema.format === "uri" || schema.format === "url" || /url|uri|link|href/i.test(name)) return ctx.url;
      if (/time_?zone|^tz$|zone/i.test(name)) return "UTC";
      return fitLength(stringArgument(name, ctx.userText) || "(no text)", schema.minLength, schema.maxLength);
    default:
      return undefined;
  }
}

const LOOPBACK = new Set(["127.0.0.1", "localhost", "[::1]"]);

/**
 * A URL to put in a tool call: the first loopback URL in the user's message,
 * then in the instructions; else a page of the stand-in's own. A bare origin
 * gets a page path. Never anything beyond this machine.
 */
function loopbackUrl(messages, userText, pageOrigin) {
  const slug =
    userText
      .toLowerCase()
      .replace(/[^a-z0-9]+/g, "-")
      .replace(/^-+|-+$/g, "")
      .slice(0, 60) || "page";
  const texts = [userText, ...messages.filter((m) => m.role === "system" || m.role === "developer").map((m) => textOf(m.content))];
  for (const text of texts) {
    for (const [candidate] of text.matchAll(/https?:\/\/[^\s"'<>),;]+/g)) {
      let url;
      try {
        url = new URL(candidate.replace(/[.]+$/, ""));
      } catch {
        continue;
      }
      if (!LOOPBACK.has(url.hostname)) continue;
      return url.pathname === "/" ? `${url.origin}/pages/${slug}` : url.href;
    }
  }
  return `${pageOrigin ?? "http://127.0.0.1"}/pages/${slug}`;
}

/**
 * Each tool result in `messages`, with the name of the call it answers.
 * @param {ChatMessage[]} messages
 * @returns {{ name: string, output: string }[]}
 */
function toolResults(messages) {
  const names = new Map();
  for (const m of messages) {
    for (const call of m.tool_calls ?? []) names.set(call.id, call.function?.name);
  }
  return messages
    .filter((m) => m.role === "tool")
    .map((m) => ({ name: names.get(m.tool_call_id) ?? m.name ?? "a tool", output: textOf(m.content) || "(nothing)" }));
}

/**
 * What the tools returned, as the answer says it: the plugin tools' results in
 * the order called, then the MCP tools' in a sentence of their own.
 * @param {{ name: string, output: string }[]} results
 */
function toolSentences(results) {
  const called = results
    .filter((r) => !isMcpTool(r.name))
    .map(({ name, output }) => {
      // JSON as it came; words (a denial, an error) in quotes, so the answer reads as a quote.
      const result = isJson(output) ? quote(output, 300) : `"${quote(output, 300)}"`;
      // ask_user's result is the person's answer, not something a tool did.
      return ASK_USER.test(name) ? `${name}, and you answered ${result}` : `${name}, which returned ${result}`;
    });
  const mcp = results.filter((r) => isMcpTool(r.name));
  return [...(called.length ? [`I called ${called.join("; then ")}.`] : []), ...(mcp.length ? [mcpSentence(mcp)] : [])].join(" ");
}

/** @param {{ name: string, output: string }[]} results */
function answerFromTools(agent, userText, results) {
  return `${STANDIN_MARK} ${who(agent)} here. You said: "${quote(userText, 160)}". ${toolSentences(results)} ${SAYS_SO}`;
}

function answerFromDelegation(agent, userText, messages) {
  const reports = messages
    .map((m) => textOf(m.content))
    .filter((content) => ROUND_RESULT_PATTERN.test(content))
    .map((content) => content.slice(content.search(ROUND_RESULT_PATTERN)));
  const count = reports.join("\n").match(new RegExp(ROUND_RESULT_PATTERN.source, "gm"))?.length ?? 0;
  return `${STANDIN_MARK} ${who(agent)} here. You asked: "${quote(userText, 160)}". ${count} delegated subtask${count === 1 ? "" : "s"} reported: ${quote(reports.join(" "), 400)}`;
}

function isJson(text) {
  try {
    JSON.parse(text);
    return true;
  } catch {
    return false;
  }
}

const who = (agent) => (agent ? `${agent}'s offline stand-in` : "The offline stand-in");

function findLastIndex(array, predicate) {
  for (let i = array.length - 1; i >= 0; i--) if (predicate(array[i])) return i;
  return -1;
}
