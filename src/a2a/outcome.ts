import { RpcError, toRpcErrorValue, type RpcErrorValue } from "./errors.js";

/**
 * What a Durable Object RPC method returns. Errors travel as values because
 * workerd rebuilds a thrown error on the caller's side as a plain `Error`,
 * dropping the A2A code the edge has to answer with.
 */
export type Outcome<T> = { ok: true; value: T } | { ok: false; error: RpcErrorValue };

export function settle<T>(run: () => T): Outcome<T> {
  try {
    return { ok: true, value: run() };
  } catch (error) {
    if (error instanceof RpcError) return { ok: false, error: toRpcErrorValue(error) };
    throw error;
  }
}

/** Unwraps an outcome on the edge side, re-raising its error with its code. */
export function unwrap<T>(outcome: Outcome<T>): T {
  if (outcome.ok) return outcome.value;
  throw new RpcError(outcome.error.code, outcome.error.message, outcome.error.data);
}
