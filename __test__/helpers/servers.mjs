// Real MCP servers installed as dev dependencies, and throwaway agent dirs to run them from.
import { spawn } from "node:child_process";
import { mkdtempSync, mkdirSync, readdirSync, readFileSync, readlinkSync, rmSync, writeFileSync } from "node:fs";
import { createServer as createHttpServer, request as httpRequest } from "node:http";
import { createRequire } from "node:module";
import { connect, createServer } from "node:net";
import { tmpdir } from "node:os";
import { dirname, join } from "node:path";
import { fileURLToPath } from "node:url";

export const root = join(dirname(fileURLToPath(import.meta.url)), "..", "..");
/** The Pi extension's entry file, as package.json names it for Pi. */
export const extensionEntry = join(root, JSON.parse(readFileSync(join(root, "package.json"), "utf8")).pi.extensions[0]);
const serverScript = (name) => join(root, "node_modules", "@modelcontextprotocol", name, "dist", "index.js");

/** server-everything over stdio, run by the Node that runs the tests. */
export const everything = (extra = {}) => ({ command: process.execPath, args: [serverScript("server-everything"), "stdio"], ...extra });

/** server-memory with its graph in `file`. */
export const memory = (file, extra = {}) => ({ command: process.execPath, args: [serverScript("server-memory")], env: { MEMORY_FILE_PATH: file }, ...extra });

/** server-filesystem serving `dir`. */
export const filesystem = (dir, extra = {}) => ({ command: process.execPath, args: [serverScript("server-filesystem"), dir], ...extra });

/** The Python environment `npm test` creates (the `mcp` SDK, uv). */
export const pyBin = join(root, "__test__", "py", ".venv", "bin");
export const uvCache = join(root, "__test__", "py", "uv-cache");

/** The small server on the official Python SDK (fixtures/py_server.py) over stdio. */
export const python = (extra = {}) => ({ command: join(pyBin, "python"), args: [join(root, "__test__", "fixtures", "py_server.py")], ...extra });

/** The purpose-built misbehaving server (see fixtures/fault-server.mjs) with the given scenarios. */
export const faulty = (scenarios = [], extra = {}) => ({
  command: process.execPath,
  args: [join(root, "__test__", "fixtures", "fault-server.mjs"), ...scenarios],
  ...extra,
});

/** The cargo-built test server (crates/connection/src/bin/mcp-test-server; `cargo test --workspace --all-targets` builds it): cheap enough to run hundreds. */
export const testServer = (scenarios = [], extra = {}) => ({ command: join(root, "target", "debug", "mcp-test-server"), args: scenarios, ...extra });

/**
 * The stdio server `entry` (an mcp.json entry) behind fixtures/wire-tap.mjs, which appends each
 * line the client sends it to `log`; `wireOf(log)` reads them back as JSON.
 */
export const tapped = (entry, log) => ({
  ...entry,
  command: process.execPath,
  args: [join(root, "__test__", "fixtures", "wire-tap.mjs"), log, entry.command, ...(entry.args ?? [])],
});
export const wireOf = (log) => readFileSync(log, "utf8").split("\n").filter(Boolean).map((line) => JSON.parse(line));

/** A private HOME (under `base`) with a Pi agent dir holding `config` (or `config({ home, cwd })`) as mcp.json. */
export function tempAgent(config, { cache, base = tmpdir() } = {}) {
  mkdirSync(base, { recursive: true });
  const home = mkdtempSync(join(base, "pi-mcp-native-test-"));
  const agentDir = join(home, ".pi", "agent");
  const cwd = join(home, "project");
  mkdirSync(agentDir, { recursive: true });
  mkdirSync(cwd);
  const resolved = typeof config === "function" ? config({ home, cwd }) : config;
  writeFileSync(join(agentDir, "mcp.json"), JSON.stringify(resolved, null, 2));
  if (cache) writeFileSync(join(agentDir, "mcp-cache.json"), JSON.stringify(cache));
  const env = { ...process.env, HOME: home, PI_CODING_AGENT_DIR: agentDir };
  return { home, agentDir, cwd, env, cachePath: join(agentDir, "mcp-cache.json"), cleanup: () => rmSync(home, { recursive: true, force: true }) };
}

/**
 * The metadata cache file (its text) after listing each server of `config` with the native API,
 * in a throwaway agent dir: what a later session starts from without starting the servers.
 */
export async function filledCache(config) {
  const agent = tempAgent(config);
  try {
    const filler = McpAdapter.open({ cwd: agent.cwd, agentDir: agent.agentDir, env: agent.env });
    for (const name of Object.keys(config.mcpServers)) await filler.list(name);
    await filler.shutdown();
    return readFileSync(agent.cachePath, "utf8");
  } finally {
    agent.cleanup();
  }
}

/** PIDs of live processes whose working directory is `dir` (how tests find the servers they started). */
export function processesIn(dir) {
  const pids = [];
  for (const entry of readdirSync("/proc")) {
    if (!/^\d+$/.test(entry)) continue;
    try {
      if (readlinkSync(`/proc/${entry}/cwd`) === dir) pids.push(Number(entry));
    } catch {
      // gone, or not ours
    }
  }
  return pids;
}

export const sleep = (ms) => new Promise((resolve) => setTimeout(resolve, ms));

/** Samples the number of server processes in `cwd` every 20 ms until `stop()`; returns the highest. */
export function sampleProcesses(cwd) {
  let most = 0;
  let running = true;
  const done = (async () => {
    while (running) {
      most = Math.max(most, processesIn(cwd).length);
      await sleep(20);
    }
  })();
  return async () => {
    running = false;
    await done;
    return most;
  };
}

/** The `pi-mcp` command line. */
export const cli = join(root, "bin", "pi-mcp.mjs");

/**
 * Runs `pi-mcp args…` in `agent`'s project dir (bounded in time); `input` goes to stdin. With
 * `tty`, it runs under `script`, so that stdin and stderr are a terminal: `stdout` then has all
 * it wrote, and each line of `input` answers the next prompt of its terminal dialogs.
 */
export function pimcp(agent, args, { input, env, tty } = {}) {
  const [program, argv] = tty
    ? ["script", ["-qfec", [process.execPath, cli, ...args].map((a) => `'${a.replaceAll("'", "'\\''")}'`).join(" "), "/dev/null"]]
    : [process.execPath, [cli, ...args]];
  return new Promise((resolve, reject) => {
    const child = spawn(program, argv, { cwd: agent.cwd, env: { ...agent.env, ...env } });
    const out = [];
    const err = [];
    child.stdout.on("data", (d) => out.push(d));
    child.stderr.on("data", (d) => err.push(d));
    const timer = setTimeout(() => child.kill("SIGKILL"), 30000);
    child.on("error", reject);
    child.on("close", (code, signal) => {
      clearTimeout(timer);
      const stdout = Buffer.concat(out).toString();
      resolve({ code, signal, stdout, stderr: Buffer.concat(err).toString() });
    });
    if (!tty) return child.stdin.end(input ?? "");
    const answers = (input ?? "").split("\n");
    let asked = 0;
    const feed = setInterval(() => {
      const prompts = (Buffer.concat(out).toString().match(/\(empty: cancel\): |> /g) ?? []).length;
      if (prompts > asked && answers.length) {
        asked = prompts;
        child.stdin.write(`${answers.shift()}\r`);
      }
    }, 50);
    child.on("close", () => clearInterval(feed));
  });
}

/** Polls `check` until it returns a truthy value or `ms` pass. */
/**
 * Starts a stand-in for Pi holding an adapter on `agent` (`__test__/fixtures/adapter-host.mjs`),
 * resolved once every server is connected; the caller SIGKILLs it.
 */
export async function adapterHost(agent) {
  const host = spawn(process.execPath, [join(root, "__test__", "fixtures", "adapter-host.mjs"), agent.cwd, agent.agentDir], {
    env: agent.env,
    stdio: ["ignore", "pipe", "inherit"],
  });
  try {
    await new Promise((resolve, reject) => {
      host.stdout.on("data", (d) => String(d).includes("ready") && resolve());
      host.once("exit", (code) => reject(new Error(`host exited early (${code})`)));
      setTimeout(() => reject(new Error("host not ready")), 20000).unref();
    });
  } catch (error) {
    host.kill("SIGKILL");
    throw error;
  }
  return host;
}

export async function waitFor(check, ms = 15000, what = "condition") {
  const until = Date.now() + ms;
  for (;;) {
    const value = await check();
    if (value) return value;
    if (Date.now() > until) throw new Error(`timed out waiting for ${what}`);
    await sleep(50);
  }
}

const { McpAdapter } = createRequire(import.meta.url)("../../index.js");

/** All text blocks of an outcome. */
export const text = (outcome) => outcome.content.map((c) => c.text ?? "").join("\n");

/** Short lifecycle clocks for tests. */
export const FAST = { healthIntervalMs: 100, failureBackoffMs: 800 };
export const IDLE = 0.005; // minutes: 300 ms

/** An adapter on a temp agent dir; `run(ctx)` gets it with the events it emits; always cleaned up. `open`: more McpAdapter.open options. */
export async function withAdapter(servers, run, { timing = FAST, base, settings, open = {} } = {}) {
  const config = ({ cwd, home }) => ({ mcpServers: typeof servers === "function" ? servers({ cwd, home }) : servers, ...(settings && { settings }) });
  const agent = tempAgent(config, { base });
  const adapter = McpAdapter.open({ cwd: agent.cwd, agentDir: agent.agentDir, env: agent.env, ...timing, ...open });
  const events = [];
  adapter.onEvent((e) => events.push(e));
  try {
    await run({ adapter, agent, events, has: (type, server) => events.some((e) => e.type === type && e.server === server) });
  } finally {
    await adapter.shutdown();
    await waitFor(() => processesIn(agent.cwd).length === 0, 5000, "servers to stop");
    agent.cleanup();
  }
}

export const rssKb = (pid) => Number(/VmRSS:\s+(\d+)/.exec(readFileSync(`/proc/${pid}/status`, "utf8"))?.[1] ?? 0);
export const cmdline = (pid) => readFileSync(`/proc/${pid}/cmdline`, "utf8").split("\0").filter(Boolean);

/** A TCP port free on the loopback interface right now. */
export function freePort() {
  return new Promise((resolve, reject) => {
    const probe = createServer();
    probe.on("error", reject);
    probe.listen(0, "127.0.0.1", () => {
      const { port } = probe.address();
      probe.close(() => resolve(port));
    });
  });
}

/** Resolves once something accepts connections on `port`. */
export async function listening(port, ms = 20000) {
  await waitFor(
    () => new Promise((resolve) => {
      const socket = connect(port, "127.0.0.1", () => { socket.destroy(); resolve(true); });
      socket.on("error", () => resolve(false));
    }),
    ms,
    `a server on port ${port}`,
  );
}

/** server-everything in an HTTP mode (`streamableHttp` or `sse`) on `port`; `stop()` kills it by PID. */
export async function everythingHttp(mode, port) {
  return serveOn(port, process.execPath, [serverScript("server-everything"), mode], { PORT: String(port) });
}

/** The fault server (fixtures/fault-server.mjs) over Streamable HTTP on `port`, with `scenarios`. */
export async function faultyHttp(port, scenarios = []) {
  return serveOn(port, process.execPath, [join(root, "__test__", "fixtures", "fault-server.mjs"), `http=${port}`, ...scenarios]);
}

/** The Python SDK server (fixtures/py_server.py) on the legacy HTTP+SSE transport. */
export async function pythonSse(port) {
  return serveOn(port, join(pyBin, "python"), [join(root, "__test__", "fixtures", "py_server.py"), "sse", String(port)]);
}

async function serveOn(port, command, args, env = {}) {
  const child = spawn(command, args, { env: { ...process.env, ...env }, stdio: "ignore" });
  const stop = () => new Promise((resolve) => {
    if (child.exitCode !== null || child.signalCode !== null) return resolve();
    child.once("exit", resolve);
    process.kill(child.pid, "SIGKILL");
  });
  try {
    await listening(port);
  } catch (error) {
    await stop();
    throw error;
  }
  return { port, pid: child.pid, stop };
}

/**
 * A loopback HTTP proxy to `targetPort` that records every request (method, path, headers) and
 * answers 401 when a header in `require` is missing or different. Setting `failPosts` to a status
 * makes it answer every POST with that status instead; setting `targetPort` moves it to another
 * server (as if the one behind it had been replaced).
 */
export async function recordingProxy(targetPort, require = {}) {
  const requests = [];
  const proxy = { requests, failPosts: null, targetPort };
  const server = createHttpServer((req, res) => {
    requests.push({ method: req.method, path: req.url, headers: req.headers });
    if (proxy.failPosts && req.method === "POST") {
      req.resume();
      res.writeHead(proxy.failPosts, { "Content-Type": "text/html" });
      res.end("<html><body>upstream failure</body></html>");
      return;
    }
    const refused = Object.entries(require).some(([name, value]) => req.headers[name.toLowerCase()] !== value);
    if (refused) {
      res.writeHead(401, { "WWW-Authenticate": 'Bearer realm="test"', "Content-Type": "text/plain" });
      res.end("unauthorized");
      return;
    }
    const upstream = httpRequest({ host: "127.0.0.1", port: proxy.targetPort, method: req.method, path: req.url, headers: req.headers }, (answer) => {
      res.writeHead(answer.statusCode, answer.headers);
      answer.pipe(res);
    });
    upstream.on("error", () => res.destroy());
    req.pipe(upstream);
  });
  await new Promise((resolve) => server.listen(0, "127.0.0.1", resolve));
  proxy.url = `http://127.0.0.1:${server.address().port}`;
  proxy.close = () => new Promise((resolve) => { server.closeAllConnections(); server.close(resolve); });
  return proxy;
}

/** The Python SDK server on Streamable HTTP (it speaks 2025-11-25 and 2026-07-28); `env` adds to its environment. */
export async function pythonHttp(port, env = {}) {
  return serveOn(port, join(pyBin, "python"), [join(root, "__test__", "fixtures", "py_server.py"), "streamable-http", String(port)], env);
}
