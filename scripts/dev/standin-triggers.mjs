// The offline stand-in model's one table of words (standin-model.mjs reads
// it): which tools it calls on its own, which only when your words ask for
// them, and with what. The README's trigger table ("Local work: npm start")
// is this table rendered (`triggerTable()`); test/node/standin-triggers.test.mjs
// fails when the two disagree.
//
// The stand-in sees what a real model sees: the tools' names, descriptions
// and JSON schemas. It cannot see which tools need a human's approval (the
// platform keeps `needsApproval` to itself), so a tool counts as
// approval-gated when its name is in APPROVAL_TOOLS (the reference's
// `save_note`) or its description speaks of approving (`approve`,
// `approval`): the reference's save_note says "The user is asked to approve
// it first". An author's approval-gated tool whose description says neither
// is called with the rest, and the turn then waits for the approval
// (`--once` exits 3): say so in its description, or add its name here.

/** `ask_user`: the platform's control tool for a question to the person. */
export const ASK_USER = /^ask_?user$/i;
/** `find_tools`: the platform's control tool that searches the tools not sent. */
const FIND_TOOLS = /^find_?tools$/i;
/** The platform's `delegate` tool (a round loop's subtasks). */
export const DELEGATE_TOOL = /delegat/i;
/** Tools the stand-in never calls unasked, whatever their description says: an approval-gated one, a slow one. */
const APPROVAL_TOOLS = [/(?:^|__)save_?note$/i];
const SLOW_TOOLS = [/(?:^|__)count_?down$/i];
/** A description that says the tool waits for a person's approval. */
const APPROVAL_WORDS = /\bapprov(?:e|es|ed|al|ing)\b/i;

/**
 * Whether the stand-in calls `tool` only when the user's words ask for it:
 * the control tools, the approval-gated ones (see above), and the dev MCP
 * server's `count_down`, which takes seconds.
 * @param {{ function: { name: string, description?: string } }} tool
 */
export function onlyWhenAsked(tool) {
  const { name, description = "" } = tool.function;
  return (
    ASK_USER.test(name) || FIND_TOOLS.test(name) || [...APPROVAL_TOOLS, ...SLOW_TOOLS].some((pattern) => pattern.test(name)) || APPROVAL_WORDS.test(description)
  );
}

/** A name as words may say it: `save_note` is named by "save_note" or "save note". @param {string} name */
const spoken = (name) => new RegExp(`(?:^|[^\\w])${name.replace(/[^A-Za-z0-9]+/g, "[_\\s-]?")}(?![\\w])`, "i");

/**
 * @typedef {{ function: { name: string, description?: string } }} NamedTool
 * @typedef {{
 *   words: string,
 *   calls: string,
 *   pattern?: RegExp,
 *   tool?: RegExp,
 *   args?: (userText: string, match: RegExpExecArray) => Record<string, unknown>,
 *   byName?: true,
 * }} Trigger
 *   `words`, `calls`: the README's row (Markdown). `pattern` finds the words in the user's last message,
 *   `tool` the offered tool they name; `args` makes its arguments from the words (none: from its schema).
 *   `byName`: the row for any tool the words name outright.
 */

/** What the stand-in does with any message, before the trigger rows (the README's first row). */
export const ANY_MESSAGE = {
  words: "any",
  calls:
    "each offered tool it has not called since your message, one call per response, the rows below first: plugin tools (`current_time`, `fetch_page`, `list_notes`, your own) and MCP tools (`devtools__roll_dice`), with arguments made from the JSON schema (the required properties and those with a default or enum; a string your words whole when its name says it holds a text (`text`, `message`, `question`, `note`, …), otherwise the likely word or phrase in them, as a person would pass it: a capitalised word that does not open a sentence, else the words after `in`, `for` or `about` (`What's the weather in London tomorrow?` passes `London` as a `city`), else your words; a URL only a loopback one, numbers the smallest valid value, booleans false, enums their first value); then `delegate`, once per request (never again after its results); then it answers, quoting each result. Never, unless a row below asks for it: `ask_user`, `find_tools`, an approval-gated tool (`save_note`, or one whose description speaks of approval), or the slow `devtools__count_down`",
};

/**
 * The words that make the stand-in call a tool first (first matching row whose tool is offered
 * and not called yet): the only way to its control and approval-gated tools.
 * @type {Trigger[]}
 */
export const TRIGGERS = [
  {
    words: "`ask me a question`",
    calls: "`ask_user` with an open question",
    pattern: /\bask me a question\b/i,
    tool: ASK_USER,
    args: (userText) => ({ question: `What should I know before I answer "${quote(userText, 120)}"?` }),
  },
  {
    words: "`ask me`",
    calls: "`ask_user` with three choices (brief, in detail, never mind) and your own words allowed",
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
  {
    words: "`remember` or `note`",
    calls: '`save_note` (needs your approval) with the text after the word: `remember to buy milk` saves "to buy milk"',
    pattern: /\b(?:remember|note)\b[\s:,-]*(?:that\s+)?(.*)$/is,
    tool: /save_?note/i,
    args: (userText, match) => ({ text: clip((match[1] ?? "").trim() || userText || "(no text)", 2000) }),
  },
  { words: "`notes`", calls: "`list_notes` first (`list my notes`)", pattern: /\bnotes\b/i, tool: /list_?notes/i, args: () => ({}) },
  {
    words: "`count down` (`count down 8`)",
    calls: "`devtools__count_down`, 5 seconds or the number after it (at most 30): its progress shows in the chat and the dev console",
    pattern: /\bcount[_\s-]?down\b\D{0,20}(\d+)?/i,
    tool: /(?:^|__)count_?down$/i,
    args: (_userText, match) => ({ seconds: Math.min(30, Math.max(1, Number(match[1] ?? 5))) }),
  },
  {
    words: "`find tools`",
    calls: "`find_tools`, with arguments from its schema (its query the likely phrase: `find tools for maps` searches `maps`)",
    pattern: /\bfind[_\s-]?tools\b/i,
    tool: FIND_TOOLS,
  },
  {
    words: "a tool's name (`save_note`, `ask_user`, `my_tool` or `my tool`)",
    calls: "that tool, with arguments from its schema: how to call an approval-gated tool of your own",
    byName: true,
  },
];

/**
 * The first trigger the user's words hold whose tool is offered and `callable`, with its arguments
 * (undefined: from the tool's schema).
 * @template {NamedTool} T
 * @param {T[]} offered @param {string} userText @param {(tool: T) => boolean} callable
 * @returns {{ tool: T, args?: Record<string, unknown> } | undefined}
 */
export function triggeredTool(offered, userText, callable) {
  for (const trigger of TRIGGERS) {
    if (trigger.byName) {
      const named = offered.find((t) => callable(t) && spoken(t.function.name).test(userText));
      if (named) return { tool: named };
      continue;
    }
    const match = trigger.pattern?.exec(userText);
    const tool = match ? offered.find((t) => trigger.tool?.test(t.function.name) && callable(t)) : undefined;
    if (match && tool) return { tool, args: trigger.args?.(userText, match) };
  }
  return undefined;
}

/** The README's table, as Markdown: the header, then ANY_MESSAGE, then TRIGGERS in their order. */
export function triggerTable() {
  const rows = [ANY_MESSAGE, ...TRIGGERS].map((row) => `| ${row.words} | ${row.calls} |`);
  return ["| words in your message | the stand-in calls |", "| --- | --- |", ...rows].join("\n");
}

/** One line, at most `max` characters. */
export function quote(value, max) {
  return clip(String(value).replace(/\s+/g, " ").trim(), max);
}

function clip(value, max) {
  return value.length <= max ? value : `${value.slice(0, max - 1)}…`;
}
