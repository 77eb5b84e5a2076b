// Reliability matrix rows from independent attacks on the built product (issue 15): hostile files
// where configs, caches, env and token files are looked for (H1), answers nested deeper than
// serde_json reads (H5), server names that are paths (H7), processes a server detaches from its
// process group (H8).
// Row ids follow the items.
import { describe } from "node:test";
import assert from "node:assert/strict";
import { execFileSync, spawn } from "node:child_process";
import { createRequire } from "node:module";
import { mkdirSync, mkdtempSync, readFileSync, rmSync, symlinkSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { row, timed } from "./helpers/matrix.mjs";
import { PI_16, runPi } from "./helpers/pi.mjs";
import { adapterHost, cmdline, everythingHttp, faulty, faultyHttp, freePort, processesIn, recordingProxy, root, sleep, tempAgent, waitFor, withAdapter } from "./helpers/servers.mjs";

const { McpAdapter } = createRequire(import.meta.url)("../index.js");
const here = import.meta.url;
const MiB = 1024 * 1024;
const mb = (bytes) => (bytes / MiB).toFixed(0);
const mkfifo = (path) => execFileSync("mkfifo", [path]);

/**
 * Runs fixtures/open-host.mjs (McpAdapter.open, then one call) in its own process, killed if it
 * takes longer than `ms` or its memory passes `maxRss`: before the fix a FIFO blocked `open`
 * forever and /dev/zero grew it without bound.
 */
async function openInHost(options, tool, { ms = 15_000, maxRss = 1024 * MiB } = {}) {
  const host = spawn(process.execPath, [join(root, "__test__", "fixtures", "open-host.mjs"), JSON.stringify(options), tool ?? ""], {
    stdio: ["ignore", "pipe", "pipe"],
  });
  let [stdout, stderr, killed] = ["", "", null];
  host.stdout.setEncoding("utf8").on("data", (s) => (stdout += s));
  host.stderr.setEncoding("utf8").on("data", (s) => (stderr += s));
  const exited = new Promise((resolve) => host.once("exit", resolve));
  const until = Date.now() + ms;
  for (let done = false; !done; ) {
    done = await Promise.race([exited.then(() => true), sleep(25).then(() => false)]);
    if (done) break;
    let rss = 0;
    try {
      rss = Number(/VmRSS:\s+(\d+)/.exec(readFileSync(`/proc/${host.pid}/status`, "utf8"))[1]) * 1024;
    } catch {
      continue; // exiting
    }
    if (rss > maxRss) killed = `its memory reached ${mb(rss)} MB`;
    if (Date.now() > until) killed = `it did not finish within ${ms} ms`;
    if (killed) {
      host.kill("SIGKILL");
      await exited;
      break;
    }
  }
  assert.equal(killed, null, `the host was killed: ${killed}\n${stderr}`);
  assert.equal(host.exitCode, 0, stderr);
  return JSON.parse(stdout);
}

describe("reliability matrix: hostile files where configs are looked for", () => {
  row("H1a", "a project .mcp.json linked to /dev/zero, a FIFO at .mcp.json and at <agentDir>/mcp.json, a directory", here, async ({ note }) => {
    const figures = [];
    const cases = {
      "/dev/zero": (agent) => symlinkSync("/dev/zero", join(agent.cwd, ".mcp.json")),
      "FIFO .mcp.json": (agent) => mkfifo(join(agent.cwd, ".mcp.json")),
      "FIFO mcp.json": (agent) => {
        rmSync(join(agent.agentDir, "mcp.json"));
        mkfifo(join(agent.agentDir, "mcp.json"));
      },
      directory: (agent) => mkdirSync(join(agent.cwd, ".pi", "mcp.json"), { recursive: true }),
    };
    const expected = {
      "/dev/zero": /project\/\.mcp\.json: the config file is a character device, not a regular file; its servers are not loaded/,
      "FIFO .mcp.json": /project\/\.mcp\.json: the config file is a FIFO \(named pipe\), not a regular file/,
      "FIFO mcp.json": /\.pi\/agent\/mcp\.json: the config file is a FIFO \(named pipe\), not a regular file/,
      directory: /project\/\.pi\/mcp\.json: the config file is a directory, not a regular file/,
    };
    for (const [kind, prepare] of Object.entries(cases)) {
      // The working server comes from a file of its own (~/.agents/mcp.json) so that every other file can be the bad one.
      const agent = tempAgent({ mcpServers: {} });
      try {
        prepare(agent);
        mkdirSync(join(agent.home, ".agents"), { recursive: true });
        writeFileSync(join(agent.home, ".agents", "mcp.json"), JSON.stringify({ mcpServers: { good: faulty([], { cwd: agent.cwd }) } }));
        const got = await openInHost({ cwd: agent.cwd, agentDir: agent.agentDir, env: agent.env }, "good_echo");
        assert.ok(got.diagnostics.some((d) => expected[kind].test(d)), `${kind}: ${got.diagnostics.join("\n")}`);
        assert.equal(got.text, "echo: still works", kind);
        assert.ok(got.openMs < 2000, `${kind}: open took ${got.openMs} ms`);
        figures.push(`${kind}: open ${got.openMs} ms, peak RSS +${mb(Math.max(got.peakGrowth, 0))} MB`);
      } finally {
        agent.cleanup();
      }
    }
    note(`${figures.join("; ")}; each reported as an error naming the file, the other server answered`);
  });

  row("H1b", "oversized config, cache, env and token files (caps lowered); a config given as a pipe", here, async ({ note }) => {
    const agent = tempAgent(({ cwd, home }) => ({
      mcpServers: {
        good: faulty([], { cwd }),
        envy: faulty([], { cwd, envFile: join(home, "big.env") }),
        remote: { url: "http://127.0.0.1:9/mcp", auth: "oauth" },
      },
    }));
    try {
      writeFileSync(join(agent.cwd, ".mcp.json"), JSON.stringify({ mcpServers: { padded: faulty([]) }, pad: "x".repeat(4096) }));
      writeFileSync(agent.cachePath, JSON.stringify({ version: 1, servers: { pad: { tools: [], pad: "x".repeat(8192) } } }));
      writeFileSync(join(agent.home, "big.env"), `A=${"x".repeat(4096)}\n`);
      mkdirSync(join(agent.agentDir, "mcp-oauth", "remote"), { recursive: true });
      writeFileSync(join(agent.agentDir, "mcp-oauth", "remote", "tokens.json"), JSON.stringify({ access_token: "t".repeat(4096) }));
      const caps = { maxConfigBytes: 2048, maxCacheBytes: 4096, maxEnvFileBytes: 1024, maxTokenFileBytes: 1024 };
      const got = await openInHost({ cwd: agent.cwd, agentDir: agent.agentDir, env: agent.env, ...caps }, "good_echo");
      const lines = got.diagnostics.join("\n");
      assert.match(lines, /project\/\.mcp\.json: the config file is 4\.\d KiB, over the 2 KiB limit; its servers are not loaded/);
      assert.match(lines, /mcp-cache\.json is 8\.\d KiB, over the 4 KiB limit; it is ignored and will be rewritten/);
      assert.match(lines, /server "envy", field `envFile`: .*big\.env is 4\.\d KiB, over the 1 KiB limit; its variables are not set/);
      assert.equal(got.text, "echo: still works");
      const token = await openInHost({ cwd: agent.cwd, agentDir: agent.agentDir, env: agent.env, ...caps }, "remote_anything");
      assert.equal(token.error, "auth_required", token.text);
      assert.match(token.text, /needs sign-in: the OAuth token file .*mcp-oauth\/remote\/tokens\.json is 4\.\d KiB, over the 1 KiB limit/);
      assert.doesNotMatch(token.text, /tttt/);

      // A config named explicitly (`--mcp-config <(…)`) may be a pipe: read to its end.
      const pipe = join(agent.home, "given.json");
      mkfifo(pipe);
      const writer = spawn("sh", ["-c", `printf '%s' '${JSON.stringify({ mcpServers: { piped: faulty([], { cwd: agent.cwd }) } })}' > "${pipe}"`]);
      const piped = await openInHost({ cwd: agent.cwd, agentDir: agent.agentDir, env: agent.env, configPath: pipe }, "piped_echo");
      await new Promise((resolve) => (writer.exitCode === null ? writer.once("exit", resolve) : resolve()));
      assert.equal(piped.text, "echo: still works");
      note(`config, cache and env file over their caps: one diagnostic each naming the file and the cap, other servers answered; token file over its cap: "needs authentication" naming the file, no token sent; a config given as a FIFO read to its end (open ${piped.openMs} ms)`);
    } finally {
      agent.cleanup();
    }
  });

  row("H1c", "the real Pi starts in a repo whose .mcp.json is a FIFO and .pi/mcp.json a link to /dev/zero", here, async ({ note }) => {
    const steps = [{ tool_calls: [{ name: "mcp", arguments: {} }] }, { tool_calls: [{ name: "mcp", arguments: { tool: "s_echo", args: { text: "hi" } } }] }, { text: "done" }];
    const prepare = (box) => {
      mkfifo(join(box.cwd, ".mcp.json"));
      mkdirSync(join(box.cwd, ".pi"));
      symlinkSync("/dev/zero", join(box.cwd, ".pi", "mcp.json"));
    };
    const mcpConfig = { mcpServers: { s: faulty([]) } };
    const r = await runPi({ pi: PI_16, extensionDir: root, mcpConfig, prepare, script: { steps }, timeoutMs: 30_000 });
    assert.equal(r.timedOut, false, `Pi froze: ${r.stderr}`);
    assert.equal(r.code, 0, r.stderr);
    const [status, call] = r.toolResults;
    assert.match(status.text, /\.mcp\.json: the config file is a FIFO \(named pipe\), not a regular file/);
    assert.match(status.text, /\.pi\/mcp\.json: the config file is a character device, not a regular file/);
    assert.equal(call.text, "echo: hi");
    assert.equal(r.leftover, false, "a process outlived Pi");
    note(`Pi ${PI_16} ran its turn and exited in ${r.timing.wallMs} ms; the status names both files; the configured server answered`);
  });
});

describe("reliability matrix: server names are never paths", () => {
  row("H7", "OAuth servers named ../../../outside and /abs/dir: no token file outside <agentDir>/mcp-oauth is read", here, async ({ note }) => {
    const remote = await everythingHttp("streamableHttp", await freePort());
    const proxy = await recordingProxy(remote.port, { authorization: "Bearer the-right-token" });
    const agent = tempAgent(({ home }) => ({
      mcpServers: {
        "../../../outside": { url: `${proxy.url}/mcp`, auth: "oauth" },
        [join(home, "abs", "dir")]: { url: `${proxy.url}/mcp`, auth: "oauth" },
      },
    }));
    const adapter = McpAdapter.open({ cwd: agent.cwd, agentDir: agent.agentDir, env: agent.env });
    const store = (dir, token) => {
      mkdirSync(dir, { recursive: true });
      writeFileSync(join(dir, "tokens.json"), JSON.stringify({ access_token: token }));
    };
    try {
      // Where the names point if joined as paths: tokens that must never be read, let alone sent.
      mkdirSync(join(agent.agentDir, "mcp-oauth")); // as after any sign-in: `mcp-oauth/..` resolves
      const outside = join(agent.agentDir, "mcp-oauth", "../../../outside");
      store(outside, "stolen-outside");
      store(join(agent.home, "abs", "dir"), "stolen-abs");
      for (const name of ["../../../outside", join(agent.home, "abs", "dir")]) {
        const refused = await adapter.connect(name);
        assert.equal(refused.isError, true, name);
        assert.equal(refused.details.error, "auth_required", name);
        assert.match(refused.content[0].text, /needs sign-in/, name);
      }
      // The server was asked without credentials, and told us so; no stolen token was sent.
      assert.deepEqual(proxy.requests.map((r) => r.headers.authorization).filter(Boolean), [], "a token was sent");
      // The encoded directory is where the token lives (pi-mcp-adapter's layout for such names).
      store(join(agent.agentDir, "mcp-oauth", "sha256-e1a01a12d2ce52e7ebc44d5879e35c09f794475daa43c249c06f8bf998483d94"), "the-right-token");
      assert.equal((await adapter.connect("../../../outside")).isError, false);
      const called = await adapter.call("echo", { message: "via the encoded dir" }, { server: "../../../outside" });
      assert.equal(called.content[0].text, "Echo: via the encoded dir");
      const sent = new Set(proxy.requests.map((r) => r.headers.authorization).filter(Boolean));
      assert.deepEqual([...sent], ["Bearer the-right-token"]);
      note(`no token outside <agentDir>/mcp-oauth was read or sent (no Authorization before the token was stored); the name's sha256-<hex> directory was used, and its token sent (${proxy.requests.length} requests)`);
    } finally {
      await adapter.shutdown();
      await proxy.close();
      await remote.stop();
      agent.cleanup();
    }
  });
});

describe("reliability matrix: answers nested deeper than can be read", () => {
  const text = (outcome) => outcome.content.map((c) => c.text ?? "").join("\n");
  /** The listing drops only the too-deep tool and says so; a too-deep call result fails at once; the server serves on. */
  async function deepAnswers(adapter, server) {
    const listed = await adapter.list(server);
    assert.equal(listed.isError, false, text(listed));
    assert.match(text(listed), new RegExp(`^- ${server}_echo`, "m"));
    assert.doesNotMatch(text(listed), /^- \S*deep_schema/m);
    assert.match(text(listed), /Left out of the server's listing, because they could not be read:\n- tool "deep_schema": its definition nests 129 levels of JSON, deeper than the 127 that can be read/);
    const status = await adapter.status();
    // Listed, then stopped (looking at tools does not keep a server): the count is kept.
    assert.match(text(status), new RegExp(`${server}: \\d+ tools \\(cached; starts on first use\\); 1 left out, unreadable`));
    assert.equal(status.details.servers.find((s) => s.name === server).leftOut, 1);
    const [deep, ms] = await timed(() => adapter.call(`${server}_deep`, {}));
    assert.equal(deep.details.error, "result_too_deep", text(deep));
    assert.match(text(deep), /result nested too deeply: the answer nests (100003|more) levels of JSON, deeper than the 127 that can be read/);
    assert.ok(ms < 5000, `the deep call failed after ${ms} ms`);
    assert.equal(text(await adapter.call(`${server}_echo`, { text: "still here" })), "echo: still here");
    return ms;
  }

  row("H5a", "stdio: a 62-level tool schema in tools/list and a 100,000-level call result", here, async ({ note }) => {
    const servers = ({ cwd }) => ({ s: faulty(["deep-schema=62", "deep-result=100000"], { cwd }) });
    await withAdapter(servers, async ({ adapter }) => {
      const ms = await deepAnswers(adapter, "s");
      note(`the listing lost only the too-deep tool, named in list and counted in status; the 100,003-level result failed as result_too_deep after ${ms} ms (timeout 60 s); the server served on`);
    });
  });

  row("H5b", "Streamable HTTP: the same answers as a JSON body and as an event stream", here, async ({ note }) => {
    const [jsonPort, ssePort] = await Promise.all([freePort(), freePort()]);
    const scenarios = ["deep-schema=62", "deep-result=100000"];
    const served = [await faultyHttp(jsonPort, scenarios), await faultyHttp(ssePort, [...scenarios, "sse-answers"])];
    try {
      const servers = { json: { url: `http://127.0.0.1:${jsonPort}/mcp` }, sse: { url: `http://127.0.0.1:${ssePort}/mcp` } };
      await withAdapter(servers, async ({ adapter }) => {
        const times = [];
        for (const server of ["json", "sse"]) times.push(`${server} ${await deepAnswers(adapter, server)} ms`);
        note(`JSON bodies and event streams alike: the listing lost only the too-deep tool (a JSON body is fetched again and pruned), the deep result failed as result_too_deep (${times.join(", ")}); the session served on`);
      });
    } finally {
      await Promise.all(served.map((s) => s.stop()));
    }
  });
});

describe("reliability matrix: processes a server detaches from its process group", () => {
  const text = (outcome) => outcome.content.map((c) => c.text ?? "").join("\n");
  /** `[pgid, session]` of a process. */
  const groupOf = (pid) => readFileSync(`/proc/${pid}/stat`, "utf8").split(")").pop().trim().split(/\s+/).slice(2, 4).map(Number);
  const alive = (pid) => {
    try {
      return !readFileSync(`/proc/${pid}/stat`, "utf8").split(")").pop().trim().startsWith("Z");
    } catch {
      return false;
    }
  };
  /** The fault server's `detach` child (in a session of its own), and the server, in `dir`. */
  async function detachedIn(dir) {
    const isChild = (pid) => cmdline(pid).some((arg) => arg.includes("120_000"));
    const child = await waitFor(() => processesIn(dir).find(isChild), 5000, "the detached child");
    const server = processesIn(dir).find((pid) => !isChild(pid));
    const [childGroup, childSession] = groupOf(child);
    const [serverGroup, serverSession] = groupOf(server);
    assert.ok(childGroup !== serverGroup && childSession !== serverSession, "the child left the server's group and session");
    return child;
  }
  const stopped = (pid, what) => waitFor(() => !alive(pid), 3000, what);

  row("H8a", "normal stop: the server's detached child is stopped with it", here, async ({ note }) => {
    await withAdapter(({ cwd }) => ({ s: faulty(["detach"], { cwd }) }), async ({ adapter, agent }) => {
      assert.equal(text(await adapter.call("s_echo", { text: "up" })), "echo: up");
      const child = await detachedIn(agent.cwd);
      const [, ms] = await timed(async () => {
        await adapter.shutdown();
        await stopped(child, "the detached child to stop with the server");
      });
      note(`a child in a session of its own (Node's detached: true) was gone ${ms} ms after shutdown()`);
    });
  });

  row("H8b", "the server crashed first: its orphaned detached child is stopped", here, async ({ note }) => {
    await withAdapter(({ cwd }) => ({ s: faulty(["detach"], { cwd }) }), async ({ adapter, agent }) => {
      assert.equal(text(await adapter.call("s_echo", { text: "up" })), "echo: up");
      const child = await detachedIn(agent.cwd);
      const [crashed, ms] = await timed(async () => {
        const outcome = await adapter.call("s_crash", {});
        await stopped(child, "the orphaned child to stop");
        return outcome;
      });
      assert.equal(crashed.details.error, "connection_lost");
      assert.match(text(crashed), /exited with code 3/);
      note(`the server exited with code 3 (reported as before); its detached child, re-parented, was gone ${ms} ms after the call`);
    });
  });

  row("H8c", "Pi is SIGKILLed: the detached child goes too, 0 processes left", here, async ({ note }) => {
    // The server ignores the end of its stdin: the watchdog's signals have to take it down.
    const agent = tempAgent(({ cwd }) => ({ mcpServers: { s: faulty(["detach", "ignore-eof"], { cwd }) } }));
    let host;
    try {
      host = await adapterHost(agent);
      await detachedIn(agent.cwd);
      const before = processesIn(agent.cwd).length;
      host.kill("SIGKILL");
      const [, ms] = await timed(() => waitFor(() => processesIn(agent.cwd).length === 0, 5000, "every process to stop after the host was killed"));
      note(`${before} processes (a server that ignores the end of its stdin, its detached child) → 0 left ${ms} ms after the SIGKILL (the watchdog's SIGTERM reached the helper)`);
    } finally {
      host?.kill("SIGKILL");
      for (const pid of processesIn(agent.cwd)) process.kill(pid, "SIGKILL");
      agent.cleanup();
    }
  });

  row("H8d", `the real Pi ${PI_16} is SIGKILLed while its server's detached child runs: 0 processes left`, here, async ({ note }) => {
    const serverCwd = mkdtempSync(join(tmpdir(), "pi-mcp-native-h8-"));
    const steps = [{ tool_calls: [{ name: "mcp", arguments: { tool: "s_echo", args: { text: "up" } } }] }, { text: "done" }];
    const mcpConfig = { mcpServers: { s: faulty(["detach", "ignore-eof"], { cwd: serverCwd }) } };
    let pi;
    let before = 0;
    let killed = 0;
    // Pi asks the model again once the call answered: the server and its child are up; Pi dies there.
    const onLlmRequest = (_record, all) => {
      if (all.length !== 2) return;
      before = processesIn(serverCwd).length;
      killed = Date.now();
      pi.kill("SIGKILL");
    };
    try {
      const r = await runPi({ pi: PI_16, extensionDir: root, mcpConfig, script: { steps }, onSpawn: (child) => (pi = child), onLlmRequest, timeoutMs: 30_000 });
      assert.equal(r.signal, "SIGKILL", r.stderr);
      assert.equal(r.toolResults[0]?.text, "echo: up", r.stderr);
      assert.equal(before, 2, "the server and its detached child ran when Pi was killed");
      await waitFor(() => processesIn(serverCwd).length === 0, 5000, "every process to stop after Pi was killed");
      note(`${before} processes (a server that ignores the end of its stdin, its detached child) → 0 left ${Date.now() - killed} ms after Pi ${PI_16} was SIGKILLed`);
    } finally {
      for (const pid of processesIn(serverCwd)) process.kill(pid, "SIGKILL");
      rmSync(serverCwd, { recursive: true, force: true });
    }
  });
});
