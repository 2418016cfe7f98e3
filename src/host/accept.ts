import { invalidParams, quotaExceeded, taskNotFound, type RpcError } from "../a2a/errors.js";
import type { BeginTask, MessageJson, Replied, TaskJson, TurnParams } from "../boundary/index.js";
import type { AgentDB } from "../db/agent-db.js";
import { dailyBudgetRefusal } from "./budget.js";
import { queueRedelivery } from "./deliveries.js";
import { continueTask, type Continued } from "./multi-turn.js";
import { withConfigIds } from "./push-config-ids.js";
import { hasConfig, putConfig } from "./push-configs.js";
import { insertTask } from "./task-events.js";
import { shapeTask, submittedTask, taskOf } from "./task-wire.js";

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
  maxInFlightTurns: number;
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
  const inFlight = db.turns.size;
  if (inFlight >= rules.maxInFlightTurns) {
    return {
      refused: quotaExceeded({
        message: `This caller already has ${inFlight} turns in flight, the most it may have at once (${rules.maxInFlightTurns}): send again once one has finished`,
        retryAfterSeconds: 5,
        metadata: { limit: "maxInFlightTurns", inFlight: String(inFlight) },
      }),
      happened: { kind: "refused", limit: "maxInFlightTurns", retryAfterSeconds: 5 },
    };
  }
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

/** -32602 for a retry whose message is not the one first sent with its `messageId` (a record older than digests is not compared). */
function assertSameMessage(recorded: string | null | undefined, fingerprint: string, messageId: string): void {
  if (recorded && recorded !== fingerprint) {
    throw invalidParams(
      `params.message differs from the message first sent with messageId ${JSON.stringify(messageId)}: a retry repeats its message exactly; a new message needs a new messageId`,
    );
  }
}
