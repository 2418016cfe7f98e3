// Small HTTP helpers shared by the dev gatekeeper and the stand-in model server.
import { readFileSync } from "node:fs";
import { createServer as createNetServer } from "node:net";

export class PortInUse extends Error {
  name = "PortInUse";
  /**
   * @param {number} port
   * @param {string} what  who wanted the port, for the message
   * @param {string} hint  how to pick another one
   */
  constructor(port, what, hint) {
    super(`port ${port} (${what}) is already in use on 127.0.0.1: stop whatever is listening there (another \`npm start\` or \`wrangler dev\`?) or ${hint}`);
    this.port = port;
  }
}

/**
 * Listens on 127.0.0.1:`port` (0 for any free port) and resolves to the port
 * actually bound; a taken port rejects with {@link PortInUse}.
 * @param {import("node:http").Server | import("node:net").Server} server
 */
export function listen(server, port, what, hint) {
  return new Promise((resolve, reject) => {
    const onError = (error) => {
      server.off("listening", onListening);
      reject(error.code === "EADDRINUSE" ? new PortInUse(port, what, hint) : error);
    };
    const onListening = () => {
      server.off("error", onError);
      resolve(/** @type {import("node:net").AddressInfo} */ (server.address()).port);
    };
    server.once("error", onError);
    server.once("listening", onListening);
    server.listen(port, "127.0.0.1");
  });
}

/** Several ports taken at once: each with the flag that moves it, so one run says everything to change. */
export class PortsInUse extends PortInUse {
  name = "PortsInUse";
  /** @param {{ port: number, what: string, flag: string }[]} busy  at least two */
  constructor(busy) {
    super(busy[0].port, busy[0].what, `choose another with ${busy[0].flag}`);
    this.ports = busy.map((b) => b.port);
    const width = Math.max(...busy.map((b) => b.what.length));
    const rows = busy.map((b) => `  ${String(b.port).padEnd(5)}  ${b.what.padEnd(width)}  moved with ${b.flag} N`);
    this.message = [
      `ports ${this.ports.join(", ")} are already in use on 127.0.0.1: stop whatever is listening there (another \`npm start\` or \`wrangler dev\`?) or move each:`,
      ...rows,
    ].join("\n");
  }
}

/**
 * Rejects unless every port of `wanted` can be bound on 127.0.0.1 right now,
 * naming all that cannot at once (one: {@link PortInUse}; more:
 * {@link PortsInUse}), each with the flag that moves it. Two servers given
 * the same port are refused too.
 * @param {{ port: number, what: string, flag: string }[]} wanted
 */
export async function assertPortsFree(wanted) {
  for (const [i, one] of wanted.entries()) {
    const other = wanted.slice(i + 1).find((w) => w.port === one.port);
    if (other) throw new Error(`${one.flag} and ${other.flag} both name port ${one.port}: ${one.what} and ${other.what} need a port each`);
  }
  const busy = [];
  for (const one of wanted) {
    try {
      await assertPortFree(one.port, one.what, `choose another with ${one.flag}`);
    } catch (error) {
      if (!(error instanceof PortInUse)) throw error;
      busy.push(one);
    }
  }
  if (busy.length === 1) throw new PortInUse(busy[0].port, busy[0].what, `choose another with ${busy[0].flag}`);
  if (busy.length > 1) throw new PortsInUse(busy);
}

/** Rejects with {@link PortInUse} if `port` cannot be bound on 127.0.0.1 right now. */
export async function assertPortFree(port, what, hint) {
  const probe = createNetServer();
  await listen(probe, port, what, hint);
  await new Promise((resolve) => probe.close(resolve));
}

/**
 * A free loopback port for a process that binds it later (wrangler, workerd).
 * Drawn at random from below the kernel's ephemeral range: a port from there
 * (what `listen(0)` gives) can be handed to any other socket's bind(0) or
 * connect() between this probe and the real bind, which made a restarted
 * wrangler fail with "Address already in use" under load. Falls back to the
 * kernel's choice if no port below the range is free after a few draws.
 */
export async function freePort() {
  const [low, high] = unassignedRange();
  for (let draw = 0; draw < 20 && high > low; draw++) {
    const port = low + Math.floor(Math.random() * (high - low));
    try {
      await assertPortFree(port, "probe", "");
      return port;
    } catch (error) {
      if (!(error instanceof PortInUse)) throw error;
    }
  }
  const probe = createNetServer();
  const port = await listen(probe, 0, "probe", "");
  await new Promise((resolve) => probe.close(resolve));
  return port;
}

/** Ports the kernel never picks on its own: from 10000 to the start of its ephemeral range (Linux; 32768 elsewhere). */
function unassignedRange() {
  let ephemeralLow = 32768;
  try {
    ephemeralLow = Number(readFileSync("/proc/sys/net/ipv4/ip_local_port_range", "utf8").trim().split(/\s+/)[0]) || ephemeralLow;
  } catch {
    // not Linux: IANA's dynamic range starts higher still (49152)
  }
  return [10_000, ephemeralLow];
}

export class BodyTooLarge extends Error {
  name = "BodyTooLarge";
}

/**
 * Reads a request body as UTF-8, refusing more than `max` bytes (the
 * connection is not read further, so a runaway sender cannot fill memory).
 * @param {import("node:http").IncomingMessage} req
 */
export function readBody(req, max) {
  return new Promise((resolve, reject) => {
    const declared = Number(req.headers["content-length"]);
    if (Number.isFinite(declared) && declared > max) {
      reject(new BodyTooLarge(`body of ${declared} bytes exceeds ${max}`));
      return;
    }
    const chunks = [];
    let size = 0;
    req.on("data", (chunk) => {
      size += chunk.length;
      if (size > max) {
        req.pause();
        reject(new BodyTooLarge(`body exceeds ${max} bytes`));
        return;
      }
      chunks.push(chunk);
    });
    req.on("end", () => resolve(Buffer.concat(chunks).toString("utf8")));
    req.on("error", reject);
  });
}

/**
 * @param {import("node:http").ServerResponse} res
 * @param {number} status
 * @param {unknown} body  serialised as JSON
 * @param {Record<string, string>} [headers]
 */
export function sendJson(res, status, body, headers = {}) {
  const text = JSON.stringify(body);
  res.writeHead(status, { "Content-Type": "application/json", "Content-Length": Buffer.byteLength(text), ...headers });
  res.end(text);
}

/** Closes a server and every connection it still holds. */
export function closeServer(server) {
  return new Promise((resolve) => {
    server.closeAllConnections?.();
    server.close(() => resolve(undefined));
  });
}
