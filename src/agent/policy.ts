import { ConfigError } from "../errors/index.js";

/**
 * Every sentence the platform would otherwise say to a user or to the model,
 * supplied by the agent. Core ships the machine and none of the words: a
 * missing string is refused at start-up, never defaulted.
 */
export interface AgentPolicy {
  messages: {
    /** The task's message when every model failed. */
    failure: string;
    /** The answer when the model wrote none (it ran out of steps or rounds). */
    emptyAnswer: string;
    /** The task's message when the platform gave up on a turn it could not finish. */
    abandoned: string;
    /** The task's message when a turn ended without an answer (its rounds ran out mid-delegation, say). */
    unfinished: string;
    /** The task's last word when it is canceled. */
    canceled: string;
    /** Introduces a compaction's summary of the earlier conversation, where the model reads it. */
    summaryHeading: string;
    /** The instructions of the model call that writes that summary. */
    summarize: string;
    /** Told to the model for a tool call that started and never finished (it is never run again). */
    toolInterrupted: string;
    /** Told to the model beside a tool result cut to `tools.maxResultBytes`: it has only the beginning. */
    toolResultCut: string;
  };
  /** The human-in-the-loop words: the `ask_user` tool, approvals, answers and expiry. */
  hitl: HitlWords;
  /** What the model is told of a message's data and file parts, and what a client reads in place of a part it does not accept. */
  parts: PartWords;
  /** The round loop's words; required when the agent can delegate (its plugins declare subtask types). */
  rounds?: RoundWords;
  /** The words of tools from elsewhere: required when the config lists MCP servers or exposes tools on search. */
  tools?: ToolWords;
}

/** What the model is told about tools it is not simply handed. */
export interface ToolWords {
  /** The `find_tools` control tool's description (tools exposed on search are found through it). */
  findToolsDescription?: string;
  /** Joins a turn's instructions when MCP servers could not be reached for it: their tools are absent this turn. */
  mcpUnavailable?: (servers: string[]) => string;
}

/** An option a human can pick. */
export interface HitlOption {
  id: string;
  label: string;
}

export interface HitlWords {
  /** The `ask_user` control tool's description. */
  askUserDescription: string;
  /** The prompt of an approval request for a tool call. */
  approvalPrompt: (call: { toolName: string; input: unknown }) => string;
  /** The labels of the approval options `approve` and `reject`. */
  approve: string;
  reject: string;
  /** The text part beside a request's data part, saying the same for a reader that shows text only. */
  requestText: (request: { requestKind: "approval" | "choice" | "question"; prompt: string; options?: HitlOption[] }) => string;
  /** Told to the model when an approval is rejected. */
  denied: string;
  /** Told to the model when a request expired unanswered (an approval is then denied). */
  expired: string;
  /** The text of the status update announcing that a request expired. */
  timedOut: string;
}

/** A file part of the user's message, as the model is told of it. */
export interface InboundFile {
  filename?: string;
  /** Its media type (the part's, else the fetched response's, else `application/octet-stream`). */
  mediaType: string;
  /** The part's URL, when it came as one. */
  url?: string;
  /** Its size in bytes, when known (raw bytes, or what a fetch read). */
  bytes?: number;
  /** What follows the heading in the model's message: the file's text, its bytes (a file part), its URL, or nothing. */
  given: "text" | "file" | "url" | "none";
  /**
   * Why the model has the URL or nothing instead of the content: the origin
   * is not on the fetch allowlist, the message's fetches ran out, the file
   * is larger than the byte caps, the fetch failed, or the model does not
   * read this type.
   */
  withheld?: "not-allowlisted" | "fetch-limit" | "too-large" | "fetch-failed" | "unsupported-type";
}

/** A file part of a reply that the client's `acceptedOutputModes` do not take and that has no text form, replaced by a text part. */
export interface WithheldPart {
  mediaType: string;
  filename?: string;
  url?: string;
  /** The artifact the part belongs to. */
  artifact?: { name?: string };
}

export interface PartWords {
  /** Heads a data part of the user's message; its JSON follows. */
  data: (part: { mediaType: string }) => string;
  /** Heads a file part of the user's message; what follows is `file.given`. */
  file: (file: InboundFile) => string;
  /** Stands in, in a reply, for a part the client does not accept and that has no faithful text form. */
  withheld: (part: WithheldPart) => string;
}

export interface RoundProgress {
  round: number;
  subtasks: number;
  done: number;
  failed: number;
}

/** A round none of whose subtasks could start: no subagent could be made for any of them. */
export interface RoundNotStarted {
  round: number;
  subtasks: number;
  /** Why the first could not start (for the operator: a subagent class the runtime cannot find, say). */
  error: string;
}

export interface RoundWords {
  /** Held to the model in every round: how and when to delegate. */
  contract: string;
  /** Added in the last round: the budget is spent, answer now. */
  lastRoundNote: string;
  /** Introduces the results of the subtasks delegated so far. */
  resultsHeader: string;
  /** The progress line announced after each round. */
  progress: (progress: RoundProgress) => string;
  /** The turn's failure when no subtask of a round could start: the task fails with it rather than answering without them. */
  notStarted: (context: RoundNotStarted) => string;
  delegate: DelegateWords;
}

/** One requested subtask the delegate tool refused. */
export interface DelegationProblem {
  /** Its position in the call's `subtasks`. */
  index: number;
  type: string;
  /** The subtask types there are, when `type` is none of them. */
  unknownType?: string[];
  /** What its params' schema said, one entry per issue (`path: message`). */
  issues?: string[];
}

/** What the delegate tool says; core adds only data (the type catalogue, limits, validation issues). */
export interface DelegateWords {
  /** The tool's description. `catalogue` is JSON: each subtask type's key, description and params' JSON Schema. */
  description: (context: { catalogue: string; max: number }) => string;
  /** A delegation with invalid subtasks: nothing was recorded. */
  invalid: (context: { problems: DelegationProblem[] }) => string;
  /** More subtasks in one call than a round may hold: nothing was recorded. */
  tooMany: (context: { requested: number; max: number }) => string;
  /** This call would pass the round's cap: nothing was recorded by it. */
  overCap: (context: { existing: number; requested: number; max: number }) => string;
  /** The delegation was recorded; its results arrive in the next round. */
  accepted: string;
}

/** What the agent does, and so which words its policy must have. */
interface PolicyNeeds {
  /** Its plugins declare subtask types. */
  delegates: boolean;
  /** Some tool is exposed on search. */
  searches?: boolean;
  /** Its config lists MCP servers. */
  mcp?: boolean;
}

/**
 * Refuses a policy with a missing or empty string, naming the first as the
 * culprit and listing every one. `delegates`: whether the agent's plugins
 * declare subtask types, which makes the round words required.
 */
export function validatePolicy(policy: AgentPolicy | undefined, options: PolicyNeeds): AgentPolicy {
  const missing: string[] = [];
  const text = (value: unknown, name: string) => {
    if (typeof value !== "string" || value.trim() === "") missing.push(name);
  };
  const fn = (value: unknown, name: string) => {
    if (typeof value !== "function") missing.push(name);
  };
  for (const name of [
    "failure",
    "emptyAnswer",
    "abandoned",
    "unfinished",
    "canceled",
    "summaryHeading",
    "summarize",
    "toolInterrupted",
    "toolResultCut",
  ] as const)
    text(policy?.messages?.[name], `messages.${name}`);
  const hitl = policy?.hitl;
  for (const name of ["askUserDescription", "approve", "reject", "denied", "expired", "timedOut"] as const) text(hitl?.[name], `hitl.${name}`);
  for (const name of ["approvalPrompt", "requestText"] as const) fn(hitl?.[name], `hitl.${name}`);
  for (const name of ["data", "file", "withheld"] as const) fn(policy?.parts?.[name], `parts.${name}`);
  if (options.delegates) {
    const rounds = policy?.rounds;
    text(rounds?.contract, "rounds.contract");
    text(rounds?.lastRoundNote, "rounds.lastRoundNote");
    text(rounds?.resultsHeader, "rounds.resultsHeader");
    fn(rounds?.progress, "rounds.progress");
    fn(rounds?.notStarted, "rounds.notStarted");
    for (const name of ["description", "invalid", "tooMany", "overCap"] as const) fn(rounds?.delegate?.[name], `rounds.delegate.${name}`);
    text(rounds?.delegate?.accepted, "rounds.delegate.accepted");
  }
  if (options.searches) text(policy?.tools?.findToolsDescription, "tools.findToolsDescription");
  if (options.mcp) fn(policy?.tools?.mcpUnavailable, "tools.mcpUnavailable");
  if (missing.length) {
    throw new ConfigError(
      { kind: "policy", name: missing[0]! },
      `agentPolicy() is missing ${missing.join(", ")}: core has no words of its own, every sentence comes from the agent`,
      { code: ConfigError.MISSING },
    );
  }
  return policy!;
}
