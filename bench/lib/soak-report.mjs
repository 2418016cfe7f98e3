/**
 * The soak's figures (bench/soak.mjs) as text for stdout; bench/README.md
 * "Soak and recovery" says what each means.
 */

/** The targets the team committed to (the soak issue). */
const TARGET = { recoveryS: 120, failedShare: 0.005 };

const int = (v) => (Number.isFinite(v) ? Math.round(v).toLocaleString("en-US") : "n/a");
const s1 = (ms) => (Number.isFinite(ms) ? `${(ms / 1000).toFixed(1)} s` : "n/a");
const pct = (v, digits = 2) => (Number.isFinite(v) ? `${(v * 100).toFixed(digits)} %` : "n/a");
const tally = (counts) =>
  Object.entries(counts)
    .map(([k, n]) => `${int(n)} × ${k}`)
    .join(", ") || "none";

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
    `every turn in flight at the kill recovered within ${TARGET.recoveryS} s of the restart: ${late ? "missed" : "met"} (${int(r.turns.cutRecovered)} of ${int(cut)}, the slowest ${s1(r.recoveryMs.max)})`,
    `at most ${pct(TARGET.failedShare, 1)} FAILED: ${failed ? "missed" : "met"} (${pct(r.turns.failedShare)})`,
    `every check below held: ${checkRows(r).every(([, v]) => v === "none") ? "yes" : "no"}`,
  ];
}

/** The verdicts, the figures and the checks. */
export function renderSoak(r) {
  const m = r.machine;
  const machine = `${m.nproc} CPUs (nproc), ${m.cpuModel}, ${m.totalMemoryGiB} GiB RAM, ${m.os}; Node ${m.node}, wrangler ${m.wrangler}, workerd ${m.workerd}${m.commit ? `, commit ${m.commit}` : ""}`;
  const logs = r.logs ? `wrangler's logs (${r.logs.files.join(", ")}): ${tally(r.logs.counts)}` : "";
  return [
    `Soak and recovery, ${r.date}, seed ${r.config.seed}, ${r.durationS.toFixed(0)} s`,
    `Machine: ${machine}`,
    ...verdicts(r).map((v) => `- ${v}`),
    ...rows(r).map(([k, v]) => `${k}: ${v}`),
    "Checks (turns that broke each):",
    ...checkRows(r).map(([k, v]) => `  ${k}: ${v}`),
    logs,
  ].join("\n");
}
