/**
 * The conversation workloads' figures (lib/conversations.mjs) as text for
 * stdout and as their section of bench/README.md. The section sits between
 * two markers: a run that measures the conversations writes it (`npm run
 * bench -- --only conversations` nothing else), one that does not keeps it.
 */

const BEGIN = "<!-- bench:conversations begins: written by `npm run bench` when it runs the conversation workloads -->";
const END = "<!-- bench:conversations ends -->";
/** The issue's target: the last thousand turns at least this fast against the first. */
const TARGET_RATIO = 0.8;
const SOAK_BEGIN = "<!-- bench:soak begins";

const int = (v) => (Number.isFinite(v) ? Math.round(v).toLocaleString("en-US") : "n/a");
const f1 = (v) => (Number.isFinite(v) ? v.toFixed(1) : "n/a");
const times = (v) => (Number.isFinite(v) ? `${v.toFixed(2)}×` : "n/a");
const kib = (v) => (Number.isFinite(v) ? (v / 1024).toFixed(1) : "n/a");
const s0 = (ms) => (Number.isFinite(ms) ? (ms / 1000).toFixed(0) : "n/a");

/** The conversations section of `readme` (markers included), or "" when it has none. */
export function conversationSectionOf(readme) {
  const begin = readme.indexOf(BEGIN);
  const end = readme.indexOf(END, begin);
  return begin >= 0 && end > begin ? readme.slice(begin, end + END.length) : "";
}

/** `readme` with its conversations section replaced by `markdown` (put before the soak's, or at the end, when it has none). */
export function withConversationSection(readme, markdown) {
  const section = `${BEGIN}\n${markdown.trim()}\n${END}`;
  const current = conversationSectionOf(readme);
  if (current) return readme.replace(current, () => section);
  const soak = readme.indexOf(SOAK_BEGIN);
  if (soak >= 0) return `${readme.slice(0, soak)}${section}\n\n${readme.slice(soak)}`;
  return readme ? `${readme.trimEnd()}\n\n${section}\n` : section;
}

const range = (s) => `${int(s.min)} / ${int(s.p50)} / ${int(s.max)}`;

/** The headline rows: [what, one conversation, many conversations]. */
function summaryRows(w, c) {
  const [one, many] = [w.one, w.many];
  const both = (of) => [of(one), of(many)];
  const window = int(c.window);
  return [
    [`turns/s, first ${window} turns`, ...both((x) => f1(x.first.turnsPerS))],
    [`turns/s, last ${window} turns`, ...both((x) => f1(x.last.turnsPerS))],
    [`**last ÷ first** (target ≥ ${TARGET_RATIO})`, ...both((x) => `**${times(x.ratio.turnsPerS)}**`)],
    [
      "baseline turns/s (fresh contexts, alongside the first / the last)",
      ...both((x) => `${f1(x.baseline.first.turnsPerS)} / ${f1(x.baseline.last.turnsPerS)}`),
    ],
    ["baseline last ÷ first", ...both((x) => times(x.ratio.baselineTurnsPerS))],
    ["last ÷ first, over the baseline's", ...both((x) => times(x.ratio.turnsPerSOverBaseline))],
    ["conversation ÷ baseline turns/s, first / last", ...both((x) => `${times(x.ratio.firstOverBaseline)} / ${times(x.ratio.lastOverBaseline)}`)],
    ["SendMessage → push p50 ms, first / last", ...both((x) => `${f1(x.first.sendToPush.p50)} / ${f1(x.last.sendToPush.p50)}`)],
    [`messages per model request, first ${window} (min / p50 / max)`, ...both((x) => range(x.first.messages))],
    [`messages per model request, last ${window} (min / p50 / max)`, ...both((x) => range(x.last.messages))],
    [
      "model request KiB p50, first / last (max of the run)",
      ...both((x) => `${kib(x.first.bytes.p50)} / ${kib(x.last.bytes.p50)} (${kib(Math.max(...x.slices.map((s) => s.bytes.max)))})`),
    ],
    [
      "compactions begun (summary requests the fake model answered)",
      ...both(
        (x) =>
          `${int(x.compactions.total)}${x.compactions.total ? ` (request p50 ${kib(x.compactions.bytes.p50)}, max ${kib(x.compactions.bytes.max)} KiB)` : ""}`,
      ),
    ],
    ["compactions that folded (distinct summaries in turns' requests)", ...both((x) => int(x.compactions.folded))],
    [`turns whose request carried a summary, first / last ${window}`, ...both((x) => `${int(x.first.withSummary)} / ${int(x.last.withSummary)}`)],
    ["summary requests over the fake model's 1 MiB, dropped", ...both((x) => int(x.compactions.oversized))],
    ["compaction failures in wrangler's log", ...both((x) => (x.compactions.failedInLog === null ? "not kept" : int(x.compactions.failedInLog)))],
    ["fresh workerd processes (s, with the settling before each)", ...both((x) => `${x.restarts.count} (${s0(x.restarts.ms)})`)],
    ["seconds sending / in all", ...both((x) => `${s0(x.sendingMs)} / ${s0(x.wallMs)}`)],
  ];
}

/** Slice by slice: [turns so far, then per workload: turns/s, p50 ms, messages p50 / max, compactions]. */
function sliceRows(w, c) {
  return w.one.slices.map((_, i) => {
    const cells = [int(Math.min((i + 1) * c.window, c.turns))];
    for (const x of [w.one, w.many]) {
      const s = x.slices[i];
      cells.push(f1(s.turnsPerS), f1(s.sendToPush.p50), `${int(s.messages.p50)} / ${int(s.messages.max)}`, int(s.compactions));
    }
    return cells;
  });
}

function checkLine(x) {
  const k = x.checks;
  const calls = Object.entries(k.modelCallsPerTurn)
    .map(([n, turns]) => `${int(turns)} with ${n} model call(s)`)
    .join(", ");
  return (
    `${x.label}: ${int(k.pushed)} of ${int(k.pushed + k.missing)} turns (baseline included) pushed, ${k.missing} missing, ` +
    `${k.duplicatePushes} duplicate push(es); ${calls}; ${k.problems} push(es) or replies not a completed task of the turn's own context with its answer` +
    `${k.problems ? ` (e.g. ${k.firstProblems[0]})` : ""}; ${k.foreign.model} model call(s) and ${k.foreign.push} push(es) of no turn of it.`
  );
}

function warnings(w) {
  const out = [];
  for (const x of [w.one, w.many]) {
    const reasons = Object.entries(x.compactions.failureReasons);
    if (reasons.length) {
      const why = reasons
        .slice(0, 3)
        .map(([reason, n]) => `${int(n)} × ${reason}`)
        .join("; ");
      out.push(`${x.label}: the Worker logged ${int(x.compactions.failedInLog)} failed compaction(s): ${why}.`);
    }
    if (x.compactions.total > 0 && x.compactions.folded === 0)
      out.push(`${x.label}: ${int(x.compactions.total)} compaction(s) began and none folded anything.`);
    if (x.ratio.turnsPerS < TARGET_RATIO)
      out.push(`${x.label}: the last thousand ran at ${times(x.ratio.turnsPerS)} the first's, below the target of ${TARGET_RATIO}.`);
    if (x.checks.missing || x.checks.problems || x.checks.duplicatePushes) out.push(`${x.label}: not every turn had exactly one good push (see its checks).`);
    if (Object.keys(x.checks.modelCallsPerTurn).some((n) => Number(n) !== 1)) out.push(`${x.label}: not every turn made exactly one model call.`);
  }
  return out;
}

const mdTable = (headers, rows) =>
  [`| ${headers.join(" | ")} |`, `| ${headers.map((_, i) => (i === 0 ? "---" : "---:")).join(" | ")} |`, ...rows.map((r) => `| ${r.join(" | ")} |`)].join("\n");

function textTable(headers, rows) {
  const plain = rows.map((r) => r.map((cell) => String(cell).replaceAll("**", "")));
  const widths = headers.map((h, i) => Math.max(h.length, ...plain.map((r) => r[i].length)));
  const line = (cells) => cells.map((cell, i) => (i === 0 ? cell.padEnd(widths[i]) : cell.padStart(widths[i]))).join("  ");
  return [line(headers), widths.map((n) => "-".repeat(n)).join("  "), ...plain.map(line)].join("\n");
}

function machineLine(m) {
  return `${m.nproc} CPUs (nproc), ${m.cpuModel}, ${m.totalMemoryGiB} GiB RAM, ${m.os}; Node ${m.node}, wrangler ${m.wrangler}, workerd ${m.workerd}${m.commit ? `, commit ${m.commit}` : ""}`;
}

export function renderConversations(r) {
  const c = r.config;
  const w = r.workloads;
  const many = `${int(c.conversations)} conversations`;
  const summaryHead = ["", "one conversation", many];
  const sliceHead = [
    "turns so far",
    "one: turns/s",
    "p50 ms",
    "messages p50 / max",
    "summary requests",
    `${int(c.conversations)}: turns/s`,
    "p50 ms",
    "messages p50 / max",
    "summary requests",
  ];
  const warned = warnings(w);
  const text = [
    `Conversations, ${r.date}: ${int(c.turns)} turns each, ${c.concurrency} open at a time, ${r.durationS.toFixed(0)} s`,
    textTable(summaryHead, summaryRows(w, c)),
    "",
    textTable(sliceHead, sliceRows(w, c)),
    checkLine(w.one),
    checkLine(w.many),
    ...warned.map((x) => `WARNING: ${x}`),
  ].join("\n");
  const markdown = `## Conversations: ${int(c.turns)} turns in one conversation, and over ${many}

**Setup.** Two workloads of the \`assistant\` (its \`history\` config is the default: one conversation per
A2A context, a window of at most 400 committed messages after the summary, compaction past 24,000
estimated tokens keeping the newest 6,000), each from a caller of its own (an empty Durable Object):
${int(c.turns)} turns in one conversation (one \`contextId\`, the bench's own, sent with every turn), then
${int(c.turns)} turns over ${many} of one caller (${int(c.conversations)} \`contextId\`s, round-robin, so
${int(c.turns / c.conversations)} turns each). A turn is \`SendMessage\` with \`configuration.returnImmediately: true\` and a push config
whose URL names it (the bench's gatekeeper receives the pushes), a user text of ${c.textBytes > 0 ? `${int(c.textBytes)} bytes` : "about 50 bytes"} naming it and
the fake model's answer \`ok <tag>\`; ${c.concurrency} are open at a time (from the send until the push), in
one conversation as in many: the Worker allows concurrent turns of one conversation (each reads
the committed conversation, without the turns still running beside it). The turns run in blocks of
${int(c.window / c.blocks)} (the pool filled, then drained), ${int(c.window)} to a row of the table below. **turns/s** is a
row's turns over the wall time of its blocks. In the first row and the last, ${int(c.baseline / c.blocks)}-turn blocks of
**baseline** turns alternate with the conversation's (A B, B A, …): turns of the same caller that each
open a fresh context, so they carry no history, against the same process at the same moment; their
ratio says how much of last ÷ first is the machine or the caller's growing store rather than the
conversation's length. Both rows start on a fresh workerd (the bench restarts before the last, and
whenever a process has no room for the next block, see "Fresh workerd processes"); restarts and the
settling before them are not in turns/s. A **compaction** is counted from outside: the fake model
recognises a summary request (the \`summarize\` call of \`src/host/dynamic-agent.ts\`: the agent's
\`messages.summarize\` as the system prompt, one user message holding the transcript, no tools) and
answers it with a fixed ${"~1.5 KiB"} summary. **messages per model request** counts the request's
messages, the system prompt included.

Run ${r.date} on ${machineLine(r.machine)}. The two workloads took ${r.durationS.toFixed(0)} s${
    r.withMain ? ` at the end of a full \`npm run bench\` of ${r.benchDurationS.toFixed(0)} s` : " (`npm run bench -- --only conversations`)"
  }.
${warned.length ? `\n**Warnings:**\n\n${warned.map((x) => `- ${x}`).join("\n")}\n` : ""}
${mdTable(summaryHead, summaryRows(w, c))}

#### ${int(c.window)} turns to a row

${mdTable(sliceHead, sliceRows(w, c))}

${checkLine(w.one)}
${checkLine(w.many)}
`;
  return { text, markdown };
}
