// The extension inside the real Pi (headless, scripted fake LLM): the model's view of every mode
// (stdio and Streamable HTTP servers), the /mcp and /mcp-auth commands over RPC, and no server left
// running afterwards; each case on Pi 0.87.1, 1.5.2 and 1.6.0, the load test also on the legacy Pi 0.73.1.
import { after, before, test } from "node:test";
import assert from "node:assert/strict";
import { existsSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { encode } from "gpt-tokenizer/encoding/o200k_base";
import { row } from "./helpers/matrix.mjs";
import { assertRan, PI_073, PI_VERSIONS, piTest, runPi, runPiRpc, toolResultsOf } from "./helpers/pi.mjs";
import { everything, everythingHttp, faulty, filesystem, filledCache, freePort, memory, processesIn, root, waitFor } from "./helpers/servers.mjs";


const OPTS = { timeout: 120_000 };
const mcp = (args) => ({ tool_calls: [{ name: "mcp", arguments: args }] });
let serverCwd;
let config;

before(() => {
  serverCwd = mkdtempSync(join(tmpdir(), "pi-mcp-native-e2e-"));
  config = {
    mcpServers: {
      everything: everything({ cwd: serverCwd }),
      memory: memory(join(serverCwd, "memory.jsonl"), { cwd: serverCwd }),
    },
  };
});
after(() => rmSync(serverCwd, { recursive: true, force: true }));

piTest("the model uses every mode through the mcp tool", OPTS, async (pi) => {
  const steps = [
    mcp({}),
    mcp({ search: "echo" }),
    mcp({ describe: "everything_echo" }),
    mcp({ tool: "everything_echo", args: { message: "hi" } }),
    mcp({ tool: "everything_echo", args: '{"message":"hi again"}' }),
    mcp({ server: "memory" }),
    mcp({ tool: "everything_no_such_tool" }),
    mcp({ tool: "everything_trigger-long-running-operation", args: { duration: 1, steps: 3 } }),
    { text: "done" },
  ];
  const r = await runPi({ pi, extensionDir: root, mcpConfig: config, script: { steps } });
  assertRan(r);
  const [status, search, describe, call, again, list, missing, long] = r.toolResults;
  assert.equal(r.toolResults.length, 8, JSON.stringify(r.toolResults, null, 2));
  assert.match(status.text, /everything/);
  assert.match(status.text, /memory/);
  assert.match(search.text, /^everything_echo/m);
  assert.match(describe.text, /message/);
  assert.equal(call.text, "Echo: hi");
  assert.equal(call.isError, false);
  assert.equal(again.text, "Echo: hi again");
  assert.match(list.text, /memory_create_entities/);
  assert.equal(missing.isError, true, "failed calls are flagged as errors");
  assert.equal(missing.details.error, "tool_not_found");
  assert.equal(long.isError, false, long.text);
  // Progress notifications of the running call reach Pi as partial results.
  const updates = r.events.filter((e) => e.type === "tool_execution_update" && e.toolCallId === long.toolCallId);
  const partial = updates.map((e) => (e.partialResult?.content ?? []).map((c) => c.text).join("")).join("\n");
  assert.match(partial, /everything_trigger-long-running-operation: \d\/3/, JSON.stringify(updates));

  const tools = r.requests[0].body.tools;
  assert.deepEqual(tools.map((t) => t.function.name), ["mcp"]);
  const surface = JSON.stringify(tools);
  const tokens = encode(surface).length;
  console.log(`# tool surface as sent by Pi: ${Buffer.byteLength(surface)} bytes, ${tokens} o200k tokens`);
  assert.ok(tokens <= 300, `the tool surface grew to ${tokens} tokens`);
  console.log(`# spawn → first LLM request: ${r.timing.firstRequestMs} ms`);
  await waitFor(() => processesIn(serverCwd).length === 0, 5000, "servers to be gone after Pi exits");
});

piTest("a project's .pi/mcp.json is used only in a trusted project, and status says so", OPTS, async (pi) => {
  const projectFiles = { ".pi/mcp.json": { mcpServers: { local: everything({ cwd: serverCwd }) } } };
  const steps = [mcp({}), { text: "done" }];
  const untrusted = await runPi({ pi, extensionDir: root, mcpConfig: config, projectFiles, script: { steps }, extraArgs: ["--no-approve"] });
  assertRan(untrusted);
  const [status] = untrusted.toolResults;
  assert.doesNotMatch(status.text, /^\S+ local: /m);
  assert.match(status.text, /\.pi\/mcp\.json: not used, because Pi does not trust this project .*servers "local"/);
  const trusted = await runPi({ pi, extensionDir: root, mcpConfig: config, projectFiles, script: { steps }, extraArgs: ["--approve"] });
  assertRan(trusted);
  assert.match(trusted.toolResults[0].text, /^\S+ local: /m);
  assert.doesNotMatch(trusted.toolResults[0].text, /does not trust/);
});

piTest("--mcp-config <file> replaces ~/.pi/agent/mcp.json", OPTS, async (pi) => {
  const file = join(serverCwd, "other-mcp.json");
  writeFileSync(file, JSON.stringify({ mcpServers: { other: everything({ cwd: serverCwd }) } }));
  const steps = [mcp({}), mcp({ tool: "other_echo", args: { message: "from --mcp-config" } }), { text: "done" }];
  const r = await runPi({ pi, extensionDir: root, mcpConfig: config, script: { steps }, extraArgs: ["--mcp-config", file] });
  assertRan(r);
  const [status, call] = r.toolResults;
  assert.match(status.text, /^\S+ other: /m);
  assert.doesNotMatch(status.text, /everything|memory/);
  assert.equal(call.text, "Echo: from --mcp-config");
  await waitFor(() => processesIn(serverCwd).length === 0, 5000, "servers to be gone after Pi exits");
});

piTest("the last @mariozechner release loads the extension and calls a tool", { ...OPTS, pis: [PI_073] }, async (pi) => {
  const steps = [mcp({ tool: "everything_echo", args: { message: "legacy" } }), { text: "done" }];
  const r = await runPi({ pi, extensionDir: root, mcpConfig: config, script: { steps } });
  assertRan(r);
  assert.equal(r.toolResults[0]?.text, "Echo: legacy", r.stderr);
  await waitFor(() => processesIn(serverCwd).length === 0, 5000, "servers to be gone after Pi exits");
});

piTest("/mcp and its subcommands over RPC: status, reconnect, tools, doctor, disable and enable", OPTS, async (pi) => {
  const commands = ["/mcp", "/mcp reconnect everything", "/mcp status", "/mcp tools", "/mcp doctor", "/mcp disable memory", "/mcp status", "/mcp enable memory", "/mcp status"];
  const r = await runPiRpc({ pi, extensionDir: root, mcpConfig: config, commands });
  assertRan(r);
  const [plain, reconnect, status, tools, doctor, disable, off, enable, on] = r.perCommand.map((c) => c.notifications.map((n) => n.message).join("\n"));
  // Outside the TUI, /mcp alone prints the status.
  assert.match(plain, /\d\/2 servers connected[^]*everything/);
  assert.match(reconnect, /everything_echo/);
  // No cache yet: the session start connects both servers in the background to fill it.
  assert.match(status, /[012]\/2 servers connected[^]*✓ everything: connected/);
  assert.match(tools, /everything_get-sum/);
  assert.match(tools, /\n- everything_echo \(read-only, idempotent\)\n/, "each tool with its hints");
  assert.match(doctor, /✓ \S*mcp\.json \[Pi\]: everything, memory/);
  // Each connection with its tools' hints.
  assert.match(doctor, /Connections:\n  ✓ everything: \d+ ms, \d+ tools\n {6}tools: \d+ read-only, .*\n  ✓ memory: \d+ ms, \d+ tools\n {6}tools: \d+ destructive, /);
  assert.ok(r.statuses.some((s) => s.key === "mcp" && /MCP/.test(s.text ?? "")), "footer status is set");
  // Turned off and on again in the file it comes from; status follows.
  assert.match(disable, /^Server "memory" turned off: saved to \S*mcp\.json\.$/);
  assert.match(off, /⊘ memory: disabled/);
  assert.match(enable, /^Server "memory" turned on: saved to \S*mcp\.json\.$/);
  assert.doesNotMatch(on, /memory: disabled/);
  await waitFor(() => processesIn(serverCwd).length === 0, 5000, "servers to be gone after Pi exits");
});

piTest("five configured servers, each with a description: the tool surface Pi sends stays ≤ 300 o200k tokens", OPTS, async (pi) => {
  // The descriptions of these servers in the search eval (fixtures/search-eval/servers.json).
  const describe = (server, description) => ({ ...server, description });
  const five = {
    mcpServers: {
      everything: describe(config.mcpServers.everything, "A test server from the MCP project that exercises every feature of the protocol, for developers of MCP clients."),
      memory: describe(config.mcpServers.memory, "A persistent memory kept as a local knowledge graph, so that the assistant remembers information about the user across chats."),
      filesystem: describe(filesystem(serverCwd, { cwd: serverCwd }), "File system operations on the local machine, limited to the directories it is allowed to use."),
      git: describe(faulty([], { cwd: serverCwd }), "Reads, searches and manipulates Git repositories."),
      playwright: describe(faulty(["x"], { cwd: serverCwd }), "Browser automation with Playwright: the assistant works with web pages through structured accessibility snapshots instead of screenshots."),
    },
  };
  const r = await runPi({ pi, extensionDir: root, mcpConfig: five, script: { steps: [{ text: "done" }] } });
  assertRan(r);
  const tools = r.requests[0].body.tools;
  assert.deepEqual(tools.map((t) => t.function.name), ["mcp"]);
  const surface = JSON.stringify(tools);
  const tokens = encode(surface).length;
  console.log(`# tool surface with 5 described servers: ${Buffer.byteLength(surface)} bytes, ${tokens} o200k tokens`);
  assert.match(tools[0].function.description, /git: Reads, searches and manipulates Git…/);
  assert.ok(tokens <= 300, `the tool surface grew to ${tokens} tokens`);
  await waitFor(() => processesIn(serverCwd).length === 0, 5000, "servers to be gone after Pi exits");
});

piTest("direct tools are registered from the cache and called like any Pi tool", OPTS, async (pi) => {
  const direct = { mcpServers: { everything: everything({ cwd: serverCwd, directTools: ["echo", "get-sum"] }) } };
  // Fill a metadata cache with the native API, then give it to Pi.
  const cacheJson = await filledCache(direct);

  const steps = [
    { tool_calls: [{ name: "everything_echo", arguments: { message: "direct" } }] },
    { tool_calls: [{ name: "everything_get-sum", arguments: { a: 2, b: 3 } }] },
    { tool_calls: [{ name: "everything_get-sum", arguments: { a: "4", b: "5" } }] },
    { text: "done" },
  ];
  const r = await runPi({ pi, extensionDir: root, mcpConfig: direct, cacheJson, script: { steps } });
  assertRan(r);
  const names = r.requests[0].body.tools.map((t) => t.function.name).sort();
  assert.deepEqual(names, ["everything_echo", "everything_get-sum", "mcp"]);
  const sum = r.requests[0].body.tools.find((t) => t.function.name === "everything_get-sum");
  assert.deepEqual(Object.keys(sum.function.parameters.properties).sort(), ["a", "b"]);
  const [echo, added, fromText] = r.toolResults;
  assert.equal(echo.text, "Echo: direct", JSON.stringify(r.toolResults));
  assert.equal(echo.isError, false);
  assert.match(added.text, /5/);
  assert.equal(fromText.isError, false, fromText.text);
  assert.match(fromText.text, /9/);
  await waitFor(() => processesIn(serverCwd).length === 0, 5000, "servers to be gone after Pi exits");
});

/** The text of the system messages of a request the fake LLM got. */
const systemText = (request) =>
  request.body.messages
    .filter((m) => m.role === "system" || m.role === "developer")
    .map((m) => (typeof m.content === "string" ? m.content : m.content.map((c) => c.text ?? "").join("")))
    .join("\n");

// On Pi 0.73 (no prompt sections) the section is appended to the prompt.
piTest("the system prompt names the servers reached through mcp, a summary each: 30, then +N more, the same bytes in every request and run", { ...OPTS, pis: [...PI_VERSIONS, PI_073] }, async (pi) => {
  // server-everything (its summary from the instructions in the cache) and 31 servers that never
  // start (their descriptions); a one-shot run that calls a tool, then a second run.
  const servers = { everything: everything({ cwd: serverCwd }) };
  for (let i = 1; i <= 31; i++) servers[`idle-${String(i).padStart(2, "0")}`] = { command: "/nonexistent/idle", description: `Idle server ${i}\nnot this line` };
  const cacheJson = await filledCache({ mcpServers: { everything: servers.everything } });
  const steps = [mcp({ tool: "everything_echo", args: { message: "hi" } }), { text: "done" }];
  const first = await runPi({ pi, extensionDir: root, mcpConfig: { mcpServers: servers }, cacheJson, script: { steps } });
  assertRan(first);
  const sectionOf = (prompt) => /<mcp_servers>\n([\s\S]*?)\n<\/mcp_servers>/.exec(prompt)?.[1];
  const prompt = systemText(first.requests[0]);
  const section = sectionOf(prompt);
  assert.ok(section, prompt);
  const lines = section.split("\n");
  assert.equal(lines.length, 1 + 30 + 1, section);
  assert.match(lines[1], /^- everything: \S.*$/);
  assert.equal(lines[2], "- idle-01: Idle server 1");
  assert.equal(lines[30], "- idle-29: Idle server 29");
  assert.equal(lines[31], "+2 more: `mcp` without arguments lists them all.");
  assert.ok(encode(section).length <= 30 * 20 + 60, `${encode(section).length} tokens`);
  // The call connected everything: the section did not change (no patch, same prompt).
  assert.equal(first.toolResults[0].text, "Echo: hi");
  assert.equal(systemText(first.requests[1]), prompt);
  const second = await runPi({ pi, extensionDir: root, mcpConfig: { mcpServers: servers }, cacheJson, script: { steps: [{ text: "done" }] } });
  assertRan(second);
  assert.equal(sectionOf(systemText(second.requests[0])), section);
  await waitFor(() => processesIn(serverCwd).length === 0, 5000, "servers to be gone after Pi exits");
});

/** Aborts a hanging call from Pi `pi` over RPC → ms from the abort to the tool's end. */
async function abortHangingCall(pi) {
  const log = join(serverCwd, `fault-${pi}.log`);
  const hangConfig = { mcpServers: { s: faulty([], { cwd: serverCwd, env: { FAULT_LOG: log } }) } };
  const steps = [mcp({ tool: "s_hang", args: {} }), { text: "done" }];
  let abortedAt;
  let endedAt;
  const r = await runPiRpc({
    pi,
    extensionDir: root,
    mcpConfig: hangConfig,
    script: { steps },
    commands: ["call the hanging tool"],
    onEvent: (msg, send) => {
      if (msg.type === "tool_execution_start" && msg.toolName === "mcp") {
        setTimeout(() => {
          abortedAt = Date.now();
          send({ type: "abort", id: "abort-1" });
        }, 500);
      }
      if (msg.type === "tool_execution_end") endedAt = Date.now();
    },
  });
  assertRan(r);
  const [result] = toolResultsOf(r.events);
  assert.equal(result?.details?.error, "aborted", JSON.stringify(result));
  const ms = endedAt - abortedAt;
  assert.ok(ms < 1000, `Pi ${pi}: the tool ended ${ms} ms after the abort`);
  const told = await waitFor(() => existsSync(log) && readFileSync(log, "utf8"), 3000, "the server to be told");
  assert.match(told, /^cancelled \d+ cancelled by the user/);
  await waitFor(() => processesIn(serverCwd).length === 0, 5000, "servers to be gone after Pi exits");
  return ms;
}

row("9b", "abort mid-call from the real Pi (RPC `abort` while the tool runs)", import.meta.url, async ({ note }) => {
  for (const pi of PI_VERSIONS) {
    const ms = await abortHangingCall(pi);
    note(`Pi ${pi}: the abort ended the tool call as aborted ${ms} ms later`);
  }
  note("the server got notifications/cancelled; no process left");
});

piTest("a remote Streamable HTTP server in every mode; /mcp-auth over RPC", OPTS, async (pi) => {
  const remote = await everythingHttp("streamableHttp", await freePort());
  try {
    const httpConfig = { mcpServers: { web: { url: `http://127.0.0.1:${remote.port}/mcp`, auth: "bearer", bearerTokenEnv: "PI_E2E_UNSET_TOKEN" }, remote: { url: `http://127.0.0.1:${remote.port}/mcp` } } };
    const steps = [
      mcp({ server: "remote" }),
      mcp({ search: "echo", server: "remote" }),
      mcp({ describe: "remote_echo" }),
      mcp({ tool: "remote_echo", args: { message: "over http" } }),
      mcp({ tool: "web_echo", args: { message: "no token" } }),
      mcp({}),
      { text: "done" },
    ];
    const r = await runPi({ pi, extensionDir: root, mcpConfig: httpConfig, script: { steps } });
    assertRan(r);
    const [list, search, describe, call, unauthorized, status] = r.toolResults;
    assert.equal(r.toolResults.length, 6, JSON.stringify(r.toolResults, null, 2));
    assert.match(list.text, /^- remote_echo/m);
    assert.match(search.text, /^remote_echo/m);
    assert.match(describe.text, /message/);
    assert.equal(call.text, "Echo: over http");
    assert.equal(unauthorized.isError, true);
    assert.match(unauthorized.text, /PI_E2E_UNSET_TOKEN, which is not set/);
    assert.match(status.text, /✓ remote: connected/);
    assert.match(status.text, /🔒 web: needs auth/);

    const rpc = await runPiRpc({ pi, extensionDir: root, mcpConfig: httpConfig, commands: ["/mcp-auth web", "/mcp-auth"] });
    assertRan(rpc);
    const [help, usage] = rpc.perCommand.map((c) => c.notifications.map((n) => n.message).join("\n"));
    assert.match(help, /PI_E2E_UNSET_TOKEN/);
    assert.match(usage, /Usage: \/mcp-auth <server>[^]*- web/);
  } finally {
    await remote.stop();
  }
});
