#!/usr/bin/env node
// `npm run demo`: the gateway on an embedded config (server-everything and server-memory from
// node_modules), driven the way the model drives the `mcp` tool. Uses a private agent dir, so
// your ~/.pi is never touched; every server is stopped at the end.
import { createRequire } from "node:module";
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { dirname, join } from "node:path";
import { fileURLToPath } from "node:url";

const root = join(dirname(fileURLToPath(import.meta.url)), "..");
const { McpAdapter } = createRequire(import.meta.url)(join(root, "index.js"));
const server = (name) => join(root, "node_modules", "@modelcontextprotocol", name, "dist", "index.js");

const home = mkdtempSync(join(tmpdir(), "pi-mcp-native-demo-"));
const agentDir = join(home, "agent");
mkdirSync(agentDir);
const config = {
  mcpServers: {
    everything: { command: process.execPath, args: [server("server-everything"), "stdio"] },
    memory: { command: process.execPath, args: [server("server-memory")], env: { MEMORY_FILE_PATH: join(home, "memory.jsonl") } },
  },
};
writeFileSync(join(agentDir, "mcp.json"), JSON.stringify(config, null, 2));

const text = (outcome) => outcome.content.map((c) => (c.type === "text" ? c.text : `[${c.type} ${c.mimeType}]`)).join("\n");
const steps = [
  {},
  { search: "echo sum" },
  { describe: "everything_get-sum" },
  { tool: "everything_get-sum", args: { a: 2, b: 40 } },
  { tool: "everything_echo", args: { message: "hello from pi-mcp-native" } },
  { tool: "memory_create_entities", args: { entities: [{ name: "pi", entityType: "agent", observations: ["speaks MCP natively"] }] } },
  { tool: "memory_search_nodes", args: { query: "pi" } },
  { tool: "everything_ecko" },
  {},
];

let adapter;
try {
  let t = performance.now();
  adapter = McpAdapter.open({ cwd: home, agentDir });
  console.log(`McpAdapter.open: ${(performance.now() - t).toFixed(2)} ms (config + cache, no server started)\n`);
  for (const params of steps) {
    t = performance.now();
    const outcome = await adapter.execute(params);
    const ms = (performance.now() - t).toFixed(1);
    console.log(`── mcp(${JSON.stringify(params)})  ${ms} ms${outcome.isError ? "  [error]" : ""}`);
    console.log(`${text(outcome)}\n`);
  }
} finally {
  await adapter?.shutdown();
  rmSync(home, { recursive: true, force: true });
}
