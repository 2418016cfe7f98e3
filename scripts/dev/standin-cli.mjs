#!/usr/bin/env node
// `npm run standin-model`: the offline stand-in model of `npm start`
// (model-server.mjs, standin-model.mjs) on its own, for a Worker started
// without `npm start` (README "Run the Worker yourself", docs/gatekeeper.md
// "Running it locally"). Stops on Ctrl-C.
import { parseArgs } from "node:util";
import { PortInUse } from "./http.mjs";
import { startStandInModel } from "./model-server.mjs";
import { DEFAULT_PORTS } from "./stack.mjs";

const USAGE = `Usage: npm run standin-model [-- options]

Serves the offline stand-in model on 127.0.0.1: an OpenAI-compatible
POST /v1/chat/completions (and GET /v1/models) that answers deterministically,
every reply starting with "[offline stand-in model]", plus small pages at
/pages/<name> for the researcher to read. No network is needed or used.
Ctrl-C stops it.

Options:
  --port N         the port (default ${DEFAULT_PORTS.model}; 0 for any free port)
  --delay SECONDS  hold each answer this long (to watch progress or cancel)
  --quiet          log nothing per call
  -h, --help       this help
`;

function fail(message) {
  process.stderr.write(`standin-model: ${message}\n`);
  process.exit(2);
}

let values;
try {
  ({ values } = parseArgs({
    options: {
      port: { type: "string", default: String(DEFAULT_PORTS.model) },
      delay: { type: "string", default: "0" },
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
if (!/^\d+$/.test(values.port) || port > 65535) fail(`--port must be a port number (0-65535), got ${JSON.stringify(values.port)}`);
const delayS = Number(values.delay);
if (!(delayS >= 0 && delayS <= 600)) fail(`--delay must be between 0 and 600 seconds, got ${JSON.stringify(values.delay)}`);

let model;
try {
  model = await startStandInModel({
    port,
    delayMs: delayS * 1000,
    portHint: "choose another with --port",
    onCall: values.quiet
      ? undefined
      : (call) => process.stdout.write(`call  ${call.model}${call.stream ? " (stream)" : ""}, ${call.tools} tools offered → ${call.finishReason}\n`),
  });
} catch (error) {
  if (error instanceof PortInUse) fail(error.message);
  throw error;
}

process.stdout.write(
  [
    `offline stand-in model  ${model.baseUrl}  (Ctrl-C stops it)`,
    `  for the Worker        --var OPENAI_BASE_URL:${model.baseUrl} --var OPENAI_MODEL:${model.model}`,
    `  pages                 ${model.origin}/pages/<name>; --var 'FETCH_ALLOWLIST:["${model.origin}"]' lets the agents read them`,
    "",
  ].join("\n"),
);

let stopping = false;
const stop = async () => {
  if (stopping) return;
  stopping = true;
  await model.close();
  process.stdout.write(`stopped the stand-in model (calls answered: ${model.calls()})\n`);
  process.exit(0);
};
process.on("SIGINT", () => void stop());
process.on("SIGTERM", () => void stop());
