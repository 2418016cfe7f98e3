import { bodyLimit } from "hono/body-limit";
import { createMiddleware } from "hono/factory";
import { HTTPException } from "hono/http-exception";
import type { ContentfulStatusCode } from "hono/utils/http-status";
import { contentTypeNotSupported, invalidParams, invalidRequest, versionNotSupported, type RpcError } from "../a2a/errors.js";
import { isJsonMediaType } from "../a2a/wire.js";
import type { EdgeHono } from "./context.js";
import type { EdgeEnv, TenantConfig } from "./options.js";

// The steps of docs/protocol.md "The edge, in order" between the token and
// the method, each refusing before the next runs, the same for both bindings
// (each asks the request's binding how to read it). A refusal travels as
// hono's HTTPException with the A2A error as its cause and the check's name;
// `onError` writes the response in the binding's shape and emits the
// `edge.refused` event.

/** A refusal by one of the edge's checks, with the HTTP status its step names (200 when it names none). */
export class EdgeRefusal extends HTTPException {
  constructor(
    /** Short and stable: the `check` of the `edge.refused` event. */
    readonly check: string,
    status: ContentfulStatusCode,
    readonly error: RpcError,
    /** Headers of the refusal (a 405's `Allow`). */
    readonly headers: Record<string, string> = {},
  ) {
    super(status, { message: error.message, cause: error });
  }
}

/** Step 3: a JSON body, or -32005 with 415. A request with no body (HTTP+JSON) has nothing to check. */
export const contentTypeStep = <Env extends EdgeEnv>() =>
  createMiddleware<EdgeHono<Env>>(async (c, next) => {
    const type = c.req.header("Content-Type");
    if (c.get("binding").hasBody(c.req.raw) && !isJsonMediaType(type)) {
      const got = type === undefined ? "no Content-Type" : `Content-Type ${JSON.stringify(type)}`;
      throw new EdgeRefusal("content-type", 415, contentTypeNotSupported(`${got} is not supported: send the request body as application/json`));
    }
    await next();
  });

/** Step 4: hono's body limit, unread beyond it, or -32600 with 413; a request with no body passes. */
export const bodyLimitStep = <Env extends EdgeEnv>(maxSize: number) => {
  const limit = bodyLimit({
    maxSize,
    onError: () => {
      throw new EdgeRefusal(
        "body-limit",
        413,
        invalidRequest(
          `Request body exceeds ${maxSize.toLocaleString("en-US")} bytes (a message's text, data and inline text files are limited to 262,144 bytes together)`,
        ),
      );
    },
  });
  return createMiddleware<EdgeHono<Env>>(async (c, next) => (c.get("binding").hasBody(c.req.raw) ? limit(c, next) : next()));
};

/**
 * Step 5 (A2A §3.6.2): the header's major.minor must be 1.0; a patch level is
 * ignored (`1.0.3`). No header means v0.3, and a bare `1` names no minor
 * version, so both are refused with -32009 rather than guessed at.
 */
export const versionStep = <Env extends EdgeEnv>() =>
  createMiddleware<EdgeHono<Env>>(async (c, next) => {
    const version = c.req.header("A2A-Version")?.trim();
    const parts = version ? /^(\d+)\.(\d+)(?:\.\d+)?$/.exec(version) : null;
    if (!parts || Number(parts[1]) !== 1 || Number(parts[2]) !== 0) {
      const named = version ? JSON.stringify(version) : "0.3 (no A2A-Version header)";
      throw new EdgeRefusal("version", 200, versionNotSupported(`A2A version ${named} is not supported: send A2A-Version: 1.0`));
    }
    await next();
  });

/** Step 6: the call the request makes (one JSON-RPC request object; an HTTP+JSON route and its JSON body), or -32700 / -32600 with 400. */
export const envelopeStep = <Env extends EdgeEnv>() =>
  createMiddleware<EdgeHono<Env>>(async (c, next) => {
    const binding = c.get("binding");
    const read = binding.readCall(c, binding.hasBody(c.req.raw) ? await c.req.text() : undefined);
    if (!read.ok) throw new EdgeRefusal("envelope", 400, read.error);
    c.set("call", read.call);
    await next();
  });

/**
 * Step 8: a tenant this deployment serves, or -32602 with 404; still no
 * Durable Object addressed. Which tenants are served is decided per request
 * from the Worker's env (`TenantConfig.enabled`), so a tenant switched off by
 * a variable is unknown here and never named in the refusal.
 */
export const knownTenantStep = <Env extends EdgeEnv>(tenants: Readonly<Record<string, Pick<TenantConfig<Env>, "enabled">>>) =>
  createMiddleware<EdgeHono<Env>>(async (c, next) => {
    const tenant = c.get("caller").tenant;
    const served = Object.keys(tenants).filter((name) => tenants[name]!.enabled?.(c.env) ?? true);
    if (!served.includes(tenant)) {
      throw new EdgeRefusal(
        "known-tenant",
        404,
        invalidParams(`Unknown tenant ${JSON.stringify(tenant)}: this deployment serves ${served.join(", ") || "no tenant"}`),
      );
    }
    await next();
  });
