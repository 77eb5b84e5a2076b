// The lifecycle manager with short clocks: lazy idle shutdown, in-flight calls holding a server,
// eager and keep-alive servers, failure backoff, prefix-match connects, npx resolution, and no
// process left behind by a shutdown or by a SIGKILL of the host process.
import { describe, test } from "node:test";
import assert from "node:assert/strict";
import { existsSync, readFileSync, statSync, writeFileSync } from "node:fs";
import { createRequire } from "node:module";
import { join } from "node:path";
import { row } from "./helpers/matrix.mjs";
import { adapterHost, cmdline, everything, faulty, FAST, IDLE, processesIn, pyBin, root, rssKb, sleep, tempAgent, text, uvCache, waitFor, withAdapter } from "./helpers/servers.mjs";

const { McpAdapter } = createRequire(import.meta.url)("../index.js");

describe("lifecycle", () => {
  test("a lazy server stops when idle, stays searchable, and comes back on use", async () => {
    await withAdapter(({ cwd }) => ({ lazy: faulty([], { cwd, idleTimeout: IDLE }) }), async ({ adapter, agent, has }) => {
      adapter.start();
      assert.equal(text(await adapter.call("lazy_echo", { text: "1" })), "echo: 1");
      assert.equal(processesIn(agent.cwd).length, 1);
      await waitFor(() => has("idle-shutdown", "lazy"), 5000, "idle-shutdown");
      await waitFor(() => processesIn(agent.cwd).length === 0, 3000, "the idle server to exit");
      assert.match(text(await adapter.status()), /○ lazy: 8 tools \(cached/);
      assert.match(text(await adapter.search("echo")), /^lazy_echo/m);
      assert.equal(processesIn(agent.cwd).length, 0, "search works from metadata");
      assert.equal(text(await adapter.call("lazy_echo", { text: "2" })), "echo: 2");
    });
  });

  test("a call in flight holds an idle server; it stops once the call is done", async () => {
    await withAdapter(({ cwd }) => ({ ev: everything({ cwd, idleTimeout: IDLE }) }), async ({ adapter, agent, has }) => {
      adapter.start();
      const call = adapter.call("ev_trigger-long-running-operation", { duration: 1.5, steps: 3 });
      await sleep(1000);
      assert.equal(has("idle-shutdown", "ev"), false, "stopped while a call was running");
      assert.equal(processesIn(agent.cwd).length, 1);
      const result = await call;
      assert.equal(result.isError, false, text(result));
      await waitFor(() => has("idle-shutdown", "ev"), 5000, "idle-shutdown after the call");
    });
  });

  test("eager servers start with the session and do not idle out unless told to", async () => {
    const servers = ({ cwd }) => ({
      stays: faulty([], { cwd, lifecycle: "eager" }),
      idles: faulty([], { cwd, lifecycle: "eager", idleTimeout: IDLE }),
    });
    await withAdapter(servers, async ({ adapter, has }) => {
      adapter.start();
      await waitFor(() => has("connected", "stays") && has("connected", "idles"), 10000, "eager connects");
      await waitFor(() => has("idle-shutdown", "idles"), 5000, "idle-shutdown of the eager server with idleTimeout");
      await sleep(500);
      assert.equal(has("idle-shutdown", "stays"), false);
      assert.match(text(await adapter.status()), /✓ stays: connected/);
    });
  });

  test("a keep-alive server that dies is reconnected and JS hears `reconnected`", async () => {
    await withAdapter(({ cwd }) => ({ kept: faulty([], { cwd, lifecycle: "keep-alive" }) }), async ({ adapter, agent, events, has }) => {
      adapter.start();
      await waitFor(() => has("connected", "kept"), 10000, "keep-alive connect");
      const [first] = processesIn(agent.cwd);
      process.kill(first, "SIGKILL");
      await waitFor(() => has("disconnected", "kept"), 5000, "disconnected event");
      await waitFor(() => has("reconnected", "kept"), 5000, "reconnected event");
      const reconnected = events.find((e) => e.type === "reconnected");
      assert.equal(reconnected.tools, 8);
      const [second] = processesIn(agent.cwd);
      assert.ok(second && second !== first, "a new process serves the server");
      assert.equal(text(await adapter.call("kept_echo", { text: "back" })), "echo: back");
    });
  });

  test("a lazy-keep-alive server idles like a lazy one until used, then is kept up", async () => {
    await withAdapter(({ cwd }) => ({ lk: faulty([], { cwd, lifecycle: "lazy-keep-alive", idleTimeout: IDLE }) }), async ({ adapter, agent, events, has }) => {
      adapter.start(); // no cache yet: connected once to fill it, then idle like a lazy server
      await waitFor(() => has("idle-shutdown", "lk"), 5000, "idle-shutdown before any use");
      assert.equal(text(await adapter.call("lk_echo", { text: "1" })), "echo: 1");
      await sleep(600);
      assert.equal(events.filter((e) => e.type === "idle-shutdown").length, 1, "not idled out once used");
      process.kill(processesIn(agent.cwd)[0], "SIGKILL");
      await waitFor(() => has("reconnected", "lk"), 5000, "reconnected event");
    });
  });

  test("a server that failed is left alone for the backoff, and connect retries at once", async () => {
    const attempts = (home) => readFileSync(join(home, "attempts"), "utf8").trim().split("\n").length;
    const servers = ({ home }) => ({ flaky: { command: "sh", args: ["-c", `echo x >> ${join(home, "attempts")}; echo "no license" >&2; exit 1`] } });
    await withAdapter(servers, async ({ adapter, agent }) => {
      const first = await adapter.call("flaky_anything", {});
      assert.equal(first.details.error, "server_unavailable");
      assert.match(text(first), /exited with code 1[^]*no license/);
      const second = await adapter.call("flaky_anything", {});
      assert.match(text(second), /not available \(failed 0 s ago/);
      assert.equal(attempts(agent.home), 1, "no new attempt during the backoff");
      const connect = await adapter.connect("flaky");
      assert.equal(connect.details.error, "connect_failed");
      assert.equal(attempts(agent.home), 2, "connect ignores the backoff");
      await sleep(900);
      await adapter.call("flaky_anything", {});
      assert.equal(attempts(agent.home), 3, "retried once the backoff is over");
    });
  });

  test("a lazy server that crashed starts again on the next call, with the reason reported", async () => {
    await withAdapter(({ cwd }) => ({ lazy: faulty([], { cwd }) }), async ({ adapter, has }) => {
      adapter.start();
      const crashed = await adapter.call("lazy_crash", {});
      assert.equal(crashed.details.error, "connection_lost");
      assert.match(text(crashed), /exited with code 3[^]*segfault in handler/);
      await waitFor(() => has("disconnected", "lazy"), 3000, "disconnected event");
      assert.equal(text(await adapter.call("lazy_echo", { text: "again" })), "echo: again");
    });
  });

  test("a catalog change is picked up, cached and announced", async () => {
    await withAdapter(({ cwd }) => ({ s: faulty([], { cwd }) }), async ({ adapter, agent, events, has }) => {
      adapter.start();
      assert.equal(text(await adapter.call("s_grow", {})), "now 9 tools");
      await waitFor(() => has("catalog-changed", "s"), 3000, "catalog-changed event");
      assert.equal(events.find((e) => e.type === "catalog-changed").tools, 9);
      assert.match(text(await adapter.list("s")), /- s_grown_1/);
      await waitFor(() => readFileSync(agent.cachePath, "utf8").includes("grown_1"), 3000, "the cache to hold the new tool");
    });
  });

  test("progress notifications extend a call's timeout", async () => {
    await withAdapter(({ cwd }) => ({ s: faulty([], { cwd }) }), async ({ adapter }) => {
      // 8 steps of 150 ms = 1.2 s in all, with a 500 ms timeout that each progress resets.
      const result = await adapter.call("s_slow", { steps: 8, delayMs: 150 }, { timeoutMs: 500 });
      assert.equal(text(result), "slow done after 8 steps");
      const silent = await adapter.call("s_hang", {}, { timeoutMs: 300 });
      assert.equal(silent.details.error, "timeout");
    });
  });

  test("a cold call of a cached tool goes before the listing; a tool dropped since is unknown", async () => {
    const agent = tempAgent(({ cwd, home }) => ({ mcpServers: { s: faulty(["announce-at-start"], { cwd, env: { FAULT_TOOLS: join(home, "tools") } }) } }));
    const session = async (run) => {
      const adapter = McpAdapter.open({ cwd: agent.cwd, agentDir: agent.agentDir, env: agent.env, ...FAST });
      const events = [];
      adapter.onEvent((e) => events.push(e));
      try {
        await run(adapter, events);
      } finally {
        await adapter.shutdown();
      }
    };
    try {
      await session(async (adapter) => {
        const first = await adapter.call("s_seen", {});
        assert.equal(text(first), "methods: initialize, notifications/initialized, tools/list, tools/call", "nothing cached: listed first");
      });
      await session(async (adapter, events) => {
        const cold = await adapter.call("s_seen", {});
        assert.equal(text(cold), "methods: initialize, notifications/initialized, tools/call");
        await waitFor(() => events.some((e) => e.type === "connected" && e.server === "s"), 5000, "the listing once the server is idle");
        assert.match(text(await adapter.list("s")), /^s: 8 tools/);
        await sleep(500); // the announcement at start is not re-listed: the listing came after it
        assert.equal(text(await adapter.call("s_seen", {})), "methods: initialize, notifications/initialized, tools/call, tools/list, tools/call");
      });
      writeFileSync(join(agent.home, "tools"), "seen");
      await session(async (adapter) => {
        const gone = await adapter.call("s_echo", { text: "hi" });
        assert.equal(gone.details.error, "tool_not_found", text(gone));
        assert.match(text(gone), /s_echo/);
        assert.equal(text(await adapter.call("s_seen", {})), "methods: initialize, notifications/initialized, tools/call, tools/list, tools/call");
      });
      assert.deepEqual(processesIn(agent.cwd), []);
    } finally {
      agent.cleanup();
    }
  });

  test("a call with a server's prefix connects only that server when nothing is cached", async () => {
    const servers = ({ cwd }) => ({ first: faulty([], { cwd }), second: everything({ cwd }) });
    await withAdapter(servers, async ({ adapter, agent }) => {
      assert.equal(text(await adapter.call("first_echo", { text: "direct" })), "echo: direct");
      assert.equal(processesIn(agent.cwd).length, 1, "the other server was not started");
    });
  });
});

describe("processes", () => {
  test("npx servers run their package's binary directly", async () => {
    const npx = (cwd) => ({ command: "npx", args: ["-y", "@modelcontextprotocol/server-everything", "stdio"], cwd });
    // The same server through plain npx (a shell hides it from the resolver), to compare.
    const plain = (cwd) => ({ command: "sh", args: ["-c", "exec npx -y @modelcontextprotocol/server-everything stdio"], cwd });
    const measure = async (entry) => {
      const figures = {};
      // Inside the repository, where npx finds the package in node_modules (offline).
      const base = join(root, ".tmp");
      await withAdapter(({ cwd }) => ({ ev: entry(cwd) }), async ({ adapter, agent }) => {
        const result = await adapter.call("ev_echo", { message: "resolved?" });
        assert.equal(text(result), "Echo: resolved?");
        await sleep(300);
        const pids = processesIn(agent.cwd);
        figures.processes = pids.length;
        figures.rssMb = pids.reduce((sum, pid) => sum + rssKb(pid), 0) / 1024;
        figures.commands = pids.map((pid) => cmdline(pid).slice(0, 2).join(" "));
        figures.memoMode = existsSync(join(agent.agentDir, "mcp-npx-cache.json")) ? (statSync(join(agent.agentDir, "mcp-npx-cache.json")).mode & 0o777).toString(8) : "none";
      }, { base });
      return figures;
    };
    const direct = await measure(npx);
    assert.equal(direct.processes, 1, JSON.stringify(direct));
    assert.match(direct.commands[0], /^node .*server-everything\/dist\/index\.js$/);
    assert.equal(direct.memoMode, "600", "the resolution memo is private");
    const viaNpx = await measure(plain);
    console.log(`# npx resolved: ${direct.processes} process, ${direct.rssMb.toFixed(1)} MB RSS; plain npx: ${viaNpx.processes} processes, ${viaNpx.rssMb.toFixed(1)} MB RSS (${viaNpx.commands.join(" | ")})`);
    assert.ok(viaNpx.processes > direct.processes);
  });

  test("uvx servers run the tool from uv's environment", async () => {
    const uvx = (cwd) => ({ command: join(pyBin, "uvx"), args: ["--offline", "mcp-server-time"], env: { UV_CACHE_DIR: uvCache }, cwd });
    await withAdapter(({ cwd }) => ({ time: uvx(cwd) }), async ({ adapter, agent }) => {
      const result = await adapter.call("time_get_current_time", { timezone: "UTC" });
      assert.equal(result.isError, false, text(result));
      assert.match(text(result), /UTC/);
      const [pid, ...others] = processesIn(agent.cwd);
      assert.deepEqual(others, []);
      const command = cmdline(pid).join(" ");
      assert.match(command, /environments-v2|archive-v0/, `not resolved: ${command}`);
      assert.doesNotMatch(command, /\buvx?\b.*--offline/);
    });
  });

  test("a wrapper's grandchildren die with the server on shutdown", async () => {
    const script = join(root, "__test__", "fixtures", "fault-server.mjs");
    const servers = ({ cwd }) => ({ wrapped: { command: "sh", args: ["-c", `sleep 300 & exec "${process.execPath}" "${script}"`], cwd } });
    await withAdapter(servers, async ({ adapter, agent }) => {
      assert.equal(text(await adapter.call("wrapped_echo", { text: "hi" })), "echo: hi");
      assert.equal(processesIn(agent.cwd).length, 2, "the server and its sleeping grandchild");
    });
    // withAdapter waited for every process in the cwd to be gone after shutdown.
  });

  test("shutdown is bounded for a server that ignores the end of its stdin", async () => {
    await withAdapter(({ cwd }) => ({ stubborn: faulty(["ignore-eof"], { cwd }) }), async ({ adapter, agent }) => {
      assert.equal(text(await adapter.call("stubborn_echo", { text: "x" })), "echo: x");
      const started = Date.now();
      await adapter.shutdown();
      console.log(`# shutdown of a server that ignores stdin EOF: ${Date.now() - started} ms`);
      await waitFor(() => processesIn(agent.cwd).length === 0, 3000, "the stubborn server to be killed");
    });
  });

  row("13", "the host (Pi) is killed with SIGKILL while servers run", import.meta.url, async ({ note }) => {
    const agent = tempAgent(({ cwd }) => ({
      mcpServers: {
        wrapped: { command: "sh", args: ["-c", `sleep 300 & exec "${process.execPath}" "${join(root, "__test__", "fixtures", "fault-server.mjs")}"`], cwd },
        ev: everything({ cwd }),
      },
    }));
    let host;
    try {
      host = await adapterHost(agent);
      assert.equal(processesIn(agent.cwd).length, 3, "two servers and a grandchild");
      host.kill("SIGKILL");
      const killed = Date.now();
      await waitFor(() => processesIn(agent.cwd).length === 0, 5000, "every server process to die after the host was killed");
      note(`3 processes (2 servers, 1 grandchild) → 0 left ${Date.now() - killed} ms after the SIGKILL`);
    } finally {
      host?.kill("SIGKILL");
      for (const pid of processesIn(agent.cwd)) process.kill(pid, "SIGKILL");
      agent.cleanup();
    }
  });
});
