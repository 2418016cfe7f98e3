// The bench's verdicts (bench/lib/verdicts.mjs): the smoke CI runs fails on a lost
// or repeated turn and on a missed margin, and passes otherwise; the headline is
// judged on the median of back-to-back runs; result files do not overwrite each other.
import { describe, expect, it } from "vitest";
import { resultName } from "../../bench/lib/results.mjs";
import { HEADLINE, judgeMedians, median, smokeViolations } from "../../bench/lib/verdicts.mjs";

/** A merged batch (bench/lib/floor.mjs `mergeTurns`) of `turns` turns, each pushed once and checked. */
const batch = (turns = 8) => ({
  turns,
  checks: {
    pushed: turns,
    missing: 0,
    duplicatePushes: 0,
    problems: 0,
    firstProblems: [],
    modelCallsPerTurn: { 1: turns },
    callbackTokens: { distinct: turns, verified: turns },
  },
});
const side = () => ({ loaded: batch(), atRest: batch() });

/** @typedef {{ turnsPerS?: number, sendToPushP50?: number, cpu?: number, getTaskOverCard?: number }} Ratios */

/**
 * A floor comparison whose ratios are `floor` (project ÷ floor) and `contract` (project ÷ contract floor).
 * @param {{ floor?: Ratios, contract?: Ratios }} [o]
 * @returns {any}
 */
function comparison({ floor = {}, contract = {} } = {}) {
  /** @param {Ratios} r */
  const ratios = (r) => ({ turnsPerS: r.turnsPerS ?? 0.7, sendToPushP50: r.sendToPushP50 ?? 1.1, cpuPerTurn: { worker: r.cpu ?? 1.2 } });
  return {
    project: side(),
    floor: side(),
    contract: side(),
    late: { pushes: 0, modelCalls: 0 },
    ratios: { ...ratios(floor), getTaskOverCard: floor.getTaskOverCard ?? 1 },
    contractRatios: ratios(contract),
  };
}

describe("the smoke's verdict", () => {
  it("passes a run within every margin with every turn pushed once", () => {
    expect(smokeViolations(comparison())).toEqual([]);
    // At the margins themselves: still within.
    expect(smokeViolations(comparison({ floor: { turnsPerS: 0.45, sendToPushP50: 2.3, cpu: 2.4 } }))).toEqual([]);
  });

  it("names each margin missed", () => {
    const v = smokeViolations(comparison({ floor: { turnsPerS: 0.44, sendToPushP50: 2.31, cpu: 2.5 } }));
    expect(v).toHaveLength(3);
    expect(v[0]).toMatch(/^turns\/s at 16 callers, project ÷ floor is 0\.44×, outside ≥ 0\.45×/);
    expect(v[1]).toMatch(/SendMessage → push p50 at rest, project ÷ floor is 2\.31×, outside ≤ 2\.30×/);
    expect(v[2]).toMatch(/workerd CPU per turn, project ÷ floor is 2\.50×, outside ≤ 2\.40×/);
  });

  it("fails a figure not measured, and does not judge the contract floor's", () => {
    const f = comparison({ contract: { turnsPerS: 0.1, sendToPushP50: 9, cpu: 9 } });
    expect(smokeViolations(f)).toEqual([]);
    f.ratios.cpuPerTurn = null;
    expect(smokeViolations(f)).toEqual([expect.stringMatching(/workerd CPU per turn, project ÷ floor is not measured/)]);
  });

  it("fails a lost, repeated, failed or twice-run turn on any side", () => {
    const lose = (mutate) => {
      const f = comparison();
      mutate(f);
      return smokeViolations(f);
    };
    expect(lose((f) => (f.project.loaded.checks.missing = 1))).toEqual([expect.stringMatching(/^floor comparison, project loaded: 1 turn\(s\) got no push/)]);
    expect(lose((f) => (f.floor.atRest.checks.duplicatePushes = 1))).toEqual([expect.stringMatching(/floor at rest: .*1 duplicate push/)]);
    expect(lose((f) => (f.contract.loaded.checks.problems = 2))).toEqual([expect.stringMatching(/contract floor loaded: .*2 failed a check/)]);
    expect(lose((f) => (f.project.atRest.checks.callbackTokens.verified = 7))).toEqual([expect.stringMatching(/1 callback JWT\(s\) not verified/)]);
    expect(lose((f) => (f.project.loaded.checks.modelCallsPerTurn = { 1: 7, 2: 1 }))).toEqual([expect.stringMatching(/model calls per turn 1 × 2/)]);
    expect(lose((f) => (f.late.pushes = 1))).toEqual([expect.stringMatching(/later, 1 more push/)]);
  });
});

describe("the headline over back-to-back runs", () => {
  it("takes the median of the runs, not their mean or best", () => {
    expect(median([0.9, 0.5, 0.86, 0.88, 0.1])).toBe(0.86);
    expect(median([1, 3])).toBe(2);
    expect(median([])).toBeNaN();
    expect(median([1, NaN, 2])).toBeNaN();
  });

  it("judges each target on its median: met at the bound, missed past it", () => {
    const runs = [0.84, 0.85, 0.95, 0.5, 0.9].map((turnsPerS) => comparison({ contract: { turnsPerS } }));
    const rows = judgeMedians(runs);
    expect(rows.map((r) => r.label)).toEqual(HEADLINE.map((b) => b.label));
    const [turns] = rows;
    expect(turns).toMatchObject({ values: [0.84, 0.85, 0.95, 0.5, 0.9], value: 0.85, target: 0.85, met: true });
    const missed = judgeMedians([0.84, 0.8, 0.95].map((turnsPerS) => comparison({ contract: { turnsPerS } })));
    expect(missed[0]).toMatchObject({ value: 0.84, met: false });
    // An upper bound: the bare floor's CPU ratio, ≤ 1.5×.
    const cpu = (values) => judgeMedians(values.map((cpu) => comparison({ floor: { cpu } }))).find((r) => r.side === "floor" && r.metric === "workerCpu");
    expect(cpu([1.5, 1.6, 1.4])).toMatchObject({ value: 1.5, met: true });
    expect(cpu([1.51, 1.6, 1.4])).toMatchObject({ value: 1.51, met: false });
  });
});

describe("result files", () => {
  it("are named by kind and the millisecond, so runs back to back keep each other's", () => {
    const at = new Date("2026-12-07T12:34:56.789Z");
    expect(resultName("floor", at)).toBe("floor-2026-12-07T12-34-56-789Z.json");
    expect(resultName("floor", new Date(at.getTime() + 1))).not.toBe(resultName("floor", at));
  });
});
