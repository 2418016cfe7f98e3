import { createMiddleware } from "hono/factory";
import { A2A_EXTENSIONS_HEADER, PROGRESS_EXTENSION, activatesProgress } from "../a2a/progress.js";
import type { EdgeHono } from "./context.js";
import type { EdgeEnv } from "./options.js";

/**
 * The extensions a request activates (its `A2A-Extensions` header), for the
 * method to honour, echoed in the response's header, whatever it is
 * (docs/protocol.md "Progress"). Unknown URIs are ignored, never refused.
 */
export const extensionsStep = <Env extends EdgeEnv>() =>
  createMiddleware<EdgeHono<Env>>(async (c, next) => {
    const progress = activatesProgress(c.req.header(A2A_EXTENSIONS_HEADER));
    c.set("progress", progress);
    await next();
    if (progress) c.res.headers.set(A2A_EXTENSIONS_HEADER, PROGRESS_EXTENSION);
  });
