// The offline stand-in model reads a short string argument as a person would
// (scripts/dev/standin-phrase.mjs): the likely word or phrase of the user's
// message, not the whole sentence, so a table-lookup tool works offline. A
// parameter that holds a text still gets the words whole. Each row: what the
// user says → the arguments the stand-in calls the tool with.
import { describe, expect, it } from "vitest";
import { standInReply } from "../../scripts/dev/standin-model.mjs";

/** A tool as a chat-completion request offers it. */
const tool = (name, properties, required = Object.keys(properties)) => ({
  type: "function",
  function: { name, description: `The ${name} tool.`, parameters: { type: "object", properties, required } },
});
const forecast = tool("forecast", { city: { type: "string" } });
/** An MCP tool (`<server>__<tool>`), whose arguments come from standin-mcp.mjs. */
const mcpLookup = tool("docs__lookup", { term: { type: "string" } });
const countWords = tool("count_words", { text: { type: "string" } });
const searchNotes = tool("search", { query: { type: "string", maxLength: 12 }, noteText: { type: "string" } });

/** The arguments of the stand-in's first call of `offered` for `text`. */
function argumentsFor(offered, text) {
  const [call] = standInReply({
    messages: [
      { role: "system", content: "You are Tester." },
      { role: "user", content: text },
    ],
    tools: [offered],
  }).toolCalls;
  expect(call?.function.name).toBe(offered.function.name);
  return JSON.parse(call.function.arguments);
}

const SENTENCES = [
  // A capitalised word (or run of them) that does not open a sentence.
  ["What's the weather in London tomorrow?", "London"],
  ["Is it going to rain in New York this weekend?", "New York"],
  ["Tell me about the Eiffel Tower", "Eiffel Tower"],
  ["Hi. What is the time in Tokyo?", "Tokyo"],
  ["look up AAPL", "AAPL"],
  ["Weather in Paris, please", "Paris"],
  // Otherwise the words after in, for or about: articles skipped, ending at a time word or another preposition.
  ["what's the forecast for tomorrow in berlin", "berlin"],
  ["tell me about the black holes", "black holes"],
  ["weather in lisbon", "lisbon"],
  ["a hotel for 3 nights in rome", "3 nights"],
  // Otherwise the words as they are.
  ["Paris", "Paris"],
  ["hello", "hello"],
];

describe("the stand-in's short string arguments", () => {
  it.each(SENTENCES)("%j → %j, for a plugin tool's city and an MCP tool's term", (sentence, expected) => {
    expect(argumentsFor(forecast, sentence)).toEqual({ city: expected });
    expect(argumentsFor(mcpLookup, sentence)).toEqual({ term: expected });
  });

  it("gives a parameter that holds a text the words whole, and keeps within maxLength", () => {
    const sentence = "What's the weather in London tomorrow?";
    expect(argumentsFor(countWords, sentence)).toEqual({ text: sentence });
    expect(argumentsFor(searchNotes, "notes about the Paris trip")).toEqual({ query: "Paris", noteText: "notes about the Paris trip" });
    expect(argumentsFor(searchNotes, "find my notes about black holes and quasars")).toEqual({
      query: "black holes",
      noteText: "find my notes about black holes and quasars",
    });
  });
});
