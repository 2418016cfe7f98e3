import { HITL_TIMEOUT_TYPE } from "@dynamicagents/core/a2a";
import type { AgentConfigInput, AgentPolicy } from "@dynamicagents/core/agent";
import type { MessageJson, TaskJson, TurnOutcome } from "@dynamicagents/core/boundary";
import { DynamicAgent, type TurnContext } from "@dynamicagents/core/host";
import type { RoundStep } from "@dynamicagents/core/round";
import type { Env } from "../env.js";
import { RESUBSCRIBE_HOLD_MS, scenarioOf, type Scenario } from "./scenarios.js";

/**
 * The words the platform says for this agent: the lifecycle's, the
 * human-in-the-loop's and the parts'. It has no model, so the model-facing
 * ones are never read; they are here because every agent must supply them.
 */
const conformancePolicy: AgentPolicy = {
  messages: {
    failure: "The scripted turn failed.",
    emptyAnswer: "The scripted turn wrote no answer.",
    abandoned: "The scripted turn could not be finished.",
    unfinished: "The scripted turn ended before it finished.",
    canceled: "Canceled.",
    summaryHeading: "Earlier turns:",
    summarize: "Summarise the conversation below.",
    toolInterrupted: "This tool call was interrupted.",
    toolResultCut: "This tool result was cut: only its beginning is shown.",
  },
  hitl: {
    askUserDescription: "Ask the user a question.",
    approvalPrompt: ({ toolName }) => `Run ${toolName}?`,
    approve: "Approve",
    reject: "Reject",
    requestText: ({ prompt }) => prompt,
    denied: "Not approved.",
    expired: "Nobody answered in time.",
    timedOut: "Nobody answered in time.",
  },
  parts: {
    data: ({ mediaType }) => `Data (${mediaType}):`,
    file: ({ filename, mediaType }) => `File ${filename ?? "(unnamed)"} (${mediaType}):`,
    withheld: ({ mediaType }) => `[a part of type ${mediaType}, which this client does not accept]`,
  },
};

const completed = (text: string, artifacts: TurnOutcome["artifacts"] = []): RoundStep => ({
  kind: "done",
  // No artifact unless the scenario has one: `[]` keeps the platform from making the reply one.
  outcome: { state: "TASK_STATE_COMPLETED", text, artifacts },
});

/** The newest user message of the task: the one that opened it, or the answer that resumed it. */
function latestUserMessage(task: TaskJson): MessageJson | undefined {
  return task.history?.findLast((m) => m.role === "ROLE_USER");
}

/** Whether the task is back from a question nobody answered in time (docs/protocol.md "Human in the loop"). */
const timedOut = (task: TaskJson) => task.status.message?.parts.some((p) => (p.data as { type?: unknown } | undefined)?.type === HITL_TIMEOUT_TYPE) === true;

/** Resolves after `ms`, or at once when `signal` aborts (the task was canceled). */
function pause(ms: number, signal: AbortSignal): Promise<void> {
  return new Promise((resolve) => {
    const done = () => {
      clearTimeout(timer);
      signal.removeEventListener("abort", done);
      resolve();
    };
    const timer = setTimeout(done, ms);
    signal.addEventListener("abort", done, { once: true });
    if (signal.aborted) done();
  });
}

/**
 * The `conformance` tenant: a scripted agent with no model, for the public
 * A2A conformance suite (docs/conformance.md). The prefix of a message's
 * `messageId` picks the scenario (./scenarios.ts); the platform does the rest
 * exactly as for any tenant — the task, its events and streams, blocking and
 * immediate sends, pushes, cancel, human in the loop.
 *
 * `tck-input-required` parks the task on a question, so any text on the task
 * answers it; the round then runs again and the answer's own prefix decides:
 * another `tck-input-required` asks again, anything else finishes the task.
 */
export class ConformanceAgent extends DynamicAgent<Env> {
  /**
   * How long `test-resubscribe-message-id` works before it completes. Specs
   * shorten it (the test pool runs objects in the specs' isolate); nothing
   * else writes it.
   */
  static resubscribeHoldMs = RESUBSCRIBE_HOLD_MS;

  protected override agentConfig(): AgentConfigInput {
    return {
      // The suite leaves tasks waiting for input and streams open as it goes: room for a whole run.
      limits: { maxInFlightTurns: 1024, maxPendingQuestions: 1024, maxOpenStreams: 64 },
      // A question the suite never answers ends within the hour rather than holding its turn a day.
      hitl: { expiresAfterMinutes: 60 },
      retention: { finishedTaskDays: 1, messageIdDays: 1 },
      // As the reference tenants: one log line per event with EVENT_LINES=1.
      telemetry: { eventLines: this.env.EVENT_LINES === "1" },
    };
  }

  protected agentSoul(): string {
    return "";
  }

  protected agentPolicy(): AgentPolicy {
    return conformancePolicy;
  }

  /** No conversation is written (no model reads one), so there is nothing to compact. */
  protected override afterTurn(): void {}

  protected override directReply(message: MessageJson): MessageJson | undefined {
    const scenario = scenarioOf(message.messageId);
    if (scenario.kind !== "message") return undefined;
    return {
      messageId: crypto.randomUUID(),
      role: "ROLE_AGENT",
      parts: [{ text: scenario.text }],
      ...(message.contextId ? { contextId: message.contextId } : {}),
    };
  }

  /**
   * `tck-stream-002` completes straight from SUBMITTED: the turn ends as it
   * starts, before the task is marked working, and runs no round. Every
   * other task starts as usual.
   */
  protected override outcomeAtStart(task: TaskJson): TurnOutcome | undefined {
    const opening = latestUserMessage(task);
    if (opening && scenarioOf(opening.messageId).kind === "completed-at-once") return { state: "TASK_STATE_COMPLETED", text: "", artifacts: [] };
    return undefined;
  }

  protected override async runRound(turn: TurnContext, _round: number, signal: AbortSignal): Promise<RoundStep> {
    const { task } = turn;
    // A question nobody answered: the turn goes on to an end, as it does for any agent.
    if (timedOut(task)) return completed("");
    const message = latestUserMessage(task);
    return this.#play(task, scenarioOf(message?.messageId ?? ""), message?.messageId ?? task.id, signal);
  }

  async #play(task: TaskJson, scenario: Scenario, messageId: string, signal: AbortSignal): Promise<RoundStep> {
    switch (scenario.kind) {
      case "complete":
      // A task exists although the scenario answers with a message (returnImmediately, or an answer on a task): it completes saying it.
      case "message":
        return completed(scenario.text);
      case "reject":
        return { kind: "done", outcome: { state: "TASK_STATE_REJECTED", text: scenario.text } };
      case "completed-at-once":
        // Reached only as an answer to a question (the task is working by then).
        return completed("");
      case "artifact":
        for (const chunk of scenario.chunks) {
          const written = this.writeArtifactChunk(task.id, { ...scenario.artifact, parts: chunk.parts }, { append: chunk.append, lastChunk: chunk.lastChunk });
          if (!written) return { kind: "canceled" };
        }
        return completed("", [scenario.artifact]);
      case "hold":
        await pause(ConformanceAgent.resubscribeHoldMs, signal);
        return signal.aborted ? { kind: "canceled" } : completed("");
      case "input-required":
        // Asked once per message: the answer's id makes the next question a new request.
        return {
          kind: "ask",
          target: { kind: "ask", toolCallId: messageId },
          body: { requestKind: "question", prompt: scenario.prompt, allowFreeform: true },
        };
    }
  }
}
