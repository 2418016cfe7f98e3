// The chat of `npm start`: each line is a turn to the current tenant, through
// the dev gatekeeper; the answer is the verified push. Also the one-shot mode
// (`--once "text"`).
import { clearLine, createInterface, cursorTo } from "node:readline";
import { RpcFailed, messageText, replyText, stateLabel } from "./session.mjs";
import { printable } from "./terminal.mjs";

const HELP = [
  "Type a message and press Enter: it goes to the current tenant as one A2A turn.",
  "  /tenant [name]   show or switch the tenant",
  "  /tasks           list your tasks at the current tenant",
  "  /cancel          cancel the running turn",
  "  /help            this help",
  "  /quit            stop everything and leave (Ctrl-C and Ctrl-D too)",
].join("\n");

const short = (id) => String(id).slice(0, 8);

/**
 * What the chat needs of a session (session.mjs `createSession`).
 * @typedef {ReturnType<typeof import("./session.mjs").createSession>} Session
 * @typedef {Pick<Session, "send" | "getTask">} OnceSession
 * @typedef {Pick<Session, "send" | "listTasks" | "cancel" | "onOtherPush"> & { gatekeeperEvents?: import("node:events").EventEmitter }} ChatSession
 */

/**
 * One turn, then done: prints the reply on stdout and resolves to the exit
 * code (0 only for a completed task). Progress goes to stderr. Everything
 * printed passes through {@link printable}: most of it comes from the agent.
 * @param {{ session: OnceSession, tenant: string, text: string, timeoutMs: number, stdout?: NodeJS.WritableStream, stderr?: NodeJS.WritableStream }} options
 */
export async function runOnce({ session, tenant, text, timeoutMs, stdout = process.stdout, stderr = process.stderr }) {
  const note = (line) => stderr.write(`${printable(line)}\n`);
  let turn;
  try {
    turn = await session.send(tenant, text);
  } catch (error) {
    note(`${tenant}: the turn was not accepted: ${error.message}`);
    return 1;
  }
  note(`${tenant}: working… (task ${turn.taskId}; the reply arrives as a signed push)`);
  turn.onStatus((status, state) => note(`  · ${status || stateLabel(state)}`));
  let timer;
  const timeout = new Promise((resolve) => (timer = setTimeout(() => resolve(undefined), timeoutMs)));
  const end = await Promise.race([turn.done, timeout]);
  clearTimeout(timer);
  if (!end) {
    let state = "unknown";
    try {
      state = stateLabel((await session.getTask(tenant, turn.taskId)).status?.state);
    } catch (error) {
      state = `unknown (GetTask failed: ${error.message})`;
    }
    note(`${tenant}: no verified push for task ${turn.taskId} within ${Math.round(timeoutMs / 1000)} s; GetTask says it is ${state}.`);
    return 1;
  }
  if (end.state === "TASK_STATE_COMPLETED") {
    stdout.write(`${printable(end.text)}\n`);
    return 0;
  }
  note(`${tenant}: the task ended ${stateLabel(end.state)}${end.text ? `: ${end.text}` : ""}`);
  return 1;
}

/**
 * The interactive chat. On a terminal, commands work while a turn runs and
 * the prompt shows how long it has been working; with piped input, lines are
 * taken one at a time, each turn waited for before the next line.
 * Resolves when the user leaves (/quit, Ctrl-D, end of input) or `stop()` is called.
 * @param {{ session: ChatSession, tenant: string, tenants: string[], input?: NodeJS.ReadableStream & { isTTY?: boolean }, output?: NodeJS.WritableStream & { isTTY?: boolean }, onInterrupt: () => void }} options
 */
export function runChat({ session, tenant: initialTenant, tenants, input = process.stdin, output = process.stdout, onInterrupt }) {
  const tty = Boolean(input.isTTY && output.isTTY);
  const rl = createInterface({ input, output, terminal: tty, historySize: tty ? 200 : 0 });
  let tenant = initialTenant;
  /** @type {{ turn: import("./session.mjs").Turn, startedAt: number } | undefined} */
  let running;
  let ticker;
  let closed = false;
  let resolveClosed;
  const finished = new Promise((resolve) => (resolveClosed = resolve));

  const promptText = () => {
    if (!running) return `${tenant}> `;
    const seconds = Math.floor((Date.now() - running.startedAt) / 1000);
    return `${tenant} [${running.turn.tenant === tenant ? "" : `${running.turn.tenant} `}working ${seconds}s]> `;
  };
  const refreshPrompt = () => {
    if (closed) return;
    rl.setPrompt(promptText());
    if (tty) rl.prompt(true);
  };
  /**
   * Prints above the prompt without mangling what the user is typing. The one
   * way the chat prints: replies, statuses, ids and errors come from outside.
   */
  const say = (raw) => {
    if (closed) return;
    const text = printable(raw);
    if (tty) {
      clearLine(output, 0);
      cursorTo(output, 0);
      output.write(`${text}\n`);
      rl.prompt(true);
    } else {
      output.write(`${text}\n`);
    }
  };

  session.onOtherPush((push) => {
    const text = push.kind === "task" ? replyText(push.body.task) : messageText(push.body.statusUpdate?.status?.message);
    say(`  (push for an earlier task ${short(push.taskId)} at ${push.tenant}: ${stateLabel(push.state)}) ${text}`);
  });
  const onRefused = (refusal) => say(`  ! the gatekeeper refused a push (${refusal.check}): ${refusal.message}`);
  session.gatekeeperEvents?.on("refused", onRefused);

  async function startTurn(text) {
    let turn;
    try {
      turn = await session.send(tenant, text);
    } catch (error) {
      say(`  ! not sent: ${error.message}`);
      return;
    }
    running = { turn, startedAt: Date.now() };
    say(`  … working (task ${short(turn.taskId)}); the reply arrives as a signed push`);
    turn.onStatus((status, state) => say(`  · ${status || stateLabel(state)}`));
    if (tty) ticker = setInterval(refreshPrompt, 1000);
    refreshPrompt();
    const end = await turn.done;
    clearInterval(ticker);
    running = undefined;
    refreshPrompt();
    if (end.state === "TASK_STATE_COMPLETED") say(`${turn.tenant} ▸ ${end.text}`);
    else say(`${turn.tenant} ✗ ${stateLabel(end.state)}${end.text ? `: ${end.text}` : ""}`);
  }

  async function listTasks() {
    try {
      const page = await session.listTasks(tenant);
      if (page.tasks.length === 0) return say(`  no tasks yet at ${tenant}`);
      const lines = page.tasks.map((task) => {
        const asked = (task.history ?? []).find((m) => m.role === "ROLE_USER");
        const when = String(task.status?.timestamp ?? "")
          .replace("T", " ")
          .slice(0, 19);
        const request = messageText(asked).replace(/\s+/g, " ");
        return `  ${short(task.id)}  ${stateLabel(task.status?.state).padEnd(10)}  ${when}  ${request.length > 48 ? `${request.slice(0, 47)}…` : request}`;
      });
      say(`  your tasks at ${tenant} (${page.tasks.length} of ${page.totalSize}, newest first):\n${lines.join("\n")}`);
    } catch (error) {
      say(`  ! ListTasks failed: ${error.message}`);
    }
  }

  async function cancel() {
    if (!running) return say("  nothing is running");
    const { turn } = running;
    try {
      const task = await session.cancel(turn.tenant, turn.taskId);
      say(`  cancel requested: task ${short(turn.taskId)} is ${stateLabel(task.status?.state)}; its push follows`);
    } catch (error) {
      if (error instanceof RpcFailed && error.code === -32002) say(`  too late: task ${short(turn.taskId)} has already ended`);
      else say(`  ! CancelTask failed: ${error.message}`);
    }
  }

  /** @returns {Promise<void>} resolves when the line's work is done (a turn: when its reply landed). */
  async function handle(line) {
    const text = line.trim();
    if (text === "") return refreshPrompt();
    if (!text.startsWith("/")) {
      if (running) return say(`  a turn is still running (task ${short(running.turn.taskId)}): wait for its reply, or /cancel it`);
      return startTurn(text);
    }
    const [command, ...rest] = text.split(/\s+/);
    switch (command) {
      case "/tenant":
      case "/t": {
        const wanted = rest[0];
        if (!wanted) return say(`  talking to ${tenant}; tenants: ${tenants.join(", ")}`);
        if (!tenants.includes(wanted)) return say(`  no tenant ${JSON.stringify(wanted)}; tenants: ${tenants.join(", ")}`);
        tenant = wanted;
        say(`  now talking to ${tenant}`);
        return refreshPrompt();
      }
      case "/tasks":
        return listTasks();
      case "/cancel":
        return cancel();
      case "/help":
      case "/?":
        return say(HELP);
      case "/quit":
      case "/exit":
      case "/q":
        return close();
      default:
        return say(`  unknown command ${command}; /help lists them`);
    }
  }

  function close() {
    if (closed) return;
    closed = true;
    clearInterval(ticker);
    session.gatekeeperEvents?.off("refused", onRefused);
    rl.close();
    resolveClosed();
  }

  if (tty) {
    // On a terminal: commands act at once, even while a turn runs.
    rl.on("line", (line) => void handle(line));
    rl.on("SIGINT", () => onInterrupt());
  } else {
    // Piped: one line at a time, each turn waited for, like a script.
    const lines = [];
    let draining = false;
    let ended = false;
    const drain = async () => {
      if (draining) return;
      draining = true;
      while (lines.length && !closed) await handle(/** @type {string} */ (lines.shift()));
      draining = false;
      if (ended) close();
    };
    rl.on("line", (line) => {
      lines.push(line);
      void drain();
    });
    rl.once("close", () => {
      ended = true;
      if (!draining) close();
    });
  }
  rl.on("close", () => {
    if (tty) close();
  });

  say(HELP);
  refreshPrompt();
  return { finished, close };
}
