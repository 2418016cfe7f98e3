import { createMiddleware } from "hono/factory";
import { quotaExceeded } from "../a2a/errors.js";
import { ConfigError } from "../errors/index.js";
import type { EdgeHono } from "./context.js";
import { callerHashOf, emitAtEdge } from "./edge-events.js";
import type { EdgeEnv } from "./options.js";
import { EdgeRefusal } from "./request-steps.js";

interface RateLimitOptions<Env> {
  limiter: (env: Env) => RateLimit | undefined;
  /** Whole seconds, at least 1. */
  retryAfterSeconds: number;
}

/**
 * Step 7, once the tenant claim matched and before any Durable Object is
 * addressed: a caller over the rate limit gets 429 `QUOTA_EXCEEDED` and
 * nothing is created. The limiter is keyed by the caller's hash, so the
 * identity never leaves for the rate-limiting service.
 */
export const rateLimitStep = <Env extends EdgeEnv>(options: RateLimitOptions<Env>) =>
  createMiddleware<EdgeHono<Env>>(async (c, next) => {
    const limiter = options.limiter(c.env);
    if (limiter) {
      const key = await callerHashOf(c);
      if (key === undefined) {
        // The hash is keyed by the signing key: without a usable one no caller can be told apart.
        throw new ConfigError({ kind: "secret", name: "A2A_SIGNING_KEY" }, "A2A_SIGNING_KEY is unusable, so callers cannot be rate-limited");
      }
      if (!(await allowed(limiter, key))) {
        const { retryAfterSeconds } = options;
        emitAtEdge(c, "quota.exceeded", { limit: "rateLimit", retryAfterSeconds });
        const message = `Too many requests from this caller: try again in ${retryAfterSeconds} s`;
        throw new EdgeRefusal("rate-limit", 429, quotaExceeded({ message, retryAfterSeconds, metadata: { limit: "rateLimit" } }));
      }
    }
    await next();
  });

/** A limiter that fails lets the call through: an outage of the limiter must not refuse every caller. */
async function allowed(limiter: RateLimit, key: string): Promise<boolean> {
  try {
    return (await limiter.limit({ key })).success;
  } catch (error) {
    console.warn(`a2a edge: the rate limiter failed (${error instanceof Error ? error.name : "error"}); the call goes on unlimited`);
    return true;
  }
}
