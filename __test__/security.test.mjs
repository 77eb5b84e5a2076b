// The security rows of the reliability matrix: no shell, no secret shown or stored, private
// files, a regex search that no pattern can slow down, and where each server's config came from.
import { describe } from "node:test";
import assert from "node:assert/strict";
import { spawnSync } from "node:child_process";
import { createRequire } from "node:module";
import { mkdirSync, readdirSync, readFileSync, statSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { row, timed } from "./helpers/matrix.mjs";
import { cmdline, faulty, processesIn, root, tempAgent, text, waitFor, withAdapter } from "./helpers/servers.mjs";

const { McpAdapter, configHash } = createRequire(import.meta.url)("../index.js");
const here = import.meta.url;
const mode = (path) => (statSync(path).mode & 0o777).toString(8);

/** Every file under `dir`, recursively. */
const filesIn = (dir) =>
  readdirSync(dir, { withFileTypes: true }).flatMap((e) => (e.isDirectory() ? filesIn(join(dir, e.name)) : [join(dir, e.name)]));

describe("security", () => {
  row("S1", "servers are spawned without a shell", here, async ({ note }) => {
    const tricky = ["$(touch pwned-1)", "; touch pwned-2", "`touch pwned-3`", "*", "a b", "'quoted'", "|| true"];
    await withAdapter(({ cwd }) => ({ s: faulty(tricky, { cwd }) }), async ({ adapter, agent }) => {
      assert.equal(text(await adapter.call("s_echo", { text: "x" })), "echo: x");
      const [pid] = processesIn(agent.cwd);
      assert.deepEqual(cmdline(pid).slice(2), tricky);
      assert.deepEqual(readdirSync(agent.cwd), [], "nothing ran in a shell");
      note(`${tricky.length} shell-special arguments reached the server unchanged; nothing was expanded or run`);
    });
  });

  row("S2", "a secret never shows in cache, texts, errors or logs", here, async ({ note }) => {
    const secret = `sk-marker-${process.pid}-${Date.now().toString(36)}`;
    const agent = tempAgent(({ cwd }) => ({
      mcpServers: {
        works: faulty([], { cwd, env: { API_TOKEN: secret } }),
        interpolated: faulty([], { cwd, env: { API_TOKEN: "${MARKER_SECRET}" }, debug: true }),
        crashes: faulty(["exit-at-start"], { cwd, env: { API_TOKEN: secret } }),
        missing: { command: "no-such-mcp-binary", env: { API_TOKEN: secret } },
        remote: { url: "http://127.0.0.1:9/mcp", headers: { Authorization: `Bearer ${secret}` } },
        wrongHeaders: { url: "http://127.0.0.1:9/mcp", headers: `Authorization: Bearer ${secret}` },
        wrongEnv: { command: "no-such-mcp-binary", env: `API_TOKEN=${secret}` },
        wrongArray: { command: "no-such-mcp-binary", env: { API_TOKEN: [secret] } },
      },
    }));
    try {
      const run = spawnSync(process.execPath, [join(root, "__test__", "fixtures", "secret-host.mjs"), agent.cwd, agent.agentDir], {
        env: { ...agent.env, MARKER_SECRET: secret },
        encoding: "utf8",
        timeout: 60_000,
      });
      assert.equal(run.status, 0, run.stderr);
      const shown = JSON.parse(run.stdout);
      assert.equal(text(shown.works[2]), "echo: hi", "the server got its environment");
      assert.equal(text(shown.interpolated[2]), "echo: hi");
      const places = { "outcomes and events (stdout)": run.stdout, "logs (stderr)": run.stderr };
      // Every file in the agent dir but the config file that holds the secret.
      for (const file of filesIn(agent.agentDir).filter((f) => !f.endsWith("/mcp.json"))) places[file] = readFileSync(file, "utf8");
      assert.ok(Object.keys(places).some((p) => p.endsWith("mcp-cache.json")), "the cache was written");
      for (const [place, content] of Object.entries(places)) {
        const at = content.indexOf(secret);
        assert.equal(at, -1, `the secret leaked into ${place}: …${content.slice(Math.max(0, at - 300), at + 100)}…`);
      }
      note(`a marker secret in env, \${VAR} env, headers and mistyped env/headers of 8 servers: absent from ${Object.keys(places).length} places (every outcome and event, stderr, every file we wrote in the agent dir)`);
    } finally {
      await waitFor(() => processesIn(agent.cwd).length === 0, 5000, "servers to stop");
      agent.cleanup();
    }
  });

  row("S3", "files we create are private (0600, directories 0700)", here, async ({ note }) => {
    const agent = tempAgent(({ cwd }) => ({ mcpServers: { s: faulty([], { cwd }) } }));
    const fresh = join(agent.home, "fresh", "agent");
    const open = () => McpAdapter.open({ cwd: agent.cwd, agentDir: fresh, configPath: join(agent.agentDir, "mcp.json"), env: agent.env });
    try {
      let adapter = open();
      assert.equal(text(await adapter.call("s_echo", { text: "x" })), "echo: x");
      await adapter.shutdown();
      const cache = join(fresh, "mcp-cache.json");
      const modes = {
        [join(agent.home, "fresh")]: mode(join(agent.home, "fresh")),
        [fresh]: mode(fresh),
        [cache]: mode(cache),
        [`${cache}.lock`]: mode(`${cache}.lock`),
      };
      // A cache of another version is backed up: privately too.
      writeFileSync(cache, JSON.stringify({ version: 7, servers: {} }), { mode: 0o644 });
      adapter = open();
      await adapter.call("s_echo", { text: "y" });
      await adapter.shutdown();
      const backup = readdirSync(fresh).find((f) => f.startsWith("mcp-cache.json.bak-"));
      modes[join(fresh, backup)] = mode(join(fresh, backup));
      modes[cache + " (rewritten)"] = mode(cache);
      assert.deepEqual(Object.values(modes), ["700", "700", "600", "600", "600", "600"], JSON.stringify(modes, null, 1));
      assert.deepEqual(readdirSync(fresh).filter((f) => f.endsWith(".tmp")), [], "no temp file left");
      note("created dirs 0700; cache, lock and backup files 0600; written through a temp file and a rename");
    } finally {
      await waitFor(() => processesIn(agent.cwd).length === 0, 5000, "servers to stop");
      agent.cleanup();
    }
  });

  row("S4", "a ReDoS pattern against a 5,000-tool catalog", here, async ({ note }) => {
    // 5,000 cached tools whose names and descriptions are what catastrophic backtracking feeds on.
    const entry = { command: "no-such-mcp-binary" };
    const agent = tempAgent({ mcpServers: { big: entry } });
    const tools = Array.from({ length: 5000 }, (_, i) => ({
      name: `${"a".repeat(30)}_${i}`,
      description: `${"a".repeat(60)}!`,
      inputSchema: { type: "object", properties: { [`${"a".repeat(40)}`]: { type: "string" } } },
    }));
    const cache = { version: 1, servers: { big: { configHash: configHash(entry, agent.env), tools, resources: [], cachedAt: Date.now() } } };
    writeFileSync(agent.cachePath, JSON.stringify(cache));
    const adapter = McpAdapter.open({ cwd: agent.cwd, agentDir: agent.agentDir, env: agent.env });
    try {
      const patterns = ["^(a+)+$", "(a|aa)+!x", "^(a|a?)+$", "(.*a){12}x", "(\\w+\\s?)+$"];
      const [, warmMs] = await timed(() => adapter.search("a", { regex: true, limit: 1 })); // builds the index
      const times = [];
      for (const pattern of patterns) {
        const started = performance.now();
        const found = await adapter.search(pattern, { regex: true, limit: 1 });
        const ms = performance.now() - started;
        assert.notEqual(found.details.error, "invalid_query", text(found));
        times.push(ms);
        assert.ok(ms < 5000, `${pattern} took ${ms} ms`);
      }
      const huge = await adapter.search("(?:a{1000}){1000}", { regex: true });
      assert.equal(huge.details.error, "invalid_query");
      assert.deepEqual(processesIn(agent.cwd), [], "searched from the cache");
      note(`${patterns.length} classic ReDoS patterns over 5,000 tools (names, descriptions, parameters): slowest ${Math.max(...times).toFixed(0)} ms (linear-time engine; the first search, which builds the index, ${warmMs} ms); an oversize pattern is refused`);
    } finally {
      await adapter.shutdown();
      agent.cleanup();
    }
  });

  row("S5", "status shows which file each server came from", here, async ({ note }) => {
    const agent = tempAgent(({ cwd }) => ({ mcpServers: { global: faulty([], { cwd }) } }));
    mkdirSync(join(agent.cwd, ".pi"));
    writeFileSync(join(agent.cwd, ".pi", "mcp.json"), JSON.stringify({ mcpServers: { fromRepo: faulty([]) } }));
    const adapter = McpAdapter.open({ cwd: agent.cwd, agentDir: agent.agentDir, env: agent.env });
    try {
      const status = await adapter.status();
      assert.match(text(status), /Servers are defined in:\n- ~\/\.pi\/agent\/mcp\.json: global\n- .*\/project\/\.pi\/mcp\.json \(project file: it can launch commands\): fromRepo/);
      assert.deepEqual(status.details.servers.map((s) => s.source), [join(agent.agentDir, "mcp.json"), join(agent.cwd, ".pi", "mcp.json")]);
      note("status names each server's config file and flags project files as able to launch commands (README: Security)");
    } finally {
      await adapter.shutdown();
      agent.cleanup();
    }
  });
});
