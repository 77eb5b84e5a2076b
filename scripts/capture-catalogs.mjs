#!/usr/bin/env node
// Captures the tool catalogs of real MCP servers into __test__/fixtures/catalogs/*.json, for the
// search-quality evaluation (bench/search-eval.mjs) and search tests. Installs the servers (npm
// and PyPI, pinned) into .tmp/catalogs, starts each through the native adapter, and copies what
// it cached. Run it again only to refresh the fixtures: node scripts/capture-catalogs.mjs
import { spawnSync } from "node:child_process";
import { createRequire } from "node:module";
import { existsSync, mkdirSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { dirname, join } from "node:path";
import { fileURLToPath } from "node:url";

const root = join(dirname(fileURLToPath(import.meta.url)), "..");
const work = join(root, ".tmp", "catalogs");
const out = join(root, "__test__", "fixtures", "catalogs");
const { McpAdapter } = createRequire(import.meta.url)(join(root, "index.js"));

const NPM = {
  "@playwright/mcp": "0.0.83",
  "chrome-devtools-mcp": "1.11.0",
  "@upstash/context7-mcp": "4.1.1",
  "@modelcontextprotocol/server-sequential-thinking": "2026.8.31",
  "@modelcontextprotocol/server-github": "2025.4.8",
  "@notionhq/notion-mcp-server": "2.5.2",
  "mcp-server-kubernetes": "4.1.7",
};
const PYPI = ["mcp-server-git==2026.10.19", "mcp-server-fetch==2026.10.24", "mcp-server-time==2026.10.19"];

function run(command, args, options = {}) {
  const r = spawnSync(command, args, { stdio: "inherit", ...options });
  if (r.status !== 0) throw new Error(`${command} ${args.join(" ")} failed`);
}

mkdirSync(work, { recursive: true });
if (!existsSync(join(work, "node_modules", ".bin", "playwright-mcp"))) {
  writeFileSync(join(work, "package.json"), JSON.stringify({ private: true }));
  run("npm", ["install", "--no-audit", "--no-fund", ...Object.entries(NPM).map(([p, v]) => `${p}@${v}`)], { cwd: work });
}
if (!existsSync(join(work, "py", "bin", "mcp-server-git"))) {
  run("python3", ["-m", "venv", join(work, "py")]);
  run(join(work, "py", "bin", "pip"), ["install", "-q", ...PYPI]);
}

const bin = (name) => join(work, "node_modules", ".bin", name);
const repoServer = (name) => join(root, "node_modules", "@modelcontextprotocol", name, "dist", "index.js");
const scratch = join(work, "scratch");
mkdirSync(join(scratch, "repo"), { recursive: true });
spawnSync("git", ["init", "-q", join(scratch, "repo")]);
const servers = {
  everything: { command: process.execPath, args: [repoServer("server-everything"), "stdio"] },
  filesystem: { command: process.execPath, args: [repoServer("server-filesystem"), scratch] },
  memory: { command: process.execPath, args: [repoServer("server-memory")], env: { MEMORY_FILE_PATH: join(scratch, "memory.jsonl") } },
  "sequential-thinking": { command: bin("mcp-server-sequential-thinking") },
  playwright: { command: bin("playwright-mcp") },
  "chrome-devtools": { command: bin("chrome-devtools-mcp") },
  context7: { command: bin("context7-mcp") },
  github: { command: bin("mcp-server-github"), env: { GITHUB_PERSONAL_ACCESS_TOKEN: "unused" } },
  notion: { command: bin("notion-mcp-server"), env: { NOTION_TOKEN: "unused" } },
  kubernetes: { command: bin("mcp-server-kubernetes") },
  git: { command: join(work, "py", "bin", "mcp-server-git"), args: ["--repository", join(scratch, "repo")] },
  fetch: { command: join(work, "py", "bin", "mcp-server-fetch") },
  time: { command: join(work, "py", "bin", "mcp-server-time"), args: ["--local-timezone", "UTC"] },
};

const agentDir = join(work, "agent");
rmSync(agentDir, { recursive: true, force: true });
mkdirSync(agentDir, { recursive: true });
writeFileSync(join(agentDir, "mcp.json"), JSON.stringify({ mcpServers: servers }));
const adapter = McpAdapter.open({ cwd: scratch, agentDir });
const failed = [];
try {
  for (const name of Object.keys(servers)) {
    const result = await adapter.connect(name);
    if (result.isError) failed.push(`${name}: ${result.content[0].text}`);
  }
} finally {
  await adapter.shutdown();
}
const cache = JSON.parse(readFileSync(join(agentDir, "mcp-cache.json"), "utf8"));
mkdirSync(out, { recursive: true });
for (const [name, entry] of Object.entries(cache.servers)) {
  const catalog = { server: name, tools: entry.tools, resources: entry.resources ?? [] };
  writeFileSync(join(out, `${name}.json`), JSON.stringify(catalog, null, 1) + "\n");
  console.log(`${name}: ${entry.tools.length} tools, ${catalog.resources.length} resources`);
}
if (failed.length) console.error(`not captured:\n${failed.join("\n")}`);
