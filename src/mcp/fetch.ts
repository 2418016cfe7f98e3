import { callTrace } from "./call-trace.js";
import type { McpServerConfig } from "./servers.js";
import { McpRefused } from "./servers.js";

/**
 * The fetch one server's transport uses. Every request must go to an
 * allowlisted origin (checked again here, since a transport may be pointed
 * elsewhere by a redirect or a server's answer) and carries the server's
 * credentials, read from the Worker's secrets by name; redirects are not
 * followed, so a credential never travels to another origin.
 */
export function credentialedFetch(server: McpServerConfig, options: { allowlist: readonly string[]; env: ReadonlyMap<string, unknown> }): typeof fetch {
  const credentials: [string, string][] = Object.entries(server.headerSecrets).map(([header, secret]) => [header, secretOf(options.env, secret)]);
  if (server.bearerSecret) credentials.push(["Authorization", `Bearer ${secretOf(options.env, server.bearerSecret)}`]);
  return async (input, init) => {
    const request = new Request(input, init);
    const { origin } = new URL(request.url);
    if (!options.allowlist.includes(origin)) throw new McpRefused(origin);
    const headers = new Headers(request.headers);
    for (const [header, value] of credentials) headers.set(header, value);
    // A tool call's requests join the turn's trace (docs/telemetry.md "Trace context"); the connection's own do not.
    const trace = callTrace();
    if (trace) headers.set("traceparent", trace.traceparent());
    return fetch(new Request(request, { headers, redirect: "manual" }));
  };
}

// The plugin's `requires.secrets` already refused a start without them.
const secretOf = (env: ReadonlyMap<string, unknown>, name: string) => String(env.get(name) ?? "");

/** The secrets a server's config names. */
export const secretNames = (server: McpServerConfig): string[] => [
  ...Object.values(server.headerSecrets),
  ...(server.bearerSecret ? [server.bearerSecret] : []),
];
