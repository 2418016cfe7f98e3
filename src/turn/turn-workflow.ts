import { WorkflowEntrypoint, type WorkflowEvent, type WorkflowStep } from "cloudflare:workers";
import { loadGatekeeperOrigins } from "../a2a/gatekeeper-origins.js";
import { testClockOf } from "../a2a/test-clock.js";
import { loadSigningKey } from "../a2a/signing-key.js";
import { isTerminalName } from "../a2a/task-state.js";
import type {
  AgentNamespace,
  DeadLetter,
  PushConfigJson,
  PushPlan,
  PushTargets,
  StreamEventJson,
  TurnObject,
  TurnParams,
  TurnStep,
  Verdict,
} from "../boundary/index.js";
import { pushSchedule, waitAfter, type PushSchedule } from "./delivery-schedule.js";
import { deliverPush } from "../a2a/push-delivery.js";
import type { AnalyticsDataset } from "../telemetry/index.js";
import {
  ATTEMPT_STEP,
  ATTEMPT_TIMEOUT_MS,
  DELIVERY_STEP,
  MAX_PARKS,
  MAX_ROUNDS,
  PROGRESS_STEP,
  QUICK_STEP,
  RUN_STEP,
  WAIT_MARGIN_MS,
  eventScope,
  settleRound,
  turnEventsOf,
  type AskTry,
  type AttemptResult,
  type Pending,
  type RunStep,
  type RunningTurn,
  type TriedPush,
} from "./turn-steps.js";

/**
 * The durable turn: mark working, run the tenant's turn in the caller's
 * Durable Object, make the guarded terminal write, announce the result to
 * every push config. A round is one step, and the round that finishes the
 * turn makes the first push in it too: a retry of it never calls the model
 * again (the object recorded the outcome) and may push again (at least
 * once); later attempts are steps of their own. A task canceled meanwhile is
 * announced as canceled because the terminal write says it was refused.
 * No step waits on a push: a wait for a human is the backoff of its
 * request's push, and a later event supersedes a push still pending.
 */
export abstract class TurnWorkflowBase<
  Env extends { A2A_SIGNING_KEY?: string; GATEKEEPER_ORIGINS?: string; OPENAI_API_KEY?: string; A2A_ANALYTICS?: AnalyticsDataset },
> extends WorkflowEntrypoint<Env, TurnParams> {
  /** The namespace holding `tenant`'s agents. */
  protected abstract agentNamespace(tenant: string): AgentNamespace;

  override async run(event: Readonly<WorkflowEvent<TurnParams>>, step: WorkflowStep): Promise<{ state: string }> {
    const turn = { ...event.payload, instanceId: event.instanceId };
    // The stub, seen through the boundary's interface: plain verdicts, typed.
    const agent = (): TurnObject => {
      const namespace = this.agentNamespace(turn.tenant);
      return namespace.get(namespace.idFromString(turn.agentId));
    };

    if (turn.redeliver) return this.#redeliver(step, agent, turn);

    // Step names are stable across deploys: an instance in flight replays its
    // finished steps by name, so a renamed step would run twice. A turn that
    // answers in one round is one step: "run" (start, model, terminal write,
    // and the first push to each config, which closes the turn when all are
    // delivered); only a push that must be tried again has steps of its own.
    let state = "TASK_STATE_WORKING";
    // The object refused the turn (no such task, or an agent that did not start): nothing to finish.
    let refusedTurn = false;
    // The finished turn's push still to make: its first attempts, made in the run step.
    let finished: { targets: PushTargets; tried: TriedPush[] } | undefined;
    let closed = false;
    // A request's push not yet delivered when its wait ended: the next event supersedes it.
    let pending: Pending | undefined;
    // Waits for a human so far in this turn; each has steps of its own.
    let parks = 0;
    // Whether this run of the round follows a wait: it then has a name of its own.
    let afterPark = false;
    for (let round = 1; round <= MAX_ROUNDS && parks <= MAX_PARKS; ) {
      // Each round is its own step (a retry of round 3 never re-runs rounds 1
      // and 2), and so is each run of a round after a wait for a human.
      const name = afterPark ? `run round ${round} after ${parks}` : round === 1 ? "run" : `run round ${round}`;
      const carried = pending;
      const ran = await step.do(name, RUN_STEP, () => this.#runRound(agent, turn, round, carried));
      if (!ran.ok) {
        refusedTurn = true;
        break;
      }
      const result = ran.value;
      if (result.kind === "pushed") {
        const { seq, tried } = result.pushed;
        state = result.state;
        closed = result.pushed.closed;
        finished = { targets: { seq, configIds: tried.map((t) => t.configId) }, tried };
        pending = undefined;
        break;
      }
      if (result.kind === "interrupted") {
        // Parked: announce it while waiting for the object's event (answered,
        // expired, canceled), tell what came of it, and run the same round again.
        parks++;
        pending = await this.#waitForAnswer(step, agent, turn, parks, result, pending);
        const resumed = await step.do(`resume ${parks}`, QUICK_STEP, () => agent().turnResumed(turn.taskId, result.requestId));
        if (resumed.ok && resumed.value.announce) {
          const superseded = pending;
          await step.do(`resumed ${parks}`, PROGRESS_STEP, () => this.#announce(agent, turn, superseded));
          pending = undefined;
        }
        afterPark = true;
        continue;
      }
      if (result.announce) {
        const superseded = pending;
        await step.do(`progress ${round}`, PROGRESS_STEP, () => this.#announce(agent, turn, superseded));
        pending = undefined;
      }
      round++;
      afterPark = false;
    }
    if (finished) {
      if (!closed) {
        const delivery = await this.#deliverAll(step, agent, turn, finished.targets, "push", { tried: finished.tried, close: true });
        if (!delivery.closed) await step.do("delivered", QUICK_STEP, () => agent().turnDelivered(turn.taskId, turn.instanceId));
      }
      return { state };
    }
    // No turn is announced in between: one that ran out of rounds (or came
    // back neither terminal nor interrupted) is failed first.
    if (!refusedTurn && !isTerminalName(state)) {
      const verdict = await step.do("unfinished", QUICK_STEP, () => agent().endUnfinished(turn.taskId));
      if (verdict.ok) state = verdict.value.state;
    }

    const superseded = pending;
    const targets = await step.do("push targets", DELIVERY_STEP, async () => {
      // A request's push still pending gets its last attempt before the terminal push (docs/protocol.md "Delivery").
      if (superseded) await this.#supersede(agent, turn, superseded);
      const found = await agent().pushTargets(turn.taskId);
      return found.ok ? found.value : { seq: 0, configIds: [] };
    });
    await this.#deliverAll(step, agent, turn, targets, "push");
    await step.do("delivered", QUICK_STEP, () => agent().turnDelivered(turn.taskId, turn.instanceId));
    return { state };
  }

  /**
   * One round in the caller's object; a round that finished the turn makes
   * the first push to each config in the same step, as the terminal write
   * built it (no step, no read between the write and the push), after the
   * last attempt of a request's push still `pending` (the round's progress
   * skips its configs: a later event never precedes it). A crash after a push
   * and before the step is recorded runs the step again: the object answers
   * from the recorded outcome and the push goes out again, with the same
   * `seq` (at least once).
   */
  async #runRound(agent: () => TurnObject, turn: RunningTurn, round: number, pending: Pending | undefined): Promise<Verdict<RunStep>> {
    const ran = await agent().runTurn(turn.taskId, turn.origin, round, turn.instanceId, pending?.configIds);
    if (!ran.ok) return ran;
    if (ran.value.kind !== "finished") return { ok: true, value: ran.value };
    const { state, push, closed, wide } = ran.value;
    // The turn's wide log line gathers this step's push attempts, then is written (docs/telemetry.md "Which lines").
    const { log, telemetry } = turnEventsOf(this.env, turn);
    log.open(wide);
    // The terminal push never waits behind an earlier push's schedule: that one gets one more attempt, first.
    if (pending && !closed) await this.#supersede(agent, turn, pending);
    const configIds = closed ? [] : push.configs.map((config) => config.id);
    // Inside this step: no step of its own for the first attempts.
    const tried = await this.#attemptEach(agent, turn, { seq: push.seq, configIds }, "push", 1, { plan: push, close: true }, (_name, attempt) => attempt());
    await telemetry.flushed();
    log.close();
    return { ok: true, value: { kind: "pushed", state, pushed: { seq: push.seq, tried, closed: closed || tried.some((t) => t.closed === true) } } };
  }

  /**
   * A parked turn waits for its request's event (answered, expired,
   * canceled) while the request's push is delivered: the first attempt to
   * each config is one step (after the last attempt of a push still
   * `carried`), and the wait for the answer between tries is the schedule's
   * backoff, each try and each wait a step of its own. The event ends the
   * wait at once, whatever is still pending; that is returned, for the next
   * event to supersede. Once nothing is pending (delivered, given up) the
   * wait runs until the request's expiry and the margin. The request is
   * delivered like the answer (the schedule, dead letters): a gatekeeper
   * that missed it could not ask.
   */
  async #waitForAnswer(
    step: WorkflowStep,
    agent: () => TurnObject,
    turn: RunningTurn,
    parks: number,
    asked: Extract<TurnStep, { kind: "interrupted" }>,
    carried: Pending | undefined,
  ): Promise<Pending | undefined> {
    const name = `ask ${parks}`;
    const deadline = asked.expiresAt + WAIT_MARGIN_MS;
    let tried = await step.do(name, DELIVERY_STEP, () => this.#askTry(agent, turn, name, deadline, { carried }));
    for (let t = 1; ; t++) {
      const letters = tried.letters;
      if (letters.length > 0) await step.do(`${name} dead letters ${t}`, QUICK_STEP, () => agent().deadLetter(turn.taskId, letters));
      if (tried.over) return tried.pending;
      try {
        await step.waitForEvent(`answer ${parks} ${t}`, { type: asked.eventType, timeout: tried.waitMs });
        return tried.pending;
      } catch {
        // Timed out: the next try of what is pending, or, with nothing pending, the object decides (it expires the request).
      }
      const pending = tried.pending;
      if (!pending) return undefined;
      tried = await step.do(`${name} ${t + 1}`, DELIVERY_STEP, () => this.#askTry(agent, turn, name, deadline, { pending }));
    }
  }

  /**
   * One try at a request's push: the first (the task's latest status to
   * each config, after the last attempt of a push still `carried`) or the
   * next of what is `pending`; then how long to wait for the answer, which
   * the object is told (a turn waiting is alive).
   */
  async #askTry(
    agent: () => TurnObject,
    turn: RunningTurn,
    name: string,
    deadline: number,
    from: { carried?: Pending } | { pending: Pending },
  ): Promise<AskTry> {
    let targets: PushTargets;
    let attempt = 1;
    let first: number | undefined;
    if ("pending" in from) {
      // Past the request's expiry and the margin: the object decides (resume), and the next event supersedes what is left.
      if (Date.now() >= deadline) return { pending: from.pending, letters: [], waitMs: 0, over: true };
      targets = { seq: from.pending.seq, configIds: from.pending.configIds };
      attempt = from.pending.attempt + 1;
      first = from.pending.first;
    } else {
      if (from.carried) await this.#supersede(agent, turn, from.carried);
      const found = await agent().pushTargets(turn.taskId);
      targets = found.ok ? found.value : { seq: 0, configIds: [] };
    }
    const tried = await this.#attemptEach(agent, turn, targets, name, attempt, { close: false }, (_name, make) => make());
    const schedule = this.#schedule();
    const settled = settleRound(tried, targets.seq, attempt, first, schedule);
    const pending = settled.next.length > 0 ? { name, seq: targets.seq, configIds: settled.next, attempt, first: settled.first } : undefined;
    const left = deadline - Date.now();
    const waitMs = pending ? Math.max(1_000, Math.min(waitAfter(attempt, schedule), left)) : Math.max(60_000, left);
    // Waiting is alive: the object expects the next report only after the wait.
    await agent().turnProgress(turn.taskId, waitMs + ATTEMPT_TIMEOUT_MS);
    return { ...(pending ? { pending } : {}), letters: settled.letters, waitMs };
  }

  /**
   * A later event of the task is ready for the configs `pending` is still
   * due at: each gets one more attempt, and one that does not go out is
   * superseded (dropped, recorded as such; not a dead letter). Per config,
   * nothing earlier is ever sent after something later.
   */
  async #supersede(agent: () => TurnObject, turn: RunningTurn, pending: Pending): Promise<void> {
    const attempt = pending.attempt + 1;
    for (const configId of pending.configIds) {
      await this.#attempt(agent(), turn, configId, pending.seq, { attempt, stepName: `${pending.name} ${configId} ${attempt}`, last: true });
    }
  }

  /**
   * One attempt at `targets.seq` to each config, in order, each made through
   * `make` (a step of its own, or inline in the step that calls this). `plan`:
   * the push as the terminal write built it, sent as it is by a first attempt.
   * `close`: the last attempt closes the turn, if every earlier one went out.
   * `last`: each is the event's last attempt (see `#attempt`).
   */
  async #attemptEach(
    agent: () => TurnObject,
    turn: RunningTurn,
    targets: PushTargets,
    name: string,
    attempt: number,
    options: { plan?: PushPlan; close: boolean; last?: boolean },
    make: (stepName: string, attempt: () => Promise<AttemptResult>) => Promise<AttemptResult>,
  ): Promise<TriedPush[]> {
    const { plan, close, last } = options;
    const tried: TriedPush[] = [];
    for (const [index, configId] of targets.configIds.entries()) {
      const stepName = `${name} ${configId} ${attempt}`;
      const planned = attempt === 1 ? plan?.configs.find((c) => c.id === configId) : undefined;
      const given = planned && plan ? { config: planned.config, body: plan.body } : undefined;
      // Only while every earlier one went out: a dead letter must be recorded, and a retry made, before the turn closes.
      const closes = close && index === targets.configIds.length - 1 && tried.every((t) => t.kind === "delivered" || t.kind === "skipped");
      const result = await make(stepName, () => this.#attempt(agent(), turn, configId, targets.seq, { attempt, stepName, given, close: closes, last }));
      tried.push({ configId, ...result });
    }
    return tried;
  }

  /**
   * Event `targets.seq` to every config in `targets`, on the schedule of
   * delivery-schedule.ts: each round tries every config still pending, one
   * step each, then sleeps before the next; a config that refuses for good, or
   * whose hour runs out, is a dead letter, recorded on the task unless
   * `record` is false (a re-delivery records its own). `tried`: the first
   * attempts, made already (in the run step). `close`: the attempt that
   * leaves nothing pending and nothing given up closes the turn in its own
   * step (`closed`). Returns the dead letters.
   */
  async #deliverAll(
    step: WorkflowStep,
    agent: () => TurnObject,
    turn: RunningTurn,
    targets: PushTargets,
    name: string,
    options: { record?: boolean; tried?: readonly TriedPush[]; close?: boolean } = {},
  ): Promise<{ letters: DeadLetter[]; closed: boolean }> {
    const { record = true, tried: made, close = false } = options;
    const letters: DeadLetter[] = [];
    let pending = targets.configIds;
    let first: number | undefined;
    let closed = false;
    for (let attempt = 1; pending.length > 0; attempt++) {
      const round =
        attempt === 1 && made
          ? made
          : await this.#attemptEach(
              agent,
              turn,
              { seq: targets.seq, configIds: pending },
              name,
              attempt,
              { close: close && letters.length === 0 },
              (stepName, make) => step.do(stepName, ATTEMPT_STEP, make),
            );
      closed ||= round.some((tried) => tried.closed === true);
      const settled = settleRound(round, targets.seq, attempt, first, this.#schedule());
      first = settled.first;
      letters.push(...settled.letters);
      pending = settled.next;
      if (pending.length === 0) break;
      const wait = waitAfter(attempt, this.#schedule());
      // In backoff is alive: the object waits for the next attempt before calling the turn lost.
      await step.do(`${name} backoff ${attempt}`, QUICK_STEP, () => agent().turnProgress(turn.taskId, wait + ATTEMPT_TIMEOUT_MS));
      await step.sleep(`${name} wait ${attempt}`, wait);
    }
    if (record && letters.length > 0) await step.do(`${name} dead letters`, QUICK_STEP, () => agent().deadLetter(turn.taskId, letters));
    return { letters, closed };
  }

  /**
   * One attempt: the push as it goes out now (`given`: as the terminal write
   * built it, with no read back), and what came of it (when, for the
   * schedule). `close`: delivered or skipped, it closes the turn as well.
   * `last`: a later event is ready for the config, so this attempt is the
   * push's last, and one that does not go out is superseded.
   */
  async #attempt(
    agent: TurnObject,
    turn: RunningTurn,
    configId: string,
    seq: number,
    which: { attempt: number; stepName: string; given?: { config: PushConfigJson; body: StreamEventJson }; close?: boolean; last?: boolean },
  ): Promise<AttemptResult> {
    const began = Date.now();
    const closing = async (kind: "delivered" | "skipped", status: number) => {
      if (!which.close) return { kind, status, at: Date.now() };
      await agent.turnDelivered(turn.taskId, turn.instanceId);
      return { kind, status, at: Date.now(), closed: true };
    };
    let out: { config: PushConfigJson; body: StreamEventJson };
    if (which.given) out = which.given;
    else {
      const read = await agent.pushOf(turn.taskId, configId, seq);
      // Deleted since, or the task is gone: nobody is waiting at that URL any more.
      if (!read.ok || read.value.gone) return closing("skipped", 0);
      out = read.value;
    }
    const body = out.body;
    // Pushes carry a task or a status update (docs/protocol.md), both with their context.
    const contextId = "task" in body ? body.task.contextId : "statusUpdate" in body ? body.statusUpdate.contextId : undefined;
    const attempt = await deliverPush({
      config: out.config,
      body,
      seq,
      key: await loadSigningKey(this.env.A2A_SIGNING_KEY),
      origin: turn.origin,
      allowlist: this.#gatekeeperOrigins(),
      taskId: turn.taskId,
      trace: turn.trace,
    });
    const status = "status" in attempt ? attempt.status : 0;
    // In the step that makes the attempt: a re-run of it is the same occurrence, with the same id.
    const scope = eventScope(turn, contextId);
    const events = turnEventsOf(this.env, turn).telemetry;
    await events.emit("push.attempt", scope, { configId, seq, attempt: which.attempt, status, outcome: attempt.kind, durationMs: Date.now() - began }, [
      turn.instanceId,
      which.stepName,
    ]);
    if (attempt.kind === "delivered") return closing("delivered", status);
    if (which.last && attempt.kind !== "skipped")
      await events.emit("push.superseded", scope, { configId, seq }, [turn.instanceId, which.stepName, "superseded"]);
    return { kind: attempt.kind, status, at: Date.now() };
  }

  /**
   * A re-delivery (`TurnParams.redeliver`): each config queued for the task's
   * dead letters is sent them once, in `seq` order (none it must not get
   * after a later event it was sent already: those are superseded). An event
   * followed by another for the config gets one attempt, and is superseded
   * if that fails; the last is delivered on the schedule, and is a dead letter
   * under this config if given up.
   */
  async #redeliver(step: WorkflowStep, agent: () => TurnObject, turn: RunningTurn): Promise<{ state: string }> {
    const queued = await step.do("redelivery targets", QUICK_STEP, async () => {
      const found = await agent().redeliveryTargets(turn.taskId);
      return found.ok ? found.value : [];
    });
    for (const { configId, seqs, superseded: dropped } of queued) {
      const delivered: number[] = [];
      const superseded = [...dropped];
      let givenUp: DeadLetter[] = [];
      for (const [index, seq] of seqs.entries()) {
        const name = `redeliver ${configId} ${seq}`;
        if (index < seqs.length - 1) {
          const [tried] = await this.#attemptEach(agent, turn, { seq, configIds: [configId] }, name, 1, { close: false, last: true }, (stepName, make) =>
            step.do(stepName, ATTEMPT_STEP, make),
          );
          (tried?.kind === "delivered" || tried?.kind === "skipped" ? delivered : superseded).push(seq);
          continue;
        }
        const {
          letters: [letter],
        } = await this.#deliverAll(step, agent, turn, { seq, configIds: [configId] }, name, { record: false });
        if (letter) givenUp = [letter];
        else delivered.push(seq);
      }
      await step.do(`redelivered ${configId}`, QUICK_STEP, async () => {
        // Dropped before any attempt: recorded in this step, so a re-run of it is the same occurrence.
        for (const seq of dropped)
          await turnEventsOf(this.env, turn).telemetry.emit("push.superseded", eventScope(turn), { configId, seq }, [
            turn.instanceId,
            "redeliver",
            configId,
            seq,
            "superseded",
          ]);
        return agent().redelivered(turn.taskId, { configId, delivered, givenUp, superseded });
      });
    }
    await step.do("delivered", QUICK_STEP, () => agent().turnDelivered(turn.taskId, turn.instanceId));
    return { state: "redelivered" };
  }

  /** The push schedule: the platform's, unless a test clock shortens it (docs/gatekeeper.md "Test clocks"). */
  #schedule(): PushSchedule {
    return pushSchedule(testClockOf(this.env));
  }

  /**
   * The gatekeepers trusted now, read at every delivery rather than when the
   * turn began: an origin removed from `GATEKEEPER_ORIGINS` meanwhile is no
   * longer called (the SSRF rule of docs/protocol.md "SendMessage").
   */
  #gatekeeperOrigins(): ReadonlySet<string> {
    return loadGatekeeperOrigins(this.env.GATEKEEPER_ORIGINS);
  }

  /**
   * The task's latest status event (progress, a request's expiry) as a
   * `statusUpdate` to every push config, once each, after the last attempt
   * of a request's push still `pending` (it is superseded); a failure is
   * logged, never thrown. Nothing is announced once the task is terminal: no
   * progress follows a cancel.
   */
  async #announce(agent: () => TurnObject, turn: RunningTurn, pending: Pending | undefined): Promise<{ sent: number }> {
    let sent = 0;
    try {
      if (pending) await this.#supersede(agent, turn, pending);
      const verdict = await agent().deliveryOf(turn.taskId);
      if (!verdict.ok || isTerminalName(verdict.value.task.status.state)) return { sent };
      const { seq, statusUpdate } = verdict.value.status;
      const key = await loadSigningKey(this.env.A2A_SIGNING_KEY);
      const push = { body: { statusUpdate }, seq, key, allowlist: this.#gatekeeperOrigins(), origin: turn.origin, taskId: turn.taskId, trace: turn.trace };
      for (const config of verdict.value.configs) {
        try {
          const attempt = await deliverPush({ config, ...push });
          if (attempt.kind === "delivered") sent++;
        } catch (error) {
          console.warn(`status push for ${turn.taskId} failed (best effort)${turn.trace ? ` (trace ${turn.trace.traceId})` : ""}`, error);
        }
      }
    } catch (error) {
      console.warn(`status of ${turn.taskId} could not be announced (best effort)${turn.trace ? ` (trace ${turn.trace.traceId})` : ""}`, error);
    }
    return { sent };
  }
}
