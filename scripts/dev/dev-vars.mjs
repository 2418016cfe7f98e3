// The Worker's local secrets: `.dev.vars` (git-ignored), which `wrangler dev`
// reads. `npm start` creates it, or adds what is missing, and never rewrites a
// line you wrote.
import { existsSync, readFileSync, writeFileSync } from "node:fs";
import { exportJWK, importJWK } from "jose";
import { freshSigningJwk } from "../keys.mjs";

const HEADER = [
  "# Local secrets for `wrangler dev`, created by `npm start`. Git-ignored: never commit this file.",
  "# A2A_SIGNING_KEY: this deployment's private card and callback key (`npm run keys` prints another).",
  "#   Changing it makes the dev gatekeeper refuse the agent until you run `npm start -- --unpin`.",
  "# GATEKEEPER_ORIGINS: the gatekeepers the Worker accepts calls from (the dev gatekeeper's origin).",
  "# OPENAI_BASE_URL / OPENAI_MODEL / OPENAI_API_KEY may go here too, to use a real model.",
];

/**
 * A minimal reader of the dotenv format wrangler uses: `KEY=value`,
 * `KEY='literal'`, `KEY="with \n escapes"`, `export KEY=…`, `#` comments.
 * @returns {Record<string, string>}
 */
export function parseDotenv(text) {
  /** @type {Record<string, string>} */
  const vars = {};
  const lines = text.split(/\r?\n/);
  for (let i = 0; i < lines.length; i++) {
    const match = /^\s*(?:export\s+)?([A-Za-z_][A-Za-z0-9_.-]*)\s*=\s*(.*)$/.exec(lines[i]);
    if (!match) continue;
    const [, name, rest] = match;
    const quote = rest[0];
    if (quote === "'" || quote === '"' || quote === "`") {
      // Quoted values may span lines until the closing quote.
      let value = rest.slice(1);
      while (!value.includes(quote) && i + 1 < lines.length) value += `\n${lines[++i]}`;
      value = value.slice(0, value.indexOf(quote) === -1 ? value.length : value.indexOf(quote));
      vars[name] = quote === '"' ? value.replace(/\\n/g, "\n").replace(/\\r/g, "\r") : value;
    } else {
      vars[name] = rest.replace(/\s+#.*$/, "").trim();
    }
  }
  return vars;
}

/**
 * `vars` as a file for `wrangler dev --env-file`, which reads it with dotenv
 * and then expands `$NAME` and `${NAME}`: each value is quoted literally and
 * its `$` escaped, so it reaches the Worker exactly as given.
 * @param {Record<string, string>} vars
 */
export function formatEnvFile(vars) {
  const lines = Object.entries(vars).map(([name, value]) => {
    if (!/^[A-Za-z_][A-Za-z0-9_]*$/.test(name)) throw new TypeError(`${JSON.stringify(name)} is not a variable name wrangler can read from an env file`);
    const text = String(value);
    // Single and backtick quotes are literal in dotenv; double quotes turn \n and \r into line breaks;
    // a backslash before the closing quote would escape it.
    const quote = ["'", "`"].find((q) => !text.includes(q)) ?? (text.includes('"') || /\\[nr]/.test(text) ? undefined : '"');
    if (!quote || /[\r\n]/.test(text) || text.endsWith("\\")) {
      throw new TypeError(`${name} cannot be written to an env file for wrangler as it is (a line break, a trailing backslash, or every kind of quote)`);
    }
    return `${name}=${quote}${text.replaceAll("$", "\\$")}${quote}`;
  });
  return `${lines.join("\n")}\n`;
}

/**
 * Makes sure `file` holds an A2A_SIGNING_KEY and a GATEKEEPER_ORIGINS,
 * creating the file or appending the missing ones.
 * @param {string} file
 * @param {{ gatekeeperOrigin: string }} options
 * @returns {Promise<{ file: string, created: boolean, added: string[], vars: Record<string, string>, signingKey: { kid: string, x: string }, gatekeeperOrigins: string[] | undefined }>}
 */
export async function ensureDevVars(file, { gatekeeperOrigin }) {
  const created = !existsSync(file);
  let text = created ? "" : readFileSync(file, "utf8");
  const vars = parseDotenv(text);
  const additions = [];
  const added = [];
  if (!vars.A2A_SIGNING_KEY) {
    vars.A2A_SIGNING_KEY = JSON.stringify(await freshSigningJwk());
    additions.push(`A2A_SIGNING_KEY='${vars.A2A_SIGNING_KEY}'`);
    added.push("A2A_SIGNING_KEY");
  }
  if (!vars.GATEKEEPER_ORIGINS) {
    vars.GATEKEEPER_ORIGINS = JSON.stringify([gatekeeperOrigin]);
    additions.push(`GATEKEEPER_ORIGINS='${vars.GATEKEEPER_ORIGINS}'`);
    added.push("GATEKEEPER_ORIGINS");
  }
  if (additions.length > 0) {
    if (created) text = `${HEADER.join("\n")}\n`;
    else if (text !== "" && !text.endsWith("\n")) text += "\n";
    writeFileSync(file, `${text}${additions.join("\n")}\n`, { mode: 0o600 });
  }
  return {
    file,
    created,
    added,
    vars,
    signingKey: await publicHalf(vars.A2A_SIGNING_KEY, file),
    gatekeeperOrigins: parseOrigins(vars.GATEKEEPER_ORIGINS),
  };
}

/** The kid and public `x` of the signing key, so the stack can tell its own Worker from anything else on the port. */
async function publicHalf(secret, file) {
  const fix = `fix it, or delete the line and \`npm start\` writes a fresh key (then run \`npm start -- --unpin\` once)`;
  let jwk;
  try {
    jwk = JSON.parse(secret);
  } catch {
    throw new Error(`A2A_SIGNING_KEY in ${file} is not JSON (a private Ed25519 JWK, as \`npm run keys\` prints): ${fix}`);
  }
  if (jwk?.kty !== "OKP" || jwk.crv !== "Ed25519" || typeof jwk.d !== "string" || typeof jwk.kid !== "string" || jwk.kid === "") {
    throw new Error(`A2A_SIGNING_KEY in ${file} must be a private Ed25519 JWK with a kid: ${fix}`);
  }
  let x;
  try {
    const key = await importJWK({ ...jwk, alg: "EdDSA" }, "EdDSA", { extractable: true });
    x = /** @type {string} */ ((await exportJWK(key)).x);
  } catch (error) {
    throw new Error(`A2A_SIGNING_KEY in ${file} cannot be imported (${error.message}): ${fix}`);
  }
  if (jwk.x !== undefined && jwk.x !== x) throw new Error(`A2A_SIGNING_KEY in ${file} is inconsistent (its x is not the public half of its d): ${fix}`);
  return { kid: jwk.kid, x };
}

function parseOrigins(raw) {
  try {
    const value = JSON.parse(raw);
    return Array.isArray(value) && value.every((v) => typeof v === "string") ? value : undefined;
  } catch {
    return undefined;
  }
}
