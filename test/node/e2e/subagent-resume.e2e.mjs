// A subagent killed mid-recipe resumes after its last finished chunk: the
// whole Worker (workerd, Durable Objects, the subagent facet, the local
// Workflow engine) is SIGKILLed while a subtask's second chunk (the summary)
// waits on the model, then started again on the same storage. The caller's
// Durable Object notices the lost turn, re-drives it, and the subtask
// finishes without fetching its page again. (Inside the test pool an eviction
// of a facet also stops the spec itself, so this runs against wrangler dev.)
import { mkdtempSync, rmSync } from "node:fs";
import { createServer } from "node:http";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { exportJWK, generateKeyPair } from "jose";
import { afterAll, expect, it } from "vitest";
import { JWKS_PATH, ROUND_RESULT_PATTERN, endpointOf } from "../../../src/a2a/wire.ts";
import { makeGatekeeperToken } from "../../../src/testing/gatekeeper-token.ts";
import { NOTIFY_PATH, jsonRpc } from "../../../scripts/dev/gatekeeper.mjs";
import { freePort, listen } from "../../../scripts/dev/http.mjs";
import { groupAlive, spawnWrangler } from "../../../scripts/dev/wrangler.mjs";
import { freshSigningJwk } from "../../../scripts/keys.mjs";
import { canReadCommandLines, commandLinesHolding } from "../support/proc.mjs";
import { chatCompletionBody, chatCompletionReply } from "../../../src/testing/chat-completion.ts";

const ROOT = new URL("../../..", import.meta.url).pathname;
const home = mkdtempSync(join(tmpdir(), "subagent-resume-"));
const stops = [];
afterAll(async () => {
  for (const stop of stops) await stop();
  rmSync(home, { recursive: true, force: true });
});

it("resumes the subtask of a killed Worker after its finished chunk", { timeout: 300_000 }, async () => {
  /** @type {{ pages: number, summaries: number, hung: import("node:http").ServerResponse[] }} */
  const seen = { pages: 0, summaries: 0, hung: [] };
  let pushed;
  const done = new Promise((resolve) => (pushed = resolve));
  const gatekeeperKey = await generateKeyPair("EdDSA", { crv: "Ed25519", extractable: true });
  const jwk = { ...(await exportJWK(gatekeeperKey.publicKey)), kid: "e2e-gk", alg: "EdDSA", use: "sig" };
  let origin = "";
  /** @param {import("../../../src/testing/chat-completion.ts").ChatReply} answer */
  const completion = (answer) => chatCompletionBody(answer, "e2e");
  const text = (m) => (typeof m?.content === "string" ? m.content : Array.isArray(m?.content) ? m.content.map((p) => p.text ?? "").join("") : "");
  const server = createServer(async (req, res) => {
    let body = "";
    for await (const chunk of req) body += chunk;
    if (req.url === JWKS_PATH) return res.end(JSON.stringify({ keys: [jwk] }));
    if (req.url === "/page-1") {
      seen.pages++;
      return res.end("<p>The page says the answer is 42.</p>");
    }
    if (req.url === "/v1/chat/completions") {
      const request = JSON.parse(body);
      /** @param {import("../../../src/testing/chat-completion.ts").ChatReply} answer */
      const answerWith = (answer) => {
        const sent = chatCompletionReply(completion(answer), request.stream === true);
        res.setHeader("content-type", sent.contentType);
        return res.end(sent.body);
      };
      if (text(request.messages[0]).startsWith("Summarise")) {
        // The first summary never comes back: the Worker is killed while it waits.
        if (++seen.summaries === 1) return void seen.hung.push(res);
        return answerWith({ content: "It says 42." });
      }
      if (request.messages.some((m) => ROUND_RESULT_PATTERN.test(text(m)))) return answerWith({ content: "resumed: the answer is 42" });
      const args = { subtasks: [{ type: "read_page", params: { url: `${origin}/page-1`, question: "what is the answer?" } }] };
      return answerWith({ toolCalls: [{ name: "delegate", arguments: args }] });
    }
    if (req.url === NOTIFY_PATH) {
      const push = JSON.parse(body);
      res.end();
      if (push.task) pushed(push.task);
      return;
    }
    res.statusCode = 404;
    res.end();
  });
  origin = `http://127.0.0.1:${await listen(server, 0, "the e2e gatekeeper and model", "")}`;
  stops.push(() => new Promise((resolve) => server.close(resolve)));

  const signing = await freshSigningJwk();
  const port = await freePort();
  const start = async (name) => {
    const worker = spawnWrangler({
      root: ROOT,
      port,
      inspectorPort: await freePort(),
      persistTo: join(home, "state"),
      logFile: join(home, `${name}.log`),
      secrets: { A2A_SIGNING_KEY: JSON.stringify(signing) },
      vars: {
        GATEKEEPER_ORIGINS: JSON.stringify([origin]),
        OPENAI_BASE_URL: `${origin}/v1`,
        OPENAI_MODEL: "e2e",
        FETCH_ALLOWLIST: JSON.stringify([origin]),
      },
    });
    stops.push(() => worker.stop());
    await worker.ready(signing, 120_000);
    return worker;
  };

  const first = await start("first");
  // The key reached the Worker (it serves its public half) through a file, not a command line.
  if (canReadCommandLines) expect(commandLinesHolding(signing.d)).toEqual([]);
  const endpoint = endpointOf(first.origin);
  const token = await makeGatekeeperToken({
    key: { kid: jwk.kid, privateKey: gatekeeperKey.privateKey },
    gatekeeper: origin,
    endpoint,
    tenant: "researcher",
    identity: { key: "e2e-resume" },
    expiresIn: 10 * 60,
  });
  const accepted = await jsonRpc(endpoint, token, "SendMessage", {
    tenant: "researcher",
    message: { messageId: "resume-1", role: "ROLE_USER", parts: [{ text: "what is the answer?" }] },
    configuration: { returnImmediately: true, taskPushNotificationConfig: { url: `${origin}${NOTIFY_PATH}`, token: "n" } },
  });
  expect(accepted.result.task.status.state).toBe("TASK_STATE_SUBMITTED");

  // The subagent fetched its page (chunk 1, recorded) and waits on the summary (chunk 2).
  for (let i = 0; i < 600 && seen.summaries === 0; i++) await new Promise((r) => setTimeout(r, 100));
  expect(seen).toMatchObject({ pages: 1, summaries: 1 });

  const pgid = /** @type {number} */ (first.pgid);
  process.kill(-pgid, "SIGKILL");
  for (let i = 0; i < 50 && groupAlive(pgid); i++) await new Promise((r) => setTimeout(r, 100));
  for (const res of seen.hung) res.destroy();

  await start("second");
  const task = await Promise.race([
    done,
    new Promise((_, reject) => setTimeout(() => reject(new Error("no terminal push within 240 s of the restart")), 240_000)),
  ]);
  expect(task.status.state).toBe("TASK_STATE_COMPLETED");
  expect(task.artifacts[0].parts[0].text).toBe("resumed: the answer is 42");
  // The finished chunk was not run again; the unfinished one was.
  expect(seen.pages).toBe(1);
  expect(seen.summaries).toBe(2);
});
