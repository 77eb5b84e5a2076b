#!/usr/bin/env node
// Figures for the native API against server-everything (stdio): McpAdapter.open, a cold call
// (spawn + initialize + list + call, new adapter each time) and warm calls. Prints medians and
// spread; not a test. Usage: node bench/native-api.mjs [--reps 10] [--warm 200]
import { createRequire } from "node:module";
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { dirname, join } from "node:path";
import { fileURLToPath } from "node:url";

const root = join(dirname(fileURLToPath(import.meta.url)), "..");
const { McpAdapter } = createRequire(import.meta.url)(join(root, "index.js"));
const arg = (name, fallback) => {
  const i = process.argv.indexOf(`--${name}`);
  return i > 0 ? Number(process.argv[i + 1]) : fallback;
};
const reps = arg("reps", 10);
const warmCalls = arg("warm", 200);

const home = mkdtempSync(join(tmpdir(), "pi-mcp-native-bench-"));
const agentDir = join(home, "agent");
mkdirSync(agentDir);
const script = join(root, "node_modules/@modelcontextprotocol/server-everything/dist/index.js");
writeFileSync(join(agentDir, "mcp.json"), JSON.stringify({ mcpServers: { everything: { command: process.execPath, args: [script, "stdio"] } } }));

const stats = (xs) => {
  const s = [...xs].sort((a, b) => a - b);
  const q = (p) => s[Math.min(s.length - 1, Math.floor(p * s.length))];
  return `median ${q(0.5).toFixed(2)} ms (min ${s[0].toFixed(2)}, p90 ${q(0.9).toFixed(2)}, n=${s.length})`;
};
const time = async (fn) => {
  const t = performance.now();
  await fn();
  return performance.now() - t;
};
const echo = (adapter, message) => adapter.call("everything_echo", { message }).then((r) => {
  if (r.isError) throw new Error(JSON.stringify(r.content));
});

try {
  const opens = [];
  const colds = [];
  for (let i = 0; i < reps; i++) {
    let adapter;
    opens.push(await time(() => (adapter = McpAdapter.open({ cwd: home, agentDir }))));
    colds.push(await time(() => echo(adapter, "cold")));
    await adapter.shutdown();
  }
  const adapter = McpAdapter.open({ cwd: home, agentDir });
  await echo(adapter, "warm-up");
  const warms = [];
  for (let i = 0; i < warmCalls; i++) warms.push(await time(() => echo(adapter, `warm ${i}`)));
  await adapter.shutdown();
  console.log(`McpAdapter.open (config + cache):  ${stats(opens)}`);
  console.log(`cold call (spawn → result):        ${stats(colds)}`);
  console.log(`warm call:                         ${stats(warms)}`);
} finally {
  rmSync(home, { recursive: true, force: true });
}
