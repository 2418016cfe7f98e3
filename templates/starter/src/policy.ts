import type { AgentPolicy, InboundFile, PartWords } from "@dynamicagents/core";

// Every sentence the platform says to a user or to a model on your agents' behalf.
// The package has none of its own: an agent whose policy lacks one refuses to start,
// naming it. Every tenant here shares these; give one its own by spreading them.

const REASON: Record<NonNullable<InboundFile["withheld"]>, string> = {
  "not-allowlisted": "its site is not on the list I may fetch from",
  "fetch-limit": "this message links more files than I fetch at once",
  "too-large": "it is too large for me to read",
  "fetch-failed": "I could not fetch it",
  "unsupported-type": "I cannot read this kind of file",
};

const describe = (file: { filename?: string; mediaType: string }) => `${file.filename ? `the file "${file.filename}"` : "a file"} (${file.mediaType})`;

const parts: PartWords = {
  data: ({ mediaType }) => `Structured data (${mediaType}) came with the message, as JSON:`,
  file: (file) => {
    const what = `The user sent ${describe(file)}`;
    const why = file.withheld ? `; you do not have its content because ${REASON[file.withheld]}` : "";
    if (file.given === "text") return `${what}. Its text follows:`;
    if (file.given === "file") return `${what}; it follows.`;
    return file.given === "url" ? `${what}${why}. It is at this URL:` : `${what}${why}.`;
  },
  withheld: (part) => `[${describe(part)} left out: your client does not take ${part.mediaType}${part.url ? `; find it at ${part.url}` : ""}]`,
};

export const policy: AgentPolicy = {
  messages: {
    failure: "I could not answer just now: the model did not respond. Please try again shortly.",
    emptyAnswer: "I used up my steps on this request without reaching an answer. Could you ask something narrower?",
    abandoned: "This request could not be finished after several tries. Please send it again.",
    unfinished: "This request stopped before I had an answer. Please send it again, perhaps narrower.",
    canceled: "Stopped, as you asked.",
    summaryHeading: "What was said earlier in this conversation, in short:",
    summarize:
      "Write a summary of the conversation below for yourself to read later. Keep every fact, name, number, decision and open question, and what the tools returned. Plain prose, under 300 words.",
    toolInterrupted:
      "This tool call was cut off before it finished and will not be repeated; it may or may not have had its effect, so check before relying on it.",
    toolResultCut: "The tool returned more than you can be given at once, so `result` is only its beginning. Ask it for a smaller piece if you need the rest.",
  },
  hitl: {
    askUserDescription:
      "Ask the user something when the request is unclear or needs a decision only they can make; offer choices when there are a few obvious ones. The turn waits for the answer.",
    approvalPrompt: ({ toolName, input }) => `Allow ${toolName} to run with ${JSON.stringify(input)}?`,
    approve: "Allow",
    reject: "Refuse",
    requestText: ({ requestKind, prompt, options }) =>
      requestKind === "question" || !options?.length ? prompt : [prompt, ...options.map((o) => `- ${o.label} (${o.id})`)].join("\n"),
    denied: "The user refused this tool call, so it did not run. Continue without it and tell the user.",
    expired: "No one answered in time; an approval counts as refused. Continue without the answer and tell the user.",
    timedOut: "No answer came in time, so I am going on without it.",
  },
  parts,
  tools: {
    findToolsDescription:
      "Search the tools you have beyond the ones offered now, by what you need done (a few words). The tools it finds are offered to you from the next step on.",
    mcpUnavailable: (servers) =>
      `The tool server${servers.length === 1 ? "" : "s"} ${servers.join(", ")} could not be reached for this request, so ${servers.length === 1 ? "its" : "their"} tools are missing now. If the user needs them, say so rather than guessing.`,
  },
};
