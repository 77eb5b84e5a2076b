#!/usr/bin/env node
// What starting each stdio server through the helper (`pi-mcp-native-helper supervise`, Linux)
// costs a cold call: McpAdapter.open and the first call (spawn + initialize + call) with the helper
// and without it, interleaved in one process, against server-everything and the fault server (a
// plain Node script); and, to see the helper's own share apart from the servers' start-up, the
// time from spawn to the first output of a trivial program (`echo`), through the helper and not.
// Prints medians, spread and the per-repetition differences; not a test.
// Needs `npm run build` (`npm run bench` builds it). Usage: node bench/supervisor.mjs [--reps 30]
import { spawn } from "node:child_process";
import { createRequire } from "node:module";
import { mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { parseArgs } from "node:util";
import { ROOT } from "./lib/setup.mjs";
import { fmt, paired, summary } from "./lib/stats.mjs";

const require = createRequire(import.meta.url);
const { binaryFile, helperFile, platformId } = require(join(ROOT, "loader.js"));
// The addon itself, not index.js: its helper hook is reachable here.
const addon = require(join(ROOT, binaryFile(platformId())));
const helper = join(ROOT, helperFile(platformId()));

const servers = {
  "server-everything": [process.execPath, join(ROOT, "node_modules", "@modelcontextprotocol", "server-everything", "dist", "index.js"), "stdio"],
  "fault server": [process.execPath, join(ROOT, "__test__", "fixtures", "fault-server.mjs")],
};
const echo = { "server-everything": ["s_echo", { message: "cold" }], "fault server": ["s_echo", { text: "cold" }] };

/** One cold call (ms) on a new adapter, the helper on or off (off: the addon says once that it is missing). */
async function coldCall(agentDir, name, withHelper) {
  addon.setHelper(withHelper ? helper : join(ROOT, "no-helper-here"));
  const adapter = addon.McpAdapter.open({ cwd: agentDir, agentDir, env: {} });
  const [tool, args] = echo[name];
  const started = performance.now();
  const result = await adapter.call(tool, args);
  const ms = performance.now() - started;
  await adapter.shutdown();
  if (result.isError) throw new Error(`${name}: ${JSON.stringify(result.content)}`);
  return ms;
}

/** Milliseconds from spawning `command` to its first byte of output. */
function firstOutput(command, args) {
  return new Promise((resolve, reject) => {
    const started = performance.now();
    const child = spawn(command, args, { stdio: ["ignore", "pipe", "inherit"] });
    child.once("error", reject);
    child.stdout.once("data", () => resolve(performance.now() - started));
  });
}

const row = (xs, digits = 1) => {
  const q = summary(xs);
  return `${fmt(q.median, digits)} ms (p25 ${fmt(q.p25, digits)}, p75 ${fmt(q.p75, digits)}, n=${q.n})`;
};
const difference = (on, off, digits = 1) => {
  const d = summary(paired(on, off));
  return `  difference per repetition: median ${fmt(d.median, digits)} ms (p25 ${fmt(d.p25, digits)}, p75 ${fmt(d.p75, digits)})`;
};

export async function measureSupervisor(reps = 30) {
  const lines = [];
  const echo = { on: [], off: [] };
  for (let i = 0; i < reps * 10; i++) {
    for (const on of i % 2 ? [true, false] : [false, true]) {
      const ms = on ? await firstOutput(helper, ["supervise", "/", "/bin/echo", "echo", "x"]) : await firstOutput("/bin/echo", ["x"]);
      echo[on ? "on" : "off"].push(ms);
    }
  }
  lines.push(
    `spawn → first output of /bin/echo, through the helper: ${row(echo.on, 2)}`,
    `spawn → first output of /bin/echo, directly:          ${row(echo.off, 2)}`,
    difference(echo.on, echo.off, 2),
  );
  for (const [name, [command, ...args]] of Object.entries(servers)) {
    const agentDir = mkdtempSync(join(tmpdir(), "pi-mcp-native-bench-"));
    writeFileSync(join(agentDir, "mcp.json"), JSON.stringify({ mcpServers: { s: { command, args } } }));
    const samples = { on: [], off: [] };
    try {
      await coldCall(agentDir, name, true); // warm the file cache
      for (let i = 0; i < reps; i++) {
        // Alternating which goes first keeps drift out of the difference.
        for (const on of i % 2 ? [true, false] : [false, true]) samples[on ? "on" : "off"].push(await coldCall(agentDir, name, on));
      }
    } finally {
      rmSync(agentDir, { recursive: true, force: true });
    }
    lines.push(
      `cold call, ${name}, through the helper: ${row(samples.on)}`,
      `cold call, ${name}, spawned directly:   ${row(samples.off)}`,
      difference(samples.on, samples.off),
    );
  }
  return lines.join("\n");
}

if (process.argv[1] === new URL(import.meta.url).pathname) {
  const { values } = parseArgs({ options: { reps: { type: "string", default: "30" } } });
  console.log(await measureSupervisor(Number(values.reps)));
}
