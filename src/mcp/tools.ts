import { jsonSchema, tool, type JSONSchema7, type ToolSet } from "ai";
import type { ToolContext } from "../plugin/contract.js";
import type { McpServerConfig, McpServers, McpToolListing } from "./servers.js";

/** Between a server's name and its tool's in the name the model sees. */
const MCP_NAME_SEPARATOR = "__";
/** What a tool name may hold for the model APIs (OpenAI-style function names). */
const TOOL_NAME = /^[A-Za-z0-9_-]{1,64}$/;

/**
 * One server's tools (already filtered by its config) as AI SDK tools, named
 * `<server>__<tool>`; each needs approval unless the config trusts it. The
 * server's progress notifications for a call are its tracker's (`progress`),
 * and the call's requests join the turn's trace (`trace`).
 */
export function serverTools(
  server: McpServerConfig,
  listings: readonly McpToolListing[],
  servers: McpServers,
  turn: Partial<Pick<ToolContext, "progress" | "trace">> = {},
): ToolSet {
  const tools: ToolSet = {};
  for (const listing of listings) {
    // The server's name may hold characters a model API refuses (`.`); the call uses its own.
    const name = `${server.name}${MCP_NAME_SEPARATOR}${listing.name.replace(/[^A-Za-z0-9_-]/g, "_")}`;
    if (!TOOL_NAME.test(name) || tools[name]) continue;
    tools[name] = tool({
      description: listing.description ?? listing.title ?? listing.name,
      inputSchema: jsonSchema<Record<string, unknown>>(objectSchema(listing.inputSchema)),
      needsApproval: !server.trustedTools.includes(listing.name),
      execute: async (args, { abortSignal }) =>
        modelView(await servers.call(server.name, listing.name, args, abortSignal, { onProgress: turn.progress, trace: turn.trace })),
    });
  }
  return tools;
}

/** MCP requires an object schema for a tool's input; a server that sends none gets the empty object. */
const objectSchema = (schema: McpToolListing["inputSchema"] | undefined): JSONSchema7 =>
  schema && typeof schema === "object" ? (schema as JSONSchema7) : { type: "object", properties: {} };

interface ContentBlock {
  type: string;
  text?: string;
  mimeType?: string;
  uri?: string;
  name?: string;
}

/**
 * What the model sees of a result: its structured content when it has one,
 * else its text, with binary blocks described rather than inlined. A result
 * the server marks as an error is thrown, so the model sees a failed call
 * (and the redactors see `{ error }`) as for any tool. Its size is bounded
 * where every tool's is, after this (`redactToolResults`).
 */
function modelView(result: { content?: unknown; structuredContent?: unknown; isError?: unknown }): unknown {
  const blocks = (Array.isArray(result.content) ? result.content : []) as ContentBlock[];
  const texts = blocks.filter((b) => b.type === "text" && typeof b.text === "string").map((b) => b.text!);
  if (result.isError === true) throw new McpToolFailed(texts.join("\n"));
  if (result.structuredContent !== undefined && result.structuredContent !== null) return result.structuredContent;
  if (texts.length === blocks.length) return texts.join("\n");
  return blocks.map((b) =>
    b.type === "text" ? (b.text ?? "") : { type: b.type, ...(b.mimeType ? { mimeType: b.mimeType } : {}), ...(b.uri ? { uri: b.uri } : {}) },
  );
}

/** A tool's own failure, in the server's words. */
class McpToolFailed extends Error {
  constructor(message: string) {
    super(message);
    this.name = "McpToolFailed";
  }
}
