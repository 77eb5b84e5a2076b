// Tool approval (`approveTools`) inside the real Pi (0.87.1, 1.5.2 and 1.6.0) against the scripted
// fake LLM: over RPC the question is Pi's select, answered by the test; a grant for the session is
// a session entry of names and a hash that a new session lacks and a resumed or forked one keeps;
// in json mode nobody can be asked, and `pi-mcp call --yes` run by the model through bash is
// refused (Pi sets PI_CODING_AGENT for what it runs). Under tmux, the dialog as the user sees it,
// and a grant kept across /reload.
import assert from "node:assert/strict";
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { assertRan, PI_BUILTIN_MCP, piTest, runPi, runPiRpc, toolResultsOf } from "./helpers/pi.mjs";
import { cli, filledCache, memory, processesIn, root, waitFor } from "./helpers/servers.mjs";
import { TMUX_SKIP, withPiTui } from "./helpers/tui.mjs";

const OPTS = { timeout: 120_000 };
const remove = (name) => ({ tool_calls: [{ name: "mcp", arguments: { tool: "mem_delete_entities", args: { entityNames: [name] } } }] });
/** Writes mcp.json in the sandbox `box`: server-memory (its graph in the home) behind `approveTools: "destructive"`. */
const prepare = (box) =>
  writeFileSync(join(box.agentDir, "mcp.json"), JSON.stringify({ settings: { approveTools: "destructive" }, mcpServers: { mem: memory(join(box.home, "graph.json")) } }));
const TITLE = `MCP server "mem" wants to run delete_entities

Hints (the server's own claim): destructive, idempotent
Arguments:
  entityNames: ["Ada"]

Asked because of \`settings.approveTools\` in ~/.pi/agent/mcp.json.`;
const OPTIONS = ["Allow once", "Allow delete_entities for this session", 'Allow everything of "mem" for this session', "Deny"];

piTest("over RPC: asked in Pi's select; a session grant is kept as an entry a new session lacks and a resumed or forked one keeps", OPTS, async (pi) => {
  const steps = ["Ada", "Bob", "Cy", "Dan", "Eve"].flatMap((name) => [remove(name), { text: "ok" }]);
  const answers = ["Allow delete_entities for this session", "Deny"];
  let firstSession;
  let entries;
  const r = await runPiRpc({
    pi,
    sessions: true,
    extensionDir: root,
    prepare,
    script: { steps },
    commands: [
      "delete Ada",
      "delete Bob",
      async ({ request }) => {
        firstSession = (await request({ type: "get_state" })).data.sessionFile;
        entries = readFileSync(firstSession, "utf8").split("\n").filter(Boolean).map((l) => JSON.parse(l));
      },
      { type: "new_session" },
      "delete Cy",
      async ({ request }) => assert.equal((await request({ type: "switch_session", sessionPath: firstSession })).success, true),
      "delete Dan",
      async ({ request }) => {
        const { messages } = (await request({ type: "get_fork_messages" })).data;
        const from = messages.find((m) => m.text === "delete Bob");
        assert.equal((await request({ type: "fork", entryId: from.entryId })).success, true);
      },
      "delete Eve",
    ],
    answer: (request) => (request.method === "select" ? { value: answers.shift() } : { cancelled: true }),
  });
  assertRan(r);
  const selects = r.dialogs.filter((d) => d.method === "select");
  assert.equal(selects.length, 2, JSON.stringify(selects, null, 2));
  assert.equal(selects[0].title, TITLE);
  assert.deepEqual(selects[0].options, OPTIONS);
  assert.equal(selects[0].timeout, 120_000, "Pi closes it by itself after the wait");
  assert.match(selects[1].title, /entityNames: \["Cy"\]/, "a new session has no grant");
  const results = toolResultsOf(r.events).map((t) => t.details?.error ?? "ran");
  assert.deepEqual(results, ["ran", "ran", "approval_denied", "ran", "ran"]);
  // The grant: one entry of names and a hash, nothing of the call.
  const grants = entries.filter((e) => e.type === "custom" && e.customType === "pi-mcp-native/approval");
  assert.equal(grants.length, 1, JSON.stringify(entries));
  assert.deepEqual(Object.keys(grants[0].data).sort(), ["hash", "server", "tool"]);
  assert.match(grants[0].data.hash, /^[0-9a-f]{64}$/);
  assert.doesNotMatch(JSON.stringify(grants[0]), /Ada|graph\.json/);
});

piTest("over RPC: a codemode script's call of a gated tool asks too (Pi ≥ 0.99)", { ...OPTS, pis: PI_BUILTIN_MCP }, async (pi) => {
  const dir = mkdtempSync(join(tmpdir(), "pi-mcp-native-approval-"));
  try {
    const mcpConfig = { settings: { approveTools: "destructive" }, mcpServers: { mem: memory(join(dir, "graph.json"), { cwd: dir, exposure: "codemode" }) } };
    const cacheJson = await filledCache(mcpConfig);
    await waitFor(() => processesIn(dir).length === 0, 5000, "the filler's server to stop");
    const code = [
      "const kept = await tools.mcp__mem__read_graph({});",
      "let denied; try { await tools.mcp__mem__delete_entities({ entityNames: ['Ada'] }); } catch (e) { denied = String(e.message ?? e); }",
      "return JSON.stringify({ kept: typeof kept, denied });",
    ].join("\n");
    const steps = [{ tool_calls: [{ name: "codemode", arguments: { code } }] }, { text: "done" }];
    const r = await runPiRpc({
      pi,
      extensionDir: [root, "builtin:codemode"],
      mcpConfig,
      cacheJson,
      script: { steps },
      commands: ["go"],
      answer: (request) => (request.method === "select" ? { value: "Deny" } : { cancelled: true }),
    });
    assertRan(r);
    const selects = r.dialogs.filter((d) => d.method === "select");
    assert.equal(selects.length, 1, "read_graph is read-only");
    assert.match(selects[0].title, /^MCP server "mem" wants to run delete_entities\n/);
    const codemode = toolResultsOf(r.events).find((t) => t.toolName === "codemode");
    assert.match(codemode.text, /The user declined the MCP tool/, codemode.text);
    await waitFor(() => processesIn(dir).length === 0, 5000, "servers to be gone after Pi exits");
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
});

piTest("in json mode nobody can be asked: approval_required; pi-mcp call --yes through bash is refused", OPTS, async (pi) => {
  const yes = `"${process.execPath}" "${cli}" call mem_delete_entities '{"entityNames":["Ada"]}' --yes`;
  const steps = [remove("Ada"), { tool_calls: [{ name: "bash", arguments: { command: yes } }] }, { text: "done" }];
  const r = await runPi({ pi, extensionDir: root, prepare, script: { steps }, extraArgs: ["--tools", "bash,mcp"] });
  assertRan(r);
  const [gated, bash] = r.toolResults;
  assert.equal(gated.details.error, "approval_required");
  assert.match(gated.text, /^The MCP tool "mem_delete_entities" of server "mem" needs the user's approval \(`settings\.approveTools` in ~\/\.pi\/agent\/mcp\.json\), and nobody can be asked here/);
  assert.equal(bash.toolName, "bash");
  assert.match(bash.text, /does not skip it inside a Pi session \(PI_CODING_AGENT is set\)/, bash.text);
});

piTest("in the terminal UI: the dialog as the user sees it, and a grant kept across /reload", { ...OPTS, skip: TMUX_SKIP }, async (pi) => {
  const steps = [remove("Ada"), { text: "Deleted Ada." }, remove("Bob"), { text: "Deleted Bob." }];
  await withPiTui({ pi, extensionDir: root, prepare, script: { steps }, timeoutMs: 100_000 }, async (tui) => {
    await tui.started();
    let screen = await tui.submit("delete Ada", /MCP server "mem" wants to run delete_entities/, "the approval dialog", 40_000);
    for (const line of TITLE.split("\n").filter(Boolean)) assert.ok(screen.includes(line), `"${line}" not on the screen:\n${screen}`);
    assert.match(screen, /→ Allow once *\n\s*Allow delete_entities for this session *\n\s*Allow everything of "mem" for this session *\n\s*Deny/);
    tui.keys("Down");
    await tui.waitFor(/→ Allow delete_entities for this session/, "the cursor on the session grant");
    tui.keys("Enter");
    await tui.waitFor(/Deleted Ada\./, "the answer after the call");
    await tui.submit("/reload", /Reloaded|reloaded/i, "the reload", 30_000);
    screen = await tui.submit("delete Bob", /Deleted Bob\./, "the call without a dialog", 40_000);
    assert.doesNotMatch(screen, /wants to run delete_entities/);
    assert.equal(tui.llm.requests.length, 4);
  });
});
