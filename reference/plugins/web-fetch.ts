import { definePlugin } from "@dynamicagents/core/plugin";
import { tool } from "ai";
import { z } from "zod";

const MAX_CHARS = 20_000;

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
            inputSchema: z.object({ url: z.string().describe("absolute https URL") }),
            execute: async ({ url }) => {
              let target: URL;
              try {
                target = new URL(url);
              } catch {
                return { error: `${JSON.stringify(url)} is not an absolute URL` };
              }
              if (!options.allowlist.includes(target.origin)) {
                return { error: `${target.origin} is not on this agent's allowlist (${options.allowlist.join(", ") || "empty"})` };
              }
              const response = await (options.fetch ?? fetch)(target, { redirect: "manual", headers: { Accept: "text/html, text/plain" } });
              if (!response.ok) return { error: `${target.href} answered HTTP ${response.status}` };
              const text = pageText(await response.text());
              return { url: target.href, text: text.slice(0, MAX_CHARS), truncated: text.length > MAX_CHARS };
            },
          }),
        },
      }),
    },
    // Pages quote credentials surprisingly often; the model never needs them.
    onToolResult: ({ toolName, output }) => {
      if (toolName !== "fetch_page" || typeof (output as { text?: unknown }).text !== "string") return undefined;
      const result = output as { text: string };
      return { ...result, text: result.text.replace(/\b(sk|pk|ghp|xox[abp])[-_][A-Za-z0-9_-]{16,}\b/g, "[redacted credential]") };
    },
  });

/** Visible text of an HTML page, roughly: scripts and styles dropped, tags removed, whitespace folded. */
function pageText(html: string): string {
  return html
    .replace(/<(script|style)[\s\S]*?<\/\1>/gi, " ")
    .replace(/<[^>]+>/g, " ")
    .replace(/&nbsp;/g, " ")
    .replace(/&amp;/g, "&")
    .replace(/&lt;/g, "<")
    .replace(/&gt;/g, ">")
    .replace(/\s+/g, " ")
    .trim();
}
