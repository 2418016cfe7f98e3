// What a floor comparison (lib/floor.mjs) is judged by (bench/README.md "Results"
// and "The smoke in CI"): the headline's targets, the smoke's wide margins, and
// the checks that no turn was lost. Pure functions of its result, so a spec can
// hold them (test/node/bench-verdicts.test.mjs).

/**
 * A judged figure: `of` reads it off a floor comparison's result; `atLeast`
 * says which way `target` bounds it. `side` and `metric` place it in the
 * report's tables (lib/report.mjs).
 * @typedef {{ label: string, side: "contract" | "floor", metric: "turnsPerS" | "sendToPushP50" | "workerCpu" | "getTaskOverCard",
 *   atLeast: boolean, target: number }} Bound
 */

/** @param {any} f @param {Bound} b */
const figure = (f, b) => {
  const q = b.side === "contract" ? f.contractRatios : f.ratios;
  if (b.metric === "workerCpu") return q.cpuPerTurn?.worker;
  return q[b.metric];
};

/** @type {Bound[]} The headline: project ÷ contract floor, then project ÷ the bare floor. */
export const HEADLINE = [
  { label: "turns/s at 16 callers, project ÷ contract floor", side: "contract", metric: "turnsPerS", atLeast: true, target: 0.85 },
  { label: "SendMessage → push p50 at rest, project ÷ contract floor", side: "contract", metric: "sendToPushP50", atLeast: false, target: 1.2 },
  { label: "the Worker's workerd CPU per turn, project ÷ contract floor", side: "contract", metric: "workerCpu", atLeast: false, target: 1.3 },
  { label: "the Worker's workerd CPU per turn, project ÷ floor", side: "floor", metric: "workerCpu", atLeast: false, target: 1.5 },
  { label: "turns/s at 16 callers, project ÷ floor", side: "floor", metric: "turnsPerS", atLeast: true, target: 0.65 },
  { label: "GetTask ÷ card req/s, the project's ÷ the floor's", side: "floor", metric: "getTaskOverCard", atLeast: true, target: 0.95 },
];

/** @type {Bound[]} The smoke's margins, against the bare floor: wide, since a smoke is small and CI machines are shared. */
export const SMOKE_MARGINS = [
  { label: "turns/s at 16 callers, project ÷ floor", side: "floor", metric: "turnsPerS", atLeast: true, target: 0.45 },
  { label: "SendMessage → push p50 at rest, project ÷ floor", side: "floor", metric: "sendToPushP50", atLeast: false, target: 2.3 },
  { label: "the Worker's workerd CPU per turn, project ÷ floor", side: "floor", metric: "workerCpu", atLeast: false, target: 2.4 },
];

/** The headline bound a table row of `side` shows for `metric`, if any. */
export const headlineBound = (side, metric) => HEADLINE.find((b) => b.side === side && b.metric === metric);

/** Whether `value` is within bound `b`; a figure not measured (NaN, missing) is not. */
export const within = (value, b) => Number.isFinite(value) && (b.atLeast ? value >= b.target : value <= b.target);

/** `b` as text: "≥ 0.85×". */
export const boundText = (b) => `${b.atLeast ? "≥" : "≤"} ${b.target.toFixed(2)}×`;

/** Each bound of `bounds` applied to floor comparison `f`: its value and whether it is met. */
export const judge = (bounds, f) => bounds.map((b) => ({ ...b, value: figure(f, b), met: within(figure(f, b), b) }));

/** The middle value (the mean of the two middle ones for an even count); NaN for none or any not measured. */
export function median(values) {
  if (values.length === 0 || values.some((v) => !Number.isFinite(v))) return NaN;
  const sorted = [...values].sort((a, b) => a - b);
  const mid = sorted.length >> 1;
  return sorted.length % 2 ? sorted[mid] : (sorted[mid - 1] + sorted[mid]) / 2;
}

/**
 * Per headline bound, each run's value, their median and whether the median
 * meets it: the figure issue 49 asks for (the median of five runs).
 * @param {any[]} floors the floor comparisons of back-to-back runs
 */
export const judgeMedians = (floors) =>
  HEADLINE.map((b) => {
    const values = floors.map((f) => figure(f, b));
    const value = median(values);
    return { ...b, values, value, met: within(value, b) };
  });

/**
 * What went wrong with the turns of merged batches (lib/floor.mjs `mergeTurns`):
 * one line per batch that lost a push, got a duplicate, failed a push check,
 * had a callback JWT not verify, or did not make exactly one model call a turn.
 * @param {string} prefix @param {[string, any][]} batches label and merged batch
 */
export function batchProblems(prefix, batches) {
  const out = [];
  for (const [label, t] of batches) {
    const c = t.checks;
    const otherCalls = Object.entries(c.modelCallsPerTurn).filter(([n]) => Number(n) !== 1);
    const unverified = c.callbackTokens.distinct - c.callbackTokens.verified;
    if (c.missing > 0 || c.duplicatePushes > 0 || c.problems > 0 || otherCalls.length > 0 || unverified > 0)
      out.push(
        `${prefix}, ${label}: ${c.missing} turn(s) got no push, ${c.duplicatePushes} duplicate push(es), ${c.problems} failed a check` +
          `${unverified > 0 ? `, ${unverified} callback JWT(s) not verified` : ""}` +
          `${otherCalls.length ? `, model calls per turn ${otherCalls.map(([n, turns]) => `${turns} × ${n}`).join(", ")}` : ""}` +
          `${c.firstProblems[0] ? `, e.g. ${c.firstProblems[0]}` : ""}.`,
      );
  }
  return out;
}

/** A floor comparison's lost, repeated or failed turns, on every side; none when every turn was pushed once and passed. */
export function turnProblems(f) {
  const sides = /** @type {const} */ ([
    ["project", "project"],
    ["floor", "floor"],
    ["contract", "contract floor"],
  ]);
  const out = batchProblems(
    "floor comparison",
    sides.flatMap(([key, name]) => [
      [`${name} loaded`, f[key].loaded],
      [`${name} at rest`, f[key].atRest],
    ]),
  );
  // A push or model call of a measured turn after its figures were taken is a turn delivered or run twice.
  if (f.late.pushes > 0 || f.late.modelCalls > 0)
    out.push(`floor comparison: later, ${f.late.pushes} more push(es) and ${f.late.modelCalls} model call(s) of measured turns.`);
  return out;
}

/**
 * The smoke's verdict on floor comparison `f`: one line per violation (a lost
 * or repeated turn, a margin missed); none when it passes.
 */
export function smokeViolations(f) {
  const margins = judge(SMOKE_MARGINS, f)
    .filter((r) => !r.met)
    .map((r) => `${r.label} is ${Number.isFinite(r.value) ? `${r.value.toFixed(2)}×` : "not measured"}, outside ${boundText(r)}.`);
  return [...turnProblems(f), ...margins];
}
