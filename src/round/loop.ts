import { stepCountIs, type ModelMessage, type StopCondition, type ToolSet } from "ai";
import type { TurnTrace } from "../a2a/trace-context.js";
import type { AgentConfig } from "../agent/config.js";
import { exchangeReport, generateWithFallback } from "../agent/generate.js";
import type { ModelEnv } from "../agent/model-config.js";
import { tokenBudgetSpent } from "../agent/token-budget.js";
import type { AgentPolicy } from "../agent/policy.js";
import type { ModelChoice } from "../agent/providers.js";
import type { ConversationStore } from "../db/conversation-store.js";
import type { HitlStore } from "../db/hitl-store.js";
import type { RoundDecision, SubtaskStore } from "../db/subtask-store.js";
import type { ToolJournal } from "../db/tool-journal.js";
import type { PartJson } from "../boundary/index.js";
import type { ToolContext } from "../plugin/contract.js";
import type { ToolCallObserver, ToolCallVerdict } from "../plugin/redaction.js";
import { scrubSecrets, type EventCatalogue } from "../telemetry/index.js";
import type { AgentRuntime, TurnToolContext } from "../plugin/runtime.js";
import { DELEGATE_TOOL, createDelegateTool } from "../subtasks/delegate-tool.js";
import { redactSubtaskRows, renderSubtaskResults } from "../subtasks/results.js";
import type { AnswerStream } from "./answer-stream.js";
import { windowMessages } from "./conversation.js";
import { ASK_USER_TOOL, askUserTool, pendingTarget, requestBody, takeAnswers, type HitlTarget, type RequestBody } from "./hitl/index.js";
import { exposeTools } from "./tools/exposure.js";
import { schemasOnce } from "./tools/schemas.js";
import { journaled } from "./tools/journaling.js";
import type { TurnProgress } from "./progress/turn-progress.js";
import { userContent } from "./user-content.js";

export interface RoundInput {
  taskId: string;
  /** The task's context (`ToolContext.contextId`). */
  contextId: string;
  round: number;
  /** The user's request: the text of its text parts (what the plugins' gates read). */
  text: string;
  /** Every part of the message that opened the task: what the model's user message is built from. */
  parts: PartJson[];
  /** How the round's tools add artifacts to the task (`ToolContext.addArtifact`). */
  addArtifact: ToolContext["addArtifact"];
  /** This deployment's origin, for the tools. */
  origin: string;
  /** The system prompt. */
  soul: string;
  config: AgentConfig;
  policy: AgentPolicy;
  runtime: AgentRuntime;
  /** The conversation the turn belongs to (its context's, or the caller's). */
  conversation: { store: ConversationStore; id: string };
  journal: ToolJournal;
  hitl: HitlStore;
  /** Where each round's decision and its subtasks are recorded. */
  rounds: SubtaskStore;
  /** Whether the agent runs delegated subtasks; without, the delegate tool is never offered. */
  delegates: boolean;
  env: ModelEnv;
  models?: ModelChoice[];
  /** Aborted when the task is canceled: the model call and the tools stop. */
  signal?: AbortSignal;
  /** Where the answer goes as the model writes it. */
  answer?: AnswerStream;
  /** Hears the round's model exchange and tool calls (the agent's events and usage). */
  observer?: RoundObserver;
  /** The round's progress trackers (docs/protocol.md "Progress"); absent, it reports none. */
  progress?: TurnProgress;
  /** Tokens the turn's model calls (its subtasks' included) spent before this exchange: `turn.maxTokensPerTurn` holds them too. */
  spentTokens?: number;
  /** Where the plugins' own events go (`ToolContext.emit`). */
  emit?: TurnToolContext["emit"];
  /** Values no log line may carry (the object's event secrets, docs/telemetry.md): a model's error can quote its API key. */
  secrets?: readonly (string | undefined)[];
  /** The turn's trace: the model's requests and the tools' (`ToolContext.trace`) join it. */
  trace: TurnTrace;
}

/** What a round tells about its work as it happens. */
export interface RoundObserver {
  /** One exchange with the model; `point` names it within the task (stable across a replayed step). */
  modelCall(call: Omit<EventCatalogue["model.call"], "round"> & { point: string }): void;
  /** One tool call; `key` is its journal key (stable across a replayed step). */
  toolCall(call: Omit<EventCatalogue["tool.call"], "round"> & { key: string }): void;
  /** A tool call begins to run. */
  toolStarted?(call: Omit<EventCatalogue["tool.started"], "round"> & { key: string }): void;
}

export type RoundResult =
  /**
   * The turn's answer; empty text when a plugin's gate declined the turn.
   * `fresh`: this run decided it (false: an earlier run of the round had, and this is its replay).
   */
  | { kind: "answer"; state: "TASK_STATE_COMPLETED" | "TASK_STATE_FAILED"; text: string; fresh: boolean }
  /** The round delegated subtasks: they run, and the next round sees their results. */
  | { kind: "delegated"; fresh: boolean }
  /** The round waits for a human: an approval the model's tool call needs, or its question. */
  | { kind: "ask"; target: HitlTarget; body: RequestBody }
  /** The turn's signal aborted it (a cancel). */
  | { kind: "canceled" };

/**
 * One round of a turn, the same for every agent. First round: the plugins'
 * gates, then the user's message into the conversation. Then the tool loop
 * over the conversation's window (its summary, its committed turns, this
 * turn's own messages and, for a delegating agent, earlier rounds' subtask
 * results), journaled, with the fallback model, bounded in steps and tokens.
 * What it added joins the turn's own messages at once, so a resumed round
 * goes on from there. The round ends in an answer, a delegation, or a wait
 * for a human (an approval, a question), whose answer the next run of the
 * same round takes in. A single-inference agent is this loop with one round
 * and no subtask types; what a round decided is recorded, so a re-run of its
 * durable step neither asks the model again nor writes twice.
 */
export async function runRound(input: RoundInput): Promise<RoundResult> {
  const { taskId, round, rounds } = input;
  const before = rounds.decision(taskId, round);
  let decision = before;
  if (!decision && round === 1 && !(await input.runtime.shouldHandleTurn({ text: input.text, taskId }))) {
    // Declined: the turn completes with no reply and leaves no trace in the conversation.
    decision = rounds.decideAnswer(taskId, round, "");
  }
  if (!decision) {
    const { store, id: conversationId } = input.conversation;
    // Built once per task: the stored entry is what a retried step or a resumed round reads, so a file URL is fetched once.
    // Parts with no URL cost no fetch to build again, and the append keeps the first entry: no lookup first.
    const userKey = `${taskId}:user`;
    if (round === 1 && (input.parts.every((p) => p.url === undefined) || !store.has(userKey))) {
      const content = await userContent(input.parts, { parts: input.config.parts, words: input.policy.parts, signal: input.signal }).catch((error: unknown) => {
        // A cancel during a fetch ends the round like any cancel; anything else is the step's failure.
        if (input.signal?.aborted) return undefined;
        throw error;
      });
      if (content === undefined || input.signal?.aborted) return { kind: "canceled" };
      store.append(conversationId, taskId, userKey, { role: "user", content } satisfies ModelMessage);
    }
    // Answers that came since the round paused go in; one still open is what it waits on.
    const waiting = takeAnswers(input.hitl, input.conversation, taskId, round, input.policy.hitl);
    if (waiting) return { kind: "ask", ...waiting };
    const result = await ask(input);
    if (result.kind !== "decided") return result;
    decision = result.recorded ?? rounds.decideAnswer(taskId, round, result.text || input.policy.messages.emptyAnswer);
  }
  const fresh = before === undefined;
  if (decision.kind === "delegate") return { kind: "delegated", fresh };
  return { kind: "answer", state: "TASK_STATE_COMPLETED", text: decision.text, fresh };
}

/**
 * The round's model exchange: the tools (sorted out by their exposure), the
 * delegate tool while rounds remain, the `ask_user` tool, `find_tools` when
 * some tool waits to be found, and earlier results.
 */
/** `recorded`: the round's decision as the exchange left it (a delegation its tools made), read once. */
async function ask(input: RoundInput): Promise<{ kind: "decided"; text: string; recorded: RoundDecision | undefined } | RoundResult> {
  const { taskId, round, rounds, runtime, config, policy } = input;
  const { store, id: conversationId } = input.conversation;
  const words = input.delegates ? policy.rounds : undefined;
  const lastRound = round >= config.rounds.maxRounds;
  const window = store.window(conversationId, taskId, config.history.windowMessages);
  const point = `r${round}.${window.own.length}`;

  const exempt = new Set(config.hitl.approvalExempt);
  // Each call's redaction verdict, keyed by its options object (the journal hands the same one on).
  const verdicts = new WeakMap<object, ToolCallVerdict>();
  const observe: ToolCallObserver = (callOptions, verdict) => {
    if (typeof callOptions === "object" && callOptions !== null) verdicts.set(callOptions, verdict);
  };
  const family = {
    taskId,
    contextId: input.contextId,
    origin: input.origin,
    signal: input.signal,
    addArtifact: input.addArtifact,
    emit: input.emit,
    trace: input.trace,
    ...(input.progress ? { progress: input.progress.toolProgress } : {}),
  };
  const turnTools = await runtime.tools(family, { cutNote: policy.messages.toolResultCut, observe });
  const pluginTools: ToolSet = {};
  for (const [name, tool] of Object.entries(turnTools.tools)) {
    pluginTools[name] = exempt.has(name) ? { ...tool, needsApproval: false } : tool;
  }
  const controls: ToolSet = {};
  if (words && !lastRound && runtime.subtaskTypes.size > 0) {
    controls[DELEGATE_TOOL] = createDelegateTool({
      types: runtime.subtaskTypes,
      maxSubtasks: config.rounds.maxSubtasksPerRound,
      words: words.delegate,
      record: (delegations) => rounds.delegate(taskId, round, delegations, config.rounds.maxSubtasksPerRound),
    });
  }
  if (config.hitl.askUser) controls[ASK_USER_TOOL] = askUserTool(policy.hitl);
  const { offered, activeTools } = exposeTools({
    tools: pluginTools,
    controls,
    config: config.tools,
    findToolsDescription: policy.tools?.findToolsDescription,
    earlier: window.own.map((row) => row.messageJson),
  });
  // Fresh for each model tried: the fallback's calls line up with the journal from the start, as a retry's do.
  const sent = schemasOnce(offered);
  // Inside the journal: a call it answers was not work now, and has no tracker.
  const errored = (callOptions: unknown) => typeof callOptions === "object" && callOptions !== null && verdicts.get(callOptions)?.errored === true;
  const tracked = input.progress ? input.progress.tools(sent, turnTools.owners, errored) : sent;
  const tools = () =>
    journaled(tracked, {
      journal: input.journal,
      taskId,
      point,
      interrupted: () => ({ interrupted: true, note: policy.messages.toolInterrupted }),
      onStart: (call) => input.observer?.toolStarted?.({ key: call.key, tool: call.toolName, callId: call.callId }),
      onCall: (call) => {
        const verdict = typeof call.callOptions === "object" && call.callOptions !== null ? verdicts.get(call.callOptions) : undefined;
        input.observer?.toolCall({
          key: call.key,
          tool: call.toolName,
          callId: call.callId,
          outcome: call.outcome === "ok" && verdict?.errored ? "error" : call.outcome,
          durationMs: call.durationMs,
          redacted: verdict?.redacted ?? false,
        });
      },
    });

  const messages: ModelMessage[] = windowMessages(window, policy.messages.summaryHeading);
  if (words) {
    const earlier = await redactSubtaskRows(rounds.before(taskId, round), (event) => runtime.redact(event));
    if (earlier.length) messages.push({ role: "user", content: `${words.resultsHeader}\n\n${renderSubtaskResults(earlier)}` });
  }
  // Only the delegate tool records a decision during the exchange: without it there is none to look for.
  const delegateOffered = DELEGATE_TOOL in controls;
  const delegated: StopCondition<ToolSet> = () => delegateOffered && rounds.decision(taskId, round)?.kind === "delegate";
  const asked = Date.now();
  const result = await generateWithFallback({
    env: input.env,
    config: config.model,
    instructions: [input.soul, ...turnTools.notes, words?.contract ?? "", words && lastRound ? words.lastRoundNote : ""].filter(Boolean).join("\n\n"),
    messages,
    tools,
    activeTools,
    stopWhen: [delegated, stepCountIs(config.turn.maxSteps), tokenBudgetSpent(config.turn.maxTokensPerTurn - (input.spentTokens ?? 0))],
    models: input.models,
    signal: input.signal,
    trace: input.trace,
    onText: (event) => (event.kind === "restart" ? input.answer?.restart() : input.answer?.delta(event.text)),
    stream: () => input.answer?.live ?? false,
  });
  input.observer?.modelCall({ point, ...exchangeReport(result, Date.now() - asked) });
  if (!result.ok) {
    input.answer?.stop();
    if (result.aborted) return { kind: "canceled" };
    console.error(`round ${round} of ${taskId} failed on every model (trace ${input.trace.traceId})`, scrubSecrets(result.errors, input.secrets ?? []));
    // A failed exchange records no decision: it is always this run's.
    return { kind: "answer", state: "TASK_STATE_FAILED", text: policy.messages.failure, fresh: true };
  }
  // What the exchange added is the turn's now: a resumed or later round goes on from it.
  for (const [i, message] of result.responseMessages.entries()) store.append(conversationId, taskId, `${taskId}:${point}:${i}`, message);
  const recorded = delegateOffered ? rounds.decision(taskId, round) : undefined;
  if (recorded?.kind !== "delegate") {
    const target = pendingTarget(result.lastStep);
    if (target) {
      input.answer?.stop();
      return { kind: "ask", target, body: requestBody(target, result.lastStep, policy.hitl) };
    }
  }
  input.answer?.end();
  const text = result.text.trim();
  // A round that answered with nothing says the policy's sentence; one that delegated said nothing: its call and results are
  // all it did, and the sentence would read to the model, in the next round, as its own words.
  if (!text && recorded?.kind !== "delegate")
    store.append(conversationId, taskId, `${taskId}:${point}:empty`, { role: "assistant", content: policy.messages.emptyAnswer } satisfies ModelMessage);
  return { kind: "decided", text, recorded };
}
