import { describe, expect, it } from "vitest";
import doc from "../docs/protocol.md?raw";
import readme from "../README.md?raw";
import { GATEKEEPER, ORIGIN } from "./support/constants.js";
import { mintToken } from "./support/gatekeeper.js";
import { checkedRestResponse } from "./support/rest.js";
import { referenceWorker } from "./support/rpc.js";
import { useTurnHarness } from "./support/turn-harness.js";

// docs/protocol.md "HTTP+JSON" shows every route with curl: each command of
// that section runs here, in the order it is written, against the reference
// Worker, as curl would send it (its quoting, its options, the shell's
// variables), and must be answered by its method: a result, or an error of
// the method's own (a finished task's cancel), never a refusal by the edge.

useTurnHarness();

/** The fenced bash blocks of the section `heading` (up to the next heading of its level or above), in order. */
function bashBlocks(markdown: string, heading = "## HTTP+JSON"): string[] {
  const level = heading.slice(0, heading.indexOf(" ") + 1);
  const start = markdown.indexOf(`\n${heading}\n`);
  expect(start, `no "${heading}" section`).toBeGreaterThan(-1);
  const next = [...markdown.slice(start + 1).matchAll(/\n(#+) /g)].find((m) => m[1]!.length <= level.length - 1);
  const end = next ? start + 1 + next.index : markdown.length;
  return [...markdown.slice(start, end).matchAll(/```bash\n([\s\S]*?)```/g)].map((m) => m[1]!);
}

/** A command line split as a POSIX shell splits it: quotes, backslash-newlines, and `$NAME` expanded outside single quotes. */
function words(command: string, vars: Record<string, string>): string[] {
  const line = command.replace(/\\\n/g, " ");
  const out: string[] = [];
  let word: string | undefined;
  const expand = (text: string) =>
    text.replace(/\$([A-Z][A-Z0-9_]*)/g, (_, name: string) => {
      expect(vars, `the command uses $${name}`).toHaveProperty(name);
      return vars[name]!;
    });
  for (const [token] of line.matchAll(/'[^']*'|"(?:[^"\\]|\\.)*"|[^\s'"]+|\s+/g)) {
    if (/^\s+$/.test(token)) {
      if (word !== undefined) out.push(word);
      word = undefined;
    } else if (token.startsWith("'")) word = (word ?? "") + token.slice(1, -1);
    else if (token.startsWith('"')) word = (word ?? "") + expand(token.slice(1, -1).replace(/\\(.)/g, "$1"));
    else word = (word ?? "") + expand(token);
  }
  if (word !== undefined) out.push(word);
  return out;
}

/** The request curl sends for `args` (the options the examples use: -s, -N, -X, -H, -d). */
function curlRequest(args: string[]): Request {
  expect(args[0]).toBe("curl");
  let method: string | undefined;
  let body: string | undefined;
  let url: string | undefined;
  const headers = new Headers();
  for (let i = 1; i < args.length; i++) {
    const arg = args[i]!;
    if (arg === "-s" || arg === "-sN" || arg === "-N") continue;
    else if (arg === "-X") method = args[++i];
    else if (arg === "-H") {
      const [name, ...value] = args[++i]!.split(":");
      headers.set(name!, value.join(":").trim());
    } else if (arg === "-d") body = args[++i];
    else if (!arg.startsWith("-") && url === undefined) url = arg;
    else throw new Error(`the doc's curl uses ${arg}, which this spec does not read`);
  }
  // curl's own defaults: -d makes a POST with a form Content-Type unless one is given.
  if (body !== undefined && !headers.has("Content-Type")) headers.set("Content-Type", "application/x-www-form-urlencoded");
  return new Request(url!, { method: method ?? (body === undefined ? "GET" : "POST"), headers, ...(body === undefined ? {} : { body }) });
}

describe("docs/protocol.md's curl examples of HTTP+JSON", () => {
  it("each runs, in order, and is answered by its method", async () => {
    const blocks = bashBlocks(doc);
    // The section's own variables, then the token and the first answer's task.
    const vars: Record<string, string> = {};
    const caller = { identity: { key: `doc-${crypto.randomUUID()}` } };
    const answered: string[] = [];
    for (const block of blocks) {
      // The doc names a deployment and a gatekeeper; here they are the specs' own.
      const command = block.replaceAll("https://agents.example.com", ORIGIN).replaceAll("https://gatekeeper.example.com", GATEKEEPER).trim();
      const assignment = /^([A-Z][A-Z0-9_]*)=(\S+)$/.exec(command);
      if (assignment) {
        vars[assignment[1]!] = assignment[2]!;
        continue;
      }
      vars.TOKEN = await mintToken({ ...caller, claims: { jti: crypto.randomUUID() } });
      const request = curlRequest(words(command, vars));
      const response = await checkedRestResponse(request, await referenceWorker(request));
      const text = await response.text();
      const route = `${request.method} ${new URL(request.url).pathname}`;
      answered.push(`${route} ${response.status}`);
      // Answered by the method: a result, or the method's refusal of a finished task's cancel.
      if (route.endsWith(":cancel")) {
        expect(response.status, route).toBe(409);
        expect(JSON.parse(text).error.details[0].reason).toBe("TASK_NOT_CANCELABLE");
        continue;
      }
      expect(response.status, `${route}: ${text.slice(0, 300)}`).toBe(200);
      if (response.headers.get("Content-Type")?.startsWith("text/event-stream")) {
        // The snapshot first, with its id (hono writes an event's data: before its id:).
        expect(text, route).toMatch(/^data: \{"task":[^\n]*\nid: \d+\n/);
        expect(text, route).toContain('"TASK_STATE_COMPLETED"');
      }
      vars.TASK_ID ??= JSON.parse(text).task.id;
      vars.CONTEXT_ID ??= JSON.parse(text).task.contextId;
    }
    expect(answered.map((a) => a.split(" ")[0])).toEqual([
      "POST",
      "POST",
      "GET",
      "GET",
      "GET",
      "POST",
      "POST",
      "GET",
      "GET",
      "DELETE",
      "GET",
      "DELETE",
      "DELETE",
    ]);
  });
});

// The README's "Call it over A2A JSON-RPC" shows the first calls with curl: a held send, a
// streamed one (JSON-RPC) and a send over HTTP+JSON. Each runs here as written, against the
// reference Worker, and is answered with the completed task.
describe("the README's curl examples of calling it", () => {
  it("each runs and is answered with the completed task", async () => {
    const blocks = bashBlocks(readme, "### Call it over A2A JSON-RPC");
    const caller = { identity: { key: `readme-${crypto.randomUUID()}` } };
    const answered: string[] = [];
    for (const block of blocks) {
      const command = block.replaceAll("https://<your-worker>", ORIGIN).trim();
      const vars = { TOKEN: await mintToken({ ...caller, claims: { jti: crypto.randomUUID() } }) };
      const request = curlRequest(words(command, vars));
      const response = await referenceWorker(request);
      const text = await response.text();
      const route = `${request.method} ${new URL(request.url).pathname}`;
      answered.push(route);
      expect(response.status, `${route}: ${text.slice(0, 300)}`).toBe(200);
      if (response.headers.get("Content-Type")?.startsWith("text/event-stream")) {
        // A JSON-RPC stream: each data: a response with the request's id, the snapshot first, the end last.
        const events = [...text.matchAll(/^data: (.*)$/gm)].map((m) => JSON.parse(m[1]!));
        expect(events[0].result.task, route).toBeDefined();
        expect(events.at(-1).result.statusUpdate.status.state, route).toBe("TASK_STATE_COMPLETED");
        expect(
          events.some((e) => e.result.artifactUpdate?.artifact.artifactId === "answer"),
          route,
        ).toBe(true);
        continue;
      }
      const body = JSON.parse(text);
      // JSON-RPC answers a response whose result is the binding's answer; HTTP+JSON the answer itself.
      const task = (body.jsonrpc === "2.0" ? body.result : body).task;
      expect(task.status.state, route).toBe("TASK_STATE_COMPLETED");
      expect(task.artifacts[0].artifactId, route).toBe("answer");
    }
    expect(answered).toEqual(["POST /a2a", "POST /a2a", "POST /a2a/rest/assistant/message:send"]);
  });
});
