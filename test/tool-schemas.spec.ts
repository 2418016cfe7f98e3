import { jsonSchema, tool, type Tool } from "ai";
import { describe, expect, it } from "vitest";
import { z } from "zod";
import { chooseModels } from "@dynamicagents/core/agent";
import { schemasOnce } from "../src/round/tools/schemas.js";

const schemaOf = (tools: Record<string, Tool>, name: string) => tools[name]!.inputSchema as { jsonSchema: unknown };

describe("tool schemas made once", () => {
  it("hands the same converted schema for the same schema object on every request, and a new one for a new object", () => {
    const input = z.object({ city: z.string().describe("where") });
    const forecast = () => tool({ description: "forecast", inputSchema: input, execute: async () => "sunny" });
    const first = schemasOnce({ forecast: forecast() });
    const second = schemasOnce({ forecast: forecast() });
    expect(schemaOf(second, "forecast")).toBe(schemaOf(first, "forecast"));
    expect(schemaOf(first, "forecast").jsonSchema).toMatchObject({
      type: "object",
      properties: { city: { type: "string", description: "where" } },
      required: ["city"],
    });
    // Built per turn, a schema is a new object: converted again (nothing stale is sent).
    const other = schemasOnce({ forecast: tool({ description: "forecast", inputSchema: z.object({ town: z.string() }), execute: async () => "rain" }) });
    expect(schemaOf(other, "forecast")).not.toBe(schemaOf(first, "forecast"));
    expect(schemaOf(other, "forecast").jsonSchema).toMatchObject({ properties: { town: { type: "string" } } });
  });

  it("keeps what the tool was: its execute, its approval, and a schema already in ai's form", () => {
    const execute = async () => "ok";
    const given = jsonSchema<{ q: string }>({ type: "object", properties: { q: { type: "string" } } });
    const out = schemasOnce({ search: tool({ description: "d", inputSchema: given, needsApproval: true, execute }) });
    expect(out.search!.execute).toBe(execute);
    expect(out.search!.needsApproval).toBe(true);
    expect(out.search!.inputSchema).toBe(given);
  });
});

describe("model choices made once", () => {
  it("builds the providers once per environment and choice, and again when the choice changes", () => {
    const env = { OPENAI_BASE_URL: "https://model.test/v1", OPENAI_MODEL: "m1" };
    const config = { chatModelId: "unused" };
    const first = chooseModels(env, config);
    expect(chooseModels(env, config)).toBe(first);
    expect(first.map((c) => c.label)).toEqual(["openai-compatible:m1"]);
    const changed = chooseModels({ ...env, OPENAI_MODEL: "m2" }, config);
    expect(changed.map((c) => c.label)).toEqual(["openai-compatible:m2"]);
    env.OPENAI_MODEL = "m3";
    expect(chooseModels(env, config).map((c) => c.label)).toEqual(["openai-compatible:m3"]);
  });
});
