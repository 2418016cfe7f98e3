#!/usr/bin/env node
// The first half of `npm run test:browser`: Debian's Chromium at
// /usr/bin/chromium, installed with apt-get when it is missing (CI runs as
// root on a fresh machine). playwright-core never downloads a browser of its
// own (that fails offline), so without this one the browser test cannot run:
// it fails here, loudly, rather than being skipped.
import { spawnSync } from "node:child_process";
import { existsSync } from "node:fs";

const CHROMIUM = "/usr/bin/chromium";

function run(command, args) {
  process.stdout.write(`$ ${command} ${args.join(" ")}\n`);
  const result = spawnSync(command, args, { stdio: "inherit", env: { ...process.env, DEBIAN_FRONTEND: "noninteractive" } });
  if (result.error) process.stderr.write(`${command}: ${result.error.message}\n`);
  return result.status === 0;
}

if (!existsSync(CHROMIUM)) {
  process.stdout.write(`${CHROMIUM} is missing: installing Debian's chromium\n`);
  if (!run("apt-get", ["update"]) || !run("apt-get", ["install", "-y", "chromium"]) || !existsSync(CHROMIUM)) {
    process.stderr.write(`the browser test needs Debian's chromium at ${CHROMIUM}, and it could not be installed (apt-get needs root and the Debian mirror)\n`);
    process.exit(1);
  }
}
const version = spawnSync(CHROMIUM, ["--version"], { encoding: "utf8" });
if (version.status !== 0) {
  process.stderr.write(`${CHROMIUM} does not run: ${version.stderr || version.error?.message}\n`);
  process.exit(1);
}
process.stdout.write(`browser: ${version.stdout.trim()}\n`);
