// Pi 1.5's own mcp.json keys with Pi's meaning, inside the real Pi (0.87.1, 1.5.2 and 1.6.0) and from
// `pi-mcp`: `enabled: false` keeps a server from ever starting, `timeout` is in seconds,
// `description` reaches the model, `!command` header values arrive resolved at the server, and a
// project's `!command` runs only in a project trusted by a decision.
import { after, before, test } from "node:test";
import assert from "node:assert/strict";
import { spawnSync } from "node:child_process";
import { existsSync, mkdirSync, mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { PI_BUILTIN_MCP, piTest, runPi, runPiRpc, toolResultsOf } from "./helpers/pi.mjs";
import { everything, everythingHttp, faulty, filledCache, freePort, processesIn, recordingProxy, root, waitFor } from "./helpers/servers.mjs";

const OPTS = { timeout: 120_000 };
const REGISTRY_EXTENSION = join(root, "__test__", "fixtures", "pi-registry-extension", "index.mjs");
const mcp = (args) => ({ tool_calls: [{ name: "mcp", arguments: args }] });
let scratch;
let remote;
let proxy;

before(async () => {
  scratch = mkdtempSync(join(tmpdir(), "pi-mcp-native-dialect-"));
  remote = await everythingHttp("streamableHttp", await freePort());
  // Refuses every request whose Authorization is not what the !command prints.
  proxy = await recordingProxy(remote.port, { authorization: "Bearer from-a-command" });
});
after(async () => {
  await proxy?.close();
  await remote?.stop();
  rmSync(scratch, { recursive: true, force: true });
});

piTest("enabled: false, timeout in seconds, description, a !command header, numbers as text", OPTS, async (pi) => {
  const dir = join(scratch, `pi-${pi}`);
  mkdirSync(dir);
  const marker = join(dir, "off-server-started");
  const config = {
    mcpServers: {
      // Would leave a file behind if it were ever started.
      off: { command: process.execPath, args: ["-e", `require("fs").writeFileSync(${JSON.stringify(marker)}, "")`], enabled: false },
      web: {
        url: `${proxy.url}/mcp`,
        headers: { Authorization: "!echo Bearer from-a-command" },
        description: "The everything server over HTTP, behind a proxy that checks the token",
      },
      slow: faulty([], { cwd: dir, timeout: 1 }),
    },
  };
  const steps = [
    mcp({}),
    mcp({ tool: "off_echo", args: { message: "x" } }),
    mcp({ tool: "web_echo", args: { message: "through a !command header" } }),
    mcp({ tool: "slow_hang", args: {} }),
    mcp({ tool: "web_get-sum", args: { a: "2", b: "3.5" } }),
    { text: "done" },
  ];
  const started = proxy.requests.length;
  const r = await runPi({ pi, extensionDir: root, mcpConfig: config, script: { steps } });
  assert.equal(r.code, 0, r.stderr);
  const [status, off, web, hang, sum] = r.toolResults;
  assert.match(status.text, /⊘ off: disabled/);
  assert.match(status.text, /web: .* — The everything server over HTTP, behind a proxy that checks the token/);
  assert.equal(off.isError, true);
  assert.equal(off.details.error, "server_disabled");
  assert.match(off.text, /^Server "off" is disabled in \S*mcp\.json\.$/);
  assert.equal(web.text, "Echo: through a !command header", web.text);
  const seen = proxy.requests.slice(started).map((q) => q.headers.authorization);
  assert.ok(seen.length > 0 && seen.every((a) => a === "Bearer from-a-command"), JSON.stringify(seen));
  assert.equal(hang.isError, true);
  assert.match(hang.text, /no answer within 1 s/);
  // Numbers sent as text are converted where the schema wants numbers.
  assert.equal(sum.isError, false, sum.text);
  assert.match(sum.text, /5\.5/);
  // The description reaches the model in the mcp tool's description (clipped), the disabled server not at all.
  const { description } = r.requests[0].body.tools.find((t) => t.function.name === "mcp").function;
  assert.match(description, /\(web: The everything server over HTTP, behind a…; slow\)/);
  assert.equal(existsSync(marker), false, "the disabled server was started");
  await waitFor(() => processesIn(dir).length === 0, 5000, "servers to be gone after Pi exits");
});

piTest("a hidden tool (exposure or toolExposure, exact name or pattern) is unreachable by every mode", OPTS, async (pi) => {
  const dir = join(scratch, `hidden-${pi}`);
  mkdirSync(dir);
  const config = {
    mcpServers: {
      ev: everything({ cwd: dir, toolExposure: { echo: "hidden", "get-*": "hidden", "get-sum": "direct" } }),
      // A hidden server that shows one tool.
      hid: everything({ cwd: dir, exposure: "hidden", toolExposure: { echo: "codemode" } }),
    },
  };
  const steps = [
    mcp({ server: "ev" }),
    mcp({ server: "hid" }),
    mcp({ search: "echo get environment sum" }),
    mcp({ describe: "ev_echo" }),
    mcp({ tool: "ev_echo", args: { message: "x" } }),
    mcp({ tool: "ev_get-env", args: {} }),
    mcp({ tool: "hid_get-sum", args: { a: 1, b: 2 } }),
    mcp({ tool: "ev_get-sum", args: { a: 1, b: 2 } }),
    mcp({ tool: "hid_echo", args: { message: "shown" } }),
    { text: "done" },
  ];
  const r = await runPi({ pi, extensionDir: root, mcpConfig: config, script: { steps } });
  assert.equal(r.code, 0, r.stderr);
  const [list, hiddenList, search, describe, call, pattern, server, exact, shown] = r.toolResults;
  assert.match(list.text, /ev_get-sum/);
  assert.doesNotMatch(list.text, /ev_echo|ev_get-env/);
  assert.match(hiddenList.text, /hid_echo/);
  assert.doesNotMatch(hiddenList.text, /hid_get/);
  assert.match(search.text, /ev_get-sum/);
  assert.doesNotMatch(search.text, /ev_echo|ev_get-env|hid_get/);
  for (const hidden of [describe, call, pattern, server]) {
    assert.equal(hidden.isError, true);
    assert.equal(hidden.details.error, "tool_hidden", hidden.text);
    assert.match(hidden.text, /is hidden by its config/);
  }
  // An exact name wins over a pattern, and over the server's exposure.
  assert.equal(exact.isError, false, exact.text);
  assert.equal(shown.text, "Echo: shown");
  await waitFor(() => processesIn(dir).length === 0, 5000, "servers to be gone after Pi exits");
});

piTest("exposure: a direct tool under Pi's name with its hints; Pi's codemode and tool_search each start their server on the call", OPTS, async (pi) => {
  // Each server in a directory of its own, so that which one runs is seen.
  const [codemodeDir, deferredDir] = ["codemode", "deferred"].map((kind) => join(scratch, `exposure-${kind}-${pi}`));
  [codemodeDir, deferredDir].forEach((d) => mkdirSync(d));
  const config = {
    mcpServers: {
      ev: everything({ cwd: codemodeDir, exposure: "codemode", toolExposure: { echo: "direct", "get-env": "hidden" } }),
      ds: everything({ cwd: deferredDir, exposure: "deferred" }),
    },
  };
  // The metadata cache, filled beforehand: Pi's tools are registered from it, no server starts.
  const cacheJson = await filledCache(config);
  await waitFor(() => [codemodeDir, deferredDir].every((d) => processesIn(d).length === 0), 5000, "the filler's servers to stop");

  const withPiTools = PI_BUILTIN_MCP.includes(pi);
  const script = [
    "const hits = await searchTools('structured content');",
    "const hidden = ALL_TOOLS.filter((t) => /^mcp__ev__get_env/.test(t.name)).map((t) => t.name);",
    "const text = await tools.mcp__ev__get_structured_content({ location: 'New York' });",
    "return JSON.stringify({ hits: hits.map((h) => h.name), hidden, text });",
  ].join(" ");
  const steps = withPiTools
    ? [
        { tool_calls: [{ name: "codemode", arguments: { code: script } }] },
        { tool_calls: [{ name: "tool_search", arguments: { query: "sum of two numbers" } }] },
        { tool_calls: [{ name: "mcp__ds__get_sum", arguments: { a: 2, b: 3 } }] },
        { tool_calls: [{ name: "mcp__ev__echo", arguments: { message: "direct" } }] },
        { text: "done" },
      ]
    : [{ tool_calls: [{ name: "mcp__ev__echo", arguments: { message: "direct" } }] }, { text: "done" }];
  // Whether the codemode and the deferred server run when the model is asked for its next step.
  const running = [];
  const extensions = [root, REGISTRY_EXTENSION, ...(withPiTools ? ["builtin:codemode", "builtin:tool-search"] : [])];
  const r = await runPiRpc({
    pi,
    extensionDir: withPiTools ? extensions : [root],
    mcpConfig: config,
    cacheJson,
    script: { steps },
    commands: [...(withPiTools ? ["/tool-info mcp__ev__echo", "/tool-info mcp__ev__get_env"] : []), "go"],
    onLlmRequest: (record) => {
      running[record.index] = [codemodeDir, deferredDir].map((d) => processesIn(d).length > 0);
    },
  });
  assert.equal(r.code, 0, r.stderr);
  assert.deepEqual(running[0], [false, false], "a server ran before the model called a tool");
  const declared = r.requests[0].body.tools.map((t) => t.function.name).sort();
  const results = toolResultsOf(r.events);
  const echo = results.find((t) => t.toolName === "mcp__ev__echo");
  assert.equal(echo.text, "Echo: direct");
  if (!withPiTools) {
    // Before 0.99 Pi has no exposure: only the direct tool is Pi's.
    assert.deepEqual(declared, ["mcp", "mcp__ev__echo"]);
    return;
  }
  assert.deepEqual(declared, ["codemode", "mcp", "mcp__ev__echo", "tool_search"]);
  const [echoInfo, hiddenInfo] = r.perCommand.slice(0, 2).map((c) => JSON.parse(c.notifications[0].message));
  assert.deepEqual(echoInfo, {
    name: "mcp__ev__echo",
    exposure: "direct",
    annotations: { readOnlyHint: true, destructiveHint: false, idempotentHint: true, openWorldHint: false },
    namespace: "mcp__ev",
  });
  assert.equal(hiddenInfo, null, "a hidden tool is not registered");
  // The codemode script started its server; tool_search started none; the call of the tool it found did.
  assert.deepEqual(running[1], [true, false], "after the codemode script");
  assert.deepEqual(running[2], [true, false], "after tool_search");
  assert.deepEqual(running[3], [true, true], "after the call of the tool tool_search found");
  // (A codemode script's own calls are tool executions too, nested under its call.)
  const [codemode, search, sum] = ["codemode", "tool_search", "mcp__ds__get_sum"].map((name) => results.find((t) => t.toolName === name));
  const nested = results.find((t) => t.toolName === "mcp__ev__get_structured_content");
  assert.match(nested.text, /temperature/);
  assert.equal(codemode.isError, false, codemode.text);
  assert.match(codemode.text, /temperature/);
  assert.match(codemode.text, /mcp__ev__get_structured_content/);
  assert.match(codemode.text, /"hidden":\[\]/, "a hidden tool reached the script's ALL_TOOLS");
  assert.match(search.text, /mcp__ds__get_sum/);
  assert.ok(r.requests[2].body.tools.some((t) => t.function.name === "mcp__ds__get_sum"), "tool_search declared the tool");
  assert.match(sum.text, /5/);
  await waitFor(() => [codemodeDir, deferredDir].every((d) => processesIn(d).length === 0), 5000, "servers to be gone after Pi exits");
});

piTest("first run, no cache: a codemode script's servers are listed before it runs", { ...OPTS, pis: PI_BUILTIN_MCP }, async (pi) => {
  const dir = join(scratch, `first-run-${pi}`);
  mkdirSync(dir);
  const config = { mcpServers: { ev: everything({ cwd: dir, exposure: "codemode" }) } };
  const steps = [{ tool_calls: [{ name: "codemode", arguments: { code: "return await tools.mcp__ev__get_sum({ a: 4, b: 5 });" } }] }, { text: "done" }];
  let startedBeforeFirstRequest;
  const r = await runPi({
    pi,
    extensionDir: [root, "builtin:codemode"],
    mcpConfig: config,
    script: { steps },
    onLlmRequest: (record) => {
      if (record.index === 0) startedBeforeFirstRequest = processesIn(dir).length;
    },
  });
  assert.equal(r.code, 0, r.stderr);
  assert.equal(startedBeforeFirstRequest, 0);
  const codemode = r.toolResults.find((t) => t.toolName === "codemode");
  assert.equal(codemode.isError, false, codemode.text);
  assert.match(codemode.text, /9/);
  await waitFor(() => processesIn(dir).length === 0, 5000, "servers to be gone after Pi exits");
});

piTest("autoEnableCodemode: false leaves Pi's codemode off; the tools stay behind the mcp tool", { ...OPTS, pis: PI_BUILTIN_MCP }, async (pi) => {
  const dir = join(scratch, `no-auto-codemode-${pi}`);
  mkdirSync(dir);
  const config = { autoEnableCodemode: false, mcpServers: { ev: everything({ cwd: dir, exposure: "codemode" }) } };
  const steps = [mcp({ tool: "ev_echo", args: { message: "still reachable" } }), { text: "done" }];
  const r = await runPi({ pi, extensionDir: [root, "builtin:codemode"], mcpConfig: config, script: { steps } });
  assert.equal(r.code, 0, r.stderr);
  assert.deepEqual(r.requests[0].body.tools.map((t) => t.function.name), ["mcp"]);
  assert.match(r.stderr, /neither is active \(autoEnableCodemode is false\); they stay callable through the mcp tool/);
  assert.equal(r.toolResults[0].text, "Echo: still reachable");
  await waitFor(() => processesIn(dir).length === 0, 5000, "servers to be gone after Pi exits");
});

piTest("Pi's --tools and --exclude-tools bound what the mcp tool calls", OPTS, async (pi) => {
  const dir = join(scratch, `run-tools-${pi}`);
  mkdirSync(dir);
  const config = { mcpServers: { ev: everything({ cwd: dir }) } };
  const steps = [mcp({ tool: "ev_echo", args: { message: "named" } }), mcp({ tool: "ev_get-sum", args: { a: 1, b: 2 } }), { text: "done" }];
  const allowed = await runPi({ pi, extensionDir: root, mcpConfig: config, script: { steps }, extraArgs: ["--tools", "mcp,mcp__ev__echo"] });
  assert.equal(allowed.code, 0, allowed.stderr);
  const [echo, sum] = allowed.toolResults;
  assert.equal(echo.text, "Echo: named");
  assert.equal(sum.details.error, "tool_excluded");
  assert.match(sum.text, /not available in this run: `--tools mcp,mcp__ev__echo` does not name mcp__ev__get_sum/);
  const excluded = await runPi({ pi, extensionDir: root, mcpConfig: config, script: { steps }, extraArgs: ["--exclude-tools", "mcp__ev__get_*"] });
  assert.equal(excluded.code, 0, excluded.stderr);
  assert.equal(excluded.toolResults[0].text, "Echo: named");
  assert.match(excluded.toolResults[1].text, /`--exclude-tools mcp__ev__get_\*` excludes mcp__ev__get_sum/);
  await waitFor(() => processesIn(dir).length === 0, 5000, "servers to be gone after Pi exits");
});

piTest("auth.provider sends the credential Pi holds for a provider an extension registers, asked again at each connect; none: /login", OPTS, async (pi) => {
  const url = `${proxy.url}/mcp`;
  // The proxy wants "Bearer from-a-command" (see before()): the provider's key is that token.
  const config = { mcpServers: { web: { url, auth: { provider: "test-provider" } }, nokey: { url, auth: { provider: "nobody" } } } };
  const steps = [
    mcp({ tool: "web_echo", args: { message: "with Pi's credential" } }),
    mcp({ connect: "nokey" }),
    { text: "done" },
    // After `/provider-key rotated`: Pi's credential is asked for again at the next connect.
    mcp({ connect: "web" }),
    { text: "done" },
  ];
  const started = proxy.requests.length;
  const r = await runPiRpc({
    pi,
    extensionDir: [root, REGISTRY_EXTENSION],
    mcpConfig: config,
    script: { steps },
    env: { PI_TEST_PROVIDER: JSON.stringify({ name: "test-provider", apiKey: "from-a-command" }) },
    commands: ["go", "/provider-key rotated", "again"],
  });
  assert.equal(r.code, 0, r.stderr);
  const [web, nokey, rotated] = toolResultsOf(r.events);
  assert.equal(web.text, "Echo: with Pi's credential", web.text);
  assert.equal(nokey.details.error, "auth_required", nokey.text);
  assert.match(nokey.text, /Pi has no credential for the provider "nobody"[^]*\/login nobody/);
  // The proxy takes only the first key: with the new one the server refuses.
  assert.equal(rotated.isError, true, rotated.text);
  const sent = new Set(proxy.requests.slice(started).map((q) => q.headers.authorization));
  assert.deepEqual([...sent].sort(), ["Bearer from-a-command", "Bearer rotated"]);
  assert.doesNotMatch(JSON.stringify(r.events), /from-a-command|rotated/, "the credential reached an event");
});

piTest("--no-mcp turns pi-mcp-native off for the run: no tool, no /mcp, no server", OPTS, async (pi) => {
  const dir = join(scratch, `no-mcp-${pi}`);
  mkdirSync(dir);
  const config = { mcpServers: { eager: everything({ cwd: dir, lifecycle: "eager" }) } };
  const commands = [{ type: "get_commands" }, "/mcp"];
  const r = await runPiRpc({ pi, extensionDir: root, mcpConfig: config, commands, extraArgs: ["--no-mcp"] });
  assert.equal(r.code, 0, r.stderr);
  const [list, mcpCommand] = r.perCommand;
  assert.deepEqual(list.response.data.commands.filter((c) => /mcp/.test(c.name)), []);
  assert.equal(mcpCommand.notifications.length, 0);
  assert.deepEqual(processesIn(dir), []);
  // Pi < 0.99 takes the word after an extension's flag as its value: `--no-mcp` must not
  // come right before the prompt there.
  const extraArgs = ["--no-mcp", "--offline"];
  const run = await runPi({ pi, extensionDir: root, mcpConfig: config, script: { steps: [{ text: "done" }] }, extraArgs });
  assert.equal(run.code, 0, run.stderr);
  assert.equal((run.requests[0].body.tools ?? []).some((t) => t.function.name === "mcp"), false);
});

piTest("servers other extensions register: read at session start, followed later (also when withdrawn); a file's entry wins", { ...OPTS, pis: PI_BUILTIN_MCP }, async (pi) => {
  const dir = join(scratch, `registered-${pi}`);
  mkdirSync(dir);
  const register = {
    atLoad: { reg: everything({ cwd: dir }), shadow: { command: "never-started" } },
    later: { late: everything({ cwd: dir }) },
    drop: ["reg"],
  };
  const config = { mcpServers: { shadow: everything({ cwd: dir }) } };
  const steps = [
    mcp({}),
    mcp({ tool: "reg_echo", args: { message: "registered" } }),
    mcp({ tool: "shadow_echo", args: { message: "file" } }),
    mcp({ tool: "late_echo", args: { message: "later" } }),
    { text: "done" },
    // After /unregister-later.
    mcp({ tool: "reg_echo", args: { message: "gone" } }),
    { text: "done" },
  ];
  const r = await runPiRpc({
    pi,
    extensionDir: [root, REGISTRY_EXTENSION],
    mcpConfig: config,
    script: { steps },
    env: { PI_TEST_REGISTER: JSON.stringify(register) },
    commands: ["/register-later", "go", "/unregister-later", "again"],
  });
  assert.equal(r.code, 0, r.stderr);
  assert.doesNotMatch(r.stderr, /no loaded extension connects MCP servers/);
  const [status, reg, shadow, late, withdrawn] = toolResultsOf(r.events);
  assert.match(status.text, /registered by the Pi extension \S*pi-registry-extension\S*: reg, late/);
  assert.equal(reg.text, "Echo: registered");
  assert.equal(shadow.text, "Echo: file");
  assert.equal(late.text, "Echo: later");
  assert.equal(withdrawn.details.error, "tool_not_found", withdrawn.text);
  assert.match(withdrawn.text, /^Tool "reg_echo" not found\. Did you mean: late_echo, shadow_echo\?/);
  await waitFor(() => processesIn(dir).length === 0, 5000, "servers to be gone after Pi exits");
});

/** `pi-mcp args…` in `cwd` with HOME at `home` (no trust decision saved there). */
function pimcp(cwd, home, args) {
  const env = { ...process.env, HOME: home, PI_CODING_AGENT_DIR: join(home, ".pi", "agent") };
  return spawnSync(process.execPath, [join(root, "bin", "pi-mcp.mjs"), ...args], { cwd, env, encoding: "utf8", timeout: 30_000 });
}

test("pi-mcp: a server whose credential is a Pi provider's says it can be used only inside Pi", () => {
  const home = join(scratch, "home-provider");
  mkdirSync(join(home, ".pi", "agent"), { recursive: true });
  writeFileSync(join(home, ".pi", "agent", "mcp.json"), JSON.stringify({ mcpServers: { web: { url: `${proxy.url}/mcp`, auth: { provider: "github" } } } }));
  const run = pimcp(scratch, home, ["connect", "web"]);
  assert.equal(run.status, 1);
  assert.match(run.stdout, /credential is Pi's for the provider "github" \(`auth\.provider`\), so it can be used only inside Pi/);
});

test("pi-mcp in a fresh repository: its .mcp.json's !command is refused, naming the file and --approve", () => {
  const home = join(scratch, "home");
  const repo = join(scratch, "repo");
  mkdirSync(join(home, ".pi", "agent"), { recursive: true });
  mkdirSync(repo);
  const ran = join(scratch, "command-ran");
  const server = everything({ cwd: repo, env: { TOKEN: `!touch ${ran} && echo t0k` } });
  writeFileSync(join(repo, ".mcp.json"), JSON.stringify({ mcpServers: { repo: server } }));

  const refused = pimcp(repo, home, ["call", "repo_echo", '{"message":"hi"}']);
  assert.equal(refused.status, 1, refused.stderr);
  assert.match(refused.stdout, new RegExp(`env "TOKEN" is a !command in ${join(repo, ".mcp.json").replace(/[.]/g, "\\.")}, a project file`));
  assert.match(refused.stdout, /--approve/);
  assert.equal(existsSync(ran), false, "the command ran");

  const approved = pimcp(repo, home, ["--approve", "call", "repo_echo", '{"message":"hi"}']);
  assert.equal(approved.status, 0, approved.stdout + approved.stderr);
  assert.equal(approved.stdout.trim(), "Echo: hi");
  assert.equal(existsSync(ran), true, "the command did not run");
});
