/** Who a verified caller is, as far as naming their Durable Object goes. */
export interface CallerObjectKey {
  /** The gatekeeper's origin: the verified token's `iss`. */
  gatekeeper: string;
  tenant: string;
  /** The token's `identity.key`. */
  key: string;
}

/**
 * The name of a caller's Durable Object. The gatekeeper is part of it because
 * identity keys are each gatekeeper's own namespace: two gatekeepers may both
 * have a "user-1", and they must never share tasks.
 */
export function callerObjectName(caller: CallerObjectKey): string {
  return JSON.stringify([caller.gatekeeper, caller.tenant, caller.key]);
}
