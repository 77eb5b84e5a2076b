// What servers ask, inside the real Pi (0.87.1, 1.5.2 and 1.6.0) against the scripted fake LLM: over RPC
// the test answers Pi's dialogs (elicitation as select/input, sampling's approval as confirm), and
// sampling runs on Pi's model (the fake LLM); in json mode nobody can be asked; Pi's abort closes
// an open question and the server is told (its wire tapped); a read resource's updates reach the
// user and the model. On Pi ≥ 1.5 Pi's resource tools are registered with its exposure rule and
// reached from a codemode script.
import assert from "node:assert/strict";
import { mkdtempSync, readFileSync, rmSync, statSync } from "node:fs";
import { tmpdir } from "node:os";
import { dirname, join } from "node:path";
import { after, before } from "node:test";
import { assertRan, PI_BUILTIN_MCP, piTest, runPi, runPiRpc, toolResultsOf } from "./helpers/pi.mjs";
import { everything, filledCache, processesIn, root, tapped, waitFor, wireOf } from "./helpers/servers.mjs";

const OPTS = { timeout: 120_000 };
const REGISTRY_EXTENSION = join(root, "__test__", "fixtures", "pi-registry-extension", "index.mjs");
const mcp = (args) => ({ tool_calls: [{ name: "mcp", arguments: args }] });
const elicit = mcp({ tool: "everything_trigger-elicitation-request" });
const sample = mcp({ tool: "everything_trigger-sampling-request", args: { prompt: "the weather" } });
let serverCwd;
let config;

before(() => {
  serverCwd = mkdtempSync(join(tmpdir(), "pi-mcp-native-client-"));
  config = { mcpServers: { everything: everything({ cwd: serverCwd }) } };
});
after(() => rmSync(serverCwd, { recursive: true, force: true }));

piTest("over RPC: elicitation answered, cancelled and declined in Pi's dialogs, sampling approved and declined", OPTS, async (pi) => {
  const steps = [elicit, { text: "ok" }, elicit, { text: "ok" }, elicit, { text: "ok" }, sample, { text: "Sunny, says Pi's model." }, { text: "ok" }, sample, { text: "ok" }];
  let forms = 0;
  let approvals = 0;
  const answer = (request) => {
    if (request.method === "confirm") return { confirmed: approvals++ === 0 };
    if (request.method === "input") return { value: request.title.startsWith("String (") ? "Ada" : "" };
    if (request.options?.includes("Answer")) return [{ value: "Answer" }, { cancelled: true }, { value: "Decline" }][forms++];
    if (request.options?.includes("Drums")) return { value: request.options.includes("✓ Drums") ? "Done" : "Drums" };
    if (request.options?.includes("Done")) return { value: "Done" };
    return { value: request.options.includes("Yes") ? "Yes" : request.options.at(-1) };
  };
  const r = await runPiRpc({ pi, extensionDir: root, mcpConfig: config, script: { steps }, commands: ["fill", "again", "decline", "sample", "sample again"], answer });
  assertRan(r);
  const [accepted, cancelled, refused, sampled, declined] = toolResultsOf(r.events);
  assert.match(accepted.text, /User provided the requested information![\s\S]*- Name: Ada/, accepted.text);
  assert.match(accepted.text, /"untitledMultipleSelectEnum": \[\s*"Drums"\s*\]/);
  assert.match(accepted.text, /- Favorite Integer: 42/, "left empty: the default");
  assert.match(cancelled.text, /User cancelled the elicitation dialog/);
  assert.match(refused.text, /User declined/);
  const intro = r.dialogs.find((d) => d.method === "select");
  assert.equal(intro.title, 'MCP server "everything" asks:\n\nPlease provide inputs for the following fields:');
  assert.deepEqual(intro.options, ["Answer", "Decline"]);

  assert.match(sampled.text, /"text": "Sunny, says Pi's model\."/, sampled.text);
  const confirm = r.dialogs.find((d) => d.method === "confirm");
  assert.equal(confirm.title, 'Allow MCP server "everything" to use the model?');
  assert.match(confirm.message, /Last message: Resource trigger-sampling-request context: the weather/);
  // The sampling request reached Pi's model with the server's system prompt.
  const samplingRequest = r.requests[7].body;
  assert.equal(samplingRequest.messages[0].content, "You are a helpful test server.");
  assert.match(JSON.stringify(samplingRequest.messages.at(-1)), /the weather/);
  assert.match(declined.text, /the user declined everything's sampling request/);
  await waitFor(() => processesIn(serverCwd).length === 0, 5000, "servers to be gone after Pi exits");
});

piTest("in json mode nobody can be asked: elicitation declined, sampling refused; the server's log in mcp.log", OPTS, async (pi) => {
  const steps = [elicit, sample, mcp({ tool: "everything_get-roots-list" }), { text: "done" }];
  const r = await runPi({ pi, extensionDir: root, mcpConfig: config, script: { steps }, keep: true });
  try {
    assertRan(r);
    const [declined, refused, roots] = r.toolResults;
    assert.match(declined.text, /User declined/);
    assert.match(refused.text, /needs the user's approval, but nobody can be asked here; `samplingAutoApprove: true`/);
    assert.match(roots.text, new RegExp(`URI: file://${r.cwd}`));
    const log = readFileSync(join(r.agentDir, "mcp.log"), "utf8");
    assert.match(log, /^\S+Z \[everything\] info everything-server: Roots updated: 1 root\(s\) received from client$/m);
  } finally {
    rmSync(dirname(r.home), { recursive: true, force: true });
  }
  await waitFor(() => processesIn(serverCwd).length === 0, 5000, "servers to be gone after Pi exits");
});

piTest("over RPC: a tool run as a task reports its progress and asks its question in a dialog", OPTS, async (pi) => {
  const steps = [mcp({ tool: "everything_simulate-research-query", args: { topic: "rust", ambiguous: true } }), { text: "ok" }];
  const answer = (request) => (request.method === "select" ? { value: request.options.includes("Answer") ? "Answer" : request.options[0] } : { cancelled: true });
  const r = await runPiRpc({ pi, extensionDir: root, mcpConfig: config, script: { steps }, commands: ["research"], answer });
  assertRan(r);
  const [result] = toolResultsOf(r.events);
  assert.match(result.text, /# Research Report: rust \(technical\)/, result.text);
  const updates = r.events.filter((e) => e.type === "tool_execution_update").map((e) => (e.partialResult?.content ?? []).map((c) => c.text).join(""));
  assert.ok(updates.includes("everything_simulate-research-query: Gathering sources..."), JSON.stringify(updates));
  assert.match(r.dialogs.find((d) => d.method === "select").title, /could have multiple interpretations/);
  await waitFor(() => processesIn(serverCwd).length === 0, 5000, "servers to be gone after Pi exits");
});

piTest("over RPC: a server's prompt is a command that sends its messages as the user's", OPTS, async (pi) => {
  const steps = [{ text: "It is sunny in Oslo." }];
  const r = await runPiRpc({
    pi,
    extensionDir: root,
    mcpConfig: config,
    script: { steps },
    // Listing the prompts lists the server, and its prompts become commands.
    commands: ["/mcp prompts everything", { type: "get_commands" }, "/mcp__everything__args-prompt Oslo", "/mcp__everything__args-prompt"],
    answer: () => ({ cancelled: true }),
  });
  assertRan(r);
  const commands = r.perCommand[1].response.data.commands.map((c) => c.name);
  assert.ok(commands.includes("mcp__everything__args-prompt"), JSON.stringify(commands));
  assert.match(JSON.stringify(r.requests[0].body.messages.at(-1)), /What's weather in Oslo\?/);
  const usage = r.perCommand[3].notifications.map((n) => n.message).join("\n");
  assert.equal(usage, "Missing required argument(s): city.\nUsage: /mcp__everything__args-prompt <city> [state]");
});

piTest("Pi's resource tools (Pi ≥ 0.99) under Pi's exposure rule: deferred by default, reached from a codemode script", { ...OPTS, pis: PI_BUILTIN_MCP }, async (pi) => {
  const dir = mkdtempSync(join(tmpdir(), "pi-mcp-native-resources-"));
  try {
    // A codemode server (Pi's default, as a server without `exposure` counts for them): the
    // tools are registered deferred, kept from the model's declared tools, reachable from scripts.
    const resourceConfig = { mcpServers: { ev: everything({ cwd: dir, exposure: "codemode" }) } };
    const cacheJson = await filledCache(resourceConfig);
    await waitFor(() => processesIn(dir).length === 0, 5000, "the filler's server to stop");
    const uri = "demo://resource/static/document/features.md";
    const script = [
      "const listed = await tools.list_mcp_resources({ server: 'ev' });",
      "const templates = await tools.list_mcp_resource_templates({});",
      `const read = await tools.read_mcp_resource({ server: 'ev', uri: '${uri}' });`,
      "return JSON.stringify({ first: listed.resources[0], count: listed.resources.length, template: templates.resourceTemplates[0], read: read.slice(0, 40) });",
    ].join("\n");
    const steps = [{ tool_calls: [{ name: "codemode", arguments: { code: script } }] }, { text: "done" }];
    const r = await runPiRpc({
      pi,
      extensionDir: [root, REGISTRY_EXTENSION, "builtin:codemode"],
      mcpConfig: resourceConfig,
      cacheJson,
      script: { steps },
      commands: ["/tool-info list_mcp_resources", "/tool-info read_mcp_resource", "go"],
    });
    assert.equal(r.code, 0, r.stderr);
    const declared = r.requests[0].body.tools.map((t) => t.function.name);
    assert.ok(!declared.some((name) => name.includes("mcp_resource")), JSON.stringify(declared));
    const [listInfo, readInfo] = r.perCommand.slice(0, 2).map((c) => JSON.parse(c.notifications[0].message));
    assert.deepEqual(listInfo, { name: "list_mcp_resources", exposure: "deferred", annotations: { readOnlyHint: true } });
    assert.equal(readInfo.exposure, "deferred");
    const codemode = toolResultsOf(r.events).find((t) => t.toolName === "codemode");
    assert.equal(codemode.isError, false, codemode.text);
    const out = JSON.parse(codemode.text.match(/\{.*\}/s)[0]);
    assert.equal(out.first.server, "ev");
    assert.match(out.first.uri, /^demo:\/\/resource\//);
    assert.ok(out.count > 1, JSON.stringify(out));
    assert.deepEqual(Object.keys(out.template).slice(0, 2), ["server", "uriTemplate"]);
    assert.match(out.read, /\S/);
    await waitFor(() => processesIn(dir).length === 0, 5000, "servers to be gone after Pi exits");
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
});

piTest("the model reads a resource, a template with args and a binary resource (saved to a private file)", OPTS, async (pi) => {
  const read = (args) => mcp({ server: "everything", ...args });
  const steps = [
    read({ read: "demo://resource/static/document/features.md" }),
    read({ read: "demo://resource/dynamic/text/{resourceId}", args: { resourceId: 7 } }),
    read({ read: "demo://resource/dynamic/blob/2" }),
    { text: "done" },
  ];
  // keep: the saved file lives in the run's private temp directory.
  const r = await runPi({ pi, extensionDir: root, mcpConfig: config, script: { steps }, keep: true });
  try {
    assertRan(r);
    const [doc, templated, blob] = r.toolResults;
    assert.match(doc.text, /# /, doc.text);
    assert.match(templated.text, /7/, templated.text);
    const path = blob.text.match(/saved to (\S+)\]$/)?.[1];
    assert.ok(path, blob.text);
    assert.equal(statSync(path).mode & 0o777, 0o600);
  } finally {
    rmSync(dirname(r.home), { recursive: true, force: true });
  }
  await waitFor(() => processesIn(serverCwd).length === 0, 5000, "servers to be gone after Pi exits");
});

piTest("over RPC: Pi's abort while a question is open closes its dialog and tells the server; the next call works", OPTS, async (pi) => {
  const wire = join(serverCwd, `wire-${pi}.log`);
  const tappedConfig = { mcpServers: { everything: tapped(everything({ cwd: serverCwd }), wire) } };
  const steps = [elicit, elicit, { text: "ok" }];
  let asked = 0;
  let open; // the field the user had not answered when Pi aborted
  const r = await runPiRpc({
    pi,
    extensionDir: root,
    mcpConfig: tappedConfig,
    script: { steps },
    commands: ["fill", "again"],
    // The first form is taken up, then aborted at its first field (typed); the second one is declined.
    answer: () => ({ value: asked++ === 0 ? "Answer" : "Decline" }),
    leaveOpen: (request) => request === open,
    onEvent: (msg, send) => {
      if (msg.type === "extension_ui_request" && msg.method === "input" && !open) {
        open = msg;
        send({ type: "abort", id: "abort-1" });
      }
      // The user answers after all: Pi dropped the dialog, the answer goes nowhere.
      if (msg.type === "response" && msg.id === "abort-1") send({ type: "extension_ui_response", id: open.id, value: "Ada" });
    },
  });
  assertRan(r);
  const [aborted, declined] = toolResultsOf(r.events);
  assert.equal(aborted.details?.error, "aborted", aborted.text);
  assert.equal(aborted.text, "Call to everything_trigger-elicitation-request was aborted; the server was told to stop.");
  assert.match(declined.text, /User declined/, declined.text);
  // Pi's RPC protocol has no message for a dialog it closes: the form asked nothing after the abort.
  assert.deepEqual(r.dialogs.filter((d) => d.command === "fill").map((d) => d.id), [r.dialogs[0].id, open.id]);
  const sent = wireOf(wire);
  const calls = sent.filter((m) => m.method === "tools/call");
  const cancelled = sent.find((m) => m.method === "notifications/cancelled");
  assert.equal(cancelled?.params.requestId, calls[0].id, JSON.stringify(sent));
  const answers = sent.filter((m) => m.result?.action).map((m) => m.result.action);
  assert.deepEqual(answers, ["cancel", "decline"], JSON.stringify(sent));
  // The same server process answered the next call.
  assert.equal(sent.filter((m) => m.method === "initialize").length, 1);
  await waitFor(() => processesIn(serverCwd).length === 0, 5000, "servers to be gone after Pi exits");
});

piTest("over RPC: a read resource the server updates is shown to the user and told to the model", OPTS, async (pi) => {
  const uri = "demo://resource/static/document/features.md";
  const updated = `MCP server "everything" updated ${uri}`;
  const steps = [mcp({ server: "everything", read: uri }), mcp({ tool: "everything_toggle-subscriber-updates" }), { text: "ok" }, { text: "It changed." }];
  const r = await runPiRpc({
    pi,
    extensionDir: root,
    mcpConfig: config,
    script: { steps },
    commands: [
      "read it and watch it",
      // server-everything sends an update at once and every 5 s after.
      ({ notifications }) => waitFor(() => notifications.some((n) => n.message === updated), 15_000, "the update to be shown"),
      "what changed?",
    ],
  });
  assertRan(r);
  const shown = r.notifications.filter((n) => n.message === updated && n.command !== "what changed?");
  assert.deepEqual(shown.map((n) => n.notifyType), ["info"]);
  const note = `${updated}, which was read earlier in this session: what was read may be out of date. Read it again for its current contents: mcp({ read: "${uri}", server: "everything" })`;
  const textOf = (m) => (typeof m.content === "string" ? m.content : (m.content ?? []).map((c) => c.text ?? "").join("\n"));
  const messages = r.requests.at(-1).body.messages;
  const told = messages.filter((m) => textOf(m).includes(updated));
  assert.equal(told.length, 1, JSON.stringify(messages));
  assert.equal(told[0].role, "user");
  assert.ok(textOf(told[0]).includes(note), textOf(told[0]));
  await waitFor(() => processesIn(serverCwd).length === 0, 5000, "servers to be gone after Pi exits");
});
