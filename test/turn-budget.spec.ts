import { env } from "cloudflare:workers";
import { evictDurableObject } from "cloudflare:test";
import { callerObjectName } from "@dynamicagents/core/worker";
import { describe, expect, it, type TestContext } from "vitest";
import cost from "../docs/cost.md?raw";
import { GATEKEEPER, PUSH_URL } from "./support/constants.js";
import { eventually } from "./support/outbound.js";
import { call, sendParams, userMessage } from "./support/rpc.js";
import { countTurns, type TurnCounts } from "./support/turn-counters.js";
import { useTurnHarness } from "./support/turn-harness.js";

// What one single-inference turn (one model call, no tool, one push config) costs in the units
// Cloudflare bills, from SendMessage to the push delivered and the Workflow complete. The budget is
// the warm turn's (the caller's second, same context); the first turn and one after the object was
// evicted are reported beside it. docs/cost.md prices these figures.

/** Console lines per warm turn at the default (docs/telemetry.md "Which lines"): task.accepted and the wide turn.finished. */
const LOG_LINES = 2;

/** The warm turn's budget: a count above it fails, and so does one below 90 % of it (lower the budget then, and docs/cost.md). */
const TURN_BUDGET = {
  // `sql.exec` calls in the caller's object: the accept, the turn's run and its close.
  statements: 33,
  // Rows those statements wrote (their cursors' `rowsWritten`, index entries included): SQLite storage's dearest unit.
  rowsWritten: 62,
  // Rows they read (`rowsRead`): 77 to 81, as the turn's random task id sorts before or after the first turn's (four index seeks read one row more or less).
  rowsRead: 81,
  // Requests into the caller's object: one per stub call (edge → object `beginTask`, Workflow → object `runTurn`, `turnDelivered`) and per alarm.
  objectRequests: 3,
  // `step.do` / `sleep` / `waitForEvent` calls of the turn's Workflow instance.
  workflowSteps: 1,
  // Console lines of every level.
  logLines: LOG_LINES,
  // Outbound fetches: the model call and the push (the gatekeeper's JWKS is cached since the first turn).
  subrequests: 2,
};

type Budgeted = keyof typeof TURN_BUDGET;

const budgeted = (counts: TurnCounts): Record<Budgeted, number> => ({
  statements: counts.statements,
  rowsWritten: counts.rowsWritten,
  rowsRead: counts.rowsRead,
  objectRequests: counts.rpcs + counts.alarms,
  workflowSteps: counts.steps,
  logLines: counts.logLines,
  subrequests: counts.subrequests,
});

const harness = useTurnHarness();

type Caller = { tenant: string; identity: { key: string; name: string } };
const newCaller = (): Caller => ({ tenant: "assistant", identity: { key: `budget-${crypto.randomUUID()}`, name: "Ada" } });
const objectOf = (caller: Caller) =>
  env.ASSISTANT.get(env.ASSISTANT.idFromName(callerObjectName({ gatekeeper: GATEKEEPER, tenant: "assistant", key: caller.identity.key })));

/** One SendMessage with one push config (in `contextId` when given), counted until its push is in and every Workflow instance is complete. */
async function countedTurn(caller: Caller, contextId?: string): Promise<{ counts: TurnCounts; contextId: string }> {
  const counter = await countTurns(harness.outbound.requests);
  const params = sendParams("what does a turn cost?");
  if (contextId) params.message = userMessage("what does a turn cost?", undefined, { contextId });
  const reply = await call("SendMessage", params, { mint: caller });
  expect(reply.body.error).toBeUndefined();
  const task = reply.body.result.task as { id: string; contextId: string };
  await eventually(
    () => harness.outbound.pushes.find((p) => p.url === PUSH_URL && p.body.task?.id === task.id && p.body.task.status?.state === "TASK_STATE_COMPLETED"),
    (push) => push !== undefined,
    "the terminal push",
  );
  const instances = await eventually(
    () => harness.workflows.get(),
    (all) => all.length > 0,
    "the turn's Workflow",
  );
  for (const instance of instances) await instance.waitForStatus("complete");
  const counts = counter.stop();
  // One model call, no tool: the turn this spec budgets.
  expect(counts.subrequestUrls.filter((u) => u.includes("/chat/completions"))).toHaveLength(1);
  return { counts, contextId: task.contextId };
}

/** The counts as the run's output shows them (annotated on the test, and in the console file): a drop is visible too. */
function report(context: TestContext, name: string, counts: TurnCounts) {
  const { perStatement, subrequestUrls, ...figures } = counts;
  const line = `${name}: ${JSON.stringify(figures)}`;
  console.info(line);
  console.info(
    `${name} statements (rows read, written): ${perStatement.map((s) => `[${s.rowsRead},${s.rowsWritten}] ${s.sql.replace(/\s+/g, " ").slice(0, 100)}`).join(" | ")}`,
  );
  context.annotate(line);
}

/** The budget table of docs/cost.md "The counts": key → the per-turn figure it prices. */
function docCounts(): Map<string, number> {
  const start = cost.indexOf("\n## The counts\n");
  expect(start, 'docs/cost.md has no "## The counts" section').toBeGreaterThan(-1);
  const section = cost.slice(start, cost.indexOf("\n## ", start + 1));
  return new Map([...section.matchAll(/^\| `(\w+)` \| ([\d,]+) \|/gm)].map((m) => [m[1]!, Number(m[2]!.replaceAll(",", ""))]));
}

describe("a single-inference turn with one push config", () => {
  it("stays within its budget when warm; the cold and the woken turn are reported", async (context) => {
    const caller = newCaller();
    const cold = await countedTurn(caller);
    report(context, "cold (the caller's first turn: its object and schema made)", cold.counts);

    const warm = await countedTurn(caller, cold.contextId);
    report(context, "warm (the caller's second turn, same context)", warm.counts);

    await evictDurableObject(objectOf(caller));
    const woken = await countedTurn(caller, cold.contextId);
    report(context, "woken (the third, its object evicted before)", woken.counts);

    const actual = budgeted(warm.counts);
    for (const [key, budget] of Object.entries(TURN_BUDGET) as [Budgeted, number][]) {
      expect.soft(actual[key], `${key}: ${actual[key]}, over its budget of ${budget}`).toBeLessThanOrEqual(budget);
      expect
        .soft(actual[key], `${key}: ${actual[key]}, well below its budget of ${budget}: lower the budget and docs/cost.md`)
        .toBeGreaterThanOrEqual(0.9 * budget);
    }
    // The storage API besides SQL bills rows too (KV calls, `setAlarm`) that no cursor shows: a warm turn makes none.
    expect(Object.keys(warm.counts.storageCalls).filter((name) => name !== "transactionSync")).toEqual([]);
    // Every request into an object went to the caller's: the edge's one call, the Workflow's two.
    expect(warm.counts.rpcMethods).toEqual(["beginTask", "runTurn", "turnDelivered"]);
  });

  it("is what docs/cost.md prices", () => {
    expect(Object.fromEntries(docCounts())).toEqual(TURN_BUDGET);
  });
});
