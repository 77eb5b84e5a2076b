// Reliability matrix rows from independent attacks on the core (issue 15): racing connects (H2), a
// server that lists without end (H3), metadata too big for the model (H4), calls after shutdown
// (H6), the first-run cache fill with many servers (H9) and one-shot runs that never filled the
// cache (H10). Row ids follow the items; bounds are lowered to cross them at small scale.
import { describe } from "node:test";
import assert from "node:assert/strict";
import { existsSync, mkdtempSync, readFileSync, rmSync, statSync } from "node:fs";
import { createRequire } from "node:module";
import { cpus, tmpdir } from "node:os";
import { join } from "node:path";
import { row, timed } from "./helpers/matrix.mjs";
import { PI_VERSIONS, runPi } from "./helpers/pi.mjs";
import { extensionEntry, FAST, faulty, processesIn, root, sampleProcesses, sleep, tempAgent, text, waitFor, withAdapter } from "./helpers/servers.mjs";

const { McpAdapter } = createRequire(import.meta.url)("../index.js");
const here = import.meta.url;
const KiB = 1024;

/** Lines in the file fault servers append to when they start (FAULT_STARTS). */
const starts = (file) => (existsSync(file) ? readFileSync(file, "utf8").split("\n").filter(Boolean).length : 0);
const cachedServers = (agent) => (existsSync(agent.cachePath) ? Object.keys(JSON.parse(readFileSync(agent.cachePath, "utf8")).servers) : []);

describe("reliability matrix: the core under attack", () => {
  row("H2", "five parallel connects of one server, four times; the start-up fill racing a connect", here, async ({ note }) => {
    await withAdapter(({ cwd, home }) => ({ s: faulty([], { cwd, env: { FAULT_STARTS: join(home, "starts") } }) }), async ({ adapter, agent, events }) => {
      const most = sampleProcesses(agent.cwd);
      const failures = [];
      for (let burst = 0; burst < 4; burst++) {
        const results = await Promise.all(Array.from({ length: 5 }, () => adapter.execute({ connect: "s" })));
        failures.push(...results.filter((r) => r.isError).map(text));
        assert.ok(processesIn(agent.cwd).length <= 1, `after burst ${burst + 1}: ${processesIn(agent.cwd).length} processes`);
      }
      const peak = await most();
      assert.deepEqual(failures, []);
      assert.ok(peak <= 2, `${peak} server processes at once`);
      const spawned = starts(join(agent.home, "starts"));
      assert.ok(spawned <= 4, `${spawned} processes for 4 bursts`);
      assert.equal(events.filter((e) => e.type === "failed").length, 0);
      note(`20 connects in 4 bursts of 5: 0 failed, ${spawned} processes started (one per burst), at most ${peak} alive at once (the replaced one stopping), 0 left after shutdown`);
    });
    let falseFailures = 0;
    for (let run = 0; run < 10; run++) {
      await withAdapter(({ cwd }) => ({ s: faulty([], { cwd }) }), async ({ adapter, events }) => {
        adapter.start();
        const connected = await adapter.execute({ connect: "s" });
        assert.equal(connected.isError, false, text(connected));
        await sleep(100);
        falseFailures += events.filter((e) => e.type === "failed").length;
      });
    }
    assert.equal(falseFailures, 0, `${falseFailures} false failed events in 10 runs`);
    note("start()'s fill racing an explicit connect, 10 runs: 0 false failed events");
  });

  row("H3", "a server listing more tools and bytes than the bounds keep (bounds lowered to 100 tools, 64 KiB)", here, async ({ note }) => {
    const bounds = { maxServerTools: 100, maxServerMetadataBytes: 64 * KiB };
    const servers = ({ cwd }) => ({ many: faulty(["many-tools=250"], { cwd }), fat: faulty(["many-tools=50", "tool-size=4"], { cwd }), other: faulty([], { cwd }) });
    await withAdapter(servers, async ({ adapter, agent }) => {
      const listed = await adapter.execute({ server: "many", limit: 30, offset: 30 });
      assert.match(text(listed), /^many: 100 tools/);
      assert.match(text(listed), /^- many_tool_30:/m);
      assert.match(text(listed), /31–60 of 100 — mcp\(\{ server: "many", offset: 60 \}\) for more\./);
      assert.match(text(listed), /lists more than 100 tools; only the first 100 are kept/);
      const [call, ms] = await timed(() => adapter.call("other_echo", { text: "meanwhile" }));
      assert.equal(text(call), "echo: meanwhile");
      const fat = await adapter.list("fat");
      const kept = Number(/^fat: (\d+) tools/.exec(text(fat))?.[1]);
      assert.ok(kept > 0 && kept < 50, text(fat).slice(0, 200));
      assert.match(text(fat), /metadata passes 64 KiB; only the first \d+ tools, within that bound, are kept/);
      const whole = await adapter.list("many", { limit: 1000 });
      assert.ok(Buffer.byteLength(text(whole)) <= 51 * KiB, `list handed ${Buffer.byteLength(text(whole))} bytes to the model`);
      await waitFor(() => cachedServers(agent).includes("fat"), 5000, "the cache");
      const cache = JSON.parse(readFileSync(agent.cachePath, "utf8"));
      assert.equal(cache.servers.many.tools.length, 100);
      assert.ok(JSON.stringify(cache.servers.fat.tools).length <= 64 * KiB);
      note(`250 tools listed, 100 kept and cached; 50 tools of ~4 KiB each: ${kept} kept within 64 KiB; list pages (limit/offset) and says what was cut; another server's call answered in ${ms} ms`);
    }, { open: bounds });
  });

  row("H4", "describe of a 2 MB schema and a 1 MB description, 1 MB of instructions", here, async ({ note }) => {
    const servers = ({ cwd }) => ({ big: faulty(["huge-schema=2", "huge-description=1", "huge-instructions=1"], { cwd }) });
    await withAdapter(servers, async ({ adapter }) => {
      const sizes = [];
      for (const params of [{ describe: "big_echo" }, { instructions: "big" }, { server: "big" }, { search: "echo" }, {}]) {
        const answer = await adapter.execute(params);
        const shown = Buffer.byteLength(text(answer));
        sizes.push(`${Object.keys(params)[0] ?? "status"} ${(shown / KiB).toFixed(0)} KiB`);
        assert.ok(shown <= 51 * KiB, `${JSON.stringify(params)} handed ${shown} bytes to the model`);
        assert.ok(JSON.stringify(answer.details).length <= 64 * KiB, `${JSON.stringify(params)} details are ${JSON.stringify(answer.details).length} bytes`);
        if (answer.details.fullOutputPath) {
          assert.ok(statSync(answer.details.fullOutputPath).size > shown);
          assert.equal((statSync(answer.details.fullOutputPath).mode & 0o777).toString(8), "600");
        }
      }
      const described = await adapter.describe("big_echo");
      assert.match(text(described), /\[Output cut: showing/);
      assert.ok(statSync(described.details.fullOutputPath).size > 2 * 1024 * KiB);
      assert.equal(described.details.inputSchema, undefined, "an oversize schema stays out of details");
      note(`every mode's answer within the output guard (${sizes.join(", ")}); the whole text in a private 0600 file`);
    });
  });

  row("H6", "calls after shutdown, and a call racing shutdown", here, async ({ note }) => {
    const agent = tempAgent(({ cwd, home }) => ({
      mcpServers: { s: faulty([], { cwd, env: { FAULT_STARTS: join(home, "starts") } }), t: faulty([], { cwd }) },
    }));
    try {
      const adapter = McpAdapter.open({ cwd: agent.cwd, agentDir: agent.agentDir, env: agent.env, ...FAST });
      const racing = adapter.call("s_echo", { text: "racing" });
      await adapter.shutdown();
      await racing;
      const [after, ms] = await timed(() => adapter.call("s_echo", { text: "late" }));
      assert.equal(after.details.error, "shut_down", text(after));
      assert.match(text(after), /the MCP gateway has shut down/);
      assert.ok(ms < 200, `answered after ${ms} ms`);
      const late = await adapter.execute({ search: "echo" });
      assert.match(text(late), /Server "t" was not searched: is not available: the MCP gateway has shut down/);
      await sleep(300);
      assert.deepEqual(processesIn(agent.cwd), [], "no server lives on after shutdown");
      note(`a call after shutdown failed at once (${ms} ms, shut_down), a search too; the call racing shutdown left no server (${starts(join(agent.home, "starts"))} started, 0 alive)`);
    } finally {
      agent.cleanup();
    }
  });

  row("H9", "first-run cache fill of 40 servers", here, async ({ note }) => {
    const bound = Math.min(4, cpus().length);
    const servers = ({ cwd }) => Object.fromEntries(Array.from({ length: 40 }, (_, i) => [`s${i}`, faulty([], { cwd })]));
    await withAdapter(servers, async ({ adapter, agent, events }) => {
      const most = sampleProcesses(agent.cwd);
      const [, ms] = await timed(async () => {
        adapter.start();
        await waitFor(() => cachedServers(agent).length === 40, 60_000, "all 40 servers in the cache");
      });
      await waitFor(() => processesIn(agent.cwd).length === 0, 5000, "the fill's servers to stop");
      const peak = await most();
      assert.ok(peak <= bound, `${peak} servers alive at once (bound ${bound})`);
      // Events reach JS through a threadsafe function: the last one may trail its process's exit.
      await waitFor(() => events.filter((e) => e.type === "idle-shutdown").length === 40, 5000, "an idle-shutdown event per server");
      note(`40 servers listed and cached in ${ms} ms, at most ${peak} alive at once (bound min(4, cores) = ${bound}); each stopped once listed: 0 alive after`);
    }, { timing: { ...FAST, healthIntervalMs: 60_000 } });
  });

  row("H10a", "one-shot runs (Pi stubbed in print mode): no fill until the model calls mcp; a fill that started finishes at shutdown", here, async ({ note }) => {
    const agent = tempAgent(({ cwd, home }) => ({
      mcpServers: Object.fromEntries(["a", "b", "c"].map((n) => [n, faulty(["slow-init=300"], { cwd, env: { FAULT_STARTS: join(home, "starts") } })])),
    }));
    const saved = { HOME: process.env.HOME, PI_CODING_AGENT_DIR: process.env.PI_CODING_AGENT_DIR };
    Object.assign(process.env, { HOME: agent.home, PI_CODING_AGENT_DIR: agent.agentDir });
    const { default: extension } = await import(extensionEntry);
    /** One Pi run in print mode: session start, the model's turn (calling `mcp` with `params`, if given), exit. */
    const run = async (params) => {
      const handlers = {};
      let tool;
      extension({ registerTool: (t) => (tool ??= t), registerCommand: () => {}, registerFlag: () => {}, on: (e, h) => (handlers[e] = h) });
      handlers.session_start({}, { cwd: agent.cwd, mode: "print", hasUI: false });
      handlers.before_provider_request();
      if (params) assert.equal((await tool.execute("call-1", params)).isError, false);
      await sleep(50);
      const [, exitMs] = await timed(() => handlers.session_shutdown());
      return exitMs;
    };
    const file = join(agent.home, "starts");
    try {
      const perRun = [];
      for (let i = 0; i < 3; i++) {
        await run();
        perRun.push(starts(file) - perRun.reduce((a, b) => a + b, 0));
      }
      assert.deepEqual(perRun, [0, 0, 0], "servers started by runs whose model never used MCP");
      const exitMs = await run({ tool: "a_echo", args: { text: "hi" } });
      assert.equal(starts(file), 3, "the call started its server, then the fill the two others");
      assert.deepEqual(cachedServers(agent).sort(), ["a", "b", "c"], "the fill that started finished within the grace");
      await run({ tool: "b_echo", args: { text: "cached" } });
      assert.equal(starts(file), 4, "a later run starts only the server it calls");
      await waitFor(() => processesIn(agent.cwd).length === 0, 5000, "servers to stop");
      note(`3 runs without MCP: 0 servers started; a run calling one tool: its server, then the deferred fill of the other 2, finished and cached within the shutdown grace (exit after ${exitMs} ms); the next run started only the server it called`);
    } finally {
      Object.assign(process.env, saved);
      for (const [k, v] of Object.entries(saved)) if (v === undefined) delete process.env[k];
      agent.cleanup();
    }
  });

  for (const pi of PI_VERSIONS) {
    row(`H10b-${pi}`, `three one-turn runs of the real Pi ${pi} (--mode json) with three stdio servers and no cache`, here, async ({ note }) => {
      const home = mkdtempSync(join(tmpdir(), "pi-mcp-native-oneshot-"));
      const file = join(home, "starts");
      const mcpConfig = { mcpServers: Object.fromEntries(["a", "b", "c"].map((n) => [n, faulty([], { cwd: home, env: { FAULT_STARTS: file } })])) };
      try {
        const perRun = [];
        for (let i = 0; i < 3; i++) {
          const r = await runPi({ pi, home, extensionDir: root, mcpConfig, script: { steps: [{ text: "no tools needed" }] } });
          assert.equal(r.code, 0, r.stderr);
          assert.equal(r.leftover, false, "no process outlives Pi");
          perRun.push(starts(file) - perRun.reduce((a, b) => a + b, 0));
        }
        assert.deepEqual(perRun, [0, 0, 0]);
        note(`servers started per run: ${perRun.join(", ")}`);
      } finally {
        rmSync(home, { recursive: true, force: true });
      }
    });
  }
});
