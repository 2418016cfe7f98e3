import { invalidParams, quotaExceeded, taskNotFound, unsupportedOperation, type RpcError } from "../a2a/errors.js";
import { isInterruptedName, isTerminalName } from "../a2a/task-state.js";
import { newTrace } from "../a2a/trace-context.js";
import { accepted, settle, turnInstanceId } from "../boundary/index.js";
import type { BeginTask, Begun, MessageJson, Replied, TaskJson, TurnParams, TurnToStart, Verdict } from "../boundary/index.js";
import { requestText, taskOf } from "../boundary/task-status.js";
import type { AgentDB } from "../db/agent-db.js";
import type { HitlRow } from "../db/hitl-store.js";
import { answer, answerOf } from "../round/hitl/index.js";
import { dailyBudgetRefusal } from "./budget.js";
import { queueRedelivery } from "./deliveries.js";
import { messageFingerprint } from "../boundary/message-fingerprint.js";
import type { ObjectParts } from "./lifecycle.js";
import { withConfigIds } from "./push-config-ids.js";
import { hasConfig, putConfig } from "./push-configs.js";
import type { Streams } from "./streams.js";
import { insertTask, writeStatus } from "./task-events.js";
import { shapeTask, submittedTask } from "./task-wire.js";
import { redeliver, wake } from "./turn-workflows.js";

/** What an accept did, for its events (emitted once its writes are in). */
type Happened = { kind: "accepted"; task: TaskJson; turn: TurnToStart } | { kind: "continued" } | { kind: "refused"; limit: string; retryAfterSeconds: number };

/** What the send is, as the object knows it before deciding. */
interface SendToAccept {
  input: BeginTask;
  /** The caller's object and the turn instance this message names (derived from its `messageId`). */
  agentId: string;
  instanceId: string;
  /** The message's digest: a retry must repeat the message exactly. */
  fingerprint: string;
  /** The keyed hash of its `messageId`: an erased one is TaskNotFound and starts nothing. */
  erasedAs: string;
  /** The caller's hash, for the turn's events. */
  caller: string | undefined;
  /** The agent's log takes one line per event: the turn's Workflow is told. */
  eventLines: boolean;
}

/** The agent's part in the decision: its direct replies and its limits. */
interface AcceptRules {
  directReply(message: MessageJson): MessageJson | undefined;
  tokensPerCallerPerDay: number | undefined;
  /** Turns running at once (their task submitted or working). */
  maxInFlightTurns: number;
  /** Turns parked for a human's answer at once. */
  maxPendingQuestions: number;
  /** Finished turns whose pushes are still being delivered. */
  maxPendingDeliveries: number;
  /** How soon a new turn must report, for the reconciler. */
  reportWithinMs: number;
  now: number;
}

/**
 * The accept's decision: the reply (a task, a retry's task and open turn, or
 * a direct message) and what happened; `queued`: a task a retry gave a new
 * push config while dead letters wait, whose re-delivery starts. A counted
 * refusal (a quota) comes back as a value with its event; any other refusal
 * is thrown. Synchronous: it runs inside the accept's write block, so the
 * task and its turn record are written together and no retry interleaves.
 */
function decideAccept(
  db: AgentDB,
  send: SendToAccept,
  rules: AcceptRules,
): { reply: Continued | Replied; happened?: Happened; queued?: string } | { refused: RpcError; happened: Happened } {
  const { input, fingerprint } = send;
  const messageId = input.message.messageId;
  const prior = db.priorSends.of(messageId, send.erasedAs);
  if (prior?.kind === "erased") throw taskNotFound(`(of messageId ${JSON.stringify(messageId)}: it was accepted here and has since been erased)`);
  if (prior?.kind === "reply") {
    assertSameMessage(prior.fingerprint, fingerprint, messageId);
    return { reply: { message: JSON.parse(prior.json) as MessageJson } };
  }
  const record = prior && { fingerprint: prior.fingerprint, task: db.tasks.get(prior.taskId) };
  if (record?.task) {
    // A retry: nothing new, unless it brings a push config the task lacks.
    // A turn still open is named again, so the edge restarts an instance
    // that never appeared (creating it is idempotent).
    const existing = record.task;
    assertSameMessage(record.fingerprint, fingerprint, messageId);
    let queued: string | undefined;
    if (input.pushConfig && !hasConfig(db, existing.id, input.pushConfig)) {
      queued = queueRedelivery(db, existing.id, putConfig(db, existing.id, input.pushConfig, input.progress).id) ? existing.id : undefined;
    }
    const open = db.turns.get(existing.id);
    const task = shapeTask(taskOf(existing), { historyLength: input.historyLength, includeArtifacts: true });
    const reply = open ? { task, turn: { instanceId: open.instanceId, params: JSON.parse(open.paramsJson) as TurnParams } } : { task };
    return queued ? { reply, queued } : { reply };
  }
  if (record) throw taskNotFound(`(of messageId ${JSON.stringify(messageId)}: it was accepted here, finished, and has since been deleted)`);
  // Nothing is created, and no model called, for a caller past its daily budget.
  const overBudget = dailyBudgetRefusal(() => db.usage.ofDay(), rules.tokensPerCallerPerDay, rules.now);
  if (overBudget) {
    return { refused: overBudget.error, happened: { kind: "refused", limit: "tokensPerCallerPerDay", retryAfterSeconds: overBudget.retryAfterSeconds } };
  }
  if (input.message.taskId) {
    const continued = continueTask(db, input, rules.now, fingerprint);
    return continued.answered ? { reply: continued, happened: { kind: "continued" } } : { reply: continued };
  }
  const direct = input.immediate ? undefined : rules.directReply(input.message);
  if (direct) return { reply: { message: JSON.parse(db.directReplies.put(messageId, JSON.stringify(direct), fingerprint)) as MessageJson } };
  const over = overCap(db, rules);
  if (over) return over;
  const trace = input.trace ?? newTrace();
  const ids = { id: crypto.randomUUID(), contextId: input.message.contextId || crypto.randomUUID(), traceId: trace.traceId };
  const task = submittedTask(input.message, ids, rules.now, input.acceptedOutputModes);
  const pushConfig = input.pushConfig && withConfigIds(input.pushConfig, task.id);
  const config = pushConfig && { id: pushConfig.id, json: JSON.stringify(pushConfig), progress: input.progress };
  insertTask(db, task, rules.now, { messageId, contextId: task.contextId, fingerprint }, config);
  const params: TurnParams = {
    tenant: input.tenant,
    agentId: send.agentId,
    taskId: task.id,
    messageId,
    origin: input.origin,
    ...(send.caller ? { caller: send.caller } : {}),
    trace,
    ...(send.eventLines ? { eventLines: true as const } : {}),
  };
  db.turns.open(task.id, send.instanceId, params, rules.reportWithinMs);
  const turn = { instanceId: send.instanceId, params };
  return { reply: { task: shapeTask(task, { historyLength: input.historyLength, includeArtifacts: true }), turn }, happened: { kind: "accepted", task, turn } };
}

/**
 * 429 for a new task past one of the caller's caps on open turns
 * (docs/protocol.md "Errors"), each counting one class of them, told apart by
 * the state of their task: running (submitted, working), parked for a human
 * (input or auth required), or finished with only their pushes left to
 * deliver. One grouped read: the accept is the hot path.
 */
function overCap(db: AgentDB, rules: AcceptRules): { refused: RpcError; happened: Happened } | undefined {
  const open = { running: 0, parked: 0, delivering: 0 };
  for (const { state, n } of db.turns.byTaskState()) {
    if (isTerminalName(state)) open.delivering += n;
    else if (isInterruptedName(state)) open.parked += n;
    else open.running += n;
  }
  const caps = [
    {
      limit: "maxInFlightTurns",
      held: open.running,
      max: rules.maxInFlightTurns,
      counted: "inFlight",
      retryAfterSeconds: 5,
      what: "turns running",
      hint: "send again once one has finished",
    },
    {
      limit: "maxPendingQuestions",
      held: open.parked,
      max: rules.maxPendingQuestions,
      counted: "pendingQuestions",
      retryAfterSeconds: 5,
      what: "tasks waiting for a human's answer",
      hint: "answer or cancel one first",
    },
    {
      limit: "maxPendingDeliveries",
      held: open.delivering,
      max: rules.maxPendingDeliveries,
      counted: "pendingDeliveries",
      retryAfterSeconds: 60,
      what: "finished tasks whose pushes are still being delivered",
      hint: "send again once its push endpoint takes them",
    },
  ];
  const cap = caps.find((c) => c.held >= c.max);
  if (!cap) return undefined;
  const { limit, held, max, counted, retryAfterSeconds } = cap;
  return {
    refused: quotaExceeded({
      message: `This caller already has ${held} ${cap.what}, the most it may have at once (${max}): ${cap.hint}`,
      retryAfterSeconds,
      metadata: { limit, [counted]: String(held) },
    }),
    happened: { kind: "refused", limit, retryAfterSeconds },
  };
}

/** -32602 for a retry whose message is not the one first sent with its `messageId` (a record older than digests is not compared). */
function assertSameMessage(recorded: string | null | undefined, fingerprint: string, messageId: string): void {
  if (recorded && recorded !== fingerprint) {
    throw invalidParams(
      `params.message differs from the message first sent with messageId ${JSON.stringify(messageId)}: a retry repeats its message exactly; a new message needs a new messageId`,
    );
  }
}

/** A continuation's reply, and the request its answer settled (whose turn must be woken). */
type Continued = Begun & { answered?: HitlRow };

/**
 * A message naming a task (CONTRACT's multi-turn rules): unknown → -32001;
 * another context → -32602; terminal → -32004; waiting for a human → the
 * answer (first wins; a repeat or a loser gets the task as it is); busy →
 * -32004 with the task's state, unless it repeats an answer already taken.
 * Synchronous: it runs inside the accept's write block.
 */
function continueTask(db: AgentDB, input: BeginTask, now: number, fingerprint?: string): Continued {
  const taskId = input.message.taskId!;
  const row = db.tasks.get(taskId);
  if (!row) throw taskNotFound(taskId);
  if (input.message.contextId && input.message.contextId !== row.contextId) {
    throw invalidParams(`params.message.contextId differs from the context of task ${JSON.stringify(taskId)}`);
  }
  const shape = (task: TaskJson) => shapeTask(task, { historyLength: input.historyLength, includeArtifacts: true });
  const task = taskOf(row);
  // An answer to a request already settled (a repeat, a loser, a late one): the task as it is, whatever its state.
  const repeat = answerOf(input.message).requestId;
  const settled = repeat ? db.hitl.get(repeat) : undefined;
  if (settled && settled.taskId === taskId && settled.status !== "open") return { task: shape(task), settledBefore: true };
  if (db.tasks.isFinal(row.state)) {
    throw unsupportedOperation(`Task ${JSON.stringify(taskId)} is ${row.state}: it takes no more messages; send one without taskId to start a new task`, {
      taskState: row.state,
    });
  }
  if (row.state !== "TASK_STATE_INPUT_REQUIRED") {
    throw unsupportedOperation(`Task ${JSON.stringify(taskId)} is ${row.state} and is not waiting for input`, { taskState: row.state });
  }
  const verdict = answer(db.hitl, task, input.message, input.caller ?? { key: "" }, now);
  if (verdict.kind === "answered") writeStatus(db, verdict.task, now);
  db.tasks.recordMessage(input.message.messageId, taskId, fingerprint);
  if (verdict.kind === "unchanged") return { task: shape(verdict.task), settledBefore: true };
  return { task: shape(verdict.task), answered: verdict.request };
}

/** `SendMessage` in the caller's object: the accept's decision, its writes and events, and a streaming send's slot. */
export class Begin {
  constructor(
    private readonly parts: ObjectParts,
    private readonly streams: Streams,
  ) {}

  /**
   * Records the `submitted` task of a turn and names the turn for the edge
   * to start, or returns the task already recorded for this `messageId` and
   * names nothing.
   */
  async task(input: BeginTask): Promise<Verdict<Begun | Replied>> {
    const { db, hub, events, origin, reports, schedules, agent } = this.parts;
    origin.learn(input.origin);
    const messageId = input.message.messageId;
    const agentId = agent.agentId();
    const instanceId = await turnInstanceId(agentId, messageId);
    const fingerprint = await messageFingerprint(input.message);
    const erasedAs = await db.erasures.hashOf(messageId);
    if (input.caller?.gatekeeper) {
      await events.learnCaller(agent.signingKey(), { gatekeeper: input.caller.gatekeeper, tenant: input.tenant, key: input.caller.key });
    }
    const caller = events.scope().caller;
    // What the block below decided, for its events (emitted once its writes are in).
    let happened: Happened | undefined;
    // From here to the end of the block nothing awaits, so the task and its
    // turn record are written together and no retry can interleave.
    let slot: string | undefined;
    // A retry that added a config to a task with dead letters: the task whose re-delivery starts.
    let queued: string | undefined;
    const verdict = settle((): Continued | Replied => {
      // A stream over the cap is refused before anything is written.
      if (input.stream) slot = this.streams.holdSlot();
      const { maxInFlightTurns, maxPendingQuestions, maxPendingDeliveries, tokensPerCallerPerDay } = agent.limits();
      const decision = decideAccept(
        db,
        { input, agentId, instanceId, fingerprint, erasedAs, caller, eventLines: events.log.eachEvent() },
        {
          directReply: (message) => agent.directReply(message),
          tokensPerCallerPerDay,
          maxInFlightTurns,
          maxPendingQuestions,
          maxPendingDeliveries,
          reportWithinMs: agent.recovery().reportWithinMs,
          now: Date.now(),
        },
      );
      happened = decision.happened;
      if ("refused" in decision) throw decision.refused;
      queued = decision.queued;
      return decision.reply;
    });
    // The task and its turn are written above with no await in between; the
    // reply leaves only once these writes (the schedule's too) are stored. A
    // crash before that loses the reply, and its retry arms what is missing.
    // No stream follows a refusal, a message answer or a settled answer's task: the slot goes back.
    this.#emit(happened, input);
    // The new task's turn record promises a report within the window from now: the start's report need not write it again.
    if (happened?.kind === "accepted") reports.accepted(happened.task.id);
    if (!verdict.ok || "message" in verdict.value || verdict.value.settledBefore) {
      if (slot) hub.takeSlot(slot);
      slot = undefined;
      if (!verdict.ok) return verdict;
    }
    const begun = verdict.value;
    // Before the Workflow can start: the turn's model call sees the stream coming and streams the answer.
    if (slot && "task" in begun) hub.holdFor(slot, begun.task.id);
    await schedules.armRetention();
    if (queued) await redeliver(this.parts, queued, { tenant: input.tenant, agentId, origin: input.origin });
    if ("message" in begun) return accepted(begun);
    if (begun.turn) await schedules.ensureReconciling();
    if (begun.answered) {
      const { requestId, taskId: answeredTask } = begun.answered;
      const settlement = db.hitl.get(requestId);
      const answer = settlement?.answerJson ? (JSON.parse(settlement.answerJson) as { outcome?: string; optionId?: string }) : {};
      const data = { requestId, outcome: answer.outcome ?? "answered", ...(answer.optionId ? { optionId: answer.optionId } : {}) };
      events.emit("hitl.answered", answeredTask, data, ["answered", requestId]);
      await wake(this.parts, begun.answered);
    }
    return accepted({
      task: begun.task,
      ...(begun.turn ? { turn: begun.turn } : {}),
      ...(begun.settledBefore ? { settledBefore: true as const } : {}),
      ...(slot ? { streamSlot: slot } : {}),
    });
  }

  #emit(happened: Happened | undefined, input: BeginTask): void {
    const { events, agent } = this.parts;
    const messageId = input.message.messageId;
    if (happened?.kind === "accepted") {
      const { task, turn } = happened;
      const text = agent.carriesText() ? { text: requestText(task) } : {};
      const data = { messageId, stream: input.stream === true, pushConfigs: input.pushConfig ? 1 : 0, ...text };
      events.emit("task.accepted", task.id, data, ["accepted"], { contextId: task.contextId, turnId: turn.instanceId, traceId: turn.params.trace?.traceId });
    } else if (happened?.kind === "continued") {
      events.emit("task.continued", input.message.taskId, { messageId }, ["continued", messageId]);
    } else if (happened?.kind === "refused") {
      // A refusal is its own occurrence each time: a retry is refused again, and counted again.
      events.emit("quota.exceeded", undefined, { limit: happened.limit, retryAfterSeconds: happened.retryAfterSeconds }, [crypto.randomUUID()]);
    }
  }
}
