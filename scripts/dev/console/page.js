// The dev console's page (served by scripts/dev/console.mjs). Plain browser
// JavaScript, no build and no framework. Everything it shows comes from the
// agent or the model, so it is set as text, never parsed as HTML.

const $ = (id) => document.getElementById(id);
const state = { overview: undefined, selected: undefined, detail: undefined, refreshing: false, again: false };

/** An element with attributes and children (strings become text nodes). */
function el(tag, attrs = {}, ...children) {
  const node = document.createElement(tag);
  for (const [name, value] of Object.entries(attrs)) {
    if (value === undefined || value === false) continue;
    if (name.startsWith("on")) node.addEventListener(name.slice(2), value);
    else node.setAttribute(name, value === true ? "" : String(value));
  }
  for (const child of children.flat()) if (child !== undefined && child !== null) node.append(child);
  return node;
}

const short = (id) => String(id ?? "").slice(0, 8);
const stateName = (s) =>
  String(s ?? "unknown")
    .replace(/^TASK_STATE_/, "")
    .toLowerCase()
    .replace(/_/g, " ");
const stateBadge = (s) => el("span", { class: `badge ${stateName(s).replace(/ /g, "-")}` }, stateName(s));
const timeOf = (at) => /T(\d\d:\d\d:\d\d\.\d{3})/.exec(at ?? "")?.[1] ?? String(at ?? "");
const tokensOf = (u) => `${u.inputTokens} in / ${u.outputTokens} out tokens`;

async function getJson(url) {
  const response = await fetch(url, { headers: { Accept: "application/json" } });
  const body = await response.json();
  if (!response.ok) throw Object.assign(new Error(body.error ?? `HTTP ${response.status}`), { gone: body.gone === true });
  return body;
}

async function postJson(url, value) {
  const response = await fetch(url, { method: "POST", headers: { "Content-Type": "application/json" }, body: JSON.stringify(value) });
  const body = await response.json();
  if (!response.ok) throw new Error(body.error ?? `HTTP ${response.status}`);
  return body;
}

/** Reloads the lists and the selected task; a refresh asked for meanwhile runs once more after it. */
async function refresh() {
  if (state.refreshing) {
    state.again = true;
    return;
  }
  state.refreshing = true;
  try {
    state.overview = await getJson("/console/api/overview");
    renderOverview();
    if (state.selected) {
      try {
        state.detail = await getJson(`/console/api/task?tenant=${encodeURIComponent(state.selected.tenant)}&id=${encodeURIComponent(state.selected.id)}`);
        renderTask();
      } catch (error) {
        if (error.gone) showGone(state.selected.id);
        else $("task-title").textContent = `Task ${short(state.selected.id)}: ${error.message}`;
      }
    }
  } catch (error) {
    $("who").textContent = `the console could not load: ${error.message}`;
  } finally {
    state.refreshing = false;
    if (state.again) {
      state.again = false;
      void refresh();
    }
  }
}

let pending;
/** Many events arrive together (a turn's end): one refresh for them all. */
function refreshSoon() {
  clearTimeout(pending);
  pending = setTimeout(refresh, 200);
}

function renderOverview() {
  const o = state.overview;
  $("who").textContent = `you: ${o.identity.key} · agent ${o.agent}`;
  $("tenants").replaceChildren(
    ...o.tenants.map((t) =>
      el(
        "li",
        {},
        el("strong", {}, t.tenant),
        ` ${t.name ?? ""} `,
        el("span", { class: "muted" }, `${t.total} task${t.total === 1 ? "" : "s"}`),
        t.error ? el("div", { class: "error" }, t.error) : undefined,
        t.description ? el("div", { class: "muted hint" }, t.description) : undefined,
        t.mcp?.length ? el("ul", { class: "plain mcp", "data-mcp": t.tenant }, t.mcp.map(mcpRow)) : undefined,
      ),
    ),
  );
  const conversations = o.conversations.map((c) =>
    el(
      "div",
      { class: "conversation" },
      el("h4", {}, `${c.tenant} · conversation ${short(c.contextId)}`),
      c.tasks.map((t) => {
        const selected = state.selected && state.selected.id === t.id;
        return el(
          "button",
          { type: "button", class: `task-link${selected ? " selected" : ""}`, "data-task": t.id, onclick: () => select(t.tenant, t.id) },
          stateBadge(t.state),
          " ",
          el("span", { class: "mono" }, short(t.id)),
          t.usage.modelCalls ? el("span", { class: "muted" }, ` · ${tokensOf(t.usage)}`) : undefined,
          t.deadLetters ? el("span", { class: "error" }, ` · ${t.deadLetters} dead letter${t.deadLetters === 1 ? "" : "s"}`) : undefined,
          el("span", { class: "asked" }, t.asked || "(no text)"),
        );
      }),
    ),
  );
  $("conversations").replaceChildren(...(conversations.length ? conversations : [el("p", { class: "muted" }, "No tasks yet.")]));
  $("events-seen").textContent =
    `${o.eventsSeen} event${o.eventsSeen === 1 ? "" : "s"} read off the Worker's log and seen by the gatekeeper since npm start began; the newest:`;
  $("recent").replaceChildren(
    ...o.recent
      .slice()
      .reverse()
      .map((e) => timelineRow(e, true)),
  );
}

/** The known statuses get their colour; anything else a newer Worker says is shown plain. */
const MCP_STATUSES = new Set(["ready", "unavailable", "dropped"]);

/** One MCP server of a tenant, as its latest mcp.server event left it: name, status, tools or the reason. */
function mcpRow(s) {
  const known = MCP_STATUSES.has(s.status) ? s.status : "other";
  const detail = s.status === "ready" ? `${s.tools} tool${s.tools === 1 ? "" : "s"}` : (s.reason ?? "");
  return el(
    "li",
    { "data-server": s.server, title: `latest mcp.server event at ${s.at}` },
    el("span", { class: "muted" }, "MCP "),
    el("span", { class: "mono" }, s.server),
    " ",
    el("span", { class: `badge mcp-${known}` }, s.status),
    detail ? el("span", { class: "muted" }, ` ${detail}`) : undefined,
    el("span", { class: "muted" }, ` · ${timeOf(s.at)}`),
  );
}

function timelineRow(entry, withTask) {
  return el(
    "tr",
    { class: `${entry.source} group-${entry.group}` },
    el("td", { class: "time" }, timeOf(entry.at)),
    el("td", { class: "event" }, entry.event),
    withTask ? el("td", { class: "mono muted" }, [entry.tenant, entry.taskId ? short(entry.taskId) : undefined].filter(Boolean).join(" ")) : undefined,
    el("td", { class: "text" }, entry.text),
  );
}

function renderTask() {
  const d = state.detail;
  $("no-task").hidden = true;
  $("task").hidden = false;
  $("task-title").replaceChildren(`${d.tenant} task ${short(d.id)} `, stateBadge(d.state));
  $("task-ids").textContent = `task ${d.id} · conversation ${d.contextId}${d.updatedAt ? ` · changed ${d.updatedAt}` : ""}`;
  const u = d.usage;
  $("task-usage").replaceChildren(
    ...[
      ["model calls", u.modelCalls],
      ["input tokens", u.inputTokens],
      ["output tokens", u.outputTokens],
      ["tool calls", u.toolCalls],
      ["model time", `${Math.round(u.modelMs)} ms`],
    ].map(([name, value]) => el("div", {}, el("dt", {}, name), el("dd", { "data-usage": name }, String(value)))),
  );
  renderRequest(d);
  renderProgress(d);
  renderDeadLetters(d);
  $("messages").replaceChildren(...d.messages.map((m) => el("li", { class: m.role }, el("span", { class: "role" }, m.role), m.text || "(no text)")));
  $("reply-section").hidden = !d.reply;
  $("reply").textContent = d.reply;
  renderWaterfall(d.waterfall);
  $("timeline").replaceChildren(...d.timeline.map((e) => timelineRow(e, false)));
  $("timeline-empty").hidden = d.timeline.length > 0;
}

/**
 * The task's turns on one time axis: a bar per turn, model call, tool call, MCP call, subtask,
 * question to a human and push attempt, from its start to its end; failures marked, and what still
 * runs drawn faint. Positions are set through the CSSOM (the page's CSP allows no style attributes).
 */
function renderWaterfall(w) {
  $("waterfall-trace").textContent = w?.traceId ? `trace ${w.traceId}${w.startedAt ? ` · from ${timeOf(w.startedAt)}` : ""}` : "";
  $("waterfall-empty").hidden = Boolean(w?.bars.length);
  if (!w?.bars.length) return $("waterfall").replaceChildren();
  const span = Math.max(1, w.spanMs);
  const rows = w.bars.map((b) => {
    const bar = el("div", {
      class: `bar kind-${b.kind}${b.failed ? " failed" : ""}${b.running ? " running" : ""}`,
      title: `${b.label}: ${b.detail} (${Math.round(b.startMs)}–${Math.round(b.endMs)} ms)`,
    });
    bar.style.left = `${(100 * b.startMs) / span}%`;
    bar.style.width = `${(100 * (b.endMs - b.startMs)) / span}%`;
    return el(
      "div",
      { class: `bar-row${b.nested ? " nested" : ""}${b.failed ? " failed" : ""}`, "data-kind": b.kind, "data-failed": b.failed ? "true" : undefined },
      el("span", { class: "bar-label", title: b.detail }, b.label),
      el("div", { class: "track" }, bar),
    );
  });
  const axis = el("div", { class: "axis" }, el("span", {}, ""), el("span", {}, `${Math.round(w.spanMs)} ms`));
  $("waterfall").replaceChildren(...rows, axis);
}

/** The selected task is not there any more (its conversation or its caller was erased, or retention took it): nothing of it stays on the page. */
function showGone(id) {
  state.selected = undefined;
  state.detail = undefined;
  history.replaceState(null, "", location.pathname);
  $("task").hidden = true;
  $("no-task").hidden = false;
  $("no-task").replaceChildren(
    el("p", { class: "muted", "data-gone": id }, `Task ${short(id)} is gone: its conversation was erased (/forget, /forget-me), or retention deleted it.`),
  );
}

/** The request the task waits on: an approval's or a choice's options as buttons, and free text where it is allowed. */
function renderRequest(d) {
  const r = d.request;
  $("request").hidden = !r;
  if (!r) return;
  const key = `${d.id}/${r.requestId ?? ""}`;
  if ($("request").dataset.key === key) return; // keep what is being typed
  $("request").dataset.key = key;
  $("request-prompt").textContent = `${r.prompt}${r.expiresAt ? ` (open until ${r.expiresAt})` : ""}`;
  $("request-options").replaceChildren(
    ...r.options.map((o) => el("button", { type: "button", "data-option": o.id, onclick: () => sendAnswer({ optionId: o.id }) }, o.label)),
  );
  $("request-form").hidden = !r.allowFreeform;
  $("request-text").value = "";
  $("request-note").textContent = "";
}

/** A working task's trackers (its tool calls, MCP calls, subtasks and rounds), as its status shows them now. */
function renderProgress(d) {
  const p = d.progress;
  $("progress").hidden = !p;
  if (!p) return;
  const a = p.aggregate;
  $("progress-aggregate").textContent = a ? `${a.message ? `${a.message}: ` : ""}${a.progress}${a.total === undefined ? "" : ` of ${a.total}`}` : "";
  $("trackers").replaceChildren(
    ...p.trackers.map((t) =>
      el(
        "li",
        { "data-tracker": t.id, "data-status": t.status },
        el("span", { class: `badge tracker-${t.status}` }, t.status),
        " ",
        el("span", { class: "muted mono" }, t.kind),
        " ",
        t.message || t.id,
        t.total === undefined
          ? t.progress === undefined
            ? undefined
            : el("span", { class: "muted" }, ` · ${t.progress} done`)
          : el("progress", { value: t.progress ?? 0, max: t.total, title: `${t.progress ?? 0} of ${t.total}` }),
      ),
    ),
  );
}

function renderDeadLetters(d) {
  $("dead-letters").hidden = d.deadLetterList.length === 0;
  $("dead-letter-rows").replaceChildren(
    ...d.deadLetterList.map((l) =>
      el("tr", {}, el("td", {}, String(l.configId)), el("td", {}, String(l.seq)), el("td", {}, String(l.status)), el("td", {}, String(l.at))),
    ),
  );
}

async function sendAnswer(answer) {
  const d = state.detail;
  const note = $("request-note");
  for (const button of document.querySelectorAll("#request button")) button.disabled = true;
  note.textContent = "sending…";
  try {
    const result = await postJson("/console/api/answer", { tenant: d.tenant, taskId: d.id, requestId: d.request.requestId, ...answer });
    note.textContent = `answered: the task is ${stateName(result.state)}`;
    $("request").dataset.key = "";
  } catch (error) {
    note.textContent = `not sent: ${error.message}`;
  } finally {
    for (const button of document.querySelectorAll("#request button")) button.disabled = false;
    refreshSoon();
  }
}

async function redeliver() {
  const d = state.detail;
  $("redeliver").disabled = true;
  try {
    const result = await postJson("/console/api/redeliver", { tenant: d.tenant, taskId: d.id });
    $("redeliver-note").textContent = `push config ${result.configId} set: the dead letters are on their way`;
  } catch (error) {
    $("redeliver-note").textContent = `not done: ${error.message}`;
  } finally {
    $("redeliver").disabled = false;
    refreshSoon();
  }
}

function select(tenant, id) {
  state.selected = { tenant, id };
  location.hash = `task=${encodeURIComponent(tenant)}/${encodeURIComponent(id)}`;
  $("request").dataset.key = "";
  void refresh();
}

function selectionFromHash() {
  const match = /^#task=([^/]+)\/(.+)$/.exec(location.hash);
  return match ? { tenant: decodeURIComponent(match[1]), id: decodeURIComponent(match[2]) } : undefined;
}

function connect() {
  const source = new EventSource("/console/api/stream");
  source.onopen = () => {
    $("live").textContent = "live";
    $("live").className = "badge on";
    refreshSoon();
  };
  source.onerror = () => {
    $("live").textContent = "reconnecting";
    $("live").className = "badge off";
  };
  source.onmessage = () => refreshSoon();
}

document.addEventListener("DOMContentLoaded", () => {
  state.selected = selectionFromHash();
  $("request-form").addEventListener("submit", (event) => {
    event.preventDefault();
    const text = $("request-text").value.trim();
    if (text) void sendAnswer({ text });
  });
  $("redeliver").addEventListener("click", () => void redeliver());
  connect();
  void refresh();
  // Task states also change without an event (or before the Worker emits any): look again now and then,
  // and every second while the task shown works, so its progress moves as it does.
  setInterval(refresh, 5000);
  setInterval(() => {
    const d = state.detail;
    if (d && !d.terminal && !d.waiting && state.selected?.id === d.id) void refresh();
  }, 1000);
});
