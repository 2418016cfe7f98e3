// The offline stand-in model: what `npm start` answers chat completions with
// when no real model is configured (no OPENAI_BASE_URL) and Workers AI cannot
// be reached (never, under `wrangler dev --local`).
//
// The contract is one pure function, `standInReply(request)`: an OpenAI
// chat-completions request body in, the assistant message the model "says" out.
// It is deterministic (the same request always gets the same answer), it never
// pretends to be a real model (every text starts with STANDIN_MARK), and it
// still exercises the machinery a real model would:
//
//   - no `tools` in the request          → a plain text answer;
//   - MCP tools offered (a name holding
//     `__`, core's `<server>__<tool>`),
//     one not called since the person's
//     last message                       → a call of the first such tool,
//       before every rule below: each MCP tool once per user message, one
//       call per response, arguments from its JSON schema alone (required
//       properties: strings the user's words, numbers the smallest valid
//       value from 1, booleans false, enums their first value;
//       standin-mcp.mjs; `tool_choice` "none" or naming a tool skips the
//       rule). Then the rules below go on as if the MCP calls had not
//       happened, and the answer adds which MCP tools it used and a short
//       quote of each result ("I used the MCP tools … ("…")");
//   - `tools` offered, none called since
//     the last user message              → one tool call, chosen by name:
//       first a tool the user's words name by a trigger (TRIGGERS below),
//       then a delegation tool (`delegate…`), then a clock tool (`…time…`,
//       `…clock…`, `…date…`, `now`); no other tool (MCP tools aside) is
//       ever called (a page fetch would need the network);
//   - trigger words in the user's last
//     message (case ignored), only when
//     the tool they name is offered      → "ask me a question" calls `ask_user`
//       with an open question; "ask me" calls it with three choices (brief,
//       detailed, skip) and free text allowed; the word "remember" or "note"
//       calls the approval tool `save_note` with the text after the word
//       ("remember to buy milk" → "to buy milk"); the word "notes" calls
//       `list_notes`. Without these words `ask_user` and `save_note` are
//       never called, so a human is only ever asked when the user said so;
//   - a tool result after the last user
//     message                            → a text answer quoting the results:
//       a tool's output (a saved note), a denial (the platform sends a
//       rejected or expired approval back as the tool's result, a text
//       saying it was not run), or the user's answer to `ask_user`;
//   - results of delegated subtasks in
//     the conversation (a line starting
//     `[round N] `, as the core renders
//     them: ROUND_RESULT_PATTERN)        → a text answer, never a second
//       delegation.
//
// So an agent loop driven by the stand-in always ends: each MCP tool once and
// at most one other tool round per user message (an approval or a question
// answered is that round's result, never a reason to call again), at most
// one delegation per request.
//
// Arguments are filled from the tool's JSON schema (see `fill`; an MCP tool's
// by standin-mcp.mjs, which puts in no URL). A URL is only
// ever a loopback one — the first in the user's message or the instructions,
// else a page the stand-in serves itself (`options.pageOrigin`) — so nothing
// the stand-in asks for makes an agent reach past this machine. The HTTP side
// (non-streaming and `stream: true`, and those pages) is in model-server.mjs.
import { ROUND_RESULT_PATTERN } from "../../src/a2a/wire.ts";
import { isMcpTool, mcpArguments, mcpSentence, nextMcpTool } from "./standin-mcp.mjs";

export const STANDIN_MARK = "[offline stand-in model]";
export const STANDIN_MODEL_ID = "offline-stand-in";

const DELEGATE_TOOL = /^delegate|delegat/i;
const CLOCK_TOOL = /time|clock|date|^now$/i;
const ASK_USER = /^ask_?user$/i;

/**
 * Tools called only when the user's words ask for them, in this order of
 * precedence: `pattern` finds the words, `tool` the tool they name, `args`
 * its arguments from the words. Documented in the header and the README.
 * @type {Array<{ pattern: RegExp, tool: RegExp, args: (userText: string, match: RegExpExecArray) => Record<string, unknown> }>}
 */
const TRIGGERS = [
  { pattern: /\bask me a question\b/i, tool: ASK_USER, args: (userText) => ({ question: `What should I know before I answer "${quote(userText, 120)}"?` }) },
  {
    pattern: /\bask me\b/i,
    tool: ASK_USER,
    args: (userText) => ({
      question: `How should I answer "${quote(userText, 120)}"?`,
      choices: [
        { id: "brief", label: "Briefly" },
        { id: "detailed", label: "In detail" },
        { id: "skip", label: "Never mind" },
      ],
      allowFreeform: true,
    }),
  },
  { pattern: /\b(?:remember|note)\b[\s:,-]*(?:that\s+)?(.*)$/is, tool: /save_?note/i, args: (userText, match) => ({ text: noteText(userText, match[1]) }) },
  { pattern: /\bnotes\b/i, tool: /list_?notes/i, args: () => ({}) },
];

/** The note to save: the words after the trigger, else the whole message; within save_note's 2000 characters. */
function noteText(userText, after) {
  return clip((after ?? "").trim() || userText || "(no text)", 2000);
}

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
  const lastUser = findLastIndex(messages, (m) => m.role === "user");
  // What the person asked: the last user message that is not a block of subtask results.
  const asked = findLastIndex(messages, (m) => m.role === "user" && !ROUND_RESULT_PATTERN.test(textOf(m.content)));
  const userText = asked >= 0 ? textOf(messages[asked].content).trim() : "";
  const sinceUser = messages.slice(lastUser + 1);
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

  // MCP tools first, each once per message of the person's: counted from that message, not from
  // a block of subtask results after it, so that a delegating agent's later rounds call none again.
  const mcpTool = request.tool_choice === "none" || namedChoice(request.tool_choice) ? undefined : nextMcpTool(offered, messages.slice(asked + 1));
  if (mcpTool) return callOf(mcpTool, mcpArguments(mcpTool.function.parameters, userText));

  // Other tools' results after the user's message: answer from them.
  const results = toolResults(sinceUser);
  if (results.some((r) => !isMcpTool(r.name))) return text(answerFromTools(agent, userText, results));

  const delegated = messages.some((m) => ROUND_RESULT_PATTERN.test(textOf(m.content)));
  const others = offered.filter((t) => !isMcpTool(t.function.name));
  const chosen = chooseTool(others, request.tool_choice, { mayDelegate: !delegated, userText });
  if (chosen) {
    const { tool, args } = chosen;
    return callOf(tool, args ?? argumentsFor(tool, { userText, url: loopbackUrl(messages, userText, options.pageOrigin) }));
  }

  // Only MCP results (or none): the answer the rules give, with what the MCP tools said.
  if (delegated) return text(withMcp(answerFromDelegation(agent, userText, messages), results));
  return text(results.length > 0 ? answerFromTools(agent, userText, results) : plainAnswer(agent, userText));
}

/** An answer with the MCP results' sentence after it, when there are any. */
const withMcp = (answer, results) => (results.length > 0 ? `${answer} ${mcpSentence(results)}` : answer);

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
 * Which tool to call, if any, and with what when the user's words chose it.
 * `tool_choice: "none"` calls nothing, a named choice calls that tool; else
 * a trigger the user's words hold, then delegation, then the clock.
 * @param {ToolSpec[]} offered  MCP tools left out: their own rule comes first
 * @param {unknown} toolChoice
 * @param {{ mayDelegate: boolean, userText: string }} options
 * @returns {{ tool: ToolSpec, args?: Record<string, unknown> } | undefined}
 */
function chooseTool(offered, toolChoice, { mayDelegate, userText }) {
  if (offered.length === 0 || toolChoice === "none") return undefined;
  const named = namedChoice(toolChoice);
  const only = (tool) => (tool ? { tool } : undefined);
  if (named) return only(offered.find((t) => t.function.name === named));
  const byName = (pattern) => offered.find((t) => pattern.test(t.function.name));
  const triggered = triggeredTool(byName, userText);
  if (triggered) return triggered;
  const tool = (mayDelegate ? byName(DELEGATE_TOOL) : undefined) ?? byName(CLOCK_TOOL);
  if (tool) return { tool };
  // "required" means some tool must be called: the first one, in the order given.
  return toolChoice === "required" ? only(offered[0]) : undefined;
}

/**
 * The first trigger whose words the user wrote and whose tool is offered. A
 * trigger whose tool is missing falls through to the next one, so "ask me"
 * to an agent without `ask_user` is an ordinary message.
 * @param {(pattern: RegExp) => ToolSpec | undefined} byName
 * @param {string} userText
 */
function triggeredTool(byName, userText) {
  for (const trigger of TRIGGERS) {
    const match = trigger.pattern.exec(userText);
    const tool = match ? byName(trigger.tool) : undefined;
    if (match && tool) return { tool, args: trigger.args(userText, match) };
  }
  return undefined;
}

/**
 * Arguments that satisfy the tool's JSON schema, filled deterministically:
 * text-like fields get the user's request, the rest their default, first enum
 * value or a neutral value of their type; arrays get `minItems` items.
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
        const value = fill(spec, key, ctx, depth + 1);
        if (required.has(key) || (value !== undefined && value !== "")) out[key] = value ?? "";
      }
      return out;
    }
    case "array": {
      const count = Math.max(0, Number(schema.minItems) || 0);
      return Array.from({ length: count }, () => fill(schema.items ?? {}, name, ctx, depth + 1));
    }
    case "number":
    case "integer":
      return typeof schema.minimum === "number" ? schema.minimum : 1;
    case "boolean":
      return false;
    case "string":
    case undefined:
      if (schema.format === "uri" || schema.format === "url" || /url|uri|link|href/i.test(name)) return ctx.url;
      if (/time_?zone|^tz$|zone/i.test(name)) return "UTC";
      if (/task|prompt|question|query|request|instruction|goal|topic|text|message|input|subject/i.test(name)) return ctx.userText || "(no text)";
      return "";
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

/** @param {{ name: string, output: string }[]} results */
function answerFromTools(agent, userText, results) {
  const called = results
    .filter((r) => !isMcpTool(r.name))
    .map(({ name, output }) => {
      // JSON as it came; words (a denial, an error) in quotes, so the answer reads as a quote.
      const result = isJson(output) ? quote(output, 300) : `"${quote(output, 300)}"`;
      // ask_user's result is the person's answer, not something a tool did.
      return ASK_USER.test(name) ? `${name}, and you answered ${result}` : `${name}, which returned ${result}`;
    });
  const mcp = results.filter((r) => isMcpTool(r.name));
  const sentences = [...(called.length ? [`I called ${called.join("; then ")}.`] : []), ...(mcp.length ? [mcpSentence(mcp)] : [])];
  return `${STANDIN_MARK} ${who(agent)} here. You said: "${quote(userText, 160)}". ${sentences.join(" ")}`;
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

/** One line, at most `max` characters. */
function quote(value, max) {
  return clip(String(value).replace(/\s+/g, " ").trim(), max);
}

function clip(value, max) {
  return value.length <= max ? value : `${value.slice(0, max - 1)}…`;
}

function findLastIndex(array, predicate) {
  for (let i = array.length - 1; i >= 0; i--) if (predicate(array[i])) return i;
  return -1;
}
