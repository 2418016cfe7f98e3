import { TokenRefused, type TokenRefusedCode } from "@dynamicagents/core/a2a";
import { ConfigError, type ConfigErrorCode } from "@dynamicagents/core/errors";
import { AgentNotStarted, SelfOriginUnknown, type HostErrorCode } from "@dynamicagents/core/host";
import { PluginContractError, WorkspaceLimitError, WorkspacePathError, type PluginErrorCode } from "@dynamicagents/core/plugin";
import { SubtaskCanceled, SubtaskOverBudget, type SubagentErrorCode } from "@dynamicagents/core/subagent";
import { describe, expect, it } from "vitest";

// Each area's error codes are one closed union: a `switch (error.code)` that
// misses one, or names one the area does not have, fails `npm run check:types`
// (the `never` below). The strings are public and never change.

/** Every configuration code, the specs' own (test/support/agents.ts, by declaration merging) included. */
function configTopic(code: ConfigErrorCode): string {
  switch (code) {
    case "ERR_CONFIG_INVALID":
    case "ERR_CONFIG_MISSING":
    case "ERR_MCP_NOT_ALLOWLISTED":
    case "ERR_SUBTASKS_WITHOUT_SUBAGENTS":
    case "ERR_SPEC_NOT_A_KEY":
      return "config";
    case "ERR_PLUGIN_STORE_DOWNGRADE":
    case "ERR_PLUGIN_CONTRACT":
    case "ERR_PLUGIN_CONTRACT_VERSION":
    case "ERR_PLUGIN_DUPLICATE":
    case "ERR_PLUGIN_DUPLICATE_FAMILY":
    case "ERR_PLUGIN_DUPLICATE_SUBTASK_TYPE":
    case "ERR_PLUGIN_REQUIREMENT_MISSING":
    case "ERR_PLUGIN_DUPLICATE_BACKING":
    case "ERR_PLUGIN_DUPLICATE_TOOL":
      return "plugin";
    default: {
      const unknown: never = code;
      return unknown;
    }
  }
}

function pluginTopic(code: PluginErrorCode): string {
  switch (code) {
    case "ERR_WORKSPACE_LIMIT":
    case "ERR_WORKSPACE_PATH":
      return "workspace";
    case "ERR_PLUGIN_CONTRACT":
    case "ERR_PLUGIN_CONTRACT_VERSION":
    case "ERR_PLUGIN_DUPLICATE":
    case "ERR_PLUGIN_DUPLICATE_FAMILY":
    case "ERR_PLUGIN_DUPLICATE_SUBTASK_TYPE":
    case "ERR_PLUGIN_REQUIREMENT_MISSING":
    case "ERR_PLUGIN_DUPLICATE_BACKING":
    case "ERR_PLUGIN_DUPLICATE_TOOL":
      return "contract";
    default: {
      const unknown: never = code;
      return unknown;
    }
  }
}

function subagentTopic(code: SubagentErrorCode): string {
  switch (code) {
    case "ERR_SUBTASK_CANCELED":
      return "canceled";
    case "ERR_SUBTASK_NEEDS_INPUT":
      return "asks";
    case "ERR_SUBTASK_OVER_BUDGET":
      return "budget";
    default: {
      const unknown: never = code;
      return unknown;
    }
  }
}

function hostTopic(code: HostErrorCode): string {
  switch (code) {
    case "ERR_AGENT_NOT_STARTED":
      return "start";
    case "ERR_SELF_ORIGIN_UNKNOWN":
      return "origin";
    default: {
      const unknown: never = code;
      return unknown;
    }
  }
}

function tokenTopic(code: TokenRefusedCode): string {
  switch (code) {
    case "ERR_TOKEN_BEARER":
    case "ERR_TOKEN_JKU_PRESENT":
    case "ERR_TOKEN_JKU_ALLOWLISTED":
    case "ERR_TOKEN_ISS_MATCHES_JKU":
      return "before any key";
    case "ERR_TOKEN_SIGNATURE":
    case "ERR_TOKEN_TENANT_CLAIM":
    case "ERR_TOKEN_IDENTITY_CLAIM":
      return "claims";
    default: {
      const unknown: never = code;
      return unknown;
    }
  }
}

describe("error codes", () => {
  it("an error's code is its class's, or the one it was given, and switches over each area's union", () => {
    const culprit = { kind: "setting", name: "X" } as const;
    expect(configTopic(new ConfigError(culprit, "wrong").code)).toBe("config");
    expect(configTopic(new ConfigError(culprit, "unset", { code: ConfigError.MISSING }).code)).toBe("config");
    const duplicate = new PluginContractError({ kind: "plugin", name: "a" }, "twice", { code: "ERR_PLUGIN_DUPLICATE" });
    expect([duplicate.code, configTopic(duplicate.code), pluginTopic(duplicate.code)]).toEqual(["ERR_PLUGIN_DUPLICATE", "plugin", "contract"]);
    expect(pluginTopic(new WorkspaceLimitError("full").code)).toBe("workspace");
    expect(pluginTopic(new WorkspacePathError("outside").code)).toBe("workspace");
    expect([subagentTopic(new SubtaskCanceled("stop").code), subagentTopic(new SubtaskOverBudget("spent").code)]).toEqual(["canceled", "budget"]);
    expect([hostTopic(new AgentNotStarted("not yet").code), hostTopic(new SelfOriginUnknown("unknown").code)]).toEqual(["start", "origin"]);
    const refused = new TokenRefused("signature", "bad signature");
    expect([refused.code, tokenTopic(refused.code)]).toEqual(["ERR_TOKEN_SIGNATURE", "claims"]);
  });
});
