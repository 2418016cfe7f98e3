import { MAX_PUSH_CONFIGS_PER_TASK } from "@dynamicagents/core/a2a";
import { describe, expect, it } from "vitest";
import { GATEKEEPER, OTHER_GATEKEEPER, PUSH_URL } from "./support/constants.js";
import { call, userMessage } from "./support/rpc.js";
import { useTurnHarness } from "./support/turn-harness.js";

const newCaller = () => ({ identity: { key: `caller-${crypto.randomUUID()}` } });
const WHERE = "params.configuration.taskPushNotificationConfig";

// Accepted turns run in the background; the harness keeps their network offline.
useTurnHarness();

async function send(config: Record<string, unknown>, caller = newCaller()) {
  const reply = await call(
    "SendMessage",
    { message: userMessage("hello"), configuration: { returnImmediately: true, taskPushNotificationConfig: config } },
    { mint: caller },
  );
  const tasks = await call("ListTasks", {}, { mint: caller });
  return { reply, tasksCreated: tasks.body.result.totalSize as number, caller };
}

describe("a push config is refused before anything is created", () => {
  const refusals: Array<[string, Record<string, unknown>, RegExp]> = [
    // `blob:` keeps the origin of the URL inside it, so an origin check alone passes it.
    ["a blob: URL on an allowlisted origin", { url: `blob:${GATEKEEPER}/4f0c3f8e-0000-4000-8000-000000000000` }, /\.url must be an http\(s\) URL/],
    ["a non-http scheme", { url: "ftp://gatekeeper.test/hook" }, /\.url must be an http\(s\) URL/],
    ["credentials in the URL", { url: "https://user:pw@gatekeeper.test/a2a/notifications" }, /\.url must not carry credentials/],
    ["a token with CR/LF", { url: PUSH_URL, token: "abc\r\nX-Injected: 1" }, /\.token must be visible ASCII/],
    ["a token with a space", { url: PUSH_URL, token: "two words" }, /\.token must be visible ASCII/],
    ["a token beyond ASCII", { url: PUSH_URL, token: "jeton-é" }, /\.token must be visible ASCII/],
    ["a token over 1,024 bytes", { url: PUSH_URL, token: "t".repeat(1025) }, /\.token must be at most 1024 bytes/],
    ["a token that is not a string", { url: PUSH_URL, token: { nested: true } }, /\.token must be a string/],
    [
      "an auth scheme that is not an RFC 9110 token",
      { url: PUSH_URL, authentication: { scheme: "Bearer x", credentials: "c" } },
      /\.authentication\.scheme must be an HTTP authentication scheme/,
    ],
    ["an auth scheme with CR/LF", { url: PUSH_URL, authentication: { scheme: "Basic\r\nX: y", credentials: "c" } }, /\.authentication\.scheme must be/],
    ["a missing auth scheme", { url: PUSH_URL, authentication: { credentials: "c" } }, /\.authentication\.scheme is required/],
    [
      "credentials with CR/LF",
      { url: PUSH_URL, authentication: { scheme: "Bearer", credentials: "abc\nX-Injected: 1" } },
      /\.authentication\.credentials must be visible ASCII/,
    ],
    [
      "credentials with a control character",
      { url: PUSH_URL, authentication: { scheme: "Bearer", credentials: "abc\u0000def" } },
      /\.authentication\.credentials must be visible ASCII/,
    ],
    [
      "credentials over 4,096 bytes",
      { url: PUSH_URL, authentication: { scheme: "Bearer", credentials: "c".repeat(4097) } },
      /\.authentication\.credentials must be at most 4096 bytes/,
    ],
    ["an id over 128 characters", { url: PUSH_URL, id: "i".repeat(129) }, /\.id must be at most 128 characters/],
    ["a URL over 4,096 characters", { url: `${PUSH_URL}?pad=${"p".repeat(4096)}` }, /\.url must be at most 4096 characters/],
  ];

  for (const [what, config, message] of refusals) {
    it(`refuses ${what} with -32602 naming the field, and creates no task`, async () => {
      const { reply, tasksCreated } = await send(config);
      expect(reply.body.error?.code, JSON.stringify(reply.body)).toBe(-32602);
      expect(reply.body.error.message).toMatch(new RegExp(`^${WHERE.replace(/\./g, "\\.")}`));
      expect(reply.body.error.message).toMatch(message);
      expect(tasksCreated).toBe(0);
    });
  }

  it("never repeats a refused token or credentials in the error", async () => {
    const token = (await send({ url: PUSH_URL, token: "secret-token\r\n" })).reply.body.error.message;
    const credentials = (await send({ url: PUSH_URL, authentication: { scheme: "Bearer", credentials: "secret-creds\n" } })).reply.body.error.message;
    expect(token).not.toContain("secret-token");
    expect(credentials).not.toContain("secret-creds");
  });

  it("accepts values right at the caps", async () => {
    const { reply, tasksCreated } = await send({
      url: PUSH_URL,
      id: "i".repeat(128),
      token: "t".repeat(1024),
      authentication: { scheme: "Bearer", credentials: `${"c".repeat(2000)} ${"d".repeat(2095)}` },
    });
    expect(reply.body.error).toBeUndefined();
    expect(tasksCreated).toBe(1);
  });

  it("refuses the same things in CreateTaskPushNotificationConfig, adding nothing", async () => {
    const caller = newCaller();
    const task = (await send({ url: PUSH_URL }, caller)).reply.body.result.task;
    for (const bad of [{ url: `blob:${GATEKEEPER}/x` }, { url: PUSH_URL, token: "a\r\nb" }, { url: PUSH_URL, id: "i".repeat(129) }]) {
      const refused = await call("CreateTaskPushNotificationConfig", { taskId: task.id, ...bad }, { mint: caller });
      expect(refused.body.error?.code).toBe(-32602);
      expect(refused.body.error.message).toMatch(/^params\.(url|token|id) /);
    }
    expect((await call("ListTaskPushNotificationConfigs", { taskId: task.id }, { mint: caller })).body.result.configs).toHaveLength(1);
  });
});

describe("a push config goes to the caller's own gatekeeper", () => {
  // Both gatekeepers are on the allowlist; only the one that minted the token is the caller's.
  const OTHER_PUSH_URL = `${OTHER_GATEKEEPER}/a2a/notifications`;
  const viaOther = () => ({ ...newCaller(), iss: OTHER_GATEKEEPER, jku: `${OTHER_GATEKEEPER}/.well-known/jwks.json` });
  const OWN_RULE = /the caller's own gatekeeper, the origin of the token's iss/;

  it("refuses a send whose push URL is on another allowlisted gatekeeper, naming the rule, and creates no task", async () => {
    const { reply, tasksCreated } = await send({ url: `${OTHER_PUSH_URL}?sig=s3cr3t-query`, token: "tok-s3cr3t" });
    expect(reply.body.error?.code, JSON.stringify(reply.body)).toBe(-32602);
    expect(reply.body.error.message).toMatch(new RegExp(`^${WHERE.replace(/\./g, "\\.")}\\.url `));
    expect(reply.body.error.message).toMatch(OWN_RULE);
    expect(reply.body.error.message).toContain(JSON.stringify(GATEKEEPER));
    expect(reply.body.error.message).not.toMatch(/s3cr3t/);
    expect(tasksCreated).toBe(0);
  });

  it("refuses the same in CreateTaskPushNotificationConfig, adding nothing", async () => {
    const caller = newCaller();
    const task = (await send({ url: PUSH_URL }, caller)).reply.body.result.task;
    const refused = await call("CreateTaskPushNotificationConfig", { taskId: task.id, id: "elsewhere", url: OTHER_PUSH_URL }, { mint: caller });
    expect(refused.body.error?.code).toBe(-32602);
    expect(refused.body.error.message).toMatch(/^params\.url /);
    expect(refused.body.error.message).toMatch(OWN_RULE);
    const configs = (await call("ListTaskPushNotificationConfigs", { taskId: task.id }, { mint: caller })).body.result.configs;
    expect(configs.map((c: { url: string }) => c.url)).toEqual([PUSH_URL]);
  });

  it("takes each gatekeeper's caller's push URL on that gatekeeper, in both places", async () => {
    const own = await send({ url: PUSH_URL });
    expect(own.reply.body.error).toBeUndefined();
    expect(own.tasksCreated).toBe(1);

    const other = viaOther();
    const theirs = await send({ url: OTHER_PUSH_URL }, other);
    expect(theirs.reply.body.error).toBeUndefined();
    expect(theirs.tasksCreated).toBe(1);
    const taskId = theirs.reply.body.result.task.id;
    expect((await call("CreateTaskPushNotificationConfig", { taskId, id: "more", url: `${OTHER_PUSH_URL}/more` }, { mint: other })).body.error).toBeUndefined();
    // And the first gatekeeper is "another" one to this caller.
    const refused = await call("CreateTaskPushNotificationConfig", { taskId, id: "first", url: PUSH_URL }, { mint: other });
    expect(refused.body.error?.code).toBe(-32602);
    expect(refused.body.error.message).toMatch(OWN_RULE);
  });
});

describe("push configs per task", () => {
  it(`holds at most ${MAX_PUSH_CONFIGS_PER_TASK}; replacing one by its id does not count twice`, async () => {
    const caller = newCaller();
    const task = (await send({ url: PUSH_URL, id: "first" }, caller)).reply.body.result.task;
    for (let n = 2; n <= MAX_PUSH_CONFIGS_PER_TASK; n++) {
      const created = await call("CreateTaskPushNotificationConfig", { taskId: task.id, id: `c${n}`, url: `${PUSH_URL}/${n}` }, { mint: caller });
      expect(created.body.error, `config ${n}`).toBeUndefined();
    }
    const over = await call("CreateTaskPushNotificationConfig", { taskId: task.id, id: "one-too-many", url: `${PUSH_URL}/over` }, { mint: caller });
    expect(over.body.error?.code).toBe(-32602);
    expect(over.body.error.message).toContain(`the most one task may have (${MAX_PUSH_CONFIGS_PER_TASK})`);
    // Without an id a config is new by definition, so it is refused as well.
    expect((await call("CreateTaskPushNotificationConfig", { taskId: task.id, url: `${PUSH_URL}/anon` }, { mint: caller })).body.error?.code).toBe(-32602);

    const replaced = await call("CreateTaskPushNotificationConfig", { taskId: task.id, id: "c2", url: `${PUSH_URL}/replaced` }, { mint: caller });
    expect(replaced.body.result).toMatchObject({ id: "c2", url: `${PUSH_URL}/replaced` });
    const configs = (await call("ListTaskPushNotificationConfigs", { taskId: task.id }, { mint: caller })).body.result.configs;
    expect(configs).toHaveLength(MAX_PUSH_CONFIGS_PER_TASK);
    expect(configs.map((c: { id: string }) => c.id)).not.toContain("one-too-many");

    // A deleted config frees its place.
    await call("DeleteTaskPushNotificationConfig", { taskId: task.id, id: "c3" }, { mint: caller });
    expect(
      (await call("CreateTaskPushNotificationConfig", { taskId: task.id, id: "late", url: `${PUSH_URL}/late` }, { mint: caller })).body.error,
    ).toBeUndefined();
  });
});
