// Real MCP servers installed as dev dependencies, and throwaway agent dirs to run them from.
import { mkdtempSync, mkdirSync, readdirSync, readFileSync, readlinkSync, rmSync, writeFileSync } from "node:fs";
import { createRequire } from "node:module";
import { tmpdir } from "node:os";
import { dirname, join } from "node:path";
import { fileURLToPath } from "node:url";

export const root = join(dirname(fileURLToPath(import.meta.url)), "..", "..");
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

/** Polls `check` until it returns a truthy value or `ms` pass. */
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

/** An adapter on a temp agent dir; `run(ctx)` gets it with the events it emits; always cleaned up. */
export async function withAdapter(servers, run, { timing = FAST, base, settings } = {}) {
  const config = ({ cwd, home }) => ({ mcpServers: typeof servers === "function" ? servers({ cwd, home }) : servers, ...(settings && { settings }) });
  const agent = tempAgent(config, { base });
  const adapter = McpAdapter.open({ cwd: agent.cwd, agentDir: agent.agentDir, env: agent.env, ...timing });
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
