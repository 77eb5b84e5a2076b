#!/usr/bin/env node
// `npm run demo`: the `pi-mcp` CLI on an embedded config (server-everything and server-memory
// from node_modules): status, search, describe, calls, doctor. Runs in a private agent dir with
// only that config (PI_MCP_CONFIG_MODE=exclusive), so your ~/.pi and other configs are never
// read or touched; every server is stopped when each command ends.
import { spawnSync } from "node:child_process";
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { dirname, join } from "node:path";
import { fileURLToPath } from "node:url";

const root = join(dirname(fileURLToPath(import.meta.url)), "..");
const cli = join(root, "bin", "pi-mcp.mjs");
const server = (name) => join(root, "node_modules", "@modelcontextprotocol", name, "dist", "index.js");

const home = mkdtempSync(join(tmpdir(), "pi-mcp-native-demo-"));
const agentDir = join(home, "agent");
mkdirSync(agentDir);
const configPath = join(home, "demo-mcp.json");
const config = {
  mcpServers: {
    everything: { command: process.execPath, args: [server("server-everything"), "stdio"] },
    memory: { command: process.execPath, args: [server("server-memory")], env: { MEMORY_FILE_PATH: join(home, "memory.jsonl") } },
  },
};
writeFileSync(configPath, JSON.stringify(config, null, 2));

const env = { ...process.env, PI_CODING_AGENT_DIR: agentDir, PI_MCP_CONFIG_MODE: "exclusive" };
const steps = [
  ["status"],
  ["search", "echo sum"],
  ["describe", "everything_get-sum"],
  ["call", "everything_get-sum", '{"a": 2, "b": 40}'],
  ["call", "memory_create_entities", '{"entities": [{"name": "pi", "entityType": "agent", "observations": ["speaks MCP natively"]}]}'],
  ["call", "memory_search_nodes", '{"query": "pi"}'],
  ["describe", "everything_ecko"],
  ["status"],
  ["doctor"],
];

const quote = (arg) => (/^[\w./-]+$/.test(arg) ? arg : `'${arg}'`);
let failures = 0;
try {
  console.log(`Config: ${configPath} (private agent dir ${agentDir})`);
  console.log("Each command is a fresh process: servers start when a command needs them and stop when it ends.\n");
  for (const args of steps) {
    console.log(`$ pi-mcp ${args.map(quote).join(" ")}`);
    const started = performance.now();
    const run = spawnSync(process.execPath, [cli, "--config", configPath, ...args], { cwd: home, env, stdio: "inherit" });
    const ms = (performance.now() - started).toFixed(0);
    console.log(`  → exit ${run.status} in ${ms} ms\n`);
    // The misspelt tool is expected to fail (exit 1) and show the closest names.
    if (run.status !== (args[1] === "everything_ecko" ? 1 : 0)) failures++;
  }
} finally {
  rmSync(home, { recursive: true, force: true });
}
if (failures) {
  console.error(`${failures} demo step(s) did not end as expected`);
  process.exitCode = 1;
}
