// The README a new repository starts with (templates/starter/README.md) names
// only what that repository has: every link, and every path it writes in
// backticks, exists once `new` and the `add-tenant` commands the README shows
// have run (a link into node_modules/@dynamicagents/core: a file this package
// ships). Paths that only `npm start` or `npm install` make are listed here,
// with the README's word for when they appear.
import { existsSync, mkdtempSync, readdirSync, readFileSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join, relative } from "node:path";
import { fileURLToPath } from "node:url";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { addTenant } from "../../cli/add-tenant.mjs";
import { createRepository } from "../../cli/new-repo.mjs";

const ROOT = fileURLToPath(new URL("../..", import.meta.url));
const own = JSON.parse(readFileSync(join(ROOT, "package.json"), "utf8"));
const PACKAGE = `node_modules/${own.name}/`;
/** What the repository gets later, and from what the README says makes it. */
const LATER = new Map([[".dev/", "npm start"]]);

let root = "";
let readme = "";
beforeAll(async () => {
  root = join(mkdtempSync(join(tmpdir(), "starter-readme-")), "my-agents");
  await createRepository({ dir: root });
  readme = readFileSync(join(root, "README.md"), "utf8");
  // The tenants the README's own commands add.
  for (const [, tenant, flag] of readme.matchAll(/npx dynamicagents add-tenant ([a-z][a-z0-9-]*)(?: --(round|mcp))?/g)) {
    if (!existsSync(join(root, "src/tenants", tenant))) addTenant({ root, tenant, kind: /** @type {"plain" | "round" | "mcp"} */ (flag ?? "plain") });
  }
});
afterAll(() => rmSync(join(root, ".."), { recursive: true, force: true }));

/** Every file of the repository, relative to it. */
const filesOf = (dir, base = dir) =>
  readdirSync(dir, { withFileTypes: true }).flatMap((entry) =>
    entry.isDirectory() ? [`${relative(base, join(dir, entry.name))}/`, ...filesOf(join(dir, entry.name), base)] : [relative(base, join(dir, entry.name))],
  );

/** Whether the package ships `path` (npm always packs package.json and the README; `files` names the rest). */
const shipped = (path) =>
  ["package.json", "README.md"].includes(path) || own.files.some((entry) => path === entry || path.startsWith(`${entry.replace(/\/$/, "")}/`));

describe("the starter's README", () => {
  it("links only to what exists: files of the repository, or of the package it installs", () => {
    const links = [...readme.matchAll(/\]\(([^)\s]+)\)/g)].map((m) => m[1]);
    expect(links.length).toBeGreaterThan(0);
    for (const link of links) {
      expect(link, "no link leaves the repository").not.toMatch(/^[a-z]+:/i);
      const path = link.split("#")[0];
      if (path.startsWith(PACKAGE)) {
        const inPackage = path.slice(PACKAGE.length);
        expect(shipped(inPackage) && existsSync(join(ROOT, inPackage)), `${link}: a file the package ships`).toBe(true);
      } else expect(existsSync(join(root, path)), `${link}: a file of the repository`).toBe(true);
    }
  });

  it("writes only paths the repository has, NAME standing for any of its tenants", () => {
    const files = filesOf(root).filter((f) => !f.startsWith("node_modules"));
    const tenants = readdirSync(join(root, "src/tenants"));
    const paths = [...readme.matchAll(/`([^`\s]+)`/g)]
      .map((m) => m[1])
      // A path: a name with a folder or a file's extension; not a URL, not a package's name (`@dynamicagents/core`).
      .filter(
        (token) =>
          !token.includes(":") &&
          !token.startsWith("@") &&
          /^[\w.-]+(?:\/[\w.-]*)*$/.test(token) &&
          (token.includes("/") || /\.(ts|jsonc|json|md|mjs|vars)$/.test(token)),
      );
    expect(paths).toEqual(expect.arrayContaining(["src/tenants.ts", "src/mcp.ts", "vitest.config.ts", "src/tenants/NAME/index.ts", "test/NAME.spec.ts"]));
    for (const path of new Set(paths)) {
      if (LATER.has(path)) {
        expect(readme, `${path} is said to come from ${LATER.get(path)}`).toContain(LATER.get(path));
        continue;
      }
      const candidates = path.includes("NAME") ? tenants.map((t) => path.replaceAll("NAME", t)) : [path];
      // A bare file name (`agent.ts`) is one some folder of the repository has.
      const found = candidates.some((c) =>
        c.includes("/") ? files.includes(c) || files.includes(`${c}/`) : files.some((f) => f === c || f.endsWith(`/${c}`)),
      );
      expect(found, `${path}: the repository has it`).toBe(true);
    }
  });
});
