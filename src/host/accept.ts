import { invalidParams, quotaExceeded, taskNotFound, type RpcError } from "../a2a/errors.js";
import { isTerminalName } from "../a2a/task-state.js";
import type { BeginTask, MessageJson, Replied, TaskJson, TurnParams } from "../boundary/index.js";
import type { AgentDB } from "../db/agent-db.js";
import { dailyBudgetRefusal } from "./budget.js";
import { queueRedelivery } from "./deliveries.js";
import { continueTask, type Continued } from "./multi-turn.js";
import { withConfigIds } from "./push-config-ids.js";
import { hasConfig, putConfig } from "./push-configs.js";
import { insertTask, isInterrupted } from "./task-events.js";
import { taskOf } from "../boundary/task-status.js";
import { shapeTask, submittedTask } from "./task-wire.js";

/** What an accept did, for its events (emitted once its writes are in). */
export type Happened =
  | { kind: "accepted"; task: TaskJson; turnId: string }
  | { kind: "continued" }
  | { kind: "refused"; limit: string; retryAfterSeconds: number };

/** What the send is, as the object knows it before deciding. */
export interface SendToAccept {
  input: BeginTask;
  /** The caller's object and the turn instance this message names (derived from its `messageId`). */
  agentId: string;
  instanceId: string;
  /** The message's digest: a retry must repeat the message exactly. */
  fingerprint: string;
  /** The caller's hash, for the turn's events. */
  caller: string | undefined;
}

/** The agent's part in the decision: its direct replies and its limits. */
export interface AcceptRules {
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
export function decideAccept(
  db: AgentDB,
  send: SendToAccept,
  rules: AcceptRules,
): { reply: Continued | Replied; happened?: Happened; queued?: string } | { refused: RpcError; happened: Happened } {
  const { input, fingerprint } = send;
  const messageId = input.message.messageId;
  const prior = db.priorSends.of(messageId);
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
      queued = queueRedelivery(db, existing.id, putConfig(db, existing.id, input.pushConfig).id) ? existing.id : undefined;
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
  const ids = { id: crypto.randomUUID(), contextId: input.message.contextId || crypto.randomUUID() };
  const task = submittedTask(input.message, ids, rules.now, input.acceptedOutputModes);
  const pushConfig = input.pushConfig && withConfigIds(input.pushConfig, task.id);
  insertTask(db, task, rules.now, { messageId, contextId: task.contextId, fingerprint }, pushConfig && { id: pushConfig.id, json: JSON.stringify(pushConfig) });
  const params: TurnParams = {
    tenant: input.tenant,
    agentId: send.agentId,
    taskId: task.id,
    messageId,
    origin: input.origin,
    ...(send.caller ? { caller: send.caller } : {}),
  };
  db.turns.open(task.id, send.instanceId, params, rules.reportWithinMs);
  return {
    reply: { task: shapeTask(task, { historyLength: input.historyLength, includeArtifacts: true }), turn: { instanceId: send.instanceId, params } },
    happened: { kind: "accepted", task, turnId: send.instanceId },
  };
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
    else if (isInterrupted(state)) open.parked += n;
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
