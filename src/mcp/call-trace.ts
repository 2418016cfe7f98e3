import { AsyncLocalStorage } from "node:async_hooks";
import type { ToolContext } from "../plugin/contract.js";

/**
 * The trace of the tool call being sent. The MCP client's transport is one
 * per server and object, shared by every turn, so a call's trace reaches its
 * requests (`credentialedFetch`) through the async context the call runs in.
 */
const store = new AsyncLocalStorage<ToolContext["trace"]>();

/** Runs `send` (one tool call) so that each request it makes carries a new span of `trace`. */
export const withCallTrace = <T>(trace: ToolContext["trace"] | undefined, send: () => Promise<T>): Promise<T> => (trace ? store.run(trace, send) : send());

/** The trace of the tool call whose request is being sent, if any. */
export const callTrace = (): ToolContext["trace"] | undefined => store.getStore();
