import { env } from "cloudflare:workers";
import { runInDurableObject } from "cloudflare:test";
import { TERMINAL_STATE_NAMES } from "@dynamicagents/core/a2a";
import { resolveConfig, validatePolicy } from "@dynamicagents/core/agent";
import type { TaskJson } from "@dynamicagents/core/boundary";
import { AgentDB } from "@dynamicagents/core/db";
import { createAgentRuntime, definePlugin, defineSubtaskType } from "@dynamicagents/core/plugin";
import { runHandleTask, type LoopDeps, type LoopEvents } from "@dynamicagents/core/round";
import { mockModel, scriptedChoices } from "@dynamicagents/core/testing";
import { describe, expect, it } from "vitest";
import { z } from "zod";
import { researchPolicy } from "../reference/policy.js";
import { ORIGIN } from "./support/constants.js";

// The loop's exports for an object of an author's own (`@dynamicagents/core/round`):
// the deps are built by hand, as such an object would, over a real object's SQLite.

const echo = definePlugin({
  key: "echo",
  subtaskTypes: [defineSubtaskType({ key: "echo", description: "echoes", params: z.object({ say: z.string() }), recipe: async (_ctx, params) => params })],
});

describe("runHandleTask", () => {
  it("runs a turn round after round, its delegations through the runner handed in, until it answers", async () => {
    const object = env.ASSISTANT.get(env.ASSISTANT.idFromName(crypto.randomUUID()));
    const model = mockModel([{ toolCalls: [{ toolName: "delegate", input: { subtasks: [{ type: "echo", params: { say: "hi" } }] } }] }, "the subtask said hi"]);
    const outcome = await runInDurableObject(object, async (_instance, state) => {
      const db = new AgentDB(state.storage, TERMINAL_STATE_NAMES);
      const task: TaskJson = {
        id: crypto.randomUUID(),
        contextId: "own",
        status: { state: "TASK_STATE_WORKING" },
        history: [{ messageId: "m1", role: "ROLE_USER", parts: [{ text: "say hi through a subtask" }] }],
      };
      db.tasks.insert({ id: task.id, messageId: "m1", contextId: task.contextId, state: "TASK_STATE_WORKING", statusAt: 1, json: JSON.stringify(task) });
      const config = resolveConfig({ rounds: { maxRounds: 3 } });
      const events: string[] = [];
      const emitted: LoopEvents = { emit: (name) => void events.push(name), emitPlugin: () => {} };
      const ran: number[] = [];
      const deps: LoopDeps = {
        db,
        config,
        policy: validatePolicy(researchPolicy, { delegates: true }),
        runtime: createAgentRuntime({ plugins: [echo], env: {}, config }),
        soul: "You delegate.",
        env: {},
        models: scriptedChoices(model),
        events: emitted,
        secrets: [],
        conversationOf: (t) => t.contextId,
        appendArtifact: () => {},
        streamFollows: () => false,
        subtasks: { run: async (_taskId, round) => void ran.push(round) },
      };
      const progress: Array<[number, string]> = [];
      const result = await runHandleTask(
        deps,
        { task, text: "say hi through a subtask", origin: ORIGIN },
        {
          signal: new AbortController().signal,
          progress: (round, text) => progress.push([round, text]),
        },
      );
      return { result, ran, progress, events, subtasks: db.subtasks.ofRound(task.id, 1).map((row) => row.type) };
    });
    expect(outcome.result).toEqual({ round: 2, step: { kind: "done", outcome: { state: "TASK_STATE_COMPLETED", text: "the subtask said hi" } } });
    // Round 1 delegated (recorded, then run by the runner), round 2 answered.
    expect(outcome.subtasks).toEqual(["echo"]);
    expect(outcome.ran).toEqual([1]);
    expect(outcome.progress).toEqual([[1, researchPolicy.rounds!.progress({ round: 1, subtasks: 1, done: 0, failed: 0 })]]);
    expect(outcome.events.filter((name) => name === "round.finished")).toHaveLength(2);
  });
});
