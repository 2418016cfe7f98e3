import { definePlugin } from "@dynamicagents/core/plugin";
import { tool } from "ai";
import { z } from "zod";

// A schema defined once is converted to JSON Schema once per isolate, not per turn (docs/tools.md).
const currentTimeInput = z.object({ timeZone: z.string().describe("IANA time zone name").default("UTC") });

/** Tells the time anywhere: models do not know what time it is. */
export const clockPlugin = (now: () => Date = () => new Date()) =>
  definePlugin({
    key: "clock",
    capability: "You can look up the current date and time in any IANA time zone with the current_time tool.",
    // Nothing secret goes in or comes out: a client may watch both.
    progress: { showArguments: true, showResults: true },
    toolFamilies: {
      clock: () => ({
        tools: {
          current_time: tool({
            description: "The current date and time, in UTC and in the given IANA time zone (for example Asia/Tokyo).",
            inputSchema: currentTimeInput,
            execute: async ({ timeZone }) => {
              const at = now();
              try {
                const local = new Intl.DateTimeFormat("en-GB", { timeZone, dateStyle: "full", timeStyle: "long" }).format(at);
                return { utc: at.toISOString(), timeZone, local };
              } catch {
                return { utc: at.toISOString(), error: `${JSON.stringify(timeZone)} is not an IANA time zone` };
              }
            },
          }),
        },
      }),
    },
  });
