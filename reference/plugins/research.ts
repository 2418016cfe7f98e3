import { definePlugin, type SubtaskType } from "@dynamicagents/core/plugin";
import { z } from "zod";
import { scrubCredentials } from "./credential-scrub.js";
import { readPage } from "./page-reader.js";

const MAX_PAGE_CHARS = 12_000;

const readPageParams = z.object({
  url: z.url().describe("the page to read, on an allowlisted site"),
  question: z.string().min(1).describe("what to look for on the page"),
});

export interface ResearchOptions {
  allowlist: readonly string[];
  fetch?: typeof fetch;
}

/**
 * `read_page`: fetch a page from an allowlisted origin, then have the model
 * summarise what it says about the question. Two chunks, so a subagent
 * evicted after the fetch does not fetch again. The summary is the metered
 * call (`ctx.generate`): it costs the caller as the researcher's own calls
 * do, under the same budgets, with the subagent's model config.
 */
function readPageRecipe(options: ResearchOptions): SubtaskType<typeof readPageParams>["recipe"] {
  return async (ctx, params) => {
    const page = await ctx.chunk("fetch", async () => {
      const target = new URL(params.url);
      if (!options.allowlist.includes(target.origin)) {
        throw new Error(`${target.origin} is not on the research allowlist (${options.allowlist.join(", ") || "empty"})`);
      }
      const read = await readPage(target, { fetch: options.fetch });
      if (!read.ok) throw new Error(read.error);
      return { url: read.url, text: read.text.slice(0, MAX_PAGE_CHARS) };
    });
    await ctx.workspace.write(`pages/${encodeURIComponent(page.url)}.txt`, page.text);
    const summary = await ctx.chunk("summarize", async () => {
      const result = await ctx.generate({
        instructions: "Summarise what the page says about the question, in at most five sentences. Say so plainly if it says nothing about it.",
        messages: [{ role: "user", content: `Question: ${params.question}\n\nPage ${page.url}:\n${page.text}` }],
      });
      if (!result.ok) throw new Error(`the summary failed on every model: ${result.errors.join("; ")}`);
      return result.text;
    });
    return { url: page.url, summary };
  };
}

/** Research by delegation: the researcher reads pages through subagents, several at once. */
export const researchPlugin = (options: ResearchOptions) =>
  definePlugin({
    key: "research",
    capability: `You can have pages read and summarised by delegating read_page subtasks (sites: ${options.allowlist.join(", ") || "none"}).`,
    subtaskTypes: [
      {
        key: "read_page",
        description: "Read one web page on an allowlisted site and summarise what it says about a question.",
        params: readPageParams,
        // 2: pages read with a byte cap and the linear tag scanner (entities decoded).
        recipeVersion: 2,
        recipe: readPageRecipe(options),
      },
    ],
    // A summary can quote a credential the page held; the round loop passes
    // every read_page result (and error) through here before the model sees it.
    onToolResult: ({ toolName, output }) => (toolName === "read_page" ? scrubCredentials(output) : undefined),
  });
