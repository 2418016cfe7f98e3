/**
 * The conversation workloads' figures (lib/conversations.mjs) as text for
 * stdout; bench/README.md "Conversations" says what each means.
 */

/** The issue's target: the last thousand turns at least this fast against the first. */
const TARGET_RATIO = 0.8;

const int = (v) => (Number.isFinite(v) ? Math.round(v).toLocaleString("en-US") : "n/a");
const f1 = (v) => (Number.isFinite(v) ? v.toFixed(1) : "n/a");
const times = (v) => (Number.isFinite(v) ? `${v.toFixed(2)}×` : "n/a");
const kib = (v) => (Number.isFinite(v) ? (v / 1024).toFixed(1) : "n/a");
const s0 = (ms) => (Number.isFinite(ms) ? (ms / 1000).toFixed(0) : "n/a");

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

function textTable(headers, rows) {
  const plain = rows.map((r) => r.map((cell) => String(cell).replaceAll("**", "")));
  const widths = headers.map((h, i) => Math.max(h.length, ...plain.map((r) => r[i].length)));
  const line = (cells) => cells.map((cell, i) => (i === 0 ? cell.padEnd(widths[i]) : cell.padStart(widths[i]))).join("  ");
  return [line(headers), widths.map((n) => "-".repeat(n)).join("  "), ...plain.map(line)].join("\n");
}

function machineLine(m) {
  return `${m.nproc} CPUs (nproc), ${m.cpuModel}, ${m.totalMemoryGiB} GiB RAM, ${m.os}; Node ${m.node}, wrangler ${m.wrangler}, workerd ${m.workerd}${m.commit ? `, commit ${m.commit}` : ""}`;
}

/** The run's tables, checks and warnings. */
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
  return [
    `Conversations, ${r.date}: ${int(c.turns)} turns each, ${c.concurrency} open at a time, ${r.durationS.toFixed(0)} s`,
    `Machine: ${machineLine(r.machine)}`,
    textTable(summaryHead, summaryRows(w, c)),
    "",
    textTable(sliceHead, sliceRows(w, c)),
    checkLine(w.one),
    checkLine(w.many),
    ...warned.map((x) => `WARNING: ${x}`),
  ].join("\n");
}
