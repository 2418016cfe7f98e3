// The stand-in model's one table of words (scripts/dev/standin-triggers.mjs)
// and the README's copy of it ("Local work: npm start", "The model"): the
// README's table between its markers is exactly `triggerTable()`.
import { readFileSync } from "node:fs";
import { describe, expect, it } from "vitest";
import { ANY_MESSAGE, TRIGGERS, onlyWhenAsked, triggerTable, triggeredTool } from "../../scripts/dev/standin-triggers.mjs";

const README = new URL("../../README.md", import.meta.url);
const BEGIN = "<!-- standin-triggers: generated from scripts/dev/standin-triggers.mjs (triggerTable) -->";
const END = "<!-- /standin-triggers -->";
const tool = (name, description) => ({ function: { name, description } });

describe("the stand-in's trigger table", () => {
  it("is the README's trigger table, row for row (regenerate the README's with triggerTable() when the module changes)", () => {
    const readme = readFileSync(README, "utf8");
    const start = readme.indexOf(BEGIN);
    const end = readme.indexOf(END, start);
    expect(start, `README.md has no ${BEGIN}`).toBeGreaterThan(-1);
    expect(end, `README.md has no ${END} after the table`).toBeGreaterThan(start);
    expect(readme.slice(start + BEGIN.length, end).trim()).toBe(triggerTable());
    // One table: the README has no other trigger table.
    expect(readme.split("| words in your message | the stand-in calls |")).toHaveLength(2);
  });

  it("renders every row once, the default row first", () => {
    const rows = triggerTable().split("\n").slice(2);
    expect(rows).toHaveLength(TRIGGERS.length + 1);
    expect(rows[0]).toContain(ANY_MESSAGE.calls);
  });

  it("keeps the control tools and the approval-gated ones for the user's words", () => {
    for (const name of ["ask_user", "find_tools", "save_note", "notes__save_note", "devtools__count_down"]) expect(onlyWhenAsked(tool(name)), name).toBe(true);
    expect(onlyWhenAsked(tool("pay", "Pays an invoice once the user approves it."))).toBe(true);
    expect(onlyWhenAsked(tool("pay", "Needs approval."))).toBe(true);
    for (const name of ["current_time", "list_notes", "fetch_page", "devtools__roll_dice", "forecast"]) expect(onlyWhenAsked(tool(name)), name).toBe(false);
  });

  it("counts down only when asked to, 5 seconds or the number named (at most 30)", () => {
    const offered = [tool("current_time"), tool("devtools__count_down")];
    expect(triggeredTool(offered, "count down please", () => true)).toMatchObject({
      tool: { function: { name: "devtools__count_down" } },
      args: { seconds: 5 },
    });
    expect(triggeredTool(offered, "Count down 8", () => true)?.args).toEqual({ seconds: 8 });
    expect(triggeredTool(offered, "countdown from 90", () => true)?.args).toEqual({ seconds: 30 });
    expect(triggeredTool(offered, "what time is it?", () => true)).toBeUndefined();
  });

  it("finds a tool by its name in the user's words, with or without its underscores", () => {
    const offered = [tool("current_time"), tool("pay_invoice")];
    expect(triggeredTool(offered, "please pay invoice 42", () => true)?.tool.function.name).toBe("pay_invoice");
    expect(triggeredTool(offered, "use pay_invoice", () => true)?.tool.function.name).toBe("pay_invoice");
    expect(triggeredTool(offered, "prepay invoices", () => true)).toBeUndefined();
  });
});
