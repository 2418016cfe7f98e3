// The dev console in a real browser, against the real `npm start`: wrangler
// dev --local, the dev gatekeeper, the offline stand-in model, and the chat,
// its input piped. Headless Debian Chromium driven by playwright-core, on
// ports of its own (8960-8963) and a temporary --home, so nothing of a
// developer's own stack is touched. What it checks is what a person sees:
//   1. after a turn in the chat, the page lists the task, shows its timeline
//      (the Worker's events, read off wrangler's output, and the gatekeeper's
//      verified push) and its token counts (the Worker's model.call events);
//   2. a turn that asks the human is answered from the page, and the task
//      goes on to completed (the chat shows the reply too);
//   3. a turn is drawn as a waterfall under the trace id the chat printed:
//      a bar per model and tool call in the order they ran, and a question
//      answered from the page shown as its answer (`approved`);
//   4. a push the gatekeeper refused is a dead letter on the page, marked
//      failed in the waterfall, and the page's button has it delivered again;
//   5. a slow tool's progress (the dev MCP server's count_down) shows on the
//      page while the task works, and in the chat as the call starts and ends.
import { spawn } from "node:child_process";
import { randomUUID } from "node:crypto";
import { mkdtempSync, readFileSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { importJWK } from "jose";
import { chromium } from "playwright-core";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { endpointOf } from "../../src/a2a/wire.ts";
import { makeGatekeeperToken } from "../../src/testing/gatekeeper-token.ts";
import { postRpc, rpcBody } from "../../src/testing/rpc-client.ts";
import { assertPortFree } from "../../scripts/dev/http.mjs";
import { groupAlive } from "../../scripts/dev/wrangler.mjs";

const ROOT = new URL("../..", import.meta.url).pathname;
/** Ports no other test or script uses (grep test/ scripts/ bench/ before changing them). */
const PORTS = { worker: 8960, gatekeeper: 8961, model: 8962, mcp: 8963 };
const WORKER = `http://127.0.0.1:${PORTS.worker}`;
const GATEKEEPER = `http://127.0.0.1:${PORTS.gatekeeper}`;
const CONSOLE = `${GATEKEEPER}/console`;
const IDENTITY = { key: "browser-test", name: "browser-test", kind: "user", workspaceId: "local-dev" };
const CHROMIUM = "/usr/bin/chromium";
// As machines/node.md has them: without the background-networking ones Chromium keeps dialling out of a closed network.
const CHROMIUM_FLAGS = [
  "--headless",
  "--no-sandbox",
  "--disable-gpu",
  "--disable-quic",
  "--no-first-run",
  "--disable-background-networking",
  "--disable-component-update",
  "--disable-sync",
];
const UI_TIMEOUT_MS = 60_000;
const say = (line) => process.stderr.write(`[console-browser] ${line}\n`);

let home;
let profile;
/** @type {ReturnType<typeof startStack>} */
let stack;
/** @type {import("playwright-core").BrowserContext} */
let browser;
/** @type {import("playwright-core").Page} */
let page;
const pageErrors = [];

/** `npm start` with this file's ports and home, its chat fed line by line. */
function startStack() {
  const env = { ...process.env };
  // Offline by construction: whatever model the developer configured is not used here.
  for (const name of ["OPENAI_BASE_URL", "OPENAI_MODEL", "OPENAI_API_KEY", "OPENAI_FALLBACK_MODEL"]) delete env[name];
  const args = ["start", "--silent", "--", "--home", home, "--as", IDENTITY.key, "--verbose"];
  args.push(
    "--port",
    String(PORTS.worker),
    "--gatekeeper-port",
    String(PORTS.gatekeeper),
    "--model-port",
    String(PORTS.model),
    "--mcp-port",
    String(PORTS.mcp),
  );
  const child = spawn("npm", args, { cwd: ROOT, env, detached: true, stdio: ["pipe", "pipe", "pipe"] });
  const out = { stdout: "", stderr: "" };
  child.stdout.on("data", (chunk) => (out.stdout += chunk));
  child.stderr.on("data", (chunk) => (out.stderr += chunk));
  const exited = new Promise((resolve) => child.once("exit", (code, signal) => resolve({ code, signal })));
  let running = true;
  void exited.then(() => (running = false));
  return {
    out,
    exited,
    /** Types a line into the chat. */
    send: (line) => child.stdin.write(`${line}\n`),
    /** Resolves to the first match of `pattern` in stdout past `from`; fails with the output so far. */
    async waitFor(pattern, { from = 0, timeoutMs = UI_TIMEOUT_MS } = {}) {
      const deadline = Date.now() + timeoutMs;
      for (;;) {
        const match = pattern.exec(out.stdout.slice(from));
        if (match) return match;
        if (!running || Date.now() > deadline) throw new Error(`no ${pattern} in npm start's output (${running ? "timed out" : "it exited"}):\n${explain()}`);
        await new Promise((resolve) => setTimeout(resolve, 100));
      }
    },
    mark: () => out.stdout.length,
    quit() {
      if (!child.stdin.writableEnded) child.stdin.end("/quit\n");
    },
    kill() {
      if (running) process.kill(-(/** @type {number} */ (child.pid)), "SIGKILL");
    },
  };
}

function explain() {
  return `--- stdout\n${stack.out.stdout.slice(-6000)}\n--- stderr\n${stack.out.stderr.slice(-3000)}\n--- page errors\n${pageErrors.join("\n")}`;
}

/** The console's own view of one task, as its page fetches it. */
const detailOf = async (id) =>
  /** @type {any} */ (await page.evaluate((taskId) => fetch(`/console/api/task?tenant=assistant&id=${taskId}`).then((r) => r.json()), id));

/** Opens the task whose first message is `asked`, once the page lists it (it refreshes by itself). */
async function openTask(asked) {
  const link = page.locator(".task-link", { hasText: asked });
  await link.waitFor({ timeout: UI_TIMEOUT_MS });
  const id = await link.getAttribute("data-task");
  expect(id, "the page lists the task by its id").toBeTruthy();
  await link.click();
  // The task shown is this one, not the one shown before the click.
  await page
    .locator("#task-ids")
    .filter({ hasText: `task ${id} ` })
    .waitFor({ timeout: UI_TIMEOUT_MS });
  return /** @type {string} */ (id);
}

const stateShown = (state) => page.locator("#task-title .badge", { hasText: state }).waitFor({ timeout: UI_TIMEOUT_MS });
const timelineText = async () => (await page.locator("#timeline tr").allTextContents()).join("\n");

async function screenshot(name) {
  const file = join(tmpdir(), `dev-console-${name}.png`);
  await page.screenshot({ path: file, fullPage: true });
  say(`screenshot: ${file}`);
}

beforeAll(async () => {
  for (const [what, port] of Object.entries(PORTS)) await assertPortFree(port, `the browser test's ${what}`, "stop what holds it");
  home = mkdtempSync(join(tmpdir(), "console-browser-"));
  profile = mkdtempSync(join(tmpdir(), "console-browser-profile-"));
  stack = startStack();
  await stack.waitFor(/^ {2}console {5}(\S+)/m, { timeoutMs: 150_000 });
  await stack.waitFor(/\/quit +stop everything/);
  // playwright-core only drives a browser; this one is Debian's (test/browser/ensure-chromium.mjs), and the profile is new.
  browser = await chromium.launchPersistentContext(profile, { executablePath: CHROMIUM, headless: true, args: CHROMIUM_FLAGS });
  page = browser.pages()[0] ?? (await browser.newPage());
  await page.setViewportSize({ width: 1300, height: 1000 });
  page.on("pageerror", (error) => pageErrors.push(String(error)));
  page.on("console", (message) => {
    if (message.type() === "error") pageErrors.push(message.text());
  });
});

afterAll(async () => {
  await browser?.close();
  if (stack) {
    stack.quit();
    const timer = setTimeout(() => stack.kill(), 60_000);
    await stack.exited;
    clearTimeout(timer);
  }
  for (const dir of [home, profile]) if (dir) rmSync(dir, { recursive: true, force: true });
});

describe("the dev console of npm start, in Chromium", () => {
  it("is announced at start, and shows a chat turn's task with its timeline and token counts", async () => {
    expect(stack.out.stdout).toContain(`  console     ${CONSOLE}`);
    const asked = "hello from the browser test";
    const mark = stack.mark();
    stack.send(asked);
    // The answer as it streams (▹), or whole as the reply of record (▸) when nothing streamed.
    await stack.waitFor(/^assistant [▹▸] \[offline stand-in model\] .*"hello from the browser test"/m, { from: mark });

    await page.goto(CONSOLE);
    await page.locator("#live", { hasText: "live" }).waitFor({ timeout: UI_TIMEOUT_MS });
    await page.locator("#who", { hasText: `you: ${IDENTITY.key} · agent ${WORKER}` }).waitFor({ timeout: UI_TIMEOUT_MS });
    await page.locator("#tenants li", { hasText: /^assistant Assistant 1 task/ }).waitFor({ timeout: UI_TIMEOUT_MS });
    const id = await openTask(asked);
    await stateShown("completed");
    expect(await page.locator("#reply").textContent()).toContain('Assistant\'s offline stand-in here. You said: "hello from the browser test"');
    // The gatekeeper's verified push of the end is on the timeline in any case.
    await page.locator("#timeline tr", { hasText: "received a verified task push: completed" }).waitFor({ timeout: UI_TIMEOUT_MS });

    // Whatever the Worker logged for the task is on the page, and the token counts add up its model calls.
    const detail = await detailOf(id);
    const workerEvents = detail.timeline.filter((e) => e.source === "worker").map((e) => e.event);
    say(`the Worker logged ${workerEvents.length} event(s) for the task: ${workerEvents.join(", ")}`);
    const shown = await timelineText();
    for (const event of new Set(workerEvents)) expect(shown).toContain(event);
    const usage = async (name) => Number(await page.locator(`[data-usage="${name}"]`).textContent());
    expect(await usage("input tokens")).toBe(detail.usage.inputTokens);
    expect(await usage("output tokens")).toBe(detail.usage.outputTokens);
    expect(await usage("model calls")).toBe(detail.usage.modelCalls);
    expect(workerEvents).toEqual(expect.arrayContaining(["task.accepted", "turn.started", "model.call", "turn.finished"]));
    expect(detail.usage.inputTokens).toBeGreaterThan(0);
    expect(detail.usage.outputTokens).toBeGreaterThan(0);
    expect(shown).toMatch(/model\.call.*round 1, \S+: ok, \d+ steps?, \d+ in \/ \d+ out tokens, \d+ ms/);
    // --verbose printed the same events in the terminal, one line each.
    expect(stack.out.stdout).toMatch(new RegExp(`^ {2}\\[event\\] \\S+ +model\\.call +assistant task ${id.slice(0, 8)} +round 1, `, "m"));
    await screenshot("turn");
    expect(pageErrors).toEqual([]);
  });

  it("answers the agent's question from the page, and the turn resumes to completed", async () => {
    const asked = "ask me how to reply";
    const mark = stack.mark();
    stack.send(asked);
    await stack.waitFor(/^assistant \? How should I answer "ask me how to reply"\?/m, { from: mark });

    await openTask(asked);
    await stateShown("input required");
    await page.locator("#request").waitFor({ state: "visible", timeout: UI_TIMEOUT_MS });
    expect(await page.locator("#request-prompt").textContent()).toContain('How should I answer "ask me how to reply"?');
    expect(await page.locator("#request-options button").allTextContents()).toEqual(["Briefly", "In detail", "Never mind"]);
    await screenshot("asked");
    await page.locator('#request-options button[data-option="detailed"]').click();

    await stateShown("completed");
    expect(await page.locator("#reply").textContent()).toContain('I called ask_user, and you answered {"optionId":"detailed","label":"In detail"}');
    await page.locator("#timeline tr", { hasText: "console.answered" }).waitFor({ timeout: UI_TIMEOUT_MS });
    expect(await timelineText()).toMatch(/answered \S+ from the console: detailed/);
    // The Worker's own account of it: asked, then answered with the option chosen.
    expect(await timelineText()).toMatch(/hitl\.asked.*choice \S+, open until/);
    expect(await timelineText()).toMatch(/hitl\.answered.*: detailed/);
    // The answer in the task's messages is what was chosen, not the hitl/response part's JSON.
    expect(await page.locator("#messages li.user").allTextContents()).toEqual([expect.stringContaining(asked), "userdetailed"]);
    // The chat was following the same task: it shows the reply of record too.
    await stack.waitFor(/^assistant [▹▸] \[offline stand-in model\] .*you answered \{"optionId":"detailed"/m, { from: mark });
    await screenshot("answered");
    expect(pageErrors).toEqual([]);
  });

  it("draws a turn as a waterfall under the chat's trace id: a bar per model and tool call, in order, and an approval as its answer", async () => {
    const asked = "remember the waterfall";
    const mark = stack.mark();
    stack.send(asked);
    // The dev gatekeeper started the turn's trace; the chat names it.
    const [, traceId] = await stack.waitFor(/^ {2}… working \(task \S+, trace ([0-9a-f]{32})\)/m, { from: mark });
    await stack.waitFor(/^assistant \? May I run save_note/m, { from: mark });

    const id = await openTask(asked);
    await page.locator('#request-options button[data-option="approve"]').click();
    await stateShown("completed");
    await page.locator("#messages li.user", { hasText: /^userapproved$/ }).waitFor({ timeout: UI_TIMEOUT_MS });
    await page.locator("#waterfall-trace", { hasText: `trace ${traceId}` }).waitFor({ timeout: UI_TIMEOUT_MS });
    // The push attempt is the turn's last event: once it is drawn, so is everything before it.
    await page.locator('#waterfall .bar-row[data-kind="push"]').first().waitFor({ timeout: UI_TIMEOUT_MS });
    await page.locator("#waterfall .bar-row", { hasText: "approval: approved" }).waitFor({ timeout: UI_TIMEOUT_MS });
    await screenshot("waterfall");

    // What the page drew, and the console's own account of it, once both have every event (the page refreshes as they arrive).
    const drawnRows = () =>
      page.locator("#waterfall .bar-row").evaluateAll((found) =>
        found.map((row) => ({
          kind: row.dataset.kind,
          label: row.querySelector(".bar-label")?.textContent,
          left: Number.parseFloat(row.querySelector(".bar")?.style.left ?? ""),
        })),
      );
    let detail = await detailOf(id);
    let rows = await drawnRows();
    for (let tries = 0; tries < 20 && rows.length !== detail.waterfall.bars.length; tries++) {
      await new Promise((resolve) => setTimeout(resolve, 500));
      [detail, rows] = [await detailOf(id), await drawnRows()];
    }
    const count = (event) => detail.timeline.filter((e) => e.source === "worker" && e.event === event).length;
    const why = JSON.stringify({ rows, timeline: detail.timeline.filter((e) => e.source === "worker").map((e) => `${e.at} ${e.event} ${e.text}`) });
    // The page draws the console's bars, in their order: no bar starts left of the one above it.
    expect(
      rows.map((r) => [r.kind, r.label]),
      why,
    ).toEqual(detail.waterfall.bars.map((b) => [b.kind, b.label]));
    expect(
      rows.every((row, i) => i === 0 || row.left >= rows[i - 1].left),
      why,
    ).toBe(true);
    // A bar per model call (an exchange, its tool steps inside it) and per tool call the Worker logged.
    const bars = detail.waterfall.bars;
    const models = bars.filter((b) => b.kind === "model");
    const tools = bars.filter((b) => b.kind === "tool" || b.kind === "mcp");
    expect(models, why).toHaveLength(count("model.call"));
    expect(tools, why).toHaveLength(count("tool.call"));
    expect(tools.map((b) => b.label)).toEqual(expect.arrayContaining(["save_note", "current_time", "devtools__roll_dice"]));
    // In the right order: the model asks before a tool runs, and each tool call runs inside the model exchange that called it.
    expect(bars.findIndex((b) => b.kind === "model")).toBeLessThan(bars.findIndex((b) => b.kind === "tool" || b.kind === "mcp"));
    for (const tool of tools)
      expect(
        models.some((m) => m.startMs <= tool.startMs + 2 && tool.endMs <= m.endMs + 2),
        why,
      ).toBe(true);
    // The question the turn waited on sits between the exchange that asked it and the one its answer resumed.
    const question = bars.findIndex((b) => b.kind === "question");
    expect(bars.slice(0, question).some((b) => b.kind === "model")).toBe(true);
    expect(bars.slice(question).some((b) => b.kind === "model")).toBe(true);
    expect(rows[0]).toMatchObject({ kind: "turn", left: 0 });
    expect(pageErrors).toEqual([]);
  });

  it("shows a push the gatekeeper refused as a dead letter, and delivers it again from the page", async () => {
    // A turn sent as this caller, as the gatekeeper would (its own key, from --home), whose push config carries a
    // notification token the gatekeeper never issued: it answers 401, a permanent refusal, so the push is a dead letter.
    const keyFile = JSON.parse(readFileSync(join(home, "gatekeeper", "gatekeeper-key.json"), "utf8"));
    const privateKey = /** @type {CryptoKey} */ (await importJWK({ ...keyFile, alg: "EdDSA" }, "EdDSA"));
    const asked = "a reply nobody takes";
    const token = await makeGatekeeperToken({
      key: { kid: keyFile.kid, privateKey },
      gatekeeper: GATEKEEPER,
      endpoint: endpointOf(WORKER),
      tenant: "assistant",
      identity: IDENTITY,
    });
    const sent = await postRpc(
      endpointOf(WORKER),
      rpcBody("SendMessage", {
        tenant: "assistant",
        message: { messageId: randomUUID(), role: "ROLE_USER", parts: [{ text: asked }] },
        configuration: { taskPushNotificationConfig: { id: "unheard", url: `${GATEKEEPER}/a2a/notifications`, token: "never-issued-by-the-gatekeeper" } },
      }),
      { token, timeoutMs: 90_000 },
    );
    expect(sent.reply?.result?.task?.status?.state, sent.text).toBe("TASK_STATE_COMPLETED");

    await openTask(asked);
    await page.locator("#dead-letters").waitFor({ state: "visible", timeout: 90_000 });
    expect(await page.locator("#dead-letter-rows tr").allTextContents()).toEqual([expect.stringMatching(/^unheard\d+401\d{4}-/)]);
    // The Worker logged the refused attempt and the letter.
    await page.locator("#timeline tr", { hasText: /push\.dead_lettered.*config unheard, seq \d+ given up \(HTTP 401\)/ }).waitFor({ timeout: UI_TIMEOUT_MS });
    // The refused attempt is marked failed in the waterfall.
    await page.locator('#waterfall .bar-row[data-kind="push"][data-failed="true"]', { hasText: "push unheard" }).waitFor({ timeout: UI_TIMEOUT_MS });
    expect(await page.locator('#waterfall .bar-row[data-kind="push"][data-failed="true"] .bar.failed').count()).toBeGreaterThan(0);
    await screenshot("dead-letter");
    await page.locator("#redeliver").click();
    await page.locator("#timeline tr", { hasText: "received a verified task push: completed" }).waitFor({ timeout: 90_000 });
    await page.locator("#dead-letters").waitFor({ state: "hidden", timeout: 90_000 });
    expect(await timelineText()).toMatch(/asked for the dead letters again: push config console-\S+ set/);
    await page.locator("#timeline tr", { hasText: /push\.redelivered.*config console-\S+: 1 delivered, 0 given up/ }).waitFor({ timeout: UI_TIMEOUT_MS });
    expect(pageErrors).toEqual([]);
  });

  it("shows a working task's trackers live, and the chat a line as its tool call starts and ends", async () => {
    const asked = "count down 10";
    const mark = stack.mark();
    const began = Date.now();
    stack.send(asked);
    await stack.waitFor(/^ {2}→ calling devtools__count_down$/m, { from: mark });

    say(`the chat shows the count down starting ${Date.now() - began} ms after the line was sent`);
    await openTask(asked);
    say(`the page shows the task ${Date.now() - began} ms after`);
    const tracker = page.locator('#trackers li[data-tracker^="mcp:"]', { hasText: "devtools__count_down" });
    await tracker.waitFor({ timeout: UI_TIMEOUT_MS });
    // The server's progress notifications move it, a second at a time, as the page looks again.
    await tracker.locator('progress[max="10"]').waitFor({ timeout: UI_TIMEOUT_MS });
    await expect
      .poll(async () => Number(await tracker.locator("progress").getAttribute("value")), { timeout: UI_TIMEOUT_MS, interval: 200 })
      .toBeGreaterThanOrEqual(2);
    await screenshot("progress");
    await stack.waitFor(/^ {2}✓ devtools__count_down done$/m, { from: mark });
    // Each quick tool call after it has its lines too, as it starts and as it ends.
    await stack.waitFor(/^ {2}→ calling current_time with \{"timeZone":"UTC"\}$/m, { from: mark });
    await stack.waitFor(/^ {2}✓ current_time done: \{"utc":/m, { from: mark });
    await stateShown("completed");
    await page.locator("#progress").waitFor({ state: "hidden", timeout: UI_TIMEOUT_MS });
    expect(pageErrors).toEqual([]);
  });

  it("stops with npm start, leaving nothing running", async () => {
    const mark = stack.mark();
    stack.quit();
    const { code } = await stack.exited;
    expect(code, explain()).toBe(0);
    const stopped = /stopped wrangler dev \(process group (\d+), nothing left\)/.exec(stack.out.stdout.slice(mark));
    expect(stopped, explain()).not.toBeNull();
    expect(groupAlive(Number(stopped?.[1]))).toBe(false);
  });
});
