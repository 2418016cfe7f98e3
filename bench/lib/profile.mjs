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
  await send("Profiler.enable");
  await send("Profiler.setSamplingInterval", { interval: 200 });
  await send("Profiler.start");
  return {
    stop: async () => {
      const { result } = await send("Profiler.stop");
      socket.close();
      return result.profile;
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

/** Writes `profile` to `file` and returns the summary's lines. */
export async function saveProfile(profile, file) {
  await writeFile(file, JSON.stringify(profile));
  const { samples, self, total } = heaviest(profile);
  const line = ({ share, fn }) => `  ${(100 * share).toFixed(1).padStart(5)}%  ${fn}`;
  return [`${samples} samples, written to ${file}`, "self:", ...self.map(line), "total (with callees):", ...total.map(line)];
}
