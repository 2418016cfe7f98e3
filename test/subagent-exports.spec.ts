import { env } from "cloudflare:workers";
import { runInDurableObject } from "cloudflare:test";
import { callerObjectName } from "@dynamicagents/core/worker";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { mark } from "./support/agents.js";
import { captureConsole, type CapturedConsole } from "./support/console-capture.js";
import { GATEKEEPER } from "./support/constants.js";
import { markerEdge } from "./support/isolated-edge.js";
import { chatCompletion, chatToolCall, eventually } from "./support/outbound.js";
import { call, sendParams } from "./support/rpc.js";
import { useMarkerHarness } from "./support/turn-harness.js";

// A delegating agent whose subagent class the runtime cannot find (the test
// pool's additionalExports leaves UnlistedSubagent out, as an author's pool
// might: vitest.config.ts): every subtask fails to start with an error naming
// the likely cause, and a round none of whose subtasks started ends the task
// failed in the policy's words, rather than answered as if they had run.

const harness = useMarkerHarness();
const edge = markerEdge();
let captured: CapturedConsole;
beforeEach(() => {
  captured = captureConsole();
});
afterEach(() => captured[Symbol.dispose]());

function newCaller() {
  const key = `caller-${crypto.randomUUID()}`;
  const ns = env.MARKER_UNLISTED!;
  return {
    mint: { tenant: "marker-unlisted", identity: { key } },
    stub: ns.get(ns.idFromName(callerObjectName({ gatekeeper: GATEKEEPER, tenant: "marker-unlisted", key }))),
  };
}

describe("a subagent class the runtime cannot find", () => {
  it("fails each subtask naming additionalExports, and the task says no subtask could start: no round answers over them", async () => {
    const delegation = {
      subtasks: [
        { type: "echo_task", params: { say: "one" } },
        { type: "echo_task", params: { say: "two" } },
      ],
    };
    harness.outbound.model = (c) =>
      c.tools.includes("delegate") && harness.outbound.modelCalls.length === 1
        ? chatToolCall("delegate", delegation, c.model)
        : chatCompletion("answered anyway", c.model);
    const who = newCaller();
    const sent = await call("SendMessage", sendParams("echo one and two"), { mint: who.mint, worker: edge.fetch });
    const id: string = sent.body.result.task.id;
    const push = await eventually(
      () => harness.outbound.pushes.find((p) => p.body.task?.id === id),
      (p) => p !== undefined,
      "the terminal push",
    );
    const task = push!.body.task;

    expect(task.status.state).toBe("TASK_STATE_FAILED");
    const text: string = task.status.message.parts[0].text;
    expect(text.startsWith(mark("not-started"))).toBe(true);
    const words = JSON.parse(text.slice(mark("not-started").length));
    expect(words).toMatchObject({ round: 1, subtasks: 2 });
    expect(words.error).toContain("the subagent class UnlistedSubagent is not among the Worker's exports as a Durable Object class");
    expect(words.error).toContain('additionalExports: { UnlistedSubagent: "DurableObject" }');
    // One exchange only: the round that delegated. Nothing answered over the subtasks that never ran.
    expect(harness.outbound.modelCalls).toHaveLength(1);
    const rows = await runInDurableObject(who.stub, (_i, state) =>
      state.storage.sql.exec<{ status: string; error: string }>("SELECT status, error FROM subtasks ORDER BY ordinal").toArray(),
    );
    expect(rows.map((r) => r.status)).toEqual(["unstarted", "unstarted"]);
    for (const row of rows) expect(row.error).toContain("additionalExports");
    // The operator's log says it too.
    expect(captured.lines().some((line) => line.includes("none of its 2 subtasks could start") && line.includes("UnlistedSubagent"))).toBe(true);
  });
});
