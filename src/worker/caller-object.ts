import { ConfigError } from "../errors/index.js";
import type { VerifiedCaller } from "../a2a/verify-token.js";
import type { CallerObject } from "../boundary/index.js";
import type { TenantConfig } from "./options.js";

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

/** The default `resolveAgent`: the tenant's namespace, one object per caller. */
export function objectPerCaller<Env>(tenants: Record<string, TenantConfig<Env>>) {
  return (caller: VerifiedCaller, tenant: string, env: Env): CallerObject => {
    const namespace = tenants[tenant]?.agent(env);
    if (!namespace) {
      throw new ConfigError({ kind: "binding", name: `tenants.${tenant}.agent` }, `tenant ${JSON.stringify(tenant)} has no Durable Object namespace bound`, {
        code: ConfigError.MISSING,
      });
    }
    const name = callerObjectName({ gatekeeper: caller.issuer, tenant, key: caller.identity.key });
    return namespace.get(namespace.idFromName(name));
  };
}
