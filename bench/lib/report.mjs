/**
 * Turns a run's results into the stdout report and bench/README.md. Both are
 * built from the same rows so the README never says something the run did not.
 */

const ms = (v) => (Number.isFinite(v) ? v.toFixed(2) : "n/a");
const rate = (v) => (Number.isFinite(v) ? Math.round(v).toLocaleString("en-US") : "n/a");
const times = (v) => (Number.isFinite(v) ? `${v.toFixed(2)}×` : "n/a");
const int = (v) => v.toLocaleString("en-US");

const EDGE_LABELS = {
  card: "GET /.well-known/agent-card.json (no token)",
  verified: "GetExtendedAgentCard (token, no Durable Object)",
  getTask: "GetTask (token + Durable Object read)",
};

const FLOOR_LABEL = "floor: GET a trivial Node http server on loopback";

function edgeRows(summaries, withRate) {
  const labels = Object.entries(summaries.floor ? { floor: FLOOR_LABEL, ...EDGE_LABELS } : EDGE_LABELS);
  return labels.map(([key, label]) => {
    const s = summaries[key];
    return withRate ? [label, rate(s.rps), ms(s.p50), ms(s.p99)] : [label, ms(s.p50), ms(s.p99)];
  });
}

const RATIO_LABELS = { verified: "GetExtendedAgentCard ÷ card", getTask: "GetTask ÷ card" };

function ratioRows(ratios, withRate) {
  return Object.entries(RATIO_LABELS).map(([key, label]) => {
    const q = ratios[key];
    return withRate ? [label, times(q.throughput), times(q.p50), times(q.p99)] : [label, times(q.p50), times(q.p99)];
  });
}

function sections(r) {
  const { config: c } = r;
  return [
    {
      title: `Edge under load: ${int(c.n)} requests per kind, concurrency ${c.concurrency}`,
      headers: ["request", "req/s", "p50 ms", "p99 ms"],
      rows: [...edgeRows(r.edge.concurrent, true), ...ratioRows(r.edge.ratios.concurrent, true)],
    },
    {
      title: `Edge latency, one request at a time: ${int(c.seqN)} requests per kind`,
      headers: ["request", "p50 ms", "p99 ms"],
      rows: [...edgeRows(r.edge.sequential, false), ...ratioRows(r.edge.ratios.sequential, false)],
    },
    {
      title: `ListTasks first page (pageSize ${c.pageSize}), ${int(c.listN)} sequential calls per caller`,
      headers: ["caller's Durable Object holds", "p50 ms", "p99 ms"],
      rows: [
        [`${int(r.list.small.totalSize)} tasks`, ms(r.list.small.p50), ms(r.list.small.p99)],
        [`${int(r.list.large.totalSize)} tasks`, ms(r.list.large.p50), ms(r.list.large.p99)],
        [`${int(r.list.large.totalSize)} ÷ ${int(r.list.small.totalSize)} tasks`, times(r.list.ratio.p50), times(r.list.ratio.p99)],
      ],
    },
    {
      title: `Seeding with SendMessage, concurrency ${c.seedConcurrency}`,
      headers: ["tasks created", "seconds", "tasks/s"],
      rows: [[int(r.seeding.tasks), (r.seeding.elapsedMs / 1000).toFixed(1), rate(r.seeding.rps)]],
    },
  ];
}

function textTable(headers, rows) {
  const widths = headers.map((h, i) => Math.max(h.length, ...rows.map((row) => String(row[i]).length)));
  const line = (cells) => cells.map((cell, i) => (i === 0 ? String(cell).padEnd(widths[i]) : String(cell).padStart(widths[i]))).join("  ");
  return [line(headers), widths.map((w) => "-".repeat(w)).join("  "), ...rows.map(line)].join("\n");
}

function mdTable(headers, rows) {
  const line = (cells) => `| ${cells.join(" | ")} |`;
  return [line(headers), line(headers.map((_, i) => (i === 0 ? "---" : "---:"))), ...rows.map(line)].join("\n");
}

function machineLine(m) {
  return `${m.nproc} CPUs (nproc), ${m.cpuModel}, ${m.totalMemoryGiB} GiB RAM, ${m.os}; Node ${m.node}, wrangler ${m.wrangler}, workerd ${m.workerd}`;
}

function gatekeeperLine(g) {
  return `${g.jwks} JWKS fetch(es), ${g.completions} model call(s), ${g.notifications} push notification(s), ${g.turnTrafficWhileMeasuring} of those calls and pushes while requests were timed`;
}

function warnings(r) {
  const out = [];
  if (r.worker.reloads > 0) {
    out.push(`wrangler reloaded the Worker ${r.worker.reloads} time(s) during the run (a source file changed): these figures mix code versions and cold isolates; run again.`);
  }
  if (r.gatekeeper.jwks > 2) {
    out.push(`the Worker fetched the gatekeeper's JWKS ${r.gatekeeper.jwks} times: verification is not being served from the JWKS cache.`);
  }
  if (r.gatekeeper.turnTrafficWhileMeasuring > 0) {
    out.push(
      `turns were still running while requests were timed (${r.gatekeeper.turnTrafficWhileMeasuring} model calls and pushes reached the gatekeeper meanwhile): they compete for the same CPUs.`,
    );
  }
  return out;
}

export function renderText(r) {
  const parts = [`A2A edge bench, ${r.date}`, `Machine: ${machineLine(r.machine)}`, ""];
  for (const s of sections(r)) parts.push(s.title, textTable(s.headers, s.rows), "");
  parts.push(`Gatekeeper saw: ${gatekeeperLine(r.gatekeeper)}.`);
  for (const w of warnings(r)) parts.push(`WARNING: ${w}`);
  parts.push(`Total ${r.durationS.toFixed(0)} s.`);
  return parts.join("\n");
}

export function renderReadme(r) {
  const c = r.config;
  const figures = sections(r)
    .map((s) => `#### ${s.title}\n\n${mdTable(s.headers, s.rows)}`)
    .join("\n\n");
  const warned = warnings(r);
  return `# Edge benchmark

\`npm run bench\` starts the reference Worker under \`wrangler dev --local\` (real workerd, real
Durable Objects with SQLite, storage in a throw-away directory), plays the gatekeeper itself
(a loopback HTTP server that publishes the JWKS its tokens are signed with, accepts push
notifications, and stands in for the model: \`OPENAI_BASE_URL\` points at it, so a turn never
leaves the machine), and measures the edge over loopback HTTP with Node's \`fetch\`. Everything
it starts it stops again, also on Ctrl-C or at the deadline. Most of a run is spent seeding
${int(c.largeTasks)} tasks.

The machine running it is shared and noisy, so the bench never passes or fails on an absolute
number. Read the **ratios**: each compares two things measured in the same run, against the
same worker process, with their requests interleaved in alternating blocks (A B C, C B A, …)
so a slow spell hits every kind alike.

## What each number means

- **GET agent-card** — the public stub card: no token, no Durable Object, a cached signed body.
  The baseline: what any request costs to get through wrangler's proxy, workerd and Hono.
- **GetExtendedAgentCard** — a JSON-RPC call with a gatekeeper token: the full token
  verification (jku allowlist, iss, EdDSA signature, aud, exp, claims), the envelope, and a
  cached tenant card. No Durable Object is addressed.
- **GetTask** — a verified call that also reads one task from the caller's own Durable Object
  (one RPC, one SQLite lookup by primary key).
- **÷ card** — each verified kind relative to the unauthenticated card, measured in the same
  run: throughput ratio (below 1: fewer requests/s) and latency ratios (above 1: slower).
  **GetExtendedAgentCard ÷ card** is what token verification costs at the edge;
  **GetTask ÷ card** is verification plus a Durable Object read.
- **Under load** — ${int(c.n)} requests per kind, ${c.concurrency} in flight (a promise pool), after
  ${int(c.warmup)} warm-up requests per kind. req/s is requests over the wall time of that kind's blocks.
  **One at a time** — latency without queueing; its **floor** row is a GET to the bench's own
  Node server, i.e. what loopback HTTP and the client cost before workerd is involved at all.
- **ListTasks first page** — \`ListTasks\` with \`pageSize: ${c.pageSize}\` and no page token, one call
  at a time, for two callers (two identity keys, so two Durable Objects) holding
  ${int(c.smallTasks)} and ${int(c.largeTasks)} tasks. The ratio shows how the first page grows with
  the caller's task count (the page is the same size; \`totalSize\` counts every task).
- **Seeding** — how fast \`SendMessage\` created those tasks, ${c.seedConcurrency} in flight: accepting a
  task is a verified call plus a Durable Object write (and, once turns run, starting one).
- **Gatekeeper saw** — requests the Worker made to the bench's gatekeeper. JWKS fetches should
  stay at 1: every token is verified against the edge's cached copy. Model calls and pushes
  come from turns started by \`SendMessage\`; the bench waits for them to die down before timing
  anything, and says so if some still arrived while requests were being timed.

p50 and p99 are nearest-rank percentiles of per-request wall time in milliseconds, measured in
the client, so they include loopback HTTP and wrangler's local proxy in front of workerd.

Caveats:

- Client, wrangler (a Node process proxying every request) and workerd share the machine's
  CPUs, so absolute figures say little about production; on 2 cores, concurrency 8 mostly
  queues (compare its p50 with the one-at-a-time p50). The ratios are the point.
- A p99 over a few hundred requests is a handful of samples: a single stall of the machine
  moves it. Trust the p50 ratios first.
- \`wrangler dev\` rebuilds and restarts the Worker when a source file changes. The bench
  stops with an error when that happens: run it on a quiet tree.

## How to run

\`\`\`sh
npm run bench
\`\`\`

It prints the tables below, writes the raw figures to \`bench/results/latest.json\` (git-ignored)
and rewrites this README with them. Counts are set by environment variables:

| variable | default | what |
| --- | ---: | --- |
| \`BENCH_N\` | 2000 | requests per kind under load |
| \`BENCH_CONCURRENCY\` | 8 | requests in flight under load |
| \`BENCH_SEQ_N\` | 1000 | requests per kind one at a time |
| \`BENCH_WARMUP\` | 200 | warm-up requests per kind |
| \`BENCH_ROUNDS\` | 4 | alternating blocks each kind's requests are split into |
| \`BENCH_LIST_N\` | 500 | ListTasks calls per caller |
| \`BENCH_SMALL_TASKS\` | 100 | tasks of the small caller |
| \`BENCH_LARGE_TASKS\` | 10000 | tasks of the large caller |
| \`BENCH_SEED_CONCURRENCY\` | 16 | SendMessage calls in flight while seeding |
| \`BENCH_DEADLINE_S\` | 900 | the whole run is abandoned (and cleaned up) after this |

For a quick check: \`BENCH_N=300 BENCH_SEQ_N=100 BENCH_LIST_N=50 BENCH_LARGE_TASKS=1000 npm run bench\` (it rewrites
this README too).

## Figures of the last run

${r.date} on ${machineLine(r.machine)}${r.machine.commit ? `, commit ${r.machine.commit}` : ""}.
The run took ${r.durationS.toFixed(0)} s. The gatekeeper saw ${gatekeeperLine(r.gatekeeper)}.
${warned.length ? `\n**Warnings:**\n\n${warned.map((w) => `- ${w}`).join("\n")}\n` : ""}
${figures}
`;
}
