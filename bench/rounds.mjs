#!/usr/bin/env node
// `npm run bench:rounds`: what the round loop costs, against a real local
// workerd, with a model and pages that answer at once. Reports turn latency
// (SendMessage → terminal push) for 1 round / 0 subtasks and 3 rounds / 8
// subtasks, and how it grows with the number of subtasks (to 32), as ratios
// against the 1-round baseline measured in the same run.
import { createServer } from "node:http";
import { dirname } from "node:path";
import { fileURLToPath } from "node:url";
import { exportJWK, generateKeyPair } from "jose";
import { JWKS_PATH, ROUND_RESULT_PATTERN, TERMINAL_STATE_NAMES, endpointOf } from "../src/a2a/wire.ts";
import { makeGatekeeperToken } from "../src/testing/gatekeeper-token.ts";
import { NOTIFY_PATH, jsonRpc } from "../scripts/dev/gatekeeper.mjs";
import { listen } from "../scripts/dev/http.mjs";
import { describeMachine } from "./lib/machine.mjs";
import { writeResult } from "./lib/results.mjs";
import { summarize } from "./lib/stats.mjs";
import { spawnWorker } from "./lib/worker.mjs";
import { chatCompletionBody, chatCompletionReply } from "../src/testing/chat-completion.ts";

const ROOT = dirname(dirname(fileURLToPath(import.meta.url)));
const TURNS = Number(process.env.BENCH_ROUND_TURNS ?? 12);
const MAX_PER_ROUND = 16; // the reference researcher's rounds.maxSubtasksPerRound
/** How the round loop shows the model a finished subtask (`roundResultHead`), anywhere in a message. */
const ROUND_RESULTS = new RegExp(ROUND_RESULT_PATTERN.source, "gm");
const say = (line) => process.stderr.write(`${line}\n`);

/** Scenarios: subtasks delegated per round, then an answer. */
const SCENARIOS = [
  { label: "1 round, 0 subtasks", plan: [] },
  { label: "3 rounds, 8 subtasks", plan: [4, 4] },
  ...[1, 2, 4, 8, 16, 32].map((n) => ({ label: `${n} subtask${n > 1 ? "s" : ""}`, plan: split(n) })),
];

function split(n) {
  const plan = [];
  for (let left = n; left > 0; left -= MAX_PER_ROUND) plan.push(Math.min(MAX_PER_ROUND, left));
  return plan;
}

/**
 * The gatekeeper (JWKS, pushes), the model and the pages, on one loopback
 * server. The model reads its plan from the user's text ("plan: 4,4") and
 * the round from how many rounds of results the prompt carries.
 */
async function startServer(publicJwk) {
  let origin = "";
  const waiting = new Map();
  const counts = { model: 0, pages: 0, delegations: 0 };
  /** @param {import("node:http").ServerResponse} res @param {import("../src/testing/chat-completion.ts").ChatReply} answer @param {boolean} stream */
  const reply = (res, answer, stream) => {
    const sent = chatCompletionReply(chatCompletionBody(answer, "bench"), stream);
    res.setHeader("content-type", sent.contentType);
    res.end(sent.body);
  };
  const server = createServer(async (req, res) => {
    let body = "";
    for await (const chunk of req) body += chunk;
    if (req.url === JWKS_PATH) return res.end(JSON.stringify({ keys: [publicJwk] }));
    if (req.url?.startsWith("/page-")) counts.pages++;
    if (req.url === "/v1/chat/completions") counts.model++;
    if (req.url?.startsWith("/page-")) return res.end(`<p>${req.url} says 42</p>`);
    if (req.url === "/v1/chat/completions") {
      const request = JSON.parse(body);
      const text = (m) => (typeof m?.content === "string" ? m.content : Array.isArray(m?.content) ? m.content.map((p) => p.text ?? "").join("") : "");
      if (text(request.messages[0]).startsWith("Summarise")) return reply(res, { content: "It says 42." }, request.stream === true);
      // The caller's session goes on across turns: this turn's request is the last one.
      const user = [...request.messages].reverse().find((m) => m.role === "user" && text(m).startsWith("bench"));
      const plan = (text(user).match(/plan: ([\d,]*)/)?.[1] ?? "").split(",").filter(Boolean).map(Number);
      const done = Math.max(0, ...request.messages.flatMap((m) => [...text(m).matchAll(ROUND_RESULTS)].map((r) => Number(r[1]))));
      const next = plan[done];
      const canDelegate = (request.tools ?? []).some((t) => t.function.name === "delegate");
      if (next && canDelegate) {
        counts.delegations++;
        const subtasks = Array.from({ length: next }, (_, i) => ({
          type: "read_page",
          params: { url: `${origin}/page-${done}-${i}`, question: "what does it say?" },
        }));
        return reply(res, { toolCalls: [{ name: "delegate", arguments: { subtasks } }] }, request.stream === true);
      }
      return reply(res, { content: "done" }, request.stream === true);
    }
    if (req.url === NOTIFY_PATH) {
      const push = JSON.parse(body);
      res.end();
      if (push.task && TERMINAL_STATE_NAMES.includes(push.task.status?.state)) waiting.get(push.task.id)?.(push.task);
      return;
    }
    res.statusCode = 404;
    res.end();
  });
  origin = `http://127.0.0.1:${await listen(server, 0, "the rounds bench's server", "")}`;
  return { origin, counts, waitFor: (taskId) => new Promise((resolve) => waiting.set(taskId, resolve)), close: () => server.close() };
}

async function main() {
  const gk = await generateKeyPair("EdDSA", { crv: "Ed25519", extractable: true });
  const gatekeeperKey = { kid: "bench-gk", privateKey: gk.privateKey };
  const publicJwk = { ...(await exportJWK(gk.publicKey)), kid: gatekeeperKey.kid, alg: "EdDSA", use: "sig" };
  const server = await startServer(publicJwk);
  const { privateKey } = await generateKeyPair("EdDSA", { crv: "Ed25519", extractable: true });
  const signingKey = JSON.stringify({ ...(await exportJWK(privateKey)), kid: "bench-rounds" });
  const worker = await spawnWorker({
    root: ROOT,
    secrets: { A2A_SIGNING_KEY: signingKey },
    vars: {
      GATEKEEPER_ORIGINS: JSON.stringify([server.origin]),
      OPENAI_BASE_URL: `${server.origin}/v1`,
      OPENAI_MODEL: "bench",
      FETCH_ALLOWLIST: JSON.stringify([server.origin]),
    },
  });
  const stop = async () => {
    await worker.stop();
    server.close();
  };
  process.once("SIGINT", () => void stop().then(() => process.exit(130)));
  try {
    await worker.ready(120_000);
    // One caller (one Durable Object, one session) per scenario, so no scenario reads another's history.
    const endpoint = endpointOf(worker.origin);
    const tokenFor = (key) =>
      makeGatekeeperToken({ key: gatekeeperKey, gatekeeper: server.origin, endpoint, tenant: "researcher", identity: { key }, expiresIn: 30 * 60 });
    let token = await tokenFor("bench-warm-up");

    const turn = async (plan) => {
      const started = performance.now();
      const { result, error } = await jsonRpc(endpoint, token, "SendMessage", {
        tenant: "researcher",
        message: { messageId: crypto.randomUUID(), role: "ROLE_USER", parts: [{ text: `bench plan: ${plan.join(",")}` }] },
        configuration: { returnImmediately: true, taskPushNotificationConfig: { url: `${server.origin}${NOTIFY_PATH}`, token: "t" } },
      });
      if (error) throw new Error(`SendMessage: ${error.message}`);
      const task = await Promise.race([
        server.waitFor(result.task.id),
        new Promise((_, reject) => setTimeout(() => reject(new Error("no push in 120 s")), 120_000)),
      ]);
      if (task.status.state !== "TASK_STATE_COMPLETED") throw new Error(`turn ended ${task.status.state}`);
      return performance.now() - started;
    };

    await turn([]); // warm-up: the first turn pays the isolate's start
    Object.assign(server.counts, { model: 0, pages: 0, delegations: 0 });
    const results = [];
    for (const scenario of SCENARIOS) {
      token = await tokenFor(`bench-${scenario.label}`);
      await turn([]); // the caller's object starts cold: not part of what is measured
      Object.assign(server.counts, { model: 0, pages: 0, delegations: 0 });
      const latencies = [];
      const t0 = performance.now();
      for (let i = 0; i < TURNS; i++) latencies.push(await turn(scenario.plan));
      const stats = summarize(latencies, performance.now() - t0);
      const seen = { ...server.counts };
      Object.assign(server.counts, { model: 0, pages: 0, delegations: 0 });
      const expected = { delegations: scenario.plan.length * TURNS, pages: scenario.plan.reduce((a, b) => a + b, 0) * TURNS };
      if (seen.delegations !== expected.delegations || seen.pages !== expected.pages) {
        throw new Error(`${scenario.label}: expected ${JSON.stringify(expected)}, the servers saw ${JSON.stringify(seen)}`);
      }
      results.push({ ...scenario, rounds: scenario.plan.length + 1, subtasks: scenario.plan.reduce((a, b) => a + b, 0), ...stats });
      say(`  ${scenario.label.padEnd(22)} p50 ${stats.p50.toFixed(0).padStart(6)} ms  p99 ${stats.p99.toFixed(0).padStart(6)} ms`);
    }
    report(results);
  } finally {
    await stop();
  }
}

function report(results) {
  const base = results[0];
  const eight = results.find((r) => r.label === "3 rounds, 8 subtasks");
  const growth = results.filter((r) => /^\d+ subtasks?$/.test(r.label));
  // Least squares over the growth series: ms per subtask, and what a delegating turn costs at zero subtasks.
  const n = growth.length;
  const sx = growth.reduce((s, r) => s + r.subtasks, 0);
  const sy = growth.reduce((s, r) => s + r.p50, 0);
  const sxy = growth.reduce((s, r) => s + r.subtasks * r.p50, 0);
  const sxx = growth.reduce((s, r) => s + r.subtasks ** 2, 0);
  const perSubtask = (n * sxy - sx * sy) / (n * sxx - sx ** 2);
  // A delegating round with one subtask, less the answer-only turn: one more
  // model exchange, durable step and progress push, plus one subtask.
  const one = results.find((r) => r.label === "1 subtask");
  const perRound = one.p50 - base.p50 - perSubtask;
  const machine = describeMachine(ROOT);
  const rows = results
    .map((r) => `| ${r.label} | ${r.rounds} | ${r.subtasks} | ${r.p50.toFixed(0)} | ${r.p99.toFixed(0)} | ${(r.p50 / base.p50).toFixed(2)}× |`)
    .join("\n");
  const text = `# Round-loop benchmark

\`npm run bench:rounds\` starts the reference Worker under \`wrangler dev --local\` and plays the
gatekeeper, the model and the pages on one loopback server that answers at once, so what is
measured is the platform: Workflow steps, the caller's Durable Object, subagent facets, the
pushes. Each scenario runs ${TURNS} researcher turns one after the other (SendMessage → the
terminal push); the model's plan (subtasks per round) is carried in the user's text. Ratios
are against the 1-round, 0-subtask turn measured in the same run.

Run on ${new Date().toISOString().slice(0, 10)}: ${machine.nproc} CPUs (${machine.cpuModel}), ${machine.totalMemoryGiB} GiB, ${machine.os}, Node ${machine.node}, wrangler ${machine.wrangler}, commit ${machine.commit}.

| scenario | rounds | subtasks | p50 ms | p99 ms | p50 ÷ 1 round |
| --- | ---: | ---: | ---: | ---: | ---: |
${rows}

- **Per subtask** (slope of p50 over the growth rows, least squares): ${perSubtask.toFixed(1)} ms.
  Subtasks of a round run ${"≤"}4 at once (the researcher's \`rounds.maxParallel\`), at most 16 per
  round, so 32 subtasks take two delegating rounds.
- **Per round** (1 subtask, less the 1-round baseline and one subtask's slope): ${perRound.toFixed(0)} ms —
  one more model exchange, the round's durable step and its progress push.
- **3 rounds / 8 subtasks** against 2 rounds / 8 subtasks: ${(eight.p50 / results.find((r) => r.label === "8 subtasks").p50).toFixed(2)}× (the same
  work in two delegating rounds of 4 instead of one of 8).
- p99 over ${TURNS} turns is the slowest one or two: read the p50s first.
`;
  process.stdout.write(`\n${text}`);
  // bench/ROUNDS.md is refreshed by hand from a run's printout, at most once per issue; the raw figures go to bench/results/.
  return writeResult("rounds", { machine, turns: TURNS, results, perSubtask, perRound }).then((file) => say(`Wrote ${file}`));
}

main().catch((error) => {
  process.stderr.write(`bench:rounds failed: ${error.stack ?? error}\n`);
  process.exit(1);
});
