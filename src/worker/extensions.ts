import { createMiddleware } from "hono/factory";
import { PROGRESS_EXTENSION } from "../a2a/progress.js";
import { A2A_EXTENSIONS_HEADER, ERASURE_EXTENSION } from "../a2a/wire.js";
import type { EdgeHono } from "./context.js";
import type { EdgeEnv } from "./options.js";

/** The extensions this edge serves (every card declares them, none required). */
const SERVED: readonly string[] = [PROGRESS_EXTENSION, ERASURE_EXTENSION];

/**
 * The extensions a request activates (its `A2A-Extensions` header,
 * comma-separated URIs): progress for the method to honour, and every one
 * this edge serves echoed on the response, whatever it is (docs/protocol.md
 * "Progress", "Erasure"). One it does not serve is ignored, never refused.
 */
export const extensionsStep = <Env extends EdgeEnv>() =>
  createMiddleware<EdgeHono<Env>>(async (c, next) => {
    const asked = (c.req.header(A2A_EXTENSIONS_HEADER) ?? "").split(",").map((uri) => uri.trim());
    c.set("progress", asked.includes(PROGRESS_EXTENSION));
    await next();
    const active = SERVED.filter((uri) => asked.includes(uri));
    if (active.length > 0) c.res.headers.set(A2A_EXTENSIONS_HEADER, active.join(", "));
  });
