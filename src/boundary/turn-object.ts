import type { TraceContext } from "../a2a/trace-context.js";
import type { Verdict } from "./verdict.js";
import type { ArtifactJson, PushConfigJson, StatusUpdateJson, StreamEventJson, TaskJson } from "./wire-json.js";

/** What a turn Workflow instance is created with. Everything else it reads from the caller's object. */
export interface TurnParams {
  tenant: string;
  /** `DurableObjectId.toString()` of the caller's object. */
  agentId: string;
  taskId: string;
  messageId: string;
  /** This deployment's origin, as the edge saw it: the `iss` of callback tokens. */
  origin: string;
  /**
   * A re-delivery, not a turn: the instance only sends dead-lettered events to
   * the push configs queued for them (`redeliveryTargets`), then ends.
   */
  redeliver?: true;
  /** The caller's hash in events (docs/telemetry.md); absent when the object knows none (no signing key, no gatekeeper named). */
  caller?: string;
  /**
   * The turn's trace (docs/telemetry.md "Trace context"): the one the send's
   * `traceparent` named, or one started for it. Absent in instances created
   * before traces were kept.
   */
  trace?: TraceContext;
  /** The agent's log takes one line per event (`telemetry.eventLines`): so does the turn's Workflow. */
  eventLines?: true;
}

/** The trace a turn's record names (its params as stored), if any. */
export const turnTraceOf = (paramsJson: string | undefined): TraceContext | undefined =>
  paramsJson ? (JSON.parse(paramsJson) as TurnParams).trace : undefined;

/** How a turn ended, as the agent's loop reports it. */
export interface TurnOutcome {
  state: "TASK_STATE_COMPLETED" | "TASK_STATE_FAILED" | "TASK_STATE_REJECTED";
  /** The reply (for a failure, the agent's own sentence); empty when the agent chose not to answer. */
  text: string;
  /** The turn's artifacts; absent: a completed turn's reply is its one artifact, `answer`. */
  artifacts?: ArtifactJson[];
}

/**
 * A finished turn's push, built once by the call that made the terminal write:
 * the first attempt to each config sends it as it is, with no read back.
 */
export interface PushPlan {
  /** The task's terminal status event. */
  seq: number;
  /** The finished task, as pushes carry it. */
  body: StreamEventJson;
  configs: { id: string; config: PushConfigJson }[];
}

/** One round of a turn. */
export type TurnStep =
  /**
   * The turn is over: the object made the guarded terminal write (or found the
   * task terminal already, canceled meanwhile) in the same call. `closed`: no
   * config was waiting, so the turn is delivered already.
   */
  | {
      kind: "finished";
      state: string;
      push: PushPlan;
      closed: boolean;
      /** The turn's wide log line (docs/telemetry.md "Which lines"), for the Workflow to complete with its first push attempts and write; absent with one line per event. */
      wide?: { readonly event: "turn.finished" };
    }
  /** Another round follows; `announce`: the object recorded the round's progress as the task's status, to push. */
  | { kind: "continue"; announce: boolean }
  /**
   * The round waits for a human (the task is INPUT_REQUIRED): the Workflow
   * announces it, waits for the event `eventType` (sent by the object when the
   * request is answered, expires or the task is canceled), then runs the same
   * round again. `expiresAt` (epoch ms) bounds the wait.
   */
  | { kind: "interrupted"; requestId: string; eventType: string; expiresAt: number };

/** A turn's start on its own (`turnStarted`: specs, an agent driving a turn; the Workflow's `runTurn` starts the turn itself). */
export interface TurnStart {
  /** False when the task is terminal already; `state` says which. */
  proceed: boolean;
  state: string;
}

export interface Finished {
  /** False when the guarded write was refused: the task was terminal already. */
  saved: boolean;
  /** The state the task ended in. */
  state: string;
}

export interface Delivery {
  task: TaskJson;
  configs: PushConfigJson[];
  /** The task's latest status event, and its `seq` (the header every push carries). */
  status: { seq: number; statusUpdate: StatusUpdateJson };
}

/** An event to push, and the configs it goes to (`pushTargets`). */
export interface PushTargets {
  /** The task's latest status event. */
  seq: number;
  configIds: string[];
}

/** What one push attempt sends (`pushOf`); `gone`: the config was deleted, nobody waits there any more. */
export type PushOut = { gone: true } | { gone?: false; config: PushConfigJson; body: StreamEventJson };

/** A delivery given up (docs/protocol.md "Events, streams and pushes"): recorded in the task's metadata. */
export interface DeadLetter {
  configId: string;
  seq: number;
  /** The last HTTP status; 0: no answer. */
  status: number;
  /** RFC 3339 time of the last attempt. */
  at: string;
}

/** Dead-lettered events queued for a push config set since (`redeliveryTargets`). */
export interface RedeliveryTarget {
  configId: string;
  /** The events to send it, in order. */
  seqs: number[];
  /** Queued events it is not sent: a later event of the task was delivered to it already, so they are superseded. */
  superseded: number[];
}

/** What came of re-delivering to one config: the events delivered, the ones given up again, and the ones superseded. */
export interface RedeliveryOutcome {
  configId: string;
  delivered: number[];
  givenUp: DeadLetter[];
  superseded: number[];
}

/**
 * What the turn Workflow calls on the caller's object, one durable step each,
 * so the Workflow never imports an agent class and data flows one way:
 * edge → object → Workflow → push. A missing task is refused as TaskNotFound.
 */
export interface TurnObject {
  /**
   * Runs round `round` of the turn, or returns what an earlier run recorded.
   * Marks the task working first (unless terminal), and a round that answers
   * makes the terminal write before it returns: one round trip per round.
   * `held`: configs an earlier push is still pending at, which the round's
   * progress is not pushed to (its last attempt comes after the round).
   */
  runTurn(taskId: string, origin: string, round: number, instanceId: string, held?: string[]): Promise<Verdict<TurnStep>>;
  /** The task as it is to be announced, and every push config it has. */
  deliveryOf(taskId: string): Promise<Verdict<Delivery>>;
  /** The turn waits (a delivery's next attempt, a human's answer) and reports again within `nextAttemptWithinMs`: it is alive until then. */
  turnProgress(taskId: string, nextAttemptWithinMs: number): Promise<Verdict<null>>;
  /** The turn ended neither terminal nor interrupted: fail it, in the agent's words, before it is announced. */
  endUnfinished(taskId: string): Promise<Verdict<Finished>>;
  /** A wait for a human ended (answered, expired, or neither yet): whether the task's status now has news to announce. */
  turnResumed(taskId: string, requestId: string): Promise<Verdict<{ announce: boolean }>>;
  /**
   * Instance `instanceId`'s deliveries are over: its turn's record closes. A record of another instance (a
   * re-delivery opened since, a restart under a new id) stays, so a replayed close takes nothing.
   */
  turnDelivered(taskId: string, instanceId: string): Promise<Verdict<null>>;
  /** The task's latest status event and the configs to push it to. */
  pushTargets(taskId: string): Promise<Verdict<PushTargets>>;
  /** The push of event `seq` to config `configId` as it is to be sent now (a terminal event: the task as it is). */
  pushOf(taskId: string, configId: string, seq: number): Promise<Verdict<PushOut>>;
  /** Deliveries given up: recorded on the task. */
  deadLetter(taskId: string, letters: DeadLetter[]): Promise<Verdict<null>>;
  /** The configs waiting for the task's dead-lettered events. */
  redeliveryTargets(taskId: string): Promise<Verdict<RedeliveryTarget[]>>;
  /** One config's re-delivery ended: its dead letters delivered are cleared, the ones given up recorded under it. */
  redelivered(taskId: string, outcome: RedeliveryOutcome): Promise<Verdict<null>>;
}

/**
 * The Workflow instance id of a turn, from the caller's object and the message
 * id: a retried SendMessage names the same instance and starts nothing new.
 * Hex of SHA-256 keeps it within the id alphabet and length.
 */
export async function turnInstanceId(agentId: string, messageId: string): Promise<string> {
  const digest = await crypto.subtle.digest("SHA-256", new TextEncoder().encode(`${agentId}\n${messageId}`));
  return `turn-${[...new Uint8Array(digest)]
    .map((b) => b.toString(16).padStart(2, "0"))
    .join("")
    .slice(0, 48)}`;
}
