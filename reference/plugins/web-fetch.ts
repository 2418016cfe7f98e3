import { definePlugin } from "@dynamicagents/core/plugin";
import { tool } from "ai";
import { z } from "zod";
import { scrubCredentials } from "./credential-scrub.js";
import { readPage } from "./page-reader.js";

const MAX_CHARS = 20_000;
// A schema defined once is converted to JSON Schema once per isolate, not per turn (docs/tools.md).
const fetchPageInput = z.object({ url: z.string().describe("absolute https URL") });

/**
 * Reads web pages, but only on origins the operator allowlisted: an agent
 * that fetches whatever a caller names is an open proxy into wherever the
 * Worker can reach.
 */
export const webFetchPlugin = (options: { allowlist: readonly string[]; fetch?: typeof fetch }) =>
  definePlugin({
    key: "web-fetch",
    capability: `You can read web pages with the fetch_page tool, on these sites only: ${options.allowlist.join(", ") || "(none configured)"}.`,
    toolFamilies: {
      web: () => ({
        tools: {
          fetch_page: tool({
            description: "Fetches a web page on an allowlisted site and returns its text.",
            inputSchema: fetchPageInput,
            execute: async ({ url }, { abortSignal }) => {
              let target: URL;
              try {
                target = new URL(url);
              } catch {
                return { error: `${JSON.stringify(url)} is not an absolute URL` };
              }
              if (!options.allowlist.includes(target.origin)) {
                return { error: `${target.origin} is not on this agent's allowlist (${options.allowlist.join(", ") || "empty"})` };
              }
              const page = await readPage(target, { fetch: options.fetch, signal: abortSignal });
              if (!page.ok) return { error: page.error };
              return { url: page.url, text: page.text.slice(0, MAX_CHARS), truncated: page.truncated || page.text.length > MAX_CHARS };
            },
          }),
        },
      }),
    },
    // Pages quote credentials surprisingly often, and so do errors quoting
    // pages (and URLs): the model never needs them, nor does a client
    // watching which page is read (its tracker shows the URL, redacted).
    onToolResult: ({ toolName, output }) => (toolName === "fetch_page" ? scrubCredentials(output) : undefined),
    progress: { showArguments: true },
  });
