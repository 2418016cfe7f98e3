import { ConfigError } from "../errors/index.js";
import { isLoopbackHost, loadGatekeeperOrigins, parseOrigin } from "./gatekeeper-origins.js";

// Test clocks (docs/gatekeeper.md "Test clocks"): variables that shorten the
// platform's long waits so a gatekeeper's local tests take seconds, read here
// and nowhere else, by the edge, the turn Workflow and the caller's object.
// A deployment that answers a gatekeeper off this machine never runs on one.

/** Each clock, by the name of its variable: a whole number of milliseconds. */
const VARIABLES = {
  /** The push schedule's first retry (2 s). */
  pushFirstRetryMs: "TEST_CLOCK_PUSH_FIRST_RETRY_MS",
  /** The longest wait between two push attempts (5 minutes). */
  pushMaxWaitMs: "TEST_CLOCK_PUSH_MAX_WAIT_MS",
  /** How long after its first attempt a push is still tried (an hour). */
  pushWindowMs: "TEST_CLOCK_PUSH_WINDOW_MS",
  /** How long a request to a human waits before it expires (the agent's `hitl.expiresAfterMinutes`, a day by default). */
  questionExpiryMs: "TEST_CLOCK_QUESTION_EXPIRY_MS",
  /** How long a dead letter keeps its finished task from retention (a day). */
  deadLetterRetentionMs: "TEST_CLOCK_DEAD_LETTER_RETENTION_MS",
  /** The oldest a gatekeeper's cached key set may be before it is fetched again (10 minutes). */
  gatekeeperJwksMaxAgeMs: "TEST_CLOCK_GATEKEEPER_JWKS_MAX_AGE_MS",
} as const;

type Clock = keyof typeof VARIABLES;
type Variable = (typeof VARIABLES)[Clock];

/** The clocks set, in milliseconds; a clock not set keeps the platform's own value. */
export type TestClock = Readonly<Partial<Record<Clock, number>>>;

/** What the loader reads of a Worker's env. */
export type TestClockEnv = { GATEKEEPER_ORIGINS?: string; PUBLIC_ORIGIN?: string } & { [V in Variable]?: string };

const NONE: TestClock = Object.freeze({});
const cache = new Map<string, TestClock | ConfigError>();

/**
 * The test clocks `env` sets. Honoured only while every `GATEKEEPER_ORIGINS`
 * entry and `PUBLIC_ORIGIN` (when set) are loopback: otherwise, or for a value
 * that is not a positive whole number of milliseconds, a `ConfigError` naming
 * the variable, which the edge answers to every request.
 */
export function loadTestClock(env: TestClockEnv): TestClock {
  const set = (Object.entries(VARIABLES) as Array<[Clock, Variable]>).filter(([, name]) => env[name] !== undefined && env[name] !== "");
  if (set.length === 0) return NONE;
  const key = JSON.stringify([env.GATEKEEPER_ORIGINS, env.PUBLIC_ORIGIN, set.map(([, name]) => [name, env[name]])]);
  let clock = cache.get(key);
  if (clock === undefined) {
    try {
      clock = parse(env, set);
    } catch (error) {
      if (!(error instanceof ConfigError)) throw error;
      clock = error;
    }
    cache.set(key, clock);
  }
  if (clock instanceof ConfigError) throw clock;
  return clock;
}

/**
 * The test clocks for the Workflow and the caller's object: none where the
 * edge refuses them (it answers every request with the error), so a turn
 * already under way never runs on a clock the deployment may not have.
 */
export function testClockOf(env: TestClockEnv): TestClock {
  try {
    return loadTestClock(env);
  } catch (error) {
    if (error instanceof ConfigError) return NONE;
    throw error;
  }
}

function parse(env: TestClockEnv, set: Array<[Clock, Variable]>): TestClock {
  const [, first] = set[0]!;
  const offLoopback = [...loadGatekeeperOrigins(env.GATEKEEPER_ORIGINS)].filter((origin) => !isLoopbackHost(new URL(origin).hostname));
  if (env.PUBLIC_ORIGIN !== undefined && env.PUBLIC_ORIGIN.trim() !== "") {
    const publicOrigin = parseOrigin(env.PUBLIC_ORIGIN.trim(), "PUBLIC_ORIGIN", { kind: "setting", name: "PUBLIC_ORIGIN" });
    if (!isLoopbackHost(new URL(publicOrigin).hostname)) offLoopback.push(`PUBLIC_ORIGIN ${publicOrigin}`);
  }
  if (offLoopback.length > 0) {
    throw new ConfigError(
      { kind: "setting", name: first },
      `${first} is a test clock, for local work only: it is honoured only while every GATEKEEPER_ORIGINS entry and PUBLIC_ORIGIN are loopback (127.0.0.1, localhost, [::1]), and ${offLoopback.join(", ")} is not; unset ${set.map(([, name]) => name).join(", ")} for any other deployment`,
    );
  }
  const clock: Partial<Record<Clock, number>> = {};
  for (const [field, name] of set) {
    const raw = env[name]!.trim();
    const value = Number(raw);
    if (!/^\d+$/.test(raw) || !Number.isSafeInteger(value) || value < 1) {
      throw new ConfigError({ kind: "setting", name }, `${name} must be a positive whole number of milliseconds, got ${JSON.stringify(env[name])}`);
    }
    clock[field] = value;
  }
  return Object.freeze(clock);
}
