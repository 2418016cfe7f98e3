// What a newcomer writes after `npx dynamicagents add-tenant weather`: the
// tenant's one custom tool (its plugin, replacing the skeleton) and the two
// lines of its spec that name the tool and what the answer must contain.
// The CI proof (starter.mjs) applies these and counts them: under forty lines.
import { readFileSync, writeFileSync } from "node:fs";
import { join } from "node:path";

export const TENANT = "weather";

const PLUGIN = `import { definePlugin } from "@dynamicagents/core/plugin";
import { tool } from "ai";
import { z } from "zod";

// A table stands in for a weather service.
const FORECASTS: Record<string, string> = { paris: "sunny, 21 °C", oslo: "snow, -3 °C" };

export const weatherPlugin = () =>
  definePlugin({
    key: "weather",
    capability: "You can tell tomorrow's weather in a city with the forecast tool.",
    toolFamilies: {
      weather: () => ({
        tools: {
          forecast: tool({
            description: "Tomorrow's weather in a city.",
            inputSchema: z.object({ city: z.string().describe("the city's name") }),
            execute: async ({ city }) => ({ city, forecast: FORECASTS[city.toLowerCase()] ?? "unknown" }),
          }),
        },
      }),
    },
  });
`;

/** The spec's lines as generated, and as the newcomer changes them. */
const SPEC_EDITS = [
  ['{ name: "lookup", args: { query: "Paris" } }', '{ name: "forecast", args: { city: "Paris" } }'],
  ['toContain("lookup")', 'toContain("forecast")'],
  ['toBe("lookup")', 'toBe("forecast")'],
  ['toContain("nothing yet about Paris")', 'toContain("sunny, 21 °C")'],
];

/** Writes the newcomer's code into the starter at `root`; returns how many lines of it are theirs. */
export function writeNewcomerCode(root) {
  writeFileSync(join(root, `src/tenants/${TENANT}/plugin.ts`), PLUGIN);
  const specPath = join(root, `test/${TENANT}.spec.ts`);
  let spec = readFileSync(specPath, "utf8");
  for (const [generated, theirs] of SPEC_EDITS) {
    if (!spec.includes(generated)) throw new Error(`the generated ${TENANT} spec no longer holds ${generated}: update scripts/check/starter-newcomer.mjs`);
    spec = spec.replace(generated, theirs);
  }
  writeFileSync(specPath, spec);
  return PLUGIN.trimEnd().split("\n").length + SPEC_EDITS.length;
}
