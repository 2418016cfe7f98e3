import { createMiddleware } from "hono/factory";
import { A2A_EXTENSIONS_HEADER, ERASURE_EXTENSION } from "../a2a/wire.js";
import type { EdgeHono } from "./context.js";

/** The extensions this edge serves (every card declares them). */
const SERVED: readonly string[] = [ERASURE_EXTENSION];

/**
 * A request that activates extensions this edge serves (`A2A-Extensions`,
 * comma-separated URIs) gets them echoed on its response, whatever it is;
 * one it does not serve is ignored, never refused (none is required).
 */
export const extensionsStep = <Env extends object>() =>
  createMiddleware<EdgeHono<Env>>(async (c, next) => {
    const asked = (c.req.header(A2A_EXTENSIONS_HEADER) ?? "").split(",").map((uri) => uri.trim());
    await next();
    const active = SERVED.filter((uri) => asked.includes(uri));
    if (active.length > 0) c.res.headers.set(A2A_EXTENSIONS_HEADER, active.join(", "));
  });
