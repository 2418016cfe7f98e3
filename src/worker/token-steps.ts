import { bearerAuth } from "hono/bearer-auth";
import { createMiddleware } from "hono/factory";
import type { GatekeeperJwks } from "../a2a/gatekeeper-jwks.js";
import { loadGatekeeperOrigins } from "../a2a/gatekeeper-origins.js";
import { loadTestClock } from "../a2a/test-clock.js";
import { TokenRefused, verifyGatekeeperToken } from "../a2a/verify-token.js";
import { endpointOf } from "../a2a/wire.js";
import type { EdgeHono } from "./context.js";
import type { EdgeEnv } from "./options.js";

const refuse = (message: string) => (): never => {
  throw new TokenRefused("bearer", message);
};

/**
 * Step 2 (docs/protocol.md "The edge, in order", "The gatekeeper token"):
 * hono's bearer check with the gatekeeper token's verification, which leaves
 * the verified caller on the context. Every failure, a missing or malformed
 * header included, is thrown as a `TokenRefused` and answered in one place
 * (`onError`): a 401, never bearer-auth's own 400.
 */
export const tokenStep = <Env extends EdgeEnv>(verify: { jwks: GatekeeperJwks; now?: () => number }) =>
  bearerAuth<EdgeHono<Env>>({
    verifyToken: async (token, c) => {
      const caller = await verifyGatekeeperToken(token, {
        allowlist: loadGatekeeperOrigins(c.env.GATEKEEPER_ORIGINS),
        audience: endpointOf(c.get("origin")),
        // A test clock may shorten how long a gatekeeper's keys are kept (docs/gatekeeper.md "Test clocks").
        jwks: verify.jwks.withMaxAge(loadTestClock(c.env).gatekeeperJwksMaxAgeMs),
        now: verify.now,
      });
      c.set("caller", caller);
      return true;
    },
    noAuthenticationHeader: { message: refuse("a gatekeeper-issued bearer token is required") },
    invalidAuthenticationHeader: { message: refuse("the Authorization header must be `Bearer <token>` with one token") },
  });

/**
 * Step 7: the tenant the token was minted for is the only one this request
 * may name: the one it is addressed to (JSON-RPC's `params.tenant`, the
 * HTTP+JSON path's) and any other it names (a body's or query's `tenant`).
 * Anything else is refused as the token is (a 401).
 */
export const tenantClaimStep = <Env extends EdgeEnv>() =>
  createMiddleware<EdgeHono<Env>>(async (c, next) => {
    const [tenant, ...others] = c.get("call").tenants;
    if (typeof tenant !== "string" || tenant === "") {
      throw new TokenRefused(
        "tenant-claim",
        "the request must name its tenant (params.tenant; in HTTP+JSON, the path's /a2a/rest/{tenant}/), equal to the token's tenant claim",
      );
    }
    if (tenant !== c.get("caller").tenant || others.some((other) => other !== tenant)) {
      throw new TokenRefused("tenant-claim", "the request's tenant differs from the token's tenant claim");
    }
    await next();
  });
