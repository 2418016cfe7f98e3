/**
 * Turns a run's results into the report it prints: the tables, the checks, and
 * the headline's targets (lib/verdicts.mjs) with whether each is met.
 */
import { FLOOR_TARGETS } from "./floor.mjs";
import { HEADLINE, SMOKE_MARGINS, batchProblems, boundText, headlineBound, judge, turnProblems, within } from "./verdicts.mjs";

const ms = (v) => (Number.isFinite(v) ? v.toFixed(2) : "n/a");
const rate = (v) => (Number.isFinite(v) ? Math.round(v).toLocaleString("en-US") : "n/a");
const times = (v) => (Number.isFinite(v) ? `${v.toFixed(2)}×` : "n/a");
const int = (v) => v.toLocaleString("en-US");
const kib = (v) => (Number.isFinite(v) ? (v / 1024).toFixed(1) : "n/a");
const pct = (v) => (Number.isFinite(v) ? `${(v * 100).toFixed(0)} %` : "n/a");

/** The rows of a turn table. See turns.mjs for the timestamps t0…t4 and the README for what each segment holds. */
const TURN_ROWS = [
  ["accept", "accept: SendMessage → reply (submitted), t1−t0"],
  ["acceptToPush", "accept → push, t4−t1"],
  ["sendToPush", "SendMessage → push, t4−t0"],
  ["ratio"],
  ["toModel", "(a) reply → model request, t2−t1"],
  ["model", "(b) model exchange at the fake model, t3−t2"],
  ["fromModel", "(c) model reply → push, t4−t3"],
  ["toSave", "(c1) model reply → the terminal write in the DO"],
  ["saveToPush", "(c2) the terminal write → push"],
  ["toDo", "(e) SendMessage → beginTask in the DO"],
  ["doToModel", "(f) beginTask → model request"],
  ["modelToReply", "model request → reply received, t1−t2"],
];

function turnSection(t) {
  const share = (whole, key) => (t.shares[whole][key] ? pct(t.shares[whole][key].ofP50) : "");
  const rows = TURN_ROWS.map(([key, label]) => {
    if (key === "ratio") {
      return [
        "accept → push ÷ accept",
        times(t.segments.acceptToPush.p50 / t.segments.accept.p50),
        times(t.segments.acceptToPush.p99 / t.segments.accept.p99),
        "",
        "",
      ];
    }
    const s = t.segments[key];
    return [label, ms(s.p50), ms(s.p99), share("acceptToPush", key), share("sendToPush", key)];
  });
  return {
    title: `Turns with a zero-latency model: ${int(t.turns)} turns, ${t.concurrency === 1 ? "one at a time" : `${t.concurrency} open at a time`} (${t.turnsPerS.toFixed(1)} turns/s)`,
    headers: ["segment", "p50 ms", "p99 ms", "p50 ÷ p50 of accept → push", "p50 ÷ p50 of SendMessage → push"],
    rows,
    note: turnChecks(t),
  };
}

/** One sentence: did every turn get exactly one push, of the right task, and nothing else? */
function turnChecks(t) {
  const c = t.checks;
  const progress = c.progressPushes ? `, ${c.progressPushes} progress push(es) besides` : "";
  const calls = Object.entries(c.modelCallsPerTurn)
    .map(([n, turns]) => `${int(turns)} with ${n} model call(s)`)
    .join(", ");
  const tokens = c.callbackTokens;
  const late = c.late ? `, later ${c.late.pushes} more push(es) and ${c.late.modelCalls} model call(s) for them` : "";
  return (
    `Checks: ${int(c.pushed)} of ${int(t.turns)} turns pushed, ${c.missing} missing, ${c.duplicatePushes} duplicate push(es)${late}${progress}; ` +
    `${calls}; ${c.problems} push(es) not a completed task with the turn's own id, token, answer and headers; ` +
    `${tokens.verified} of ${tokens.distinct} distinct callback JWT(s) verified against the Worker's JWKS; ` +
    `model called before the reply was read in ${c.modelBeforeReply} turn(s); ` +
    `of (b), the request body still arriving took p50 ${ms(t.modelBody.p50)} / p99 ${ms(t.modelBody.p99)} ms and the fake model itself ` +
    `p50 ${ms(t.modelOwn.p50)} / p99 ${ms(t.modelOwn.p99)} ms; ` +
    `the model request (the caller's conversation so far) was ${kib(t.modelRequestBytes.min)} to ${kib(t.modelRequestBytes.max)} KiB.`
  );
}

/** `value` against one of issue 19's targets (the long run's): "met" or "missed", never a failure. */
const against = (value, target, atLeast) =>
  Number.isFinite(value) ? `${atLeast ? "≥" : "≤"} ${target.toFixed(2)}×: ${(atLeast ? value >= target : value <= target) ? "met" : "missed"}` : "";

/** CPU per measured turn by process of a side's `wrangler dev` (lib/process-cpu.mjs). */
const CPU_LABELS = {
  all: "CPU ms per turn, all of wrangler dev",
  worker: "… the Worker's workerd",
  proxy: "… wrangler's proxy workerd (each request, and console lines over the inspector)",
  wrangler: "… wrangler itself (Node)",
};

const f1 = (v) => (Number.isFinite(v) ? v.toFixed(1) : "n/a");

/** One merged batch's checks (lib/floor.mjs `mergeTurns`), as a clause of a table's note. */
function batchChecks(label, t) {
  const x = t.checks;
  const calls = Object.entries(x.modelCallsPerTurn)
    .map(([n, turns]) => `${int(turns)} × ${n}`)
    .join(", ");
  return `${label}: ${int(x.pushed)} of ${int(t.turns)} pushed, ${x.missing} missing, ${x.duplicatePushes} duplicate(s), ${x.problems} failed a check, model calls per turn ${calls}, ${x.callbackTokens.verified} of ${x.callbackTokens.distinct} callback JWT(s) verified`;
}

const sideRow = (label, pv, ov, r, fmt, target = "") => [label, fmt(pv), fmt(ov), times(r), target];

/** The headline's target for `metric` of the table against `side`, and whether `value` meets it; "" where it sets none. */
function targetCell(side, metric, value) {
  const b = headlineBound(side, metric);
  return b ? `${boundText(b)}: ${within(value, b) ? "met" : "missed"}` : "";
}

/**
 * The turn rows of project `p` against `side`'s `o` (lib/floor.mjs `turnRatios` `q`),
 * with the headline's targets where it sets one; then the edge's rows (`edge`, the
 * floor's table only) and CPU ms a turn.
 */
function turnRows(p, o, q, c, side, edge = []) {
  return [
    sideRow(
      `turns/s, ${c.callers} callers, ${c.callers} open at a time`,
      p.loaded.turnsPerS,
      o.loaded.turnsPerS,
      q.turnsPerS,
      f1,
      targetCell(side, "turnsPerS", q.turnsPerS),
    ),
    sideRow(
      "SendMessage → push p50 ms, at rest (one at a time)",
      p.atRest.sendToPush.p50,
      o.atRest.sendToPush.p50,
      q.sendToPushP50,
      ms,
      targetCell(side, "sendToPushP50", q.sendToPushP50),
    ),
    sideRow("SendMessage → push p95 ms, at rest", p.atRest.sendToPush.p95, o.atRest.sendToPush.p95, q.sendToPushP95, ms),
    sideRow("accept p50 ms, at rest", p.atRest.accept.p50, o.atRest.accept.p50, q.acceptP50, ms),
    sideRow(`SendMessage → push p50 ms, ${c.callers} open`, p.loaded.sendToPush.p50, o.loaded.sendToPush.p50, q.loadedSendToPushP50, ms),
    sideRow(`accept p50 ms, ${c.callers} open`, p.loaded.accept.p50, o.loaded.accept.p50, q.loadedAcceptP50, ms),
    ...edge,
    ...(p.cpuPerTurn && o.cpuPerTurn && q.cpuPerTurn
      ? Object.entries(CPU_LABELS).map(([role, label]) =>
          sideRow(
            label,
            p.cpuPerTurn[role],
            o.cpuPerTurn[role],
            q.cpuPerTurn[role],
            ms,
            role === "worker" ? targetCell(side, "workerCpu", q.cpuPerTurn.worker) : "",
          ),
        )
      : []),
  ];
}

/** A side's checks, loaded and at rest, as a clause of a table's note. */
const sideChecks = (name, side, c) => [batchChecks(`${name} ${c.callers} open`, side.loaded), batchChecks(`${name} at rest`, side.atRest)].join("; ");

/** The floor comparison (lib/floor.mjs): project, floor, project ÷ floor, and the headline's target where it sets one. */
function floorSection(f) {
  const { project: p, floor: w, ratios: q, config: c } = f;
  const edge = [
    sideRow(`GetTask req/s, concurrency ${c.concurrency}`, p.getTask.rps, w.getTask.rps, q.getTaskRps, rate),
    sideRow("GetTask p50 ms", p.getTask.p50, w.getTask.p50, q.getTaskP50, ms),
    sideRow(`GET agent-card req/s (the static card route), concurrency ${c.concurrency}`, p.card.rps, w.card.rps, q.cardRps, rate),
    [
      "GetTask ÷ card, req/s",
      times(p.getTaskOverCard.throughput),
      times(w.getTaskOverCard.throughput),
      times(q.getTaskOverCard),
      targetCell("floor", "getTaskOverCard", q.getTaskOverCard),
    ],
  ];
  return {
    title: `Floor: the project ÷ the floor worker (bench/floor/), ${int(c.turns)} turns from ${c.callers} callers and ${int(c.sequential)} at rest a side, ${int(c.n)} requests per edge kind, in ${c.rounds} alternating rounds`,
    headers: ["", "project", "floor", "project ÷ floor", "target"],
    rows: turnRows(p, w, q, c, "floor", edge),
    note: `Checks: ${sideChecks("project", p, c)}; ${sideChecks("floor", w, c)}; later, ${f.late.pushes} more push(es) and ${f.late.modelCalls} model call(s) of measured turns.`,
  };
}

/**
 * The same run's turns against the contract floor (bench/floor/contract-caller.ts):
 * how far the project is from the least code doing what a turn must.
 */
function contractSection(f) {
  const { project: p, contract: k, contractRatios: q, config: c } = f;
  return {
    title: "Contract floor: the project ÷ the floor doing what the contract asks of a turn (bench/floor/contract-caller.ts), the same run and rounds",
    headers: ["", "project", "contract floor", "project ÷ contract floor", "target"],
    rows: turnRows(p, k, q, c, "contract"),
    note: `Checks: ${sideChecks("contract floor", k, c)}. The project's checks are in the table above.`,
  };
}

/**
 * The long run (lib/long-run.mjs): the caller holding the seeded tasks against
 * a fresh caller in the same workerd, and, where the floor worker ran, the
 * large caller's at-rest p50 over the floor's measured in the same rounds.
 */
function longRunSection(l) {
  const { large: a, fresh: b, ratios: q, config: c } = l;
  const overFloor = q.overFloorSendToPushP50;
  const withFloor = Number.isFinite(overFloor);
  const row = (label, av, bv, r, fmt, last = "") => [label, fmt(av), fmt(bv), times(r), ...(withFloor ? [last] : [])];
  const rows = [
    row(
      "SendMessage → push p50 ms, at rest (one at a time)",
      a.atRest.sendToPush.p50,
      b.atRest.sendToPush.p50,
      q.sendToPushP50,
      ms,
      withFloor ? `${times(overFloor)} (${against(overFloor, FLOOR_TARGETS.sendToPushP50, false)})` : "",
    ),
    row("SendMessage → push p95 ms, at rest", a.atRest.sendToPush.p95, b.atRest.sendToPush.p95, q.sendToPushP95, ms),
    row("accept p50 ms, at rest", a.atRest.accept.p50, b.atRest.accept.p50, q.acceptP50, ms),
    row(`turns/s, one caller, ${c.concurrency} open at a time`, a.open.turnsPerS, b.open.turnsPerS, q.openTurnsPerS, f1),
    row(`SendMessage → push p50 ms, ${c.concurrency} open`, a.open.sendToPush.p50, b.open.sendToPush.p50, q.openSendToPushP50, ms),
    row(`GetTask req/s, concurrency ${c.getTaskConcurrency}`, a.getTask.rps, b.getTask.rps, q.getTaskRps, rate),
    row("GetTask p50 ms", a.getTask.p50, b.getTask.p50, q.getTaskP50, ms),
    row(
      `GetTask ÷ card, req/s; issue 19's target for the large caller ${against(a.getTaskOverCard, FLOOR_TARGETS.getTaskOverCard, true)}`,
      a.getTaskOverCard,
      b.getTaskOverCard,
      q.getTaskOverCard,
      times,
    ),
  ];
  const tasks = `${int(l.tasks)} tasks`;
  const checks = [
    batchChecks(`${tasks} at rest`, a.atRest),
    batchChecks(`${tasks} ${c.concurrency} open`, a.open),
    batchChecks("fresh at rest", b.atRest),
    batchChecks(`fresh ${c.concurrency} open`, b.open),
    ...(l.floorAtRest ? [batchChecks("floor at rest", l.floorAtRest)] : []),
  ].join("; ");
  const floorNote = withFloor
    ? ` The last column divides the large caller's at-rest p50 by that of a fresh caller of the floor worker, at rest in the same rounds (p50 ${ms(l.floorAtRest.sendToPush.p50)} ms), with issue 19's target for SendMessage → push at rest.`
    : "";
  return {
    title: `Long run: the caller holding ${tasks} ÷ a fresh caller, same workerd, ${int(c.sequential)} turns at rest and ${int(c.turns)} with ${c.concurrency} open a caller, ${int(c.n)} GetTask per caller, in ${c.rounds} alternating rounds`,
    headers: ["", tasks, "fresh", `${int(l.tasks)} ÷ fresh`, ...(withFloor ? [`${tasks} ÷ floor, at rest`] : [])],
    rows,
    note: `Checks: ${checks}; later, ${l.late.pushes} more push(es) and ${l.late.modelCalls} model call(s) of measured turns.${floorNote}`,
  };
}

/** The long run's batches that `batchProblems` warns of. */
function longRunWarnings(l) {
  return batchProblems("long run", [
    ["large caller at rest", l.large.atRest],
    ["large caller open", l.large.open],
    ["fresh caller at rest", l.fresh.atRest],
    ["fresh caller open", l.fresh.open],
    .../** @type {[string, any][]} */ (l.floorAtRest ? [["floor at rest", l.floorAtRest]] : []),
  ]);
}

const verdict = (r) => (r.met ? "met" : "missed");

/** The floor comparison alone (`--only floor`, `--smoke`), for stdout: its tables, then its headline (or the smoke's margins) judged. */
export function renderFloorText({ date, machine, floor, smoke }) {
  const head = [`A2A floor bench${smoke ? " (smoke: small counts, judged by wide margins)" : ""}, ${date}`, `Machine: ${machineLine(machine)}`, ""];
  const tables = [floorSection(floor), contractSection(floor)].flatMap((s) => [s.title, textTable(s.headers, s.rows), s.note, ""]);
  const judged = judge(smoke ? SMOKE_MARGINS : HEADLINE, floor).map((r) => [r.label, times(r.value), boundText(r), verdict(r)]);
  const title = smoke ? "The smoke's margins, against the floor" : "Headline, this run alone (the README's figure is the median of five: --runs 5)";
  return [...head, ...tables, title, textTable(["", "this run", "target", ""], judged), "", ...turnProblems(floor).map((w) => `WARNING: ${w}`)].join("\n");
}

/**
 * The headline over back-to-back runs (lib/verdicts.mjs `judgeMedians` rows):
 * each run's value, their median and whether it meets its target.
 */
export function renderMedians({ date, machine, rows }) {
  const table = rows.map((r) => [r.label, r.values.map(times).join(", "), times(r.value), boundText(r), verdict(r)]);
  return [
    `Headline: the median of ${rows[0]?.values.length ?? 0} floor runs back to back, ${date}`,
    `Machine: ${machineLine(machine)}`,
    "",
    textTable(["", "runs", "median", "target", ""], table),
  ].join("\n");
}

const EDGE_LABELS = {
  card: "GET /.well-known/agent-card.json (no token)",
  verified: "GetExtendedAgentCard (token, no Durable Object)",
  getTask: "GetTask (token + Durable Object read)",
};

const FLOOR_LABEL = "floor: GET a trivial Node http server on loopback";

function edgeRows(summaries, withRate) {
  const labels = Object.entries(summaries.floor ? { floor: FLOOR_LABEL, ...EDGE_LABELS } : EDGE_LABELS);
  return labels.map(([key, label]) => {
    const s = summaries[key];
    return withRate ? [label, rate(s.rps), ms(s.p50), ms(s.p99)] : [label, ms(s.p50), ms(s.p99)];
  });
}

const RATIO_LABELS = { verified: "GetExtendedAgentCard ÷ card", getTask: "GetTask ÷ card" };

function ratioRows(ratios, withRate) {
  return Object.entries(RATIO_LABELS).map(([key, label]) => {
    const q = ratios[key];
    return withRate ? [label, times(q.throughput), times(q.p50), times(q.p99)] : [label, times(q.p50), times(q.p99)];
  });
}

function sections(r) {
  const { config: c } = r;
  return [
    {
      title: `Edge under load: ${int(c.n)} requests per kind, concurrency ${c.concurrency}`,
      headers: ["request", "req/s", "p50 ms", "p99 ms"],
      rows: [...edgeRows(r.edge.concurrent, true), ...ratioRows(r.edge.ratios.concurrent, true)],
    },
    {
      title: `Edge latency, one request at a time: ${int(c.seqN)} requests per kind`,
      headers: ["request", "p50 ms", "p99 ms"],
      rows: [...edgeRows(r.edge.sequential, false), ...ratioRows(r.edge.ratios.sequential, false)],
    },
    ...["sequential", "concurrent"].filter((k) => r.turns?.[k]).map((k) => turnSection(r.turns[k])),
    ...(r.floor ? [floorSection(r.floor), contractSection(r.floor)] : []),
    {
      title: `ListTasks first page (pageSize ${c.pageSize}), ${int(c.listN)} sequential calls per caller`,
      headers: ["caller's Durable Object holds", "p50 ms", "p99 ms"],
      rows: [
        [`${int(r.list.small.totalSize)} tasks`, ms(r.list.small.p50), ms(r.list.small.p99)],
        [`${int(r.list.large.totalSize)} tasks`, ms(r.list.large.p50), ms(r.list.large.p99)],
        [`${int(r.list.large.totalSize)} ÷ ${int(r.list.small.totalSize)} tasks`, times(r.list.ratio.p50), times(r.list.ratio.p99)],
      ],
    },
    {
      title: `Seeding with SendMessage, concurrency ${c.seedConcurrency}`,
      headers: ["tasks created", "seconds sending", "tasks/s", "fresh workerd (s)", "then turns settled in s", "seconds in all"],
      rows: [
        [
          int(r.seeding.tasks),
          (r.seeding.elapsedMs / 1000).toFixed(1),
          rate(r.seeding.rps),
          `${r.seeding.restarts} (${(r.seeding.restartMs / 1000).toFixed(1)})`,
          (r.seeding.settleMs / 1000).toFixed(1),
          (r.seeding.wallMs / 1000).toFixed(1),
        ],
      ],
    },
    ...(r.longRun ? [longRunSection(r.longRun)] : []),
    ...(r.seeding.marks?.length
      ? [
          {
            title: "Seeding, tenth by tenth: does a turn cost more as the caller holds more tasks?",
            headers: ["tasks so far", "seconds sending", "tasks/s over this tenth"],
            rows: r.seeding.marks.map((m, i) => {
              const prev = r.seeding.marks[i - 1] ?? { tasks: 0, sendingMs: 0 };
              return [int(m.tasks), (m.sendingMs / 1000).toFixed(1), rate((m.tasks - prev.tasks) / ((m.sendingMs - prev.sendingMs) / 1000))];
            }),
          },
        ]
      : []),
  ];
}

function textTable(headers, rows) {
  const widths = headers.map((h, i) => Math.max(h.length, ...rows.map((row) => String(row[i]).length)));
  const line = (cells) => cells.map((cell, i) => (i === 0 ? String(cell).padEnd(widths[i]) : String(cell).padStart(widths[i]))).join("  ");
  return [line(headers), widths.map((w) => "-".repeat(w)).join("  "), ...rows.map(line)].join("\n");
}

function machineLine(m) {
  return `${m.nproc} CPUs (nproc), ${m.cpuModel}, ${m.totalMemoryGiB} GiB RAM, ${m.os}; Node ${m.node}, wrangler ${m.wrangler}, workerd ${m.workerd}${m.commit ? `; commit ${m.commit}` : ""}`;
}

function gatekeeperLine(g) {
  const extra = g.completions - g.sendMessages;
  return (
    `${g.jwks} JWKS fetch(es), ${int(g.completions)} model call(s)${extra > 0 ? ` (${int(extra)} more than turns: history compaction)` : ""} ` +
    `and ${int(g.notifications)} push notification(s) for ${int(g.sendMessages)} SendMessage calls, ` +
    `${g.turnTrafficWhileMeasuring} of those calls and pushes while other requests were timed`
  );
}

function workerLine(w) {
  return `${w.processes} workerd process(es) one after another on the same storage (a fresh one every ${int(w.turnsPerProcess)} turns), state in ${w.stateDir}${w.storageMiB === null ? "" : ` (${int(w.storageMiB)} MiB at the end)`}`;
}

function warnings(r) {
  const out = [];
  if (r.worker.reloads > 0) {
    out.push(
      `wrangler reloaded the Worker ${r.worker.reloads} time(s) during the run (a source file changed): these figures mix code versions and cold isolates; run again.`,
    );
  }
  // One fetch per workerd process is the cache working; more is not.
  if (r.gatekeeper.jwks > r.worker.processes + 1) {
    out.push(`the Worker fetched the gatekeeper's JWKS ${r.gatekeeper.jwks} times: verification is not being served from the JWKS cache.`);
  }
  // More model calls than turns can be history compaction (a summary is a model call); fewer cannot be right.
  if (r.gatekeeper.completions < r.gatekeeper.sendMessages || r.gatekeeper.notifications !== r.gatekeeper.sendMessages) {
    out.push(
      `${int(r.gatekeeper.sendMessages)} SendMessage calls made ${int(r.gatekeeper.completions)} model calls and ${int(r.gatekeeper.notifications)} pushes: not one push and at least one model call per turn.`,
    );
  }
  if (r.gatekeeper.turnTrafficWhileMeasuring > 0) {
    out.push(
      `turns were still running while requests were timed (${r.gatekeeper.turnTrafficWhileMeasuring} model calls and pushes reached the gatekeeper meanwhile): they compete for the same CPUs.`,
    );
  }
  if (r.floor) out.push(...turnProblems(r.floor));
  if (r.longRun) out.push(...longRunWarnings(r.longRun));
  for (const t of Object.values(r.turns ?? {})) {
    const c = t.checks;
    const label = `${t.label} turns`;
    if (c.missing > 0) out.push(`${label}: ${c.missing} turn(s) got no push.`);
    if (c.duplicatePushes > 0 || c.late?.pushes > 0) out.push(`${label}: ${c.duplicatePushes + (c.late?.pushes ?? 0)} duplicate push(es).`);
    const extraCalls = Object.entries(c.modelCallsPerTurn).filter(([n]) => Number(n) !== 1);
    if (extraCalls.length > 0 || c.late?.modelCalls > 0)
      out.push(`${label}: not every turn made exactly one model call (${JSON.stringify(c.modelCallsPerTurn)}).`);
    if (c.problems > 0) out.push(`${label}: ${c.problems} push(es) failed a check, e.g. ${c.firstProblems[0]}.`);
    if (c.callbackTokens.failures.length > 0) out.push(`${label}: a callback JWT did not verify: ${c.callbackTokens.failures[0]}.`);
    if (c.clockSkew > 0) {
      out.push(
        `${label}: in ${c.clockSkew} turn(s) a Durable Object timestamp fell outside the interval it must lie in, by up to ${ms(c.clockSkewMaxMs)} ms: (e) and (c1) read that much short, (f) and (c2) long.`,
      );
    }
  }
  return out;
}

export function renderText(r) {
  const parts = [`A2A edge bench, ${r.date}`, `Machine: ${machineLine(r.machine)}`, ""];
  for (const s of sections(r)) parts.push(s.title, textTable(s.headers, s.rows), ...(s.note ? [s.note] : []), "");
  parts.push(`Gatekeeper saw: ${gatekeeperLine(r.gatekeeper)}.`, `Worker: ${workerLine(r.worker)}.`);
  for (const w of warnings(r)) parts.push(`WARNING: ${w}`);
  parts.push(`Total ${r.durationS.toFixed(0)} s.`);
  return parts.join("\n");
}
