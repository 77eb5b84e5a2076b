// The real Pi's terminal UI under tmux (0.87.1, 1.5.2 and 1.6.0): how Pi lists the extension, the MCP
// footer, and the `/mcp` panel (its actions, and the exposure of tools it saves).
import assert from "node:assert/strict";
import { readFileSync } from "node:fs";
import { join } from "node:path";
import { PI_087, PI_16, piTest } from "./helpers/pi.mjs";
import { everything, faulty, filledCache, root } from "./helpers/servers.mjs";
import { TMUX_SKIP, withPiTui } from "./helpers/tui.mjs";

const OPTS = { timeout: 90_000, skip: TMUX_SKIP };

piTest("the startup list names the extension pi-mcp-native; no servers, no footer, no crash", OPTS, async (pi) => {
  await withPiTui({ pi, extensionDir: root, mcpConfig: { mcpServers: {} } }, async (tui) => {
    const screen = await tui.waitFor(/\[Extensions\][ ]*\n[ ]+pi-mcp-native[ ]*\n/, "the extension in the startup list");
    assert.doesNotMatch(screen, /index\.(m?js)/);
    // The footer line with the model: Pi is up, and still up a moment later.
    await tui.waitFor(/fake-model/, "the footer");
    await new Promise((r) => setTimeout(r, 500));
    assert.match(tui.screen(), /fake-model/);
  });
});

piTest("the footer follows the server when the prompt is typed before Pi's startup ends: 1/1 while the call is open and after it", OPTS, async (pi) => {
  const mcpConfig = { mcpServers: { everything: everything() } };
  // Its tools cached: the call goes before the server is listed, which waits until the server
  // is idle (the footer used to change only with a listing, and stayed at 0/1 while calls ran).
  const cacheJson = await filledCache(mcpConfig);
  const steps = [{ tool_calls: [{ name: "mcp", arguments: { tool: "everything_trigger-elicitation-request" } }] }, { text: "Declined." }];
  await withPiTui({ pi, extensionDir: root, mcpConfig, cacheJson, script: { steps } }, async (tui) => {
    // No tui.started(): typed at once, the prompt waits in the editor until Pi takes it.
    await tui.submit("ask me something", /MCP server "everything" asks:/, "the server's question", 40_000);
    // The call is open (the server waits for the answer): the server is connected, not yet listed.
    await tui.waitFor(/^MCP 1\/1 connected *$/m, "the footer while the call is open", 10_000);
    tui.keys("Down");
    await tui.waitFor(/^\s*→ Decline *$/m, "the cursor on Decline");
    tui.keys("Enter");
    await tui.waitFor(/Declined\./, "the model's answer");
    await tui.waitFor(/^MCP 1\/1 connected *$/m, "the footer after the call", 10_000);
  });
});

piTest("the /mcp panel: select a server, reconnect, see its tools, disable it (saved, comments kept), close", OPTS, async (pi) => {
  const text = `{
  // my servers
  "mcpServers": {
    "everything": ${JSON.stringify(everything())},
    "other": ${JSON.stringify(everything())} // the second one
  }
}
`;
  await withPiTui({ pi, extensionDir: root, mcpConfig: text }, async (tui) => {
    await tui.started();
    // The background fill starts 1 s into an idle session: on a busy machine Pi's startup outlasts it.
    await tui.submit("/mcp", /MCP servers[^]*› everything +(not started · 0|cached · \d+) tools · mcp tool · ~\/\.pi\/agent\/mcp\.json/, "the panel");
    tui.keys("Enter");
    await tui.waitFor(/MCP server everything[^]*› Tools[^]*Reconnect[^]*Disable/, "the server's actions");
    tui.keys("Down");
    tui.keys("Enter");
    await tui.waitFor(/connected · \d+ tools[^]*Reconnected|connected · \d+ tools[^]*everything: \d+ tools/, "the reconnect", 30_000);
    tui.keys("Up");
    tui.keys("Enter");
    await tui.waitFor(/Tools of everything[^]*everything_echo/, "its tools");
    // Each key waits for the screen the one before led to: an Escape still unread when the next
    // key comes would reach Pi with it as one sequence (Alt+Down), and be lost.
    tui.keys("Escape");
    await tui.waitFor(/^(?![^]*Tools of everything)[^]*MCP server everything[^]*› Tools/, "back at the server");
    tui.keys("Down");
    tui.keys("Down");
    tui.keys("Enter");
    await tui.waitFor(/Server "everything" turned off: saved to \S*mcp\.json/, "the disable");
    const saved = readFileSync(join(tui.box.agentDir, "mcp.json"), "utf8");
    assert.match(saved, /\/\/ my servers/);
    assert.match(saved, /\/\/ the second one/);
    assert.match(saved, /"everything": \{[^}]*"enabled": false\s*\}/);
    tui.keys("Escape");
    await tui.waitFor(/MCP servers[^]*everything +disabled · /, "the list with the server disabled (last)");
    tui.keys("Escape");
    await tui.waitFor(/^(?![^]*MCP servers)/, "the panel to close");
  });
});

piTest("the /mcp panel's exposure: type to filter, a tool direct and one hidden with their token cost before ctrl+s saves them (Pi 0.87: directTools/excludeTools; Pi ≥ 0.99: toolExposure; comments kept), the model gets the direct tool; leaving with changes not saved asks", OPTS, async (pi) => {
  const piKeys = pi !== PI_087;
  const config = { mcpServers: { everything: everything() } };
  const text = `{
  // my servers
  "mcpServers": {
    "everything": ${JSON.stringify(everything())} // the test server
  }
}
`;
  const cacheJson = await filledCache(config);
  const steps = [{ text: "first" }];
  await withPiTui({ pi, extensionDir: root, mcpConfig: text, cacheJson, script: { steps } }, async (tui) => {
    await tui.started();
    await tui.submit("/mcp", /MCP servers[^]*› everything +cached · \d+ tools · mcp tool · /, "the panel");
    // Typing narrows the list; Esc clears the filter first.
    tui.type("zzz");
    await tui.waitFor(/filter: zzz +\(0 of 1\)[^]*Nothing matches "zzz"/, "an empty match");
    tui.keys("BSpace", "BSpace", "BSpace");
    tui.type("every");
    await tui.waitFor(/filter: every +\(1 of 1\)[^]*› everything /, "the server found");
    tui.keys("Enter");
    await tui.waitFor(/MCP server everything[^]*› Tools/, "the server's actions");
    tui.keys("Enter");
    const where = piKeys ? "exposure/toolExposure" : "directTools/excludeTools";
    await tui.waitFor(new RegExp(`Tools of everything\\n.*saved to ~/\\.pi/agent/mcp\\.json as ${where}[^]*› All tools +mcp tool`), "its tools");
    tui.type("echo");
    await tui.waitFor(/filter: echo +\(1 of \d+\)[^]*› everything_echo +mcp tool · ≈ \d+ tokens/, "the echo tool");
    tui.keys("Space");
    const cost = await tui.waitFor(/everything_echo +direct \(was mcp tool\) · ≈ (\d+) tokens[^]*Direct tools: 1, ≈ (\d+) tokens declared to the model \(saved: 0, ≈ 0\) · unsaved: ctrl\+s saves/, "echo direct, its cost");
    const [, tool, total] = cost.match(/everything_echo +direct \(was mcp tool\) · ≈ (\d+) tokens[^]*Direct tools: 1, ≈ (\d+) tokens/);
    assert.equal(tool, total);
    tui.keys("Escape");
    await tui.waitFor(/^(?![^]*filter:)[^]*› All tools/, "the filter cleared");
    tui.type("get-sum");
    await tui.waitFor(/› everything_get-sum +mcp tool/, "get-sum");
    tui.keys("Space");
    await tui.waitFor(/› everything_get-sum +direct \(was mcp tool\)[^]*Direct tools: 2,/, "get-sum direct");
    tui.keys("Space");
    await tui.waitFor(/› everything_get-sum +hidden \(was mcp tool\)[^]*Direct tools: 1,/, "get-sum hidden");
    tui.keys("C-s");
    await tui.waitFor(/Exposure saved to \S*mcp\.json\./, "the save");
    const saved = readFileSync(join(tui.box.agentDir, "mcp.json"), "utf8");
    assert.match(saved, /\/\/ my servers/);
    assert.match(saved, /\/\/ the test server/);
    if (piKeys) assert.match(saved, /"toolExposure": \{\s*"echo": "direct",\s*"get-sum": "hidden"\s*\}/);
    else assert.match(saved, /"directTools": \["echo"\],\s*"excludeTools": \["get-sum"\]/);
    // A change left unsaved: closing asks; Keep editing stays, Discard leaves the file as it is.
    tui.keys("Escape");
    await tui.waitFor(/^(?![^]*filter:)[^]*everything_echo +direct · /, "the filter cleared, the saved state");
    await tui.waitFor(/› All tools +mixed/, "All tools");
    tui.keys("Space");
    await tui.waitFor(/› All tools +direct[^]*unsaved/, "all direct, unsaved");
    tui.keys("Escape");
    await tui.waitFor(/^(?![^]*Tools of everything)[^]*MCP server everything/, "back at the server");
    tui.keys("Escape");
    await tui.waitFor(/MCP servers\n filter: every [^]*everything +[^\n]*direct[^\n]*\(unsaved\)/, "the list as filtered, the server's change unsaved");
    tui.keys("Escape");
    await tui.waitFor(/^(?![^]*filter:)[^]*MCP servers/, "the list's filter cleared");
    tui.keys("Escape");
    await tui.waitFor(/Exposure changes are not saved: +› Save +Discard +Keep editing/, "the prompt");
    tui.keys("Left");
    await tui.waitFor(/Exposure changes are not saved: +Save +Discard +› Keep editing/, "Keep editing picked");
    tui.keys("Enter");
    await tui.waitFor(/^(?![^]*not saved:)[^]*MCP servers/, "still in the panel");
    tui.keys("Escape");
    await tui.waitFor(/not saved: +› Save/, "the prompt again");
    tui.keys("Right");
    await tui.waitFor(/not saved: +Save +› Discard/, "Discard picked");
    tui.keys("Enter");
    await tui.waitFor(/^(?![^]*MCP servers)/, "the panel to close");
    assert.equal(readFileSync(join(tui.box.agentDir, "mcp.json"), "utf8"), saved, "a discarded change writes nothing");
    // The next request declares the direct tool, not the hidden one.
    await tui.submit("hello", /first/, "the model's answer");
    const names = tui.llm.requests.at(-1).body.tools.map((t) => t.function?.name ?? t.name);
    assert.ok(names.includes(piKeys ? "mcp__everything__echo" : "everything_echo"), names.join(" "));
    assert.ok(!names.some((n) => n.includes("get-sum") || n.includes("get_sum")), names.join(" "));
  });
});

piTest("the /mcp panel lists a server not listed yet when its tools are opened, so that single tools can be picked", { ...OPTS, pis: [PI_16] }, async (pi) => {
  // No cache, and a server slow to answer initialize: the first-run fill is still listing it
  // when the panel opens.
  const config = { mcpServers: { slow: faulty(["slow-init=8000"]) } };
  await withPiTui({ pi, extensionDir: root, mcpConfig: config, script: { steps: [{ text: "first" }] } }, async (tui) => {
    await tui.started();
    await tui.submit("/mcp", /MCP servers[^]*› slow /, "the panel");
    tui.keys("Enter");
    await tui.waitFor(/MCP server slow[^]*› Tools/, "the server's actions");
    tui.keys("Enter");
    await tui.waitFor(/Tools of slow[^]*› All tools +mcp tool\n[^]*slow_echo +mcp tool · ≈ \d+ tokens/, "its tools, listed");
    tui.keys("Escape", "Escape", "Escape");
    await tui.waitFor(/^(?![^]*MCP servers)/, "the panel to close");
  });
});
