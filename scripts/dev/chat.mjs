// The chat of `npm start`: each line is a turn to the current tenant, through
// the dev gatekeeper. The answer is shown as the agent writes it (the turn's
// stream), then the reply of record, the verified push, on its own line: one
// short line when it is the answer just streamed, the whole text otherwise. Each
// tenant has one conversation (its turns carry the contextId of the one
// before) until /new.
// A turn that asks for input (an approval, a choice, a question) is shown,
// and the next line answers it. Also the one-shot mode (`--once "text"`).
import { clearLine, createInterface, cursorTo } from "node:readline";
import { RpcFailed, hitlRequestOf, isReply, messageText, replyText, stateLabel } from "./session.mjs";
import { printable } from "./terminal.mjs";

const HELP = [
  "Type a message and press Enter: it goes to the current tenant as one A2A turn, in the tenant's conversation.",
  "When the agent asks (an approval, a choice, a question), your next line is the answer:",
  "  approve | yes | y, or reject | no | n [reason]; a choice's number or id; a question's answer in your words.",
  "  /tenant [name]   show or switch the tenant",
  "  /new             start a new conversation with the current tenant",
  "  /tasks           list your tasks at the current tenant",
  "  /cancel          cancel the running turn",
  "  /forget          erase this conversation at the current tenant: the agent forgets it",
  "  /forget-me       erase everything you left at the current tenant",
  "  /help            this help",
  "  /quit            stop everything and leave (Ctrl-C and Ctrl-D too)",
].join("\n");

/** `--once`'s exit code when the turn asks for input, which it cannot answer. */
export const NEEDS_INPUT_EXIT = 3;

const short = (id) => String(id).slice(0, 8);
/** What the reply of record says when it is the answer streamed above it. */
export const ARRIVED = "arrived as a signed push and verified: the answer above";
/** @param {string} a @param {string} b */
const sameText = (a, b) => a.trim() !== "" && a.trim() === b.trim();

/**
 * What the chat needs of a session (session.mjs `createSession`).
 * @typedef {ReturnType<typeof import("./session.mjs").createSession>} Session
 * @typedef {import("./session.mjs").HitlRequest} HitlRequest
 * @typedef {import("./session.mjs").HitlAnswer} HitlAnswer
 * @typedef {import("./session.mjs").AnswerChunk} AnswerChunk
 * @typedef {Pick<Session, "send" | "getTask">} OnceSession
 * @typedef {Pick<Session, "send" | "answer" | "listTasks" | "cancel" | "forgetContext" | "forgetMe" | "onOtherPush"> & { gatekeeperEvents?: import("node:events").EventEmitter }} ChatSession
 */

/**
 * A request as the chat shows it: who asks, the prompt, the numbered options
 * and how to answer. Not yet made printable: the caller prints it.
 * @param {HitlRequest} request
 * @param {string} tenant
 */
/**
 * The line for a tracker of the turn's progress that started or ended: each
 * tool call (an MCP server's too) and subtask, in the agent's words. Rounds
 * are the turn's own pace, and not shown.
 * @param {import("./session.mjs").TrackerChange} change
 */
export function trackerLine(change) {
  if (change.kind === "round") return undefined;
  const mark = change.change === "started" ? "→" : change.status === "completed" ? "✓" : "✗";
  return `  ${mark} ${change.message || change.id}`;
}

function describeRequest(request, tenant) {
  const options = request.options.map((o, i) => `    ${i + 1}. ${o.label}${o.label === o.id ? "" : ` (${o.id})`}`);
  const until = request.expiresAt ? ` (open until ${request.expiresAt})` : "";
  return [`${tenant} ? ${request.prompt}`, ...options, `  ${howToAnswer(request)}${until}`].join("\n");
}

/** @param {HitlRequest} request */
function howToAnswer(request) {
  if (request.requestKind === "approval") return "answer approve (yes, y) or reject (no, n), a reason after reject if you like";
  if (request.requestKind === "choice") return `answer with a number or an option id${request.allowFreeform ? ", or in your own words" : ""}`;
  return "answer in your own words";
}

/**
 * A line typed in answer to a request, as the answer to send, or what is
 * wrong with it (the request stays open; the person types again).
 * @param {HitlRequest} request
 * @param {string} line
 * @returns {{ answer: HitlAnswer } | { problem: string }}
 */
export function parseAnswer(request, line) {
  const text = line.trim();
  if (text === "") return { problem: `that was empty: ${howToAnswer(request)}` };
  if (request.requestKind === "question") return { answer: { text } };
  if (request.requestKind === "approval") {
    const verdict = /^(approve|yes|y|reject|no|n)(?:$|[\s:,.;!-]+(.*)$)/is.exec(text);
    if (verdict) {
      const approve = ["approve", "yes", "y"].includes(verdict[1].toLowerCase());
      const reason = verdict[2]?.trim();
      return { answer: approve ? { optionId: "approve" } : { optionId: "reject", ...(reason ? { text: reason } : {}) } };
    }
  }
  const option = optionNamed(request.options, text);
  if (option) return { answer: { optionId: option.id } };
  if (request.requestKind === "choice" && request.allowFreeform) return { answer: { text } };
  return { problem: `${JSON.stringify(text)} is not an answer here: ${howToAnswer(request)}` };
}

/** The option a line names: by number (1-based), by id, or by label (case ignored after an exact id). */
function optionNamed(options, text) {
  if (/^\d+$/.test(text)) return options[Number(text) - 1];
  const lower = text.toLowerCase();
  return options.find((o) => o.id === text) ?? options.find((o) => o.id.toLowerCase() === lower || o.label.toLowerCase() === lower);
}

/**
 * The answer as it is written: `<tenant> ▹ ` and the chunks on one line, run
 * on until the last chunk; a chunk that starts the answer over (a retried
 * step, another round) starts a new line. `write` prints as it is; `begin`
 * runs before a new line starts, `end` after one ended. `answer` is the text
 * of the latest answer streamed (since it last started over, or `forget`).
 * @param {{ write: (text: string) => void, begin?: () => void, end?: () => void }} sink
 */
function answerPrinter({ write, begin = () => {}, end = () => {} }) {
  let open = false;
  let answer = "";
  /** Ends the line being streamed, if one is: before anything else is printed. */
  const breakLine = () => {
    if (!open) return;
    open = false;
    write("\n");
    end();
  };
  return {
    get open() {
      return open;
    },
    get answer() {
      return answer;
    },
    /** A new turn: nothing of it streamed yet. */
    forget() {
      answer = "";
    },
    breakLine,
    /** @param {string} tenant @param {AnswerChunk} chunk */
    chunk(tenant, chunk) {
      answer = chunk.append ? answer + chunk.text : chunk.text;
      if (open && !chunk.append) breakLine();
      if (!open) {
        begin();
        write(`${tenant} ▹ `);
        open = true;
      }
      write(printable(chunk.text));
      if (chunk.lastChunk) breakLine();
    },
  };
}

/**
 * One turn, then done: prints the reply on stdout and resolves to the exit
 * code (0 only for a completed task; {@link NEEDS_INPUT_EXIT} when the turn
 * asks for input, printed on stderr: --once has no one to answer it).
 * Progress, the answer as it is written included, goes to stderr. Everything printed passes through
 * {@link printable}: most of it comes from the agent.
 * @param {{ session: OnceSession, tenant: string, text: string, timeoutMs: number, stdout?: NodeJS.WritableStream, stderr?: NodeJS.WritableStream }} options
 */
export async function runOnce({ session, tenant, text, timeoutMs, stdout = process.stdout, stderr = process.stderr }) {
  const streamed = answerPrinter({ write: (t) => stderr.write(t) });
  const note = (line) => {
    streamed.breakLine();
    stderr.write(`${printable(line)}\n`);
  };
  let turn;
  try {
    turn = await session.send(tenant, text);
  } catch (error) {
    note(`${tenant}: the turn was not accepted: ${error.message}`);
    return 1;
  }
  if (turn.taskId) note(`${tenant}: working… (task ${turn.taskId}, trace ${turn.traceId}; the answer streams here, the reply arrives as a signed push)`);
  turn.onStatus((status, state) => note(`  · ${status || stateLabel(state)}`));
  turn.onTracker((change) => {
    const line = trackerLine(change);
    if (line) note(line);
  });
  turn.onChunk((chunk) => streamed.chunk(tenant, chunk));
  const needsInput = (request) => {
    note(describeRequest(request, tenant));
    note(`${tenant}: task ${turn.taskId} is waiting for your answer, which --once cannot give: answer it in the chat (npm start without --once).`);
    return NEEDS_INPUT_EXIT;
  };
  let timer;
  const timeout = new Promise((resolve) => (timer = setTimeout(() => resolve(undefined), timeoutMs)));
  try {
    for (;;) {
      const stop = await Promise.race([turn.nextStop(), timeout]);
      if (!stop) return await afterTimeout(session, { tenant, turn, timeoutMs, note, needsInput });
      if (stop.kind === "expired") continue;
      if (stop.kind === "input") return needsInput(stop.request);
      if (isReply(stop.end)) {
        streamed.breakLine();
        stdout.write(`${printable(stop.end.text)}\n`);
        return 0;
      }
      note(`${tenant}: the task ended ${stateLabel(stop.end.state)}${stop.end.text ? `: ${stop.end.text}` : ""}`);
      return 1;
    }
  } finally {
    clearTimeout(timer);
  }
}

/** No verified push in time: what GetTask says (a request for input is still reported as one). */
async function afterTimeout(session, { tenant, turn, timeoutMs, note, needsInput }) {
  let state = "unknown";
  try {
    const task = await session.getTask(tenant, turn.taskId);
    if (task.status?.state === "TASK_STATE_INPUT_REQUIRED") return needsInput(hitlRequestOf(task.status.message));
    state = stateLabel(task.status?.state);
  } catch (error) {
    state = `unknown (GetTask failed: ${error.message})`;
  }
  note(`${tenant}: no verified push for task ${turn.taskId} within ${Math.round(timeoutMs / 1000)} s; GetTask says it is ${state}.`);
  return 1;
}

/**
 * The interactive chat. On a terminal, commands work while a turn runs and
 * the prompt shows how long it has been working; with piped input, lines are
 * taken one at a time, each turn waited for before the next line.
 * Resolves when the user leaves (/quit, Ctrl-D, end of input) or `stop()` is called.
 *   `tenantsFrom`: where the tenant list came from (the deployment's tenant registry), said with it
 * @param {{ session: ChatSession, tenant: string, tenants: string[], tenantsFrom?: string, input?: NodeJS.ReadableStream & { isTTY?: boolean }, output?: NodeJS.WritableStream & { isTTY?: boolean }, onInterrupt: () => void }} options
 */
export function runChat({ session, tenant: initialTenant, tenants, tenantsFrom, input = process.stdin, output = process.stdout, onInterrupt }) {
  const tty = Boolean(input.isTTY && output.isTTY);
  const rl = createInterface({ input, output, terminal: tty, historySize: tty ? 200 : 0 });
  let tenant = initialTenant;
  /** Each tenant's conversation: the contextId its next turn carries (none: a new one). */
  const conversations = new Map();
  /** The turn under way, and the request it waits on an answer to, if any. */
  /** @type {{ turn: import("./session.mjs").Turn, startedAt: number, asking?: HitlRequest } | undefined} */
  let running;
  let ticker;
  let closed = false;
  let resolveClosed;
  const finished = new Promise((resolve) => (resolveClosed = resolve));
  // Settles each time the running turn stops (asks, or ends): a piped line's work is done then.
  let stopped = deferred();
  const reached = () => {
    const previous = stopped;
    stopped = deferred();
    previous.resolve();
  };

  const promptText = () => {
    if (!running) return `${tenant}> `;
    if (running.asking) return `${tenant} [${running.turn.tenant === tenant ? "" : `${running.turn.tenant} `}answer]> `;
    const seconds = Math.floor((Date.now() - running.startedAt) / 1000);
    return `${tenant} [${running.turn.tenant === tenant ? "" : `${running.turn.tenant} `}working ${seconds}s]> `;
  };
  // The answer being written goes out as it comes, without a prompt after it until its line ends.
  const streamed = answerPrinter({
    write: (text) => {
      if (!closed) output.write(text);
    },
    begin: () => {
      if (!tty) return;
      clearLine(output, 0);
      cursorTo(output, 0);
    },
    end: () => {
      if (tty && !closed) rl.prompt(true);
    },
  });
  const refreshPrompt = () => {
    if (closed) return;
    rl.setPrompt(promptText());
    if (tty && !streamed.open) rl.prompt(true);
  };
  /**
   * Prints above the prompt without mangling what the user is typing. The one
   * way the chat prints: replies, statuses, ids and errors come from outside.
   */
  const say = (raw) => {
    if (closed) return;
    streamed.breakLine();
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
    const contextId = conversations.get(tenant);
    let turn;
    try {
      turn = await session.send(tenant, text, contextId ? { contextId } : {});
    } catch (error) {
      say(`  ! not sent: ${error.message}`);
      return;
    }
    if (turn.contextId && turn.contextId !== contextId) {
      conversations.set(turn.tenant, turn.contextId);
      say(`  conversation ${short(turn.contextId)} with ${turn.tenant} (/new starts another)`);
    }
    running = { turn, startedAt: Date.now() };
    streamed.forget();
    if (turn.taskId) {
      say(`  … working (task ${short(turn.taskId)}, trace ${turn.traceId}); the answer streams as it is written, the reply arrives as a signed push`);
    }
    turn.onStatus((status, state) => say(`  · ${status || stateLabel(state)}`));
    turn.onTracker((change) => {
      const line = trackerLine(change);
      if (line) say(line);
    });
    turn.onChunk((chunk) => {
      if (running?.turn === turn) streamed.chunk(turn.tenant, chunk);
    });
    if (tty) ticker = setInterval(refreshPrompt, 1000);
    refreshPrompt();
    const stop = stopped.promise;
    void follow(turn);
    await stop;
  }

  /** Follows a turn to its end: each request it makes is shown and waits for the next line. */
  async function follow(turn) {
    for (;;) {
      const stop = await turn.nextStop();
      const current = running;
      if (!current || current.turn !== turn) return;
      if (stop.kind === "expired") {
        if (current.asking?.requestId !== stop.requestId) continue;
        current.asking = undefined;
        say("  the request expired unanswered: the agent carries on without it");
      } else if (stop.kind === "input") {
        current.asking = stop.request;
        say(describeRequest(stop.request, turn.tenant));
      } else {
        clearInterval(ticker);
        running = undefined;
        const { end } = stop;
        // The reply of record is printed once: shown whole only when it is not the answer just streamed.
        if (isReply(end)) say(sameText(streamed.answer, end.text) ? `${turn.tenant} ▸ ${ARRIVED}` : `${turn.tenant} ▸ ${end.text}`);
        else say(`${turn.tenant} ✗ ${stateLabel(end.state)}${end.text ? `: ${end.text}` : ""}`);
      }
      refreshPrompt();
      reached();
      if (!running) return;
    }
  }

  /** A line while the turn waits on a request: the answer, sent to its task; done when the turn stops again. */
  async function answer(text) {
    const { turn, asking } = /** @type {{ turn: import("./session.mjs").Turn, asking: HitlRequest }} */ (running);
    const parsed = parseAnswer(asking, text);
    if ("problem" in parsed) return say(`  ${parsed.problem}`);
    const stop = stopped.promise;
    try {
      await session.answer(turn, asking, parsed.answer);
    } catch (error) {
      return say(`  ! the answer was not taken: ${error.message}`);
    }
    if (running?.asking === asking) running.asking = undefined;
    say(`  … answered (task ${short(turn.taskId)}); the agent goes on`);
    refreshPrompt();
    await stop;
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

  /**
   * Erases the tenant's conversation (`/forget`) or everything the caller left
   * there (`/forget-me`), and says what went. Not while a turn runs: its reply
   * would never come (an erased turn ends without a word).
   * @param {"context" | "caller"} scope
   */
  async function forget(scope) {
    if (running) return say(`  a turn is running (task ${short(running.turn.taskId)}): wait for its reply, or /cancel it, first`);
    const contextId = conversations.get(tenant);
    if (scope === "context" && !contextId) return say(`  no conversation with ${tenant} yet: nothing to forget`);
    try {
      const { erased, unerased } = scope === "context" ? await session.forgetContext(tenant, contextId) : await session.forgetMe(tenant);
      if (scope === "caller") conversations.clear();
      else conversations.delete(tenant);
      const what = scope === "context" ? `conversation ${short(contextId)} with ${tenant}` : `everything you left at ${tenant}`;
      const kept = unerased.map((u) => `${u.plugin} (${u.rows} rows)`).join(", ");
      say(
        `  forgot ${what}: ${erased.tasks} tasks, ${erased.messages} messages, ${erased.plugins} plugin rows${kept ? `; kept by plugins that cannot erase: ${kept}` : ""}`,
      );
    } catch (error) {
      say(`  ! not erased: ${error.message}`);
    }
  }

  /** @returns {Promise<void>} resolves when the line's work is done (a turn: when its reply landed). */
  async function handle(line) {
    const text = line.trim();
    if (text === "") return refreshPrompt();
    if (!text.startsWith("/")) {
      if (running?.asking) return answer(text);
      if (running) return say(`  a turn is still running (task ${short(running.turn.taskId)}): wait for its reply, or /cancel it`);
      return startTurn(text);
    }
    const [command, ...rest] = text.split(/\s+/);
    switch (command) {
      case "/tenant":
      case "/t": {
        const wanted = rest[0];
        const listed = `tenants${tenantsFrom ? ` (from ${tenantsFrom})` : ""}: ${tenants.join(", ")}`;
        if (!wanted) return say(`  talking to ${tenant}; ${listed}`);
        if (!tenants.includes(wanted)) return say(`  no tenant ${JSON.stringify(wanted)}; ${listed}`);
        tenant = wanted;
        say(`  now talking to ${tenant}`);
        return refreshPrompt();
      }
      case "/new":
        conversations.delete(tenant);
        return say(`  a new conversation with ${tenant} starts with your next message`);
      case "/tasks":
        return listTasks();
      case "/cancel":
        return cancel();
      case "/forget":
        return forget("context");
      case "/forget-me":
        return forget("caller");
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
    if (running?.asking) say(`  leaving task ${short(running.turn.taskId)} waiting for an answer`);
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
  // `say` lets others print above the prompt too (`--verbose`'s events).
  return { finished, close, say };
}

/** A promise with its resolve at hand. */
function deferred() {
  /** @type {() => void} */
  let resolve = () => {};
  const promise = new Promise((r) => (resolve = () => r(undefined)));
  return { promise, resolve };
}
