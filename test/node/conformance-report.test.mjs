// The verdict of `npm run conformance` (scripts/conformance/report.mjs): a MUST
// failure fails the run unless docs/conformance.md lists it, with a reason, as
// the suite's mistake; the list in the doc is the one the runner reads.
import { readFileSync } from "node:fs";
import { describe, expect, it } from "vitest";
import { judge, knownMistakes, summaryLines } from "../../scripts/conformance/report.mjs";

const doc = readFileSync(new URL("../../docs/conformance.md", import.meta.url), "utf8");

const report = (entries) => ({
  per_requirement: Object.fromEntries(entries.map(([id, level, status]) => [id, { level, status, errors: status === "FAIL" ? [`${id} went wrong`] : [] }])),
});

describe("the documented list", () => {
  it("is read from docs/conformance.md, each requirement with its reason", () => {
    const known = knownMistakes(doc);
    expect([...known.keys()]).toEqual(["CORE-SEND-003"]);
    expect(known.get("CORE-SEND-003")).toMatch(/-32005/);
  });

  it("refuses a row without a reason", () => {
    expect(() => knownMistakes("# x\n\n## The suite's mistakes\n\n| `CORE-X-1` |  |\n")).toThrow(/without a reason/);
  });
});

describe("the verdict", () => {
  const known = new Map([["CORE-SEND-003", "the suite's runner expects success"]]);

  it("a MUST failure not listed fails the run, named with its error", () => {
    const verdict = judge(
      report([
        ["CORE-SEND-003", "MUST", "FAIL"],
        ["PUSH-GET-001", "MUST", "FAIL"],
        ["CORE-GET-001", "MUST", "PASS"],
      ]),
      known,
    );
    expect(verdict.ok).toBe(false);
    expect(verdict.unexpected).toEqual([{ id: "PUSH-GET-001", error: "PUSH-GET-001 went wrong" }]);
    expect(summaryLines(verdict)).toContain("  FAILED  PUSH-GET-001: PUSH-GET-001 went wrong");
  });

  it("a listed failure, SHOULD failures, skips and requirements not tested pass, counted", () => {
    const verdict = judge(
      report([
        ["CORE-SEND-003", "MUST", "FAIL"],
        ["CORE-HIST-001", "SHOULD", "FAIL"],
        ["GRPC-SVC-001", "MUST", "SKIPPED"],
        ["CARD-SIGN-001", "MUST", "NOT TESTED"],
      ]),
      known,
    );
    expect(verdict.ok).toBe(true);
    expect(summaryLines(verdict)).toEqual([
      "MUST   0 passed, 1 failed, 1 skipped, 1 not tested, of 3",
      "SHOULD 0 passed, 1 failed, 0 skipped, 0 not tested, of 1",
      "  excused CORE-SEND-003: the suite's runner expects success",
    ]);
  });

  it("a listed requirement that passes is pointed out", () => {
    const verdict = judge(report([["CORE-SEND-003", "MUST", "PASS"]]), known);
    expect(verdict.ok).toBe(true);
    expect(verdict.stale).toEqual(["CORE-SEND-003"]);
  });
});
