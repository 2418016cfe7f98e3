/**
 * Turns a run's results into the stdout report and bench/README.md. Both are
 * built from the same rows so the README never says something the run did not.
 */
import { FLOOR_TARGETS } from "./floor.mjs";

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

/** `value` against a target: "met" or "missed", never a failure (the bench reports; it does not assert). */
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

/** A warning for each merged batch that lacked a push, had more than one, failed a check, or did not make exactly one model call a turn. */
function batchWarnings(prefix, batches) {
  const out = [];
  for (const [label, t] of batches) {
    const c = t.checks;
    const otherCalls = Object.entries(c.modelCallsPerTurn).filter(([n]) => Number(n) !== 1);
    if (c.missing > 0 || c.duplicatePushes > 0 || c.problems > 0 || otherCalls.length > 0)
      out.push(
        `${prefix}, ${label}: ${c.missing} turn(s) got no push, ${c.duplicatePushes} duplicate push(es), ${c.problems} failed a check${otherCalls.length ? `, model calls per turn ${otherCalls.map(([n, turns]) => `${turns} × ${n}`).join(", ")}` : ""}${c.firstProblems[0] ? `, e.g. ${c.firstProblems[0]}` : ""}.`,
      );
  }
  return out;
}

const sideRow = (label, pv, ov, r, fmt, target = "") => [label, fmt(pv), fmt(ov), times(r), target];

/**
 * The turn rows of project `p` against side `o` (lib/floor.mjs `turnRatios` `q`),
 * with issue 19's targets on the two it sets; then the edge's rows (`edge`, the
 * floor's table only) and CPU ms a turn.
 */
function turnRows(p, o, q, c, edge = []) {
  return [
    sideRow(
      `turns/s, ${c.callers} callers, ${c.callers} open at a time`,
      p.loaded.turnsPerS,
      o.loaded.turnsPerS,
      q.turnsPerS,
      f1,
      against(q.turnsPerS, FLOOR_TARGETS.turnsPerS, true),
    ),
    sideRow(
      "SendMessage → push p50 ms, at rest (one at a time)",
      p.atRest.sendToPush.p50,
      o.atRest.sendToPush.p50,
      q.sendToPushP50,
      ms,
      against(q.sendToPushP50, FLOOR_TARGETS.sendToPushP50, false),
    ),
    sideRow("SendMessage → push p95 ms, at rest", p.atRest.sendToPush.p95, o.atRest.sendToPush.p95, q.sendToPushP95, ms),
    sideRow("accept p50 ms, at rest", p.atRest.accept.p50, o.atRest.accept.p50, q.acceptP50, ms),
    sideRow(`SendMessage → push p50 ms, ${c.callers} open`, p.loaded.sendToPush.p50, o.loaded.sendToPush.p50, q.loadedSendToPushP50, ms),
    sideRow(`accept p50 ms, ${c.callers} open`, p.loaded.accept.p50, o.loaded.accept.p50, q.loadedAcceptP50, ms),
    ...edge,
    ...(p.cpuPerTurn && o.cpuPerTurn && q.cpuPerTurn
      ? Object.entries(CPU_LABELS).map(([role, label]) => sideRow(label, p.cpuPerTurn[role], o.cpuPerTurn[role], q.cpuPerTurn[role], ms))
      : []),
  ];
}

/** A side's checks, loaded and at rest, as a clause of a table's note. */
const sideChecks = (name, side, c) => [batchChecks(`${name} ${c.callers} open`, side.loaded), batchChecks(`${name} at rest`, side.atRest)].join("; ");

/** The floor comparison (lib/floor.mjs): project, floor, project ÷ floor, and the issue's target where it sets one. */
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
      `project ${against(p.getTaskOverCard.throughput, FLOOR_TARGETS.getTaskOverCard, true)}`,
    ],
  ];
  return {
    title: `Floor: the project ÷ the floor worker (bench/floor/), ${int(c.turns)} turns from ${c.callers} callers and ${int(c.sequential)} at rest a side, ${int(c.n)} requests per edge kind, in ${c.rounds} alternating rounds`,
    headers: ["", "project", "floor", "project ÷ floor", "target"],
    rows: turnRows(p, w, q, c, edge),
    note: `Checks: ${sideChecks("project", p, c)}; ${sideChecks("floor", w, c)}; later, ${f.late.pushes} more push(es) and ${f.late.modelCalls} model call(s) of measured turns.`,
  };
}

/**
 * The same run's turns against the contract floor (bench/floor/contract-caller.ts):
 * how far the project is from the least code doing what a turn must; issue 19's
 * targets are shown for comparison, not as its test (that is the floor's table).
 */
function contractSection(f) {
  const { project: p, contract: k, contractRatios: q, config: c } = f;
  return {
    title: "Contract floor: the project ÷ the floor doing what the contract asks of a turn (bench/floor/contract-caller.ts), the same run and rounds",
    headers: ["", "project", "contract floor", "project ÷ contract floor", "issue 19's targets, for comparison"],
    rows: turnRows(p, k, q, c),
    note: `Checks: ${sideChecks("contract floor", k, c)}. The project's checks are in the table above.`,
  };
}

/** The floor comparison's batches that `batchWarnings` warns of. */
function floorWarnings(floor) {
  return batchWarnings("floor comparison", [
    ["project loaded", floor.project.loaded],
    ["project at rest", floor.project.atRest],
    ["floor loaded", floor.floor.loaded],
    ["floor at rest", floor.floor.atRest],
    ["contract floor loaded", floor.contract.loaded],
    ["contract floor at rest", floor.contract.atRest],
  ]);
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

/** The long run's batches that `batchWarnings` warns of. */
function longRunWarnings(l) {
  return batchWarnings("long run", [
    ["large caller at rest", l.large.atRest],
    ["large caller open", l.large.open],
    ["fresh caller at rest", l.fresh.atRest],
    ["fresh caller open", l.fresh.open],
    ...(l.floorAtRest ? [["floor at rest", l.floorAtRest]] : []),
  ]);
}

/** The floor comparison alone (`--only floor`, `--smoke`), for stdout. */
export function renderFloorText({ date, machine, floor, smoke }) {
  const head = [`A2A floor bench${smoke ? " (smoke: small counts, the ratios shown and not asserted)" : ""}, ${date}`, `Machine: ${machineLine(machine)}`, ""];
  const tables = [floorSection(floor), contractSection(floor)].flatMap((s) => [s.title, textTable(s.headers, s.rows), s.note, ""]);
  return [...head, ...tables, ...floorWarnings(floor).map((w) => `WARNING: ${w}`)].join("\n");
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

function mdTable(headers, rows) {
  const line = (cells) => `| ${cells.join(" | ")} |`;
  return [line(headers), line(headers.map((_, i) => (i === 0 ? "---" : "---:"))), ...rows.map(line)].join("\n");
}

function machineLine(m) {
  return `${m.nproc} CPUs (nproc), ${m.cpuModel}, ${m.totalMemoryGiB} GiB RAM, ${m.os}; Node ${m.node}, wrangler ${m.wrangler}, workerd ${m.workerd}`;
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
  if (r.floor) out.push(...floorWarnings(r.floor));
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

/**
 * `soak`: the README's soak section as it stands (see soak-report.mjs), kept at its end;
 * `conversations`: the conversations section (conversation-report.mjs), markers included, before it.
 */
export function renderReadme(r, soak = "", conversations = "") {
  const c = r.config;
  const figures = sections(r)
    .map((s) => `#### ${s.title}\n\n${mdTable(s.headers, s.rows)}${s.note ? `\n\n${s.note}` : ""}`)
    .join("\n\n");
  const warned = warnings(r);
  return `# Edge and turn benchmark

\`npm run bench\` starts the reference Worker under \`wrangler dev --local\` (real workerd, real
Durable Objects with SQLite, the local Workflows engine, storage in a throw-away directory), plays
the gatekeeper itself (a loopback HTTP server that publishes the JWKS its tokens are signed with,
receives push notifications, and stands in for the model: \`OPENAI_BASE_URL\` points at it and it
answers at once, so a turn never leaves the machine and never waits on a model), and measures
over loopback HTTP with Node's \`fetch\`: the edge, turns end to end, and \`ListTasks\` against the
number of tasks a caller holds. Everything it starts it stops again, also on Ctrl-C or at the
deadline. Most of a run is spent seeding ${int(c.largeTasks)} tasks, each of which runs a turn.

The machine running it is shared and noisy, so the bench never passes or fails on an absolute
number. Read the **ratios**: each compares two things measured in the same run, against the
same worker process, with their requests interleaved in alternating blocks (A B C, C B A, …)
so a slow spell hits every kind alike.

## What each number means

- **GET agent-card** — the public stub card: no token, no Durable Object, a cached signed body.
  The baseline: what any request costs to get through wrangler's proxy, workerd and Hono.
- **GetExtendedAgentCard** — a JSON-RPC call with a gatekeeper token: the full token
  verification (jku allowlist, iss, EdDSA signature, aud, exp, claims), the envelope, and a
  cached tenant card. No Durable Object is addressed.
- **GetTask** — a verified call that also reads one task from the caller's own Durable Object
  (one RPC, one SQLite lookup by primary key).
- **÷ card** — each verified kind relative to the unauthenticated card, measured in the same
  run: throughput ratio (below 1: fewer requests/s) and latency ratios (above 1: slower).
  **GetExtendedAgentCard ÷ card** is what token verification costs at the edge;
  **GetTask ÷ card** is verification plus a Durable Object read.
- **Under load** — ${int(c.n)} requests per kind, ${c.concurrency} in flight (a promise pool), after
  ${int(c.warmup)} warm-up requests per kind. req/s is requests over the wall time of that kind's blocks.
  **One at a time** — latency without queueing; its **floor** row is a GET to the bench's own
  Node server, i.e. what loopback HTTP and the client cost before workerd is involved at all.
- **Turns** — \`SendMessage\` to push with a zero-latency model; see the next section.
- **ListTasks first page** — \`ListTasks\` with \`pageSize: ${c.pageSize}\` and no page token, one call
  at a time, for two callers (two identity keys, so two Durable Objects) holding
  ${int(c.smallTasks)} and ${int(c.largeTasks)} tasks. The ratio shows how the first page grows with
  the caller's task count (the page is the same size; \`totalSize\` counts every task).
- **Seeding** — how fast \`SendMessage\` created those tasks, ${c.seedConcurrency} in flight. Each
  one is accepted (a verified call, a Durable Object write) and runs a turn through the local
  Workflows engine. Each task opens a context of its own (the \`assistant\` keeps one conversation
  per A2A context), so what grows is the caller's store (its tasks, their events, the
  \`messageId\`s it accepted), not a conversation: the tenth-by-tenth table shows whether a turn
  costs more as the caller holds more tasks (a long conversation is the "Conversations" section's
  workload). Until wave 2 every task joined the caller's one conversation and seeding slowed from
  47 to 16 tasks/s over 4,000 tasks and far more past 5,000. More in flight does not help: the
  turns queue on the caller's one Durable Object. *seconds sending* and *tasks/s* count only the time
  spent sending; *fresh workerd* is how many times, and for how long, the bench waited for
  every turn to push and started a new workerd (see "Fresh workerd processes" below); *then
  turns settled* is the wait for the last turns' pushes plus 2 s of quiet.
- **Gatekeeper saw** — requests the Worker made to the bench's gatekeeper. The \`assistant\`
  tenant keeps one conversation per caller, so each model request carries the caller's history
  so far, and a caller with thousands of turns has it compacted now and then, a summary being
  one more model call. JWKS fetches should
  stay at one per workerd process: every token is verified against the edge's cached copy.
  (A cold isolate hit by several verified calls at once fetches it once per call: on Workers,
  jose does not share a pending fetch across requests. So the bench makes one verified call to
  each fresh workerd before anything else.)
  Every \`SendMessage\` of the run should have made exactly one model call and one push. Outside
  the turn measurements the bench waits for turns to die down before timing anything, and says
  so if some still arrived while requests were being timed.

p50 and p99 are nearest-rank percentiles of per-request wall time in milliseconds, measured in
the client, so they include loopback HTTP and wrangler's local proxy in front of workerd.

### Turns

One caller (one Durable Object) sends turns: ${int(c.turnWarmup)} to warm up, then
${int(c.turnsSequential)} one at a time, then ${int(c.turns)} with ${c.turnConcurrency} open at a time (a turn is
open from its \`SendMessage\` until its push arrives). Each turn has its own \`messageId\`, its own
push URL (\`…/a2a/notifications?turn=<tag>\`) and notification token, and a user text that
carries its tag; the fake model finds the tag in the model request (the last one: the request
carries the caller's whole conversation, which grows by one exchange per turn) and answers
\`ok <tag>\` at once.

Timestamps are \`performance.now()\` in the bench process; everything is on loopback, so it is
one clock: **t0** \`SendMessage\` sent, **t1** its reply (\`TASK_STATE_SUBMITTED\`) received, **t2**
the model request reached the fake model, **t3** the fake model's reply handed to the kernel,
**t4** the push's body fully received. Two more come from the Durable Object's clock, read off
the tasks it returns: **begun**, the submitted task's \`status.timestamp\` (when \`beginTask\` ran),
and **saved**, the pushed task's (when the run step's terminal write ran). That clock has whole
milliseconds and moves only with the object's I/O (it can read a few milliseconds before the
event it stamps), so these two are good to a few milliseconds, and can be early: the bench
counts the turns where one falls outside the interval it must lie in and warns by how much.

- **accept** = t1−t0; **accept → push** = t4−t1 = (a) + (b) + (c); **SendMessage → push** = t4−t0
  = (e) + (f) + (b) + (c1) + (c2). **accept → push ÷ accept** compares the two halves.
- **(a) reply → model request**, t2−t1: meant as "Workflow scheduling and the run step until
  the model is called". It comes out **negative**: in (nearly) every turn the
  model request reaches the fake model *before* the \`SendMessage\` reply reaches the client, so
  that work happens inside accept, and (a) only says how much earlier. (e) and (f) time it.
- **(b) model exchange at the fake model**, t3−t2: from the request's headers to the reply
  handed to the kernel. The fake model answers as soon as it has read the request, so this is
  mostly the request body still arriving (workerd sends it, and under load it may send it in
  pieces); the checks line splits (b) into that and the fake model's own time, which shows the
  model adds nothing.
- **(c) model reply → push**, t4−t3: all inside the run step. The caller's Durable Object reads
  the answer (the \`ai\` SDK parses it), records the outcome and makes the guarded terminal write,
  building the push with its configs; the call returns to the Workflow, which signs the callback
  JWT and POSTs the push; the push's HTTP to the bench. Split at the terminal write:
  - **(c1) model reply → the terminal write**: the DO from the model's answer to the write;
  - **(c2) the terminal write → push**: the rest of the DO's call (the events, the push built),
    the RPC back to the Workflow, signing, and the delivery's HTTP (on loopback that is about the
    floor row: well under a millisecond).
- **(e) SendMessage → beginTask in the DO**, begun−t0: client, wrangler's proxy, the edge (token
  verification, envelope), the RPC into the caller's Durable Object.
- **(f) beginTask → model request**, t2−begun: \`beginTask\` (task and turn record, alarm), the
  Workflow instance created (not awaited by \`beginTask\`) and scheduled, the run step up to the
  DO's model request (it marks the task working first).
- **model request → reply received**, t1−t2: how long after the model was called the client
  got its \`submitted\` reply.

Every segment after (e) mixes the local Workflow engine's own work (each instance is a Durable
Object of the engine with its own SQLite: creating it, storing the step's result) with the
caller's Durable Object's (an RPC and its SQLite statements). From outside, the bench cannot pull
those two apart: its only cut points are the model call and the terminal write. Delivery proper
(signing, the POST) sits inside (c2). Up to commit d257152 the push was a step of its own after
the run step; since ac8a474 the run step makes it (docs/protocol.md "The turn").

The share columns give each segment's median over the median of accept → push or of
SendMessage → push; medians do not add up, and a negative (a) makes a negative share.
\`bench/results/latest.json\` also has each segment's share of the summed time (\`ofSum\`), which
does add up to 100 %.

**Why accept holds the Workflow's first steps.** \`beginTask\` hands the Workflow to
\`ctx.waitUntil\` and returns; nothing in the code waits for it. Yet the reply arrives just after
the model request, and by hand, with the fake model answering after 300 ms instead of at once,
accept stayed where it was and the model request still came first: the reply waits for
the work the Workflow queued ahead of it (up to the point where the DO awaits the model), not
for the model. Locally, workerd runs the edge, the Durable Objects and the Workflows engine in
one process, and a Durable Object holds its outgoing messages until its storage writes are
confirmed (the output gate), while the run step keeps writing to the same object.
Which of the two holds the reply the bench cannot tell. In production the engine runs the
instance elsewhere, so do not read the local accept as production's.

Each push is checked: \`Content-Type: application/a2a+json\`, a Bearer JWT (each distinct one is
verified against the Worker's own JWKS: signature, \`iss\` the Worker's origin, \`aud\` the push
URL without its query), the turn's notification token, the accepted task's id, the state
\`TASK_STATE_COMPLETED\`, and the model's answer for this very turn. Counted and reported: turns
with no push within 60 s, duplicate pushes (also late ones, until the end of the run), and
model calls per turn (one each: a second one would mean the turn ran twice).

### Floor

The **floor worker** (\`bench/floor/worker.ts\`, its own \`bench/floor/wrangler.jsonc\`) is the least
a durable A2A turn can cost on this runtime, with the project's own checks. Its edge runs the
project's functions, not copies of them: \`verifyGatekeeperToken\` (jku allowlist, iss, EdDSA
signature, aud, exp, claims, against a \`GatekeeperJwks\` cache), \`parseJsonRpc\`, the tenant
claim, and \`callerObjectName\` for one Durable Object per caller. \`SendMessage\` (with
\`returnImmediately: true\`; the push config checked by \`validatePushConfig\`) stores the task in
that object (one SQLite row) and, past the reply, creates a Workflow instance of two steps:
**run**, one RPC into the object that calls the same zero-latency fake model and makes the
guarded terminal write, and **deliver**, one RPC into the object that pushes the task with the
project's \`deliverPush\` (the callback JWT of \`signCallbackJwt\`). \`GetTask\` is verified the same
way and read from the object; its card route serves a constant. Nothing else: no conversation, no
idempotency by \`messageId\`, no recovery, no events. It is started beside the reference Worker
under \`wrangler dev --local\` the same way (\`--config\`, storage on tmpfs, the trace collector off),
with a gatekeeper of its own (the same code: JWKS, push receiver, fake model), so each side's
counts are its own.

The **contract floor** (\`bench/floor/contract-caller.ts\`, its own \`bench/floor/wrangler.contract.jsonc\`) is
the floor worker, edge and Workflow unchanged, whose caller's object also does, in the least code
(raw SQL, one commit a step), what docs/protocol.md, docs/conversations.md and docs/telemetry.md ask of every turn and
the floor leaves out: idempotency by \`messageId\` (a retry answers with its task, one whose message differs is refused), one conversation per
\`contextId\` (read for the model, the answer appended), a persisted event log with \`seq\`, a turn record
the delivery clears (what recovery reads), the model called through the \`ai\` SDK (as the project must
call it), and one JSON log line per event, six a turn. It has no quotas, usage rows, plugins, tools or
wire types, and its event ids are random, not derived. Its table divides the project's turn figures by
its own: how far the project is from the least code that does a turn's required work. The floor's
table, issue 19's test, also counts the cost of that work.

All three are measured in the same run, in ${int(c.floor?.rounds ?? c.rounds)} rounds that alternate
the order (project, floor, contract floor; contract floor, floor, project; …): per round and side, a share of
${int(c.floor?.turns ?? 0)} turns from ${int(c.floor?.callers ?? 16)} callers with as many open at a time
(one caller each, on average), then a share of ${int(c.floor?.sequential ?? 0)} turns one at a time
(**at rest**) from one more caller; each side warms up first. Then the static card route and a verified
\`GetTask\` of the project and the floor, ${int(c.floor?.n ?? 0)} requests per kind at concurrency ${c.floor?.concurrency ?? c.concurrency},
all four kinds in alternating blocks. Every push is checked as in the turn tables. Each figure
is reported as **project ÷ floor**; the targets (issue 19) are turns/s at ${int(c.floor?.callers ?? 16)}
callers **≥ 0.8×** the floor's, SendMessage → push p50 at rest **≤ 1.3×** the floor's, and the
project's verified \`GetTask\` **≥ 0.8×** its static card route in requests/s. The bench reports
whether each is met; it never fails on one.

The **CPU ms per turn** rows (Linux) are the user and system time each side's \`wrangler dev\` process
group spent over that side's measured turns (its loaded and at-rest batches, not the edge kinds),
read from \`/proc\` before and after each batch (\`bench/lib/process-cpu.mjs\`), over those turns.
A group is three processes that matter: the Worker's own workerd (the edge, the Durable Objects, the
Workflows engine), a second workerd wrangler puts in front of it on the public port (it proxies every
request, and it holds the inspector connection that receives each \`console.log\` of the Worker: wrangler
always enables the inspector's console domain, and no flag turns it off), and wrangler itself (Node: it
parses, source-maps and prints each log line). The last two are local tooling: on Workers neither runs.
The project logs one JSON line per event (docs/telemetry.md; six per single-inference turn), the floor
none. Each line crosses that inspector (wrangler's programmatic \`unstable_startWorker\` can leave it
detached with \`dev.inspector: false\`, the CLI cannot), and that costs CPU in all three processes: most of
the gap in the two tooling rows is the project's lines. On Workers neither tooling process runs. The bench keeps the CLI's
default: that is the \`wrangler dev --local\` issue 19 measures on.

**Where the gap is.** Four \`--only floor\` runs back to back at commit 0b7033a (2026-12-05): two as
committed, then two with a local patch each, not committed: the log sink silent (each event built and
serialised, not printed), and no events at all. CPU is ms per turn, project against floor.

| run | turns/s ÷ floor | at rest p50 ÷ floor | GetTask ÷ card | CPU, all of wrangler dev | the Worker's workerd | proxy ÷ floor | wrangler ÷ floor |
| --- | ---: | ---: | ---: | ---: | ---: | ---: | ---: |
| as committed | 0.60× | 1.59× | 0.77× | 20.65 / 10.62 (1.95×) | 12.62 / 7.48 (1.69×) | 2.52× | 3.07× |
| as committed, again | 0.54× | 1.52× | 0.82× | 19.73 / 9.62 (2.05×) | 12.02 / 6.70 (1.79×) | 2.72× | 3.20× |
| log sink silent | 0.64× | 1.26× | 0.79× | 13.37 / 9.13 (1.46×) | 10.15 / 6.20 (1.64×) | 1.04× | 1.11× |
| no events | 0.63× | 1.49× | 0.72× | 12.48 / 8.27 (1.51×) | 9.58 / 5.70 (1.68×) | 1.11× | 1.18× |

So a turn's six lines cost about 2 ms of the Worker's workerd and 4.5 ms of the two tooling processes:
about 0.05 to 0.1 of the turns/s ratio and up to 0.3 of the at-rest one. The events' own bookkeeping
(building, redacting, their ids) costs next to nothing. Three more runs after those, two with the
inspector detached (the CLI leaves it so when \`VSCODE_INSPECTOR_OPTIONS\` is set; the lines still reach
wrangler's output, through workerd's structured logs) and one as committed, gave turns/s 0.67× and 0.58× against
0.56×, at rest 1.38× and 1.51× against 1.73×, and the Worker's workerd 1.60× and 1.80× against 1.77×: a
detached inspector takes most of the lines' cost off the two tooling
processes (1.05× to 1.63× the floor's), not the Worker's gap.

Without the lines the Worker's workerd still
spends about 1.65× the floor's CPU per turn, and one workerd thread runs every turn (the edge, the
callers' objects, the Workflows engine): turns/s at 0.8× the floor's needs that near 1.25×, about 2.5 ms
less a turn, with the lines silent too. Profiles at the same commit (V8's of the isolate, \`perf\` of the
process) spread it over the whole turn with no single hotspot: SQLite in the caller's object, the ai
SDK's request and response handling, drizzle's wrappers, the task's JSON built and parsed, the RPC
arguments across the boundary. A warm turn runs 30 statements and 4 commits in the caller's object (the
floor's: 2 commits); counted with uprobes on SQLite's WAL writer, those commits write about 53 pages
(the project's Workflow instance about 21 more, the floor's whole turn about 32), at about 24 µs of CPU a
page: the accept 19 (the task and its four indexes, the turn record, the \`messageId\` record, the push
config, the count rows the triggers keep, the first event), the start 13 (the status write, its count
rows, the user's conversation entry and its indexes), the finish 18 (the round and usage rows besides)
and the close 3.

About 12 of those pages are the second b-tree of each table keyed by text and the
\`AUTOINCREMENT\` counter of the event log and the conversation entries. With the migrations patched to
drop them (\`WITHOUT ROWID\`, no \`AUTOINCREMENT\`; two runs, not committed), the Worker's workerd came to
9.90 and 10.05 ms a turn against 10.12 and 12.20 in the runs as committed either side of them (the machine
sped up between): within the noise, so no migration for it. Nor is the close's round trip a lever: with
the Workflow's call that closes the turn left out (and the in-flight cap lifted, since every turn then
stays open; two runs, not committed) turns/s came to 0.60× and 0.56× against 0.60× and 0.57× as committed
in the runs either side, and the Worker's workerd to 1.66× and 1.76× against 1.58× and 1.68×. All of
these at once (the sink silent, the slimmer tables, no close, and no “working” write before the model call;
two runs, not committed) gave turns/s 0.67× and 0.64× against 0.57× and 0.48× as committed either side, and
at rest 1.33× and 1.30× against 1.54× and 1.57×: the lines and these storage changes together leave
turns/s well short of 0.8×; what is left is the turn's own work, its JavaScript and the SQL it needs.

**What the turn's required work costs.** Before the contract floor joined the bench, ten \`--only floor\`
runs at 5fff345 (2026-12-06) patched the floor worker step by step (not committed; each row's runs
alternated with the others'): first the storage (idempotency, the conversation, the event log, the turn
record), then the model through the \`ai\` SDK, then the six lines: the contract floor (which keeps a
message's text to tell a differing retry by, where the patch kept its SHA-256).
Each figure is project ÷ that floor in the same run; the last column is that floor's Worker's workerd.

| the floor, as | runs | turns/s ÷ | at rest p50 ÷ | the Worker's workerd ÷ | its ms a turn |
| --- | ---: | ---: | ---: | ---: | ---: |
| committed | 2 | 0.60×, 0.59× | 1.53×, 1.46× | 1.59×, 1.63× | 12.4, 10.7 |
| + the storage | 4 | 0.70×, 0.62×, 0.60×, 0.66× | 1.41×, 1.51×, 1.32×, 1.28× | 1.36×, 1.52×, 1.57×, 1.37× | 12.8, 11.5, 10.3, 11.9 |
| + the \`ai\` SDK | 2 | 0.66×, 0.75× | 1.24×, 1.27× | 1.37×, 1.25× | 13.8, 13.7 |
| + six log lines a turn | 2 | 0.94×, 0.81× | 1.08×, 1.07× | 1.17×, 1.30× | 16.4, 13.6 |

So the work a turn must do, in the least code, costs about what separated the project from the floor:
the storage half a millisecond to one of the Worker's CPU a turn, the \`ai\` SDK about one and a half to
two, the six lines about two there and four to five more in wrangler's two tooling processes. Against a
floor that does that work the project comes near both turn targets: in six full-size runs with the
contract floor as committed (two \`--only floor\` runs, the full run of 2026-12-06 03:12 on 7aa5383's code, three more \`--only floor\` runs at 7aa5383;
the first three before its differing-retry check, a path the bench never takes) turns/s came to 0.74×, 0.99×, 0.79×, 0.78×, 0.77× and 0.94× (median 0.79×), at rest 1.31×,
0.95×, 1.15×, 1.25×, 1.19× and 0.98× (median 1.17×), while against the issue's floor the same runs gave
0.51× to 0.66× and 1.34× to 1.68×. What is left (the Worker's workerd 1.03× to 1.41× the contract
floor's) is the project's own code over that least code: drizzle, the agents SDK, the wire types, quotas
and usage, the plugins, derived event ids.

**The rest, by process and by statement.** Four more \`--only floor\` runs at eb0b489 (2026-12-06, on an
Intel Xeon). The two clean ones gave turns/s 0.75× and 0.71× the contract floor's and at rest 1.09× and
1.22× (against the issue's floor 0.56× and 0.44×, 1.45× and 1.44×); one under the V8 profiler (0.81×,
1.19×) and one under \`perf\` (0.76×, 1.07×) are not counted. The \`perf\` run sampled each side's Worker
workerd over the same four rounds of turns: 10,450 samples for the project's, 8,257 for the contract
floor's (1.27×). Of the 2,193 more, V8 itself (its builtins, runtime and garbage collector, that is the
project's JavaScript) holds 1,154, SQLite 408, libc and the allocator 357; the rest is spread thin. Much
of the SQLite part is statements compiled again on every run. The SQLite in this wrangler's workerd
(3.54.1) re-prepares, at each new binding, a statement whose plan pairs an equality on a bound parameter
over an index's leading column with an \`ORDER BY\` or a \`max()\` over the next one, and any statement with
a bound \`LIMIT\`. A uprobe on SQLite's prepare (its arguments carry the SQL text and the statement being
prepared again) counted 378 such re-prepares in the project's workerd over a smoke run's 80 turns a side,
126 in the contract floor's; a spec running one statement of each shape confirmed the rule (over the same
turns, the vitest pool's workerd, SQLite 3.53.4, re-prepared only the one with the bound \`LIMIT\`). In the project they are mostly the
event log's append (its \`seq\` is the task's \`max(seq)\` plus one, four a turn) and the conversation
window's read (\`ORDER BY id DESC LIMIT ?\`): about 0.6 ms of the Worker's CPU a turn in the \`perf\` run,
3% of it. Since c07c215 the stores write those equalities \`column = +?\` (\`src/db/eq-param.ts\`): the same
comparison over the same index, but the planner cannot read the value through the unary plus, so
nothing is compiled again. Over a smoke run the uprobe then counted 84 re-prepares in the project's
workerd (the window's bound \`LIMIT\`, which drizzle always binds, and the agents SDK's own jobs read),
and the contract floor's two reads got the same \`= +?\`, so that it stays the least code. In three
runs alternating before and after (not enough to resolve 3%) turns/s came to 0.92× and 0.78× the
contract floor's against 0.80×; at c07c215, with the contract floor's reads changed too, two runs gave
0.85× and 0.81×, at rest 1.15× and 1.12× (against the issue's floor 0.56× and 0.62×, 1.63× and 1.24×).

A model call streams its answer only while a stream reads the task (docs/protocol.md "Streamed for
a reader only"). No turn here has one, so each asks the model in one request. Up to commit 93d4adc
every answer was streamed: the Worker's workerd then spent 25.8 ms per turn (the full run at c9647e4),
against 18.9 ms at 2abc6c4 (a full run, which also builds each store's queries on first use); in a
profile of the isolate, the ai SDK's stream machinery and the streams under it had been about a third.

Both targets are CPU targets here. One workerd thread runs the edge, the callers' objects and the
Workflows engine, so at rest SendMessage → push comes to about the Worker's workerd CPU per turn plus
the same few milliseconds on both sides (loopback, the proxy); under load, turns/s is bounded by the
CPU of all three processes over this machine's two cores.

The ratios move from run to run by about ±0.1×, more than most single changes do: the two runs as
committed above gave 0.60× and 0.54×, their floors 127 and 146 turns/s. Compare commits in runs made
alongside each other, not across READMEs.

### Long run

Issue 19 asks for the turn figures to hold for a caller with ${int(c.largeTasks)} tasks. Once ListTasks is
measured, the caller that holds them (its tasks, their events, the \`messageId\`s it accepted) and a fresh
caller take turns in the same workerd, in ${int(c.long?.rounds ?? c.rounds)} alternating rounds (large, fresh; fresh, large; …):
per round and caller, a share of ${int(c.long?.sequential ?? 0)} turns one at a time, then a share of ${int(c.long?.turns ?? 0)}
with ${c.long?.concurrency ?? 4} open at a time (one caller, so one Durable Object, takes them all); then a verified
\`GetTask\` of one of each caller's tasks and the static card route, ${int(c.long?.n ?? 0)} requests per kind in
alternating blocks. **÷ fresh** near 1.00× is flat.${
    r.longRun?.floorAtRest
      ? ` Seeding the floor's ${int(c.floor?.callers ?? 16)} callers with ${int(c.largeTasks)} tasks each
would take hours, so a fresh caller of the floor worker takes its own share of turns at rest in
every round instead (last in odd-numbered rounds, first in even-numbered ones, each time once the project's turns
have settled), and the large caller's at-rest p50 is divided by its p50: the issue's at-rest target, for
a caller that holds them, against the floor measured alongside.`
      : ""
  }

### Fresh workerd processes, tmpfs, no trace collector

Locally, every Workflow instance is a Durable Object with its own SQLite file, and workerd
keeps it open after the instance has finished: about 3.2 open files per turn, none released
after 90 s idle. With this machine's open-file limit (20,000, also the hard limit) a single
workerd fails after about 6,000 turns: \`SQLITE_CANTOPEN\`, then every \`SendMessage\` answers an
internal error. So each workerd gets at most ${int(r.worker.turnsPerProcess)} turns (${
    c.turnsPerWorker === undefined ? "70 % of the open-file limit, at 3.5 files per turn" : "set by `BENCH_TURNS_PER_WORKER`"
  }),
after which the bench waits until every turn has pushed and starts a fresh workerd on the same
storage; it opens only what it touches. Callers' Durable Objects keep their
tasks across it. The edge and turn figures come from the first process, ListTasks from the
last, each after its own warm-up. The launcher (\`scripts/dev/wrangler.mjs\`) starts wrangler with
its open-file soft limit raised to the hard limit, and the budget is read from the limit a process
started that way sees; here Node has already raised it, and the hard limit cannot be raised.

The storage goes to tmpfs (\`/dev/shm\`) when it has room (about 0.3 MiB per turn: some 3 GiB
of memory with the default counts, given back at the end), and wrangler's local trace collector
(\`X_LOCAL_OBSERVABILITY=false\`: it writes every invocation's tail events to SQLite for the local
explorer) is off: both are dev tooling, not what a request costs. Measured once on this
machine at commit 9b8a4cc (before turns kept a conversation), seeding 1,000 turns ran at about
24 tasks/s with both as they were, 33–42 with either changed, and 84 with both. Figures from
runs before these settings (commit 8cb97af's README) were measured on disk with the collector
on and are slower; they do not compare with these.

Caveats:

- Client, wrangler (a Node process proxying every request) and workerd share the machine's
  CPUs, so absolute figures say little about production; on 2 cores, concurrency 8 mostly
  queues (compare its p50 with the one-at-a-time p50). The ratios are the point.
- The local Workflows engine is not production's: there, instances run elsewhere and every
  step's result is stored remotely. The turn breakdown says where the time goes in this
  engine, on this machine.
- A p99 over a few hundred requests is a handful of samples: a single stall of the machine
  moves it. Trust the p50 ratios first.
- \`wrangler dev\` rebuilds and restarts the Worker when a source file changes. The bench
  stops with an error when that happens: run it on a quiet tree (or a clone).

## How to run

\`\`\`sh
npm run bench
\`\`\`

It prints the tables below, writes the raw figures to \`bench/results/latest.json\` (git-ignored)
and rewrites this README with them. It ends with the conversation workloads (10,000 turns in
one conversation, then 10,000 over 100 conversations of one caller; about 17 minutes here, see
"Conversations"): \`npm run bench -- --without conversations\` leaves them out and keeps their
section as it is, \`npm run bench -- --only conversations\` runs them alone (\`BENCH_CONV_TURNS\`,
\`BENCH_CONV_CONVERSATIONS\`, \`BENCH_CONV_CONCURRENCY\`, \`BENCH_CONV_WINDOW\`, \`BENCH_CONV_BLOCKS\`,
\`BENCH_CONV_BASELINE\`, \`BENCH_CONV_TEXT_BYTES\` set their sizes; defaults 10,000, 100, 8, 1,000,
4, 200, 0). Counts of the rest are set by environment variables:

| variable | default | what |
| --- | ---: | --- |
| \`BENCH_N\` | 2000 | requests per kind under load |
| \`BENCH_CONCURRENCY\` | 8 | requests in flight under load |
| \`BENCH_SEQ_N\` | 1000 | requests per kind one at a time |
| \`BENCH_WARMUP\` | 200 | warm-up requests per kind |
| \`BENCH_ROUNDS\` | 4 | alternating blocks each kind's requests are split into |
| \`BENCH_TURNS\` | 200 | turns with \`BENCH_TURN_CONCURRENCY\` open at a time |
| \`BENCH_TURN_CONCURRENCY\` | 4 | turns open at a time |
| \`BENCH_TURNS_SEQUENTIAL\` | 200 | turns one at a time (0: none) |
| \`BENCH_TURN_WARMUP\` | 10 | warm-up turns, not reported |
| \`BENCH_LIST_N\` | 500 | ListTasks calls per caller |
| \`BENCH_SMALL_TASKS\` | 100 | tasks of the small caller |
| \`BENCH_LARGE_TASKS\` | 10000 | tasks of the large caller |
| \`BENCH_SEED_CONCURRENCY\` | 4 | SendMessage calls in flight while seeding |
| \`BENCH_TURNS_PER_WORKER\` | from the open-file limit | turns a workerd runs before a fresh one takes over |
| \`BENCH_STATE_DIR\` | \`/dev/shm\` if it has room, else the temp dir | where the throw-away storage goes |
| \`BENCH_DEADLINE_S\` | 7200 | the whole run is abandoned (and cleaned up) after this |
| \`BENCH_FLOOR_CALLERS\` | 16 | floor comparison: callers (and turns open at a time) of the loaded turns |
| \`BENCH_FLOOR_TURNS\` | 480 (smoke 64) | floor comparison: loaded turns a side |
| \`BENCH_FLOOR_SEQUENTIAL\` | 120 (smoke 16) | floor comparison: turns at rest (one at a time) a side |
| \`BENCH_FLOOR_N\` | 1000 (smoke 200) | floor comparison: card and GetTask requests per kind and side |
| \`BENCH_FLOOR_WARMUP\` | 100 (smoke 20) | floor comparison: warm-up requests per kind |
| \`BENCH_LONG_SEQUENTIAL\` | 120 | long run: turns at rest per caller |
| \`BENCH_LONG_TURNS\` | 200 | long run: turns per caller with \`BENCH_TURN_CONCURRENCY\` open |
| \`BENCH_LONG_N\` | 1000 | long run: GetTask and card requests per kind |

For a quick check: \`BENCH_N=300 BENCH_SEQ_N=100 BENCH_LIST_N=50 BENCH_TURNS=60 BENCH_TURNS_SEQUENTIAL=30 BENCH_LARGE_TASKS=1000 npm run bench\`
(it rewrites this README too).

The floor comparison ("Floor" above) runs after the turns. \`npm run bench -- --only floor\` runs it
alone at these sizes: it prints its table and writes \`bench/results/floor.json\`, and leaves this
README as it is; \`--without floor\` leaves it out. \`npm run bench -- --smoke\` runs it small (about a
minute and a half: \`BENCH_ROUNDS\` 2 and the smoke sizes above) and only prints the ratios, asserting nothing and
writing no file; CI runs it.

**Profiling.** \`BENCH_PROFILE=1 npm run bench -- --only floor\` runs the project's first loaded batch
of the floor comparison under V8's sampling profiler, over wrangler's inspector port
(\`bench/lib/profile.mjs\`): it prints the heaviest functions (their own time, and with what they
called), the time by module (each line of the bundle named by the module it came from, a native
call such as a SQLite statement counted for the module that made it) and writes \`bench/results/project-turns.cpuprofile\` for Chrome DevTools or speedscope.
\`BENCH_PROFILE=floor\` profiles the floor worker's batch instead (\`bench/results/floor-turns.cpuprofile\`), and \`BENCH_PROFILE=contract\` the contract floor's.
The profiler costs time itself: read its shares, not that run's figures.

\`npm run bench:soak\` is a separate run: turns from many callers with failures injected and the
Worker killed and restarted part-way, for recovery rather than speed. It writes its own section,
"Soak and recovery" at the end of this README, which \`npm run bench\` keeps as it is.

## Figures of the last run

${r.date} on ${machineLine(r.machine)}${r.machine.commit ? `, commit ${r.machine.commit}` : ""}.
The run took ${r.durationS.toFixed(0)} s. The gatekeeper saw ${gatekeeperLine(r.gatekeeper)}.
The Worker ran as ${workerLine(r.worker)}.
${warned.length ? `\n**Warnings:**\n\n${warned.map((w) => `- ${w}`).join("\n")}\n` : ""}
${figures}
${conversations ? `\n${conversations}\n` : ""}${soak ? `\n${soak}\n` : ""}`;
}
