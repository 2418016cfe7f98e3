// Small HTTP helpers shared by the dev gatekeeper and the stand-in model server.
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

/** Rejects with {@link PortInUse} if `port` cannot be bound on 127.0.0.1 right now. */
export async function assertPortFree(port, what, hint) {
  const probe = createNetServer();
  await listen(probe, port, what, hint);
  await new Promise((resolve) => probe.close(resolve));
}

/** A free loopback port, from the kernel. Closed before use, so a race is possible but rare. */
export async function freePort() {
  const probe = createNetServer();
  const port = await listen(probe, 0, "probe", "");
  await new Promise((resolve) => probe.close(resolve));
  return port;
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
