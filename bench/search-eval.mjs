#!/usr/bin/env node
// Search quality on real catalogs: recall@1, recall@5 and MRR of `mcp({ search })` over the
// labelled requests in __test__/fixtures/search-eval.json (tuning set and held-out set), and the
// size of the answers in o200k tokens. Runs the native search from a metadata cache built from
// the captured catalogs: no server is started. Usage: node bench/search-eval.mjs [--verbose]
import { createRequire } from "node:module";
import { mkdirSync, mkdtempSync, readdirSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { dirname, join } from "node:path";
import { fileURLToPath } from "node:url";
import { encode } from "gpt-tokenizer/encoding/o200k_base";

const root = join(dirname(fileURLToPath(import.meta.url)), "..");
const fixtures = join(root, "__test__", "fixtures");
const { McpAdapter, configHash } = createRequire(import.meta.url)(join(root, "index.js"));

/** Opens an adapter whose cache holds every captured catalog. */
function catalogAdapter(home) {
  const agentDir = join(home, "agent");
  mkdirSync(agentDir, { recursive: true });
  const mcpServers = {};
  const servers = {};
  for (const file of readdirSync(join(fixtures, "catalogs")).sort()) {
    const { server, tools, resources } = JSON.parse(readFileSync(join(fixtures, "catalogs", file), "utf8"));
    mcpServers[server] = { command: `never-started-${server}` };
    servers[server] = { configHash: configHash(mcpServers[server], {}), tools, resources, cachedAt: Date.now() };
  }
  writeFileSync(join(agentDir, "mcp.json"), JSON.stringify({ mcpServers }));
  writeFileSync(join(agentDir, "mcp-cache.json"), JSON.stringify({ version: 1, servers }));
  return McpAdapter.open({ cwd: home, agentDir, env: {} });
}

export async function evaluate({ verbose = false } = {}) {
  const { queries } = JSON.parse(readFileSync(join(fixtures, "search-eval.json"), "utf8"));
  const home = mkdtempSync(join(tmpdir(), "pi-mcp-search-eval-"));
  const adapter = catalogAdapter(home);
  const sets = { tuning: [], holdout: [] };
  try {
    const toolCount = (await adapter.status()).details.totalTools;
    for (const { query, expect, holdout } of queries) {
      const result = await adapter.search(query);
      const names = result.details.matches.map((m) => m.tool);
      const rank = names.findIndex((n) => expect.includes(n)) + 1; // 0: not found
      const tokens = encode(result.content.map((c) => c.text).join("\n")).length;
      sets[holdout ? "holdout" : "tuning"].push({ query, rank, tokens, top: names.slice(0, 3) });
    }
    const summary = (rows) => ({
      queries: rows.length,
      recallAt1: rows.filter((r) => r.rank === 1).length / rows.length,
      recallAt5: rows.filter((r) => r.rank >= 1 && r.rank <= 5).length / rows.length,
      mrr: rows.reduce((s, r) => s + (r.rank ? 1 / r.rank : 0), 0) / rows.length,
      avgTokens: rows.reduce((s, r) => s + r.tokens, 0) / rows.length,
    });
    const all = [...sets.tuning, ...sets.holdout];
    if (verbose) {
      for (const r of all.filter((r) => r.rank !== 1)) console.log(`rank ${r.rank || "-"}  ${r.query}  → ${r.top.join(", ")}`);
    }
    return { toolCount, tuning: summary(sets.tuning), holdout: summary(sets.holdout), all: summary(all) };
  } finally {
    await adapter.shutdown();
    rmSync(home, { recursive: true, force: true });
  }
}

if (process.argv[1] && fileURLToPath(import.meta.url) === process.argv[1]) {
  const report = await evaluate({ verbose: process.argv.includes("--verbose") });
  console.log(`catalog: ${report.toolCount} tools from ${readdirSync(join(fixtures, "catalogs")).length} servers`);
  for (const set of ["tuning", "holdout", "all"]) {
    const s = report[set];
    console.log(
      `${set.padEnd(8)} n=${s.queries}  recall@1 ${s.recallAt1.toFixed(2)}  recall@5 ${s.recallAt5.toFixed(2)}  MRR ${s.mrr.toFixed(3)}  avg answer ${s.avgTokens.toFixed(0)} tokens`,
    );
  }
}
