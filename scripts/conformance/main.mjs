#!/usr/bin/env node
// `npm run conformance-proxy`: the proxy of ./proxy.mjs in front of a
// deployment, for the public A2A conformance suite (docs/conformance.md).
import { parseArgs } from "node:util";
import { PortInUse } from "../dev/http.mjs";
import { CONFORMANCE_TENANT, startConformanceProxy } from "./proxy.mjs";

const DEFAULT_UPSTREAM = "http://127.0.0.1:8787";
const DEFAULT_PORT = 8792;

const USAGE = `Usage: npm run conformance-proxy [-- options]

Serves the deployment's "${CONFORMANCE_TENANT}" tenant to the public A2A
conformance suite on 127.0.0.1, playing the gatekeeper the suite is not:
a token per call, params.tenant, a unique messageId per send (prefix kept),
a push config pointing back here, and the suite's own push receivers relayed
through here. See docs/conformance.md.

The deployment must run with CONFORMANCE=1 and list this proxy's origin
(http://127.0.0.1:PORT, exactly) in GATEKEEPER_ORIGINS.

Options:
  --upstream URL   the deployment's origin (default ${DEFAULT_UPSTREAM},
                   the Worker of \`npm start\`); with PUBLIC_ORIGIN set, that one
  --port N         the proxy's port (default ${DEFAULT_PORT})
  --quiet          log nothing per call
  -h, --help       this help
`;

function fail(message) {
  process.stderr.write(`conformance-proxy: ${message}\n`);
  process.exit(2);
}

let values;
try {
  ({ values } = parseArgs({
    options: {
      upstream: { type: "string", default: DEFAULT_UPSTREAM },
      port: { type: "string", default: String(DEFAULT_PORT) },
      quiet: { type: "boolean", default: false },
      help: { type: "boolean", short: "h", default: false },
    },
  }));
} catch (error) {
  fail(`${error.message}\n${USAGE}`);
}
if (values.help) {
  process.stdout.write(USAGE);
  process.exit(0);
}
const port = Number(values.port);
if (!Number.isInteger(port) || port < 1 || port > 65535) fail(`--port must be a port number, got ${JSON.stringify(values.port)}`);
if (!URL.canParse(values.upstream) || !/^https?:$/.test(new URL(values.upstream).protocol)) {
  fail(`--upstream must be an http(s) URL, got ${JSON.stringify(values.upstream)}`);
}

let proxy;
try {
  proxy = await startConformanceProxy({
    upstream: values.upstream,
    port,
    log: values.quiet ? () => {} : (line) => process.stdout.write(`${line}\n`),
  });
} catch (error) {
  if (error instanceof PortInUse) fail(error.message);
  throw error;
}

process.stdout.write(
  [
    `conformance proxy  ${proxy.origin}  →  ${proxy.endpoint} (tenant ${CONFORMANCE_TENANT})`,
    `  card             ${proxy.origin}/.well-known/agent-card.json (re-signed, key ${proxy.kid})`,
    `  gatekeeper JWKS  ${proxy.jwksUrl}: the deployment's GATEKEEPER_ORIGINS must list ${proxy.origin}`,
    `  pushes           ${proxy.pushUrl} (the suite's own push URLs: relayed through ${proxy.origin}/a2a/relay/…)`,
    `  caller           ${proxy.identity.key}`,
    `run the suite:     ./run_tck.py --sut-host ${proxy.origin} --transport jsonrpc`,
    "",
  ].join("\n"),
);

const stop = async () => {
  await proxy.close();
  process.exit(0);
};
process.once("SIGINT", stop);
process.once("SIGTERM", stop);
