/**
 * The soak's figures (bench/soak.mjs) as text for stdout and as the soak
 * section of bench/README.md. The section sits between two markers: `npm run
 * bench:soak` replaces it, `npm run bench` (which rewrites the rest of the
 * README) keeps it as it is.
 */

const BEGIN = "<!-- bench:soak begins: written by `npm run bench:soak`, kept as it is by `npm run bench` -->";
const END = "<!-- bench:soak ends -->";
/** The targets the team committed to (the soak issue). */
const TARGET = { recoveryS: 120, failedShare: 0.005 };

const int = (v) => (Number.isFinite(v) ? Math.round(v).toLocaleString("en-US") : "n/a");
const s1 = (ms) => (Number.isFinite(ms) ? `${(ms / 1000).toFixed(1)} s` : "n/a");
const pct = (v, digits = 2) => (Number.isFinite(v) ? `${(v * 100).toFixed(digits)} %` : "n/a");
const tally = (counts) =>
  Object.entries(counts)
    .map(([k, n]) => `${int(n)} × ${k}`)
    .join(", ") || "none";

/** The soak section of `readme` (markers included), or "" when it has none. */
export function soakSectionOf(readme) {
  const begin = readme.indexOf(BEGIN);
  const end = readme.indexOf(END, begin);
  return begin >= 0 && end > begin ? readme.slice(begin, end + END.length) : "";
}

/** `readme` with its soak section replaced by `markdown` (appended when it has none). */
export function withSoakSection(readme, markdown) {
  const section = `${BEGIN}\n${markdown.trim()}\n${END}`;
  const current = soakSectionOf(readme);
  return current ? readme.replace(current, () => section) : `${readme.trimEnd()}\n\n${section}\n`;
}

/** The verdicts and the figures, as rows of [what, figure]. */
function rows(r) {
  const t = r.turns;
  const states = Object.entries(t.states)
    .map(([state, n]) => `${int(n)} ${state.replace("TASK_STATE_", "").toLowerCase()}`)
    .join(", ");
  const rerun = r.model.toolExecutionsPerTurn;
  return [
    ["turns", `${int(t.total)} from ${int(r.config.callers)} callers, ${r.config.concurrency} open at a time: ${states} (FAILED ${pct(t.failedShare)})`],
    ["one terminal push per turn", `${int(t.pushedOnce)} of ${int(t.total)}; ${int(t.duplicatePushes)} repeat(s) of a push already taken (at least once)`],
    ["kill", `at send ${int(r.timeline.killedAtSend)}; the fresh process served ${s1(r.timeline.restartTookMs)} after the SIGKILL`],
    ["in flight at the kill", `${int(t.cutByKill)} turn(s); ${int(t.cutRecovered)} recovered, ${int(t.cutRanModelAgain)} of them asked the model again`],
    [
      "recovery: restart → terminal push, over those",
      `p50 ${s1(r.recoveryMs.p50)}, p99 ${s1(r.recoveryMs.p99)}, max ${s1(r.recoveryMs.max)} (target: all within ${TARGET.recoveryS} s)`,
    ],
    ["the same from the kill", `p50 ${s1(r.recoveryFromKillMs.p50)}, p99 ${s1(r.recoveryFromKillMs.p99)}, max ${s1(r.recoveryFromKillMs.max)}`],
    ["where they were at the kill", tally(r.cutStages)],
    [
      "last turn of the run finished",
      `${s1(r.timeline.lastTerminalAfterRestartMs)} after the restart (sending ended ${r.timeline.sendingS.toFixed(0)} s into the run)`,
    ],
    [
      "model requests",
      `${int(r.model.requests)}, ${int(r.model.failed)} answered 500 (${pct(r.model.failed / r.model.requests, 1)}); primary ${int(r.model.byModel[r.config.models.primary])}, fallback ${int(r.model.byModel[r.config.models.fallback])}; ${int(r.model.strays)} answering a message already answered; ${int(r.model.other)} without the clock tool (summaries), ${int(r.model.foreign)} of no turn`,
    ],
    ["model requests per turn", tally(r.model.requestsPerTurn)],
    [
      "tool executions per turn",
      `${tally(rerun)}; runs again after the restart ${int(r.model.toolReruns.restart)}, on the fallback ${int(r.model.toolReruns.fallback)}, unexplained ${int(r.model.toolReruns.unexplained)}`,
    ],
    [
      "pushes",
      `${int(r.push.posts)} POSTs; ${int(r.push.refusedFirst)} of ${int(r.push.firstDeliveries)} first deliveries answered 503 (${pct(r.push.refusedFirst / r.push.firstDeliveries, 1)})`,
    ],
    ["sends", `${int(t.retriedSends)} retried with their messageId; failures: ${tally(t.sendErrors)}`],
  ];
}

/** Each check: how many turns broke it, and the first few. */
function checkRows(r) {
  const c = r.checks;
  const list = [
    ["no terminal push", c.missingTerminal],
    ["more than one task for a messageId", c.oneTaskPerMessage],
    ["more than one terminal state, or GetTask disagreeing", c.oneTerminalState],
    ["a caller holding other than its turns' tasks", c.tasksPerCaller],
    [`model requests past 1 + ${r.config.modelRetries} per model and step (≤ ${r.config.requestsPerRun} per run)`, c.modelBound],
    ["a tool effect repeated (why in brackets)", c.toolRanAgain],
    ["a model request answering a turn's message after that turn had its answer", c.strayModelRequests],
    ["a push out of place (a turn completed with another turn's answer, say)", c.pushProblems],
    ["a send refused while the Worker was up", c.refusedWhileUp],
    ["a callback JWT that does not verify", c.callbackTokens.failures],
  ];
  return list.map(([what, found]) => [
    what,
    found.length === 0 ? "none" : `${int(found.length)}: ${found.slice(0, 3).join("; ")}${found.length > 3 ? "; …" : ""}`,
  ]);
}

function verdicts(r) {
  const cut = r.turns.cutByKill;
  const late = r.recoveryMs.max > TARGET.recoveryS * 1000 || r.turns.cutRecovered < cut;
  const failed = r.turns.failedShare > TARGET.failedShare;
  return [
    `every turn in flight at the kill recovered within ${TARGET.recoveryS} s of the restart: ${late ? "**missed**" : "met"} (${int(r.turns.cutRecovered)} of ${int(cut)}, the slowest ${s1(r.recoveryMs.max)})`,
    `at most ${pct(TARGET.failedShare, 1)} FAILED: ${failed ? "**missed**" : "met"} (${pct(r.turns.failedShare)})`,
    `every check below held: ${checkRows(r).every(([, v]) => v === "none") ? "yes" : "**no**"}`,
  ];
}

export function renderSoak(r) {
  const m = r.machine;
  const machine = `${m.nproc} CPUs (nproc), ${m.cpuModel}, ${m.totalMemoryGiB} GiB RAM, ${m.os}; Node ${m.node}, wrangler ${m.wrangler}, workerd ${m.workerd}${m.commit ? `, commit ${m.commit}` : ""}`;
  const logs = r.logs ? `wrangler's logs (${r.logs.files.join(", ")}): ${tally(r.logs.counts)}` : "";
  const text = [
    `Soak and recovery, ${r.date}, seed ${r.config.seed}, ${r.durationS.toFixed(0)} s`,
    `Machine: ${machine}`,
    ...verdicts(r).map((v) => `- ${v.replaceAll("**", "")}`),
    ...rows(r).map(([k, v]) => `${k}: ${v}`),
    "Checks (turns that broke each):",
    ...checkRows(r).map(([k, v]) => `  ${k}: ${v}`),
    logs,
  ].join("\n");
  const table = (head, body) =>
    [`| ${head.join(" | ")} |`, `| ${head.map(() => "---").join(" | ")} |`, ...body.map((row) => `| ${row.join(" | ")} |`)].join("\n");
  const markdown = `## Soak and recovery: \`npm run bench:soak\`

**Setup.** ${int(r.config.turns)} turns of the \`assistant\` from ${int(r.config.callers)} callers (identity keys,
so ${int(r.config.callers)} Durable Objects), ${r.config.concurrency} open at a time (a turn is open from its
\`SendMessage\` until its terminal push; at the kill the open ones are set aside and waited for
while new turns keep the load up), against \`wrangler dev --local\` with storage on
${r.config.stateDir ?? "/dev/shm (when it has room)"} and \`X_LOCAL_OBSERVABILITY=false\` (wrangler's local trace collector off). The
bench's loopback server is the gatekeeper (JWKS, push receiver) and both models
(\`OPENAI_MODEL\` and \`OPENAI_FALLBACK_MODEL\`): each turn calls \`current_time\` once, for a
time zone that names the turn (the tool's result quotes it, with the time it ran, so each run
of the tool has a result of its own), then answers naming the turn, so a tool run twice and an
answer given to the wrong turn both show. ${pct(r.config.modelFailureRate, 0)} of model requests are answered
HTTP 500 and ${pct(r.config.pushFailureRate, 0)} of first deliveries of a push 503 (seeded coin flips, seed
${r.config.seed}). At ${pct(r.config.killAt, 0)} of the sends the Worker's whole process group (wrangler,
workerd, the Workflows engine in it) is SIGKILLed and a fresh one started on the same port and
storage; sends that fail meanwhile are retried with their \`messageId\`. Open files: soft limit
${int(r.openFiles.soft)} (a workerd keeps about 3.5 per finished turn, see above).

Run ${r.date} on ${machine}; it took ${r.durationS.toFixed(0)} s.

${verdicts(r)
  .map((v) => `- ${v}`)
  .join("\n")}

${table(["what", "figure"], rows(r))}

${table(["check: turns that broke it", "found"], checkRows(r))}

${logs ? `${logs}.\n\n` : ""}**What they mean.** *Recovery* is timed from the moment the fresh process serves to a
cut-off turn's terminal push, as the gatekeeper took it. Locally the Workflows engine does not
resume an instance its process lost: it stays \`running\` with nothing running it, so only the
caller's Durable Object can finish the turn. Its reconcile pass (every 30 s while a turn is
open, \`DEFAULT_RECOVERY_POLICY\`) calls a turn lost once it is 30 s past the report it promised,
and a report promises the next within 60 s (a delivery in backoff: within 60 s of its next
attempt): a turn whose last report came just before the kill is re-driven 90 to 120 s after
it, whatever the load, and the restart's own seconds come off that. In production the engine
resumes instances itself; this is the path of last resort, measured. A cut-off turn *asked the
model again* when its round had not recorded its outcome before the kill. The fake model
answers the newest user message of the request, as a model does: a turn completed *with
another turn's answer*, and requests *answering a message already answered*, mean a round
that ran again read the caller's conversation as it is now, in which its own message is no
longer the newest. *Tool executions* count the distinct results of a turn's one tool call the
model saw (a retried request repeats the same result); a repeat after the restart is a round
re-run whose tool had run before the kill, one *on the fallback* a tool run again in the same
process after the primary model gave up with the tool already run (the fallback starts the tool
loop over). *Model requests* are bounded per process by 1 + retries per model and step; more, or
the fallback asked before the primary failed that often, would mean a round ran twice at once.
FAILED counts every task that ended failed, for any reason (both models exhausted, or a turn
abandoned after its re-drives).

How to run: \`npm run bench:soak\` (about ${Math.ceil(r.durationS / 60)} minutes here). \`SOAK_TURNS\`, \`SOAK_CALLERS\`,
\`SOAK_CONCURRENCY\`, \`SOAK_MODEL_FAILURES\`, \`SOAK_PUSH_FAILURES\`, \`SOAK_KILL_AT\` (shares as
fractions), \`SOAK_SEED\`, \`SOAK_STATE_DIR\`, \`SOAK_RECOVERY_WAIT_S\` (600) and \`SOAK_DEADLINE_S\` (3600)
change it. Every turn's timeline is in \`bench/results/soak.json\`, wrangler's logs beside it in
\`bench/results/soak-logs/\` (both git-ignored). The same scenario at 200 turns from 10 callers
is an e2e test, \`test/node/e2e/kill-under-load.e2e.mjs\` (\`npm run test:e2e\`).
`;
  return { text, markdown };
}
