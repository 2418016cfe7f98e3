import type { AgentPolicy, InboundFile, PartWords, RoundWords } from "@dynamicagents/core/agent";

const sizeOf = (bytes: number | undefined) =>
  bytes === undefined ? "" : bytes < 1024 ? `, ${bytes} bytes` : `, ${Math.round(bytes / 1024).toLocaleString("en-US")} KiB`;
const named = (file: { filename?: string; mediaType: string; bytes?: number }) =>
  `${file.filename ? `"${file.filename}"` : "a file"} (${file.mediaType}${sizeOf(file.bytes)})`;
const WHY_NOT: Record<NonNullable<InboundFile["withheld"]>, string> = {
  "not-allowlisted": "its site is not one I may fetch from",
  "fetch-limit": "the message links more files than I fetch for one message",
  "too-large": "it is larger than I can read",
  "fetch-failed": "fetching it failed",
  "unsupported-type": "I cannot read files of this type",
};

/** What the model is told of the files and data a message carries, and what a client reads for a file it does not accept. */
const partWords: PartWords = {
  data: ({ mediaType }) => `The user attached structured data (${mediaType}), as JSON:`,
  file: (file) => {
    const what = `The user attached ${named(file)}`;
    if (file.given === "text") return `${what}. Its text:`;
    if (file.given === "file") return `${what}, given below.`;
    const why = file.withheld ? `: I was not given its content because ${WHY_NOT[file.withheld]}` : "";
    return file.given === "url" ? `${what}${why}. Its URL:` : `${what}${why}.`;
  },
  withheld: (part) =>
    `[${named(part)} withheld${part.artifact?.name ? ` from "${part.artifact.name}"` : ""}: your client does not accept ${part.mediaType}${part.url ? `; it is at ${part.url}` : ""}]`,
};

/**
 * The reference deployment's words: every sentence the platform says to a
 * user or a model on these agents' behalf. Core has none of its own.
 */
export const assistantPolicy: AgentPolicy = {
  messages: {
    failure: "Sorry, I could not get an answer: the model and its fallback both failed. Please try again in a moment.",
    emptyAnswer: "I ran out of steps for this request before I could write an answer. Please narrow it down and ask again.",
    abandoned: "Sorry, this request could not be completed: the agent failed to finish it after several attempts. Please send it again.",
    unfinished: "Sorry, this request ended before I could write an answer. Please send it again, or narrow it down.",
    canceled: "Canceled as requested.",
    summaryHeading: "Summary of the earlier conversation:",
    summarize:
      "Summarise the conversation below for your own later use: keep every fact, name, number, decision and open question the user or you stated, and the results of tools that were used. Write plain prose, at most 300 words.",
    toolInterrupted:
      "This tool call was interrupted before it finished, and it is not run again: it may or may not have taken effect. Check before you rely on it.",
    toolResultCut:
      "This tool's result was too long to give you whole: `result` holds only its beginning. If you need more, ask the tool for less at a time (a narrower query, a smaller page).",
  },
  hitl: {
    askUserDescription:
      "Ask the user a question when their request is ambiguous or you need a decision only they can make. Offer choices when there are a few clear options. The turn pauses until they answer.",
    approvalPrompt: ({ toolName, input }) => `May I run ${toolName} with ${JSON.stringify(input)}?`,
    approve: "Approve",
    reject: "Reject",
    requestText: ({ requestKind, prompt, options }) =>
      requestKind === "question" || !options?.length ? prompt : `${prompt}\n${options.map((o) => `- ${o.label} (${o.id})`).join("\n")}`,
    denied: "The user did not approve this tool call: it was not run. Carry on without it, and say so.",
    expired: "Nobody answered in time: if this was an approval, the tool call was not run. Carry on without the answer, and say so.",
    timedOut: "Nobody answered in time; carrying on without it.",
  },
  parts: partWords,
  tools: {
    findToolsDescription:
      "Search the tools you have beyond the ones offered now, by what you need done (a few words). The tools it finds are offered to you from the next step on.",
    mcpUnavailable: (servers) =>
      `The tool server${servers.length === 1 ? "" : "s"} ${servers.join(", ")} could not be reached for this request, so ${servers.length === 1 ? "its" : "their"} tools are missing now. If the user needs them, say so rather than guessing.`,
  },
};

const researchRounds: RoundWords = {
  contract: [
    "You work in rounds. In each round either answer the user, or call the delegate tool once with every subtask you need now;",
    "their results arrive in the next round. Delegate only what you cannot answer from what you already know or were given.",
    "Run independent subtasks in the same delegation so they run at once.",
  ].join(" "),
  lastRoundNote: "This is the last round: do not delegate any more. Answer now with what you have, and say what you could not find out.",
  resultsHeader: "Results of the subtasks delegated so far:",
  progress: ({ round, subtasks, done, failed }) =>
    `working: round ${round}, ${subtasks} subtask${subtasks === 1 ? "" : "s"} (${done} done${failed ? `, ${failed} failed` : ""})`,
  notStarted: ({ subtasks, error }) =>
    `I could not do this research: none of the ${subtasks} subtask${subtasks === 1 ? "" : "s"} I delegated could start (${error}). Please tell whoever runs this agent.`,
  delegate: {
    description: ({ catalogue, max }) =>
      `Delegate durable subtasks, run concurrently by isolated subagents; their results arrive in the next round. At most ${max} per round, across all calls. Subtask types (JSON: type, description, params schema):\n${catalogue}`,
    invalid: ({ problems }) =>
      `Nothing was delegated. Fix these and delegate again:\n${problems
        .map((p) =>
          p.unknownType
            ? `subtasks[${p.index}]: unknown type ${JSON.stringify(p.type)} (known: ${p.unknownType.join(", ")})`
            : `subtasks[${p.index}] (${p.type}): ${(p.issues ?? []).join("; ")}`,
        )
        .join("\n")}`,
    tooMany: ({ requested, max }) => `Too many subtasks: ${requested}, the limit is ${max} per round. Nothing was delegated.`,
    overCap: ({ existing, requested, max }) =>
      `Nothing was delegated by this call: this round already has ${existing} subtask${existing === 1 ? "" : "s"}, and ${requested} more would pass the limit of ${max} per round. Delegate at most ${Math.max(0, max - existing)} more, or wait for these results.`,
    accepted: "Results arrive in the next round.",
  },
};

/** The researcher's words: the assistant's, the round loop's, and its own for failure and running out of rounds. */
export const researchPolicy: AgentPolicy = {
  messages: {
    ...assistantPolicy.messages,
    failure: "Sorry, the research could not be completed because the model failed. Please try again in a moment.",
    emptyAnswer: "I ran out of research rounds before I could write an answer. Please narrow the question and ask again.",
    canceled: "Research canceled as requested.",
  },
  hitl: assistantPolicy.hitl,
  parts: assistantPolicy.parts,
  tools: assistantPolicy.tools,
  rounds: researchRounds,
};
