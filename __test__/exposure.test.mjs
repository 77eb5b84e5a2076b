// Exposure in the `/mcp` panel through the native API: the token estimate of direct tools'
// declarations against gpt-tokenizer's o200k count over the 52 real catalogs, and the preview
// and save of changes (the keys Pi 0.87 and Pi ≥ 0.99 get, comments kept, nothing saved on a
// bad change). The panel itself is driven under tmux in pi-tui.test.mjs.
import { after, before, describe, test } from "node:test";
import assert from "node:assert/strict";
import { createRequire } from "node:module";
import { mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { encode } from "gpt-tokenizer/encoding/o200k_base";
import { loadCatalogs } from "../bench/search-eval.mjs";

const { McpAdapter, configHash } = createRequire(import.meta.url)("../index.js");

/** An adapter in a fresh home whose cache holds `catalogs`, configured by `entry(server)`. */
function cachedAdapter(catalogs, entry, text) {
  const home = mkdtempSync(join(tmpdir(), "pi-mcp-exposure-"));
  const agentDir = join(home, "agent");
  mkdirSync(agentDir, { recursive: true });
  const mcpServers = {};
  const servers = {};
  for (const { server, tools, resources } of catalogs) {
    mcpServers[server] = { command: `never-started-${server}`, ...entry(server) };
    servers[server] = { configHash: configHash({ command: `never-started-${server}` }, {}), tools, resources, cachedAt: Date.now() };
  }
  writeFileSync(join(agentDir, "mcp.json"), text ?? JSON.stringify({ mcpServers }, null, 2));
  writeFileSync(join(agentDir, "mcp-cache.json"), JSON.stringify({ version: 1, servers }));
  const open = () => McpAdapter.open({ cwd: home, agentDir, env: { HOME: home } });
  return { home, file: join(agentDir, "mcp.json"), open, cleanup: () => rmSync(home, { recursive: true, force: true }) };
}

/** o200k tokens of what the model is given for a direct tool: its function, its prompt line. */
const o200k = (def) =>
  encode(JSON.stringify({ type: "function", function: { name: def.name, description: def.description, parameters: def.parameters } })).length +
  encode(`- ${def.name}: ${def.promptSnippet}`).length;

describe("the token estimate of direct tools", () => {
  // The bounds README "Exposure in the panel" states.
  const SERVER_BOUND = 0.1;
  const TOOL_BOUND = 0.3;
  const TOOL_P90_BOUND = 0.1;
  let home;
  after(() => home?.cleanup());

  test("stays within ±10 % of gpt-tokenizer's o200k count per server and ±30 % per tool (90 % of tools within ±10 %), over the 52 real catalogs", () => {
    const catalogs = loadCatalogs();
    assert.ok(catalogs.length >= 52, `${catalogs.length} catalogs`);
    home = cachedAdapter(catalogs, () => ({ directTools: true }));
    const adapter = home.open();
    const declared = new Map(adapter.directTools().tools.map((def) => [`${def.server}/${def.tool}`, def]));
    const preview = adapter.exposure([], false);
    const errors = [];
    const perServer = [];
    let compared = 0;
    for (const server of preview.servers) {
      let estimate = 0;
      let truth = 0;
      for (const tool of server.tools) {
        const def = declared.get(`${server.server}/${tool.tool}`);
        if (!def) continue; // a name another server has too: not declared
        const real = o200k(def);
        errors.push({ name: def.name, error: (tool.tokens - real) / real });
        estimate += tool.tokens;
        truth += real;
        compared++;
      }
      if (truth) perServer.push({ server: server.server, error: (estimate - truth) / truth, truth });
      assert.equal(server.direct.tokens, estimate, `${server.server}: its direct tools' sum`);
    }
    assert.ok(compared > 1000, `${compared} tools compared`);
    const worstServer = perServer.reduce((a, b) => (Math.abs(b.error) > Math.abs(a.error) ? b : a));
    const sorted = errors.map((e) => Math.abs(e.error)).sort((a, b) => a - b);
    const p90 = sorted[Math.floor(sorted.length * 0.9)];
    const worstTool = errors.reduce((a, b) => (Math.abs(b.error) > Math.abs(a.error) ? b : a));
    const pct = (x) => `${(x * 100).toFixed(1)} %`;
    console.log(`# token estimate over ${compared} tools of ${perServer.length} servers: worst server ${worstServer.server} ${pct(worstServer.error)}, per tool p90 ${pct(p90)}, worst tool ${worstTool.name} ${pct(worstTool.error)}`);
    for (const s of perServer) assert.ok(Math.abs(s.error) <= SERVER_BOUND, `${s.server}: estimate off by ${pct(s.error)} of ${s.truth} tokens`);
    assert.ok(Math.abs(worstTool.error) <= TOOL_BOUND, `${worstTool.name}: off by ${pct(worstTool.error)}`);
    assert.ok(p90 <= TOOL_P90_BOUND, `per tool p90 ${pct(p90)}`);
    const total = preview.direct;
    assert.equal(total.tools, preview.servers.reduce((n, s) => n + s.direct.tools, 0));
    assert.deepEqual(preview.saved, total, "nothing changed: the saved cost is the same");
  });
});

describe("exposure changes through the native API", () => {
  const catalogs = loadCatalogs(["filesystem", "memory"]);
  const text = `{
  // my servers
  "mcpServers": {
    "filesystem": { "command": "never-started-filesystem" }, // files
    "memory": { "command": "never-started-memory", "directTools": ["read_graph"] }
  }
}
`;
  let home;
  before(() => {
    home = cachedAdapter(catalogs, () => ({}), text);
  });
  after(() => home?.cleanup());
  const byName = (preview, server) => preview.servers.find((s) => s.server === server);
  const states = (server) => Object.fromEntries(server.tools.map((t) => [t.tool, t.state]));

  test("a preview shows each tool's state and cost now and once saved, and saves nothing", () => {
    const adapter = home.open();
    const now = adapter.exposure([], false);
    const memory = byName(now, "memory");
    assert.equal(memory.keys, "directTools");
    assert.equal(memory.file, home.file);
    assert.equal(memory.state, "mixed");
    assert.equal(states(memory).read_graph, "direct");
    assert.deepEqual(memory.direct, memory.saved);
    assert.equal(memory.direct.tools, 1);
    const changes = [
      { server: "filesystem", choice: "direct" },
      { server: "filesystem", tool: "write_file", choice: "hidden" },
      { server: "memory", tool: "read_graph", choice: "mcp" },
    ];
    const preview = adapter.exposure(changes, false);
    const fs = byName(preview, "filesystem");
    assert.equal(fs.changed, true);
    assert.equal(states(fs).write_file, "hidden");
    assert.equal(states(fs).read_text_file, "direct");
    assert.equal(fs.tools.find((t) => t.tool === "write_file").saved, "mcp");
    assert.equal(fs.direct.tools, fs.tools.length - 1);
    assert.ok(fs.direct.tokens > 1000, `${fs.direct.tokens} tokens`);
    assert.equal(byName(preview, "memory").direct.tools, 0);
    assert.equal(preview.saved.tools, 1);
    assert.equal(preview.direct.tools, fs.direct.tools);
    assert.equal(readFileSync(home.file, "utf8"), text, "a preview writes nothing");
  });

  test("Pi 0.87 gets directTools and excludeTools, Pi ≥ 0.99 exposure and toolExposure; comments are kept", () => {
    const adapter = home.open();
    const saved = adapter.saveExposure(
      [
        { server: "filesystem", choice: "direct" },
        { server: "filesystem", tool: "write_file", choice: "hidden" },
      ],
      false,
    );
    assert.deepEqual(saved, [{ file: home.file, changed: true }]);
    let written = readFileSync(home.file, "utf8");
    assert.match(written, /\/\/ my servers/);
    assert.match(written, /\/\/ files/);
    assert.match(written, /"filesystem": \{ "command": "never-started-filesystem",\s*"directTools": true,\s*"excludeTools": \["write_file"\]/);
    // Reopened, as the extension does after a save: the tools are declared.
    const after = home.open();
    const direct = after.directTools().tools.map((t) => t.name);
    assert.ok(direct.includes("filesystem_read_text_file") && !direct.includes("filesystem_write_file"), direct.join(" "));
    // On Pi ≥ 0.99 the memory server's directTools becomes Pi's keys.
    after.saveExposure([{ server: "memory", tool: "create_entities", choice: "direct" }], true);
    written = readFileSync(home.file, "utf8");
    assert.match(written, /"memory": \{ "command": "never-started-memory",\s*"toolExposure": \{\s*"create_entities": "direct",\s*"read_graph": "direct"\s*\}/);
    assert.doesNotMatch(written, /"memory"[^}]*directTools/);
    const names = home.open().directTools().tools.map((t) => t.name);
    assert.ok(names.includes("mcp__memory__read_graph") && names.includes("mcp__memory__create_entities"), names.join(" "));
  });

  test("a bad change saves nothing and says why", () => {
    const adapter = home.open();
    const before = readFileSync(home.file, "utf8");
    assert.throws(() => adapter.saveExposure([{ server: "nope", choice: "direct" }], true), /no enabled MCP server named "nope"/);
    assert.throws(() => adapter.saveExposure([{ server: "memory", tool: "nope", choice: "direct" }], true), /server "memory" has no tool "nope" known/);
    assert.throws(() => adapter.exposure([{ server: "memory", choice: "visible" }], true), /unknown exposure "visible": expected "mcp", "direct" or "hidden"/);
    assert.equal(readFileSync(home.file, "utf8"), before);
  });
});
