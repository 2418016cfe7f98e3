// A CPU profile of the Worker's isolate while the bench drives it, taken over
// the Chrome DevTools protocol on wrangler's inspector port (BENCH_PROFILE_S,
// bench/README.md "Profiling"): where a turn's time goes, by function.
import { writeFile } from "node:fs/promises";

/**
 * Starts V8's sampling profiler in the isolate behind `inspectorPort`;
 * `stop()` resolves to the profile (`.cpuprofile` JSON, which Chrome DevTools
 * and speedscope open).
 * @param {number} inspectorPort
 */
export async function startProfile(inspectorPort) {
  const targets = /** @type {{ webSocketDebuggerUrl: string }[]} */ (await (await fetch(`http://127.0.0.1:${inspectorPort}/json`)).json());
  // wrangler's inspector proxy refuses a connection without an Origin it knows.
  const socket = new WebSocket(targets[0].webSocketDebuggerUrl, { headers: { Origin: "http://127.0.0.1" } });
  const pending = new Map();
  let next = 0;
  socket.addEventListener("message", (event) => {
    const message = JSON.parse(String(event.data));
    pending.get(message.id)?.(message);
    pending.delete(message.id);
  });
  await new Promise((resolve, reject) => {
    socket.addEventListener("open", resolve, { once: true });
    socket.addEventListener("error", () => reject(new Error(`no inspector on port ${inspectorPort}`)), { once: true });
  });
  const send = (method, params = {}) =>
    new Promise((resolve) => {
      const id = ++next;
      pending.set(id, resolve);
      socket.send(JSON.stringify({ id, method, params }));
    });
  await send("Debugger.enable");
  await send("Profiler.enable");
  await send("Profiler.setSamplingInterval", { interval: 200 });
  await send("Profiler.start");
  return {
    stop: async () => {
      const { result } = await send("Profiler.stop");
      // The bundle's own text, so its time can be told by the module each line came from.
      const scriptIds = new Set(result.profile.nodes.map((node) => node.callFrame.scriptId).filter((id) => id && id !== "0"));
      const sources = {};
      for (const scriptId of scriptIds) {
        const source = await send("Debugger.getScriptSource", { scriptId });
        if (source.result?.scriptSource) sources[scriptId] = source.result.scriptSource;
      }
      socket.close();
      return { ...result.profile, sources };
    },
  };
}

/**
 * The profile's heaviest functions: `self` (time in the function itself) and
 * `total` (with what it called), each as a share of the samples.
 * @param {{ nodes: any[], samples: number[] }} profile
 */
function heaviest(profile, count = 25) {
  const byId = new Map(profile.nodes.map((node) => [node.id, node]));
  const parent = new Map();
  for (const node of profile.nodes) for (const child of node.children ?? []) parent.set(child, node.id);
  const hits = new Map();
  for (const id of profile.samples) hits.set(id, (hits.get(id) ?? 0) + 1);
  const name = (node) =>
    `${node.callFrame.functionName || "(anonymous)"} ${node.callFrame.url ? `${node.callFrame.url.split("/").at(-1)}:${node.callFrame.lineNumber + 1}` : ""}`.trim();
  const self = new Map();
  const total = new Map();
  for (const [id, n] of hits) {
    self.set(name(byId.get(id)), (self.get(name(byId.get(id))) ?? 0) + n);
    const seen = new Set();
    for (let at = id; at !== undefined; at = parent.get(at)) {
      const key = name(byId.get(at));
      if (!seen.has(key)) total.set(key, (total.get(key) ?? 0) + n);
      seen.add(key);
    }
  }
  const top = (map) =>
    [...map]
      .sort((a, b) => b[1] - a[1])
      .slice(0, count)
      .map(([fn, n]) => ({ share: n / profile.samples.length, fn }));
  return { samples: profile.samples.length, self: top(self), total: top(total) };
}

/**
 * Time by module: each sample's innermost frame of the bundle, named by the
 * module section it lies in (esbuild marks each with a `// path` comment);
 * a native frame counts for the bundle frame that called it.
 * @param {{ nodes: any[], samples: number[], sources?: Record<string, string> }} profile
 */
function byModule(profile, count = 25) {
  const sections = new Map();
  for (const [scriptId, text] of Object.entries(profile.sources ?? {})) {
    const marks = [];
    text.split("\n").forEach((line, index) => {
      const mark = /^\/\/ ((?:node_modules|src|reference|scripts)\/\S+)$/.exec(line);
      if (mark) marks.push({ line: index, module: mark[1].replace(/^node_modules\/(\.pnpm\/)?/, "") });
    });
    sections.set(scriptId, marks);
  }
  const moduleAt = (frame) => {
    const marks = sections.get(frame.scriptId);
    if (!marks?.length) return undefined;
    let low = 0;
    let high = marks.length - 1;
    if (frame.lineNumber < marks[0].line) return "(bundle prelude)";
    while (low < high) {
      const mid = (low + high + 1) >> 1;
      if (marks[mid].line <= frame.lineNumber) low = mid;
      else high = mid - 1;
    }
    return marks[low].module;
  };
  const byId = new Map(profile.nodes.map((node) => [node.id, node]));
  const parent = new Map();
  for (const node of profile.nodes) for (const child of node.children ?? []) parent.set(child, node.id);
  const hits = new Map();
  for (const id of profile.samples) {
    let module;
    for (let at = id; at !== undefined && !module; at = parent.get(at)) module = moduleAt(byId.get(at).callFrame);
    const name = module ?? byId.get(id).callFrame.functionName ?? "(unknown)";
    const key = module ? (byId.get(id).callFrame.url ? module : `${module} (native)`) : `${name || "(anonymous)"} (no bundle frame)`;
    hits.set(key, (hits.get(key) ?? 0) + 1);
  }
  return [...hits]
    .sort((a, b) => b[1] - a[1])
    .slice(0, count)
    .map(([fn, n]) => ({ share: n / profile.samples.length, fn }));
}

/** Writes `profile` to `file` and returns the summary's lines. */
export async function saveProfile(profile, file) {
  await writeFile(file, JSON.stringify(profile));
  const { samples, self, total } = heaviest(profile);
  const line = ({ share, fn }) => `  ${(100 * share).toFixed(1).padStart(5)}%  ${fn}`;
  return [
    `${samples} samples, written to ${file}`,
    "self:",
    ...self.map(line),
    "total (with callees):",
    ...total.map(line),
    "by module (a native call counted for the module that made it):",
    ...byModule(profile).map(line),
  ];
}
