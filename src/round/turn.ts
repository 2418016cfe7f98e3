import { requestParts } from "../boundary/task-status.js";
import { newTrace, turnTrace } from "../a2a/trace-context.js";
import { tokensOf, usageOf } from "../db/usage-store.js";
import { AnswerStream } from "./answer-stream.js";
import { ANSWER_ARTIFACT, addArtifact } from "./artifacts.js";
import type { LoopDeps, RoundStep, TurnContext } from "./deps.js";
import { subtaskAnswers, subtaskRequest } from "./hitl/index.js";
import { runRound, type RoundObserver } from "./loop.js";
import { TurnProgress } from "./progress/turn-progress.js";

/**
 * One round of a turn, the same for every agent, as a plain function of what
 * it is handed (`deps`): the round budget, the loop's round (loop.ts) with
 * its model calls and tools counted in the turn's usage and reported as
 * events, then, for a round that delegated, its subtasks (`deps.subtasks`)
 * and the progress line. `signal` aborts when the task is canceled.
 */
export async function runTurn(deps: LoopDeps, given: TurnContext, round: number, signal: AbortSignal): Promise<RoundStep> {
  const { config, policy } = deps;
  const turn = given.trace ? given : { ...given, trace: newTrace() };
  // No round past the budget: a turn still going there ends, failed, in the agent's words.
  if (round > config.rounds.maxRounds) return { kind: "done", outcome: { state: "TASK_STATE_FAILED", text: policy.messages.unfinished } };
  // Progress only for an agent with the words for it (docs/protocol.md "Progress").
  const words = policy.progress;
  const progress =
    words &&
    new TurnProgress({
      db: deps.db,
      words,
      taskId: turn.task.id,
      round,
      origin: turn.origin,
      env: deps.env,
      events: deps.events,
      redact: (event) => deps.runtime.redact(event),
      secrets: deps.secrets,
      ...(turn.held ? { held: turn.held } : {}),
      trace: turn.trace,
    });
  let step: RoundStep | undefined;
  try {
    step = await runRoundOf(deps, turn, round, signal, progress);
    return step;
  } finally {
    // Before whoever runs the round writes what it came to: the last progress, and its pushes, come first.
    await progress?.finish(roundEnd(step));
  }
}

/** How a round's progress ends (`TurnProgress.finish`): a canceled round (or one that threw) writes nothing more. */
function roundEnd(step: RoundStep | undefined): "completed" | "failed" | "paused" | "stopped" {
  if (step?.kind === "continue") return "completed";
  if (step?.kind === "done") return step.outcome.state === "TASK_STATE_COMPLETED" ? "completed" : "failed";
  return step?.kind === "ask" ? "paused" : "stopped";
}

/** The round itself (`runTurn`), its work heard by `progress`. */
async function runRoundOf(deps: LoopDeps, turn: TurnContext, round: number, signal: AbortSignal, progress: TurnProgress | undefined): Promise<RoundStep> {
  const { db, config, policy, events } = deps;
  const taskId = turn.task.id;
  const begun = Date.now();
  const trace = turnTrace(turn.trace ?? newTrace());
  const about = { contextId: turn.task.contextId, turnId: turn.turnId, traceId: trace.traceId };
  const result = await runRound({
    taskId,
    contextId: turn.task.contextId,
    round,
    text: turn.text,
    parts: requestParts(turn.task),
    addArtifact: (artifact) =>
      addArtifact({ db, maxBytes: config.parts.maxArtifactBytes, withheld: policy.parts.withheld, append: deps.appendArtifact }, turn.task, artifact),
    origin: turn.origin,
    soul: deps.soul,
    config,
    policy,
    runtime: deps.runtime,
    conversation: { store: db.conversations, id: deps.conversationOf(turn.task) },
    journal: db.toolCalls,
    hitl: db.hitl,
    rounds: db.subtasks,
    delegates: deps.subtasks !== undefined,
    env: deps.env,
    models: deps.models,
    signal,
    answer: new AnswerStream(
      ({ parts, append, lastChunk }) => deps.appendArtifact(turn.task, { artifactId: ANSWER_ARTIFACT, name: ANSWER_ARTIFACT, parts }, { append, lastChunk }),
      () => deps.streamFollows(taskId),
    ),
    observer: observerOf(deps, taskId, round, about),
    progress,
    spentTokens: tokensOf(db.usage.ofTurn(taskId)),
    emit: (plugin, name, data, occurrence) =>
      events.emitPlugin(plugin, name, taskId, data, occurrence === undefined ? [crypto.randomUUID()] : ["plugin", occurrence]),
    secrets: deps.secrets,
    trace,
  });
  // An answer or a delegation is a decision the round recorded (loop.ts); one decided before (a replayed step) reports nothing again.
  if ((result.kind === "answer" || result.kind === "delegated") && result.fresh) {
    const outcome = result.kind === "answer" ? "answer" : "delegated";
    events.emit("round.finished", taskId, { round, outcome, durationMs: Date.now() - begun }, ["round", round], about);
  }
  if (result.kind === "answer") return { kind: "done", outcome: { state: result.state, text: result.text } };
  if (result.kind === "ask" || result.kind === "canceled") return result;
  const asked = await deps.subtasks?.run(taskId, round, subtaskAnswers(db.hitl, taskId, round), progress);
  if (signal.aborted) return { kind: "canceled" };
  if (asked) return { kind: "ask", ...subtaskRequest(asked.subtaskId, asked.question) };
  const rows = db.subtasks.ofRound(taskId, round);
  // No subagent could be made for any of them: the turn fails saying so, rather than answering as if they had run.
  const unstarted = rows.filter((r) => r.status === "unstarted");
  if (rows.length > 0 && unstarted.length === rows.length) {
    const error = unstarted[0]!.error ?? "";
    console.error(`round ${round} of ${taskId}: none of its ${rows.length} subtasks could start (trace ${about.traceId}): ${error}`);
    const text = policy.rounds?.notStarted({ round, subtasks: rows.length, error }) ?? policy.messages.unfinished;
    return { kind: "done", outcome: { state: "TASK_STATE_FAILED", text } };
  }
  const line = policy.rounds?.progress;
  return {
    kind: "continue",
    text: line
      ? line({
          round,
          subtasks: rows.length,
          done: rows.filter((r) => r.status === "done").length,
          failed: rows.filter((r) => r.status === "failed" || r.status === "unstarted").length,
        })
      : "",
  };
}

/**
 * A whole turn, round after round, until it answers, waits for a human or is
 * canceled: for an object of an author's own that runs turns without the turn
 * Workflow (whose steps run one round each, see `runTurn`). `from` is the
 * round to start at (the one a human's answer resumes); `progress` hears each
 * round's progress line. Returns where the turn stopped, and the round it stopped in.
 */
export async function runHandleTask(
  deps: LoopDeps,
  turn: TurnContext,
  options: { signal: AbortSignal; from?: number; progress?: (round: number, text: string) => void },
): Promise<{ round: number; step: Exclude<RoundStep, { kind: "continue" }> }> {
  // One trace for the whole turn, when none was handed in.
  const traced = turn.trace ? turn : { ...turn, trace: newTrace() };
  for (let round = options.from ?? 1; ; round++) {
    const step = await runTurn(deps, traced, round, options.signal);
    if (step.kind !== "continue") return { round, step };
    if (step.text) options.progress?.(round, step.text);
  }
}

/** What a round's model calls and tools report: events, and the usage budgets are held against. */
function observerOf(deps: LoopDeps, taskId: string, round: number, about: { contextId: string; turnId?: string; traceId: string }): RoundObserver {
  return {
    modelCall: ({ point, ...call }) => {
      deps.db.usage.record(taskId, usageOf(call));
      deps.events.emit("model.call", taskId, { round, ...call }, ["model", point], about);
    },
    toolCall: ({ key, ...call }) => deps.events.emit("tool.call", taskId, { round, ...call }, ["tool", key], about),
    toolStarted: ({ key, ...call }) => deps.events.emit("tool.started", taskId, { round, ...call }, ["tool started", key], about),
  };
}
