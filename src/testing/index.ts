// The test harness agent authors use in their own repos (workerd realm).
// Never imported by a runtime subpath.
export { chatCompletionBody, chatCompletionEvents, chatCompletionReply, type ChatReply, type ChatToolCall } from "./chat-completion.js";
export { createAgentHarness, type AgentHarness, type AgentHarnessOptions, type HarnessAnswer } from "./agent-harness.js";
export { makeDoHelpers } from "./do-helpers.js";
export { makeGatekeeperToken, type GatekeeperTokenOptions } from "./gatekeeper-token.js";
export { interceptGatekeeper, type CapturedPush, type GatekeeperIntercept, type InterceptOptions } from "./intercept-gatekeeper.js";
export {
  AGENT_FIXTURE_JWK,
  GATEKEEPER_FIXTURE_JWK,
  ROTATED_GATEKEEPER_FIXTURE_JWK,
  fixtureKey,
  publicHalf,
  type FixtureKey,
} from "./jwk-fixtures.js";
export { cassetteName, setupRecording } from "./vcr.js";
export {
  chatResponse,
  readChatRequest,
  scriptedChatModel,
  type ChatMessage,
  type ModelRequest,
  type ModelScript,
  type ScriptedChatModel,
  type ChatScriptReply,
} from "./scripted-model.js";
export { callsOf, mockModel, scriptedChoices, type ScriptedReply } from "./mock-model.js";
