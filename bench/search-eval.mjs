#!/usr/bin/env node
// Search quality on real catalogs: recall@1, recall@5 and MRR of `mcp({ search })` over the
// labelled requests in __test__/fixtures/search-eval/queries.json, for all of them, per kind of
// query, and for the tuning and held-out sets, with the size of the answers in o200k tokens. Runs
// the native search from a metadata cache built from the captured catalogs the requests were
// labelled over (`servers` there): no server is started.
// `--v1` reproduces the first eval (its 13 catalogs and 75 queries, split as they were then).
// Usage: node bench/search-eval.mjs [--v1] [--verbose]
import { createHash } from "node:crypto";
import { createRequire } from "node:module";
import { mkdirSync, mkdtempSync, readdirSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { dirname, join } from "node:path";
import { fileURLToPath } from "node:url";
import { encode } from "gpt-tokenizer/encoding/o200k_base";

const root = join(dirname(fileURLToPath(import.meta.url)), "..");
const fixtures = join(root, "__test__", "fixtures");
const { McpAdapter, configHash } = createRequire(import.meta.url)(join(root, "index.js"));

export const KINDS = ["exact", "paraphrase", "jargon", "intent"];
export const SETS = ["tuning", "heldout"];

export function loadEval() {
  return JSON.parse(readFileSync(join(fixtures, "search-eval", "queries.json"), "utf8"));
}

/**
 * The set of each request written blind (`author: "lead-blind"`): stratified by the server the
 * writer had in mind and the kind, each stratum ordered by the SHA-256 of its request and dealt
 * alternately to the tuning and the held-out set. A stratum of odd size gives its extra request
 * to the set the previous odd stratum did not, so that both sets stay about half.
 */
export function blindSplit(queries) {
  const strata = new Map();
  for (const q of queries.filter((q) => q.author === "lead-blind")) {
    const key = `${q.server}/${q.kind}`;
    if (!strata.has(key)) strata.set(key, []);
    strata.get(key).push(q.query);
  }
  const sha = (text) => createHash("sha256").update(text).digest("hex");
  const sets = new Map();
  let oddFirst = 0;
  for (const key of [...strata.keys()].sort()) {
    const ordered = strata.get(key).sort((a, b) => (sha(a) < sha(b) ? -1 : 1));
    const first = ordered.length % 2 ? oddFirst : 0;
    if (ordered.length % 2) oddFirst = 1 - oddFirst;
    ordered.forEach((query, i) => sets.set(query, SETS[(i + first) % 2]));
  }
  return sets;
}

/** The captured catalogs (all, or those of `only`), as `{ server, tools, resources, instructions }`. */
export function loadCatalogs(only) {
  return readdirSync(join(fixtures, "catalogs"))
    .sort()
    .map((file) => JSON.parse(readFileSync(join(fixtures, "catalogs", file), "utf8")))
    .filter(({ server }) => !only || only.includes(server));
}

/** Each catalog's server as a user describes it in the config (`description`). */
export function loadServerDescriptions() {
  return JSON.parse(readFileSync(join(fixtures, "search-eval", "servers.json"), "utf8"));
}

/**
 * Opens an adapter in `home` whose cache holds `catalogs`, each server configured with its
 * description from servers.json; its servers are never started.
 */
export function catalogAdapter(home, catalogs) {
  const agentDir = join(home, "agent");
  mkdirSync(agentDir, { recursive: true });
  const descriptions = loadServerDescriptions();
  const mcpServers = {};
  const servers = {};
  for (const { server, tools, resources, instructions } of catalogs) {
    mcpServers[server] = { command: `never-started-${server}`, description: descriptions[server] };
    servers[server] = { configHash: configHash(mcpServers[server], {}), tools, resources, instructions, cachedAt: Date.now() };
  }
  writeFileSync(join(agentDir, "mcp.json"), JSON.stringify({ mcpServers }));
  writeFileSync(join(agentDir, "mcp-cache.json"), JSON.stringify({ version: 1, servers }));
  return McpAdapter.open({ cwd: home, agentDir, env: {} });
}

/** recall@1, recall@5, MRR and the average answer size of ranked rows. */
export function summary(rows) {
  const share = (hit) => (rows.length ? rows.filter(hit).length / rows.length : NaN);
  const mean = (value) => (rows.length ? rows.reduce((s, r) => s + value(r), 0) / rows.length : NaN);
  return {
    queries: rows.length,
    recallAt1: share((r) => r.rank === 1),
    recallAt5: share((r) => r.rank >= 1 && r.rank <= 5),
    mrr: mean((r) => (r.rank ? 1 / r.rank : 0)),
    avgTokens: mean((r) => r.tokens),
  };
}

/**
 * Runs every query through the native search. Returns the catalog's size, every tool name the
 * model can be offered (`toolNames`), one row per query (`rank` 0: not in the answer) and the
 * summaries: `all`, `tuning`, `heldout`, each kind, the requests written blind (`blind`, `heldout/blind`)
 * and each kind within each set (`heldout/paraphrase`).
 */
export async function evaluate({ v1 = false } = {}) {
  const spec = loadEval();
  const queries = v1 ? spec.queries.filter((q) => q.v1).map((q) => ({ ...q, set: q.v1 === "holdout" ? "heldout" : "tuning" })) : spec.queries;
  const catalogs = loadCatalogs(v1 ? spec.v1.servers : spec.servers);
  const home = mkdtempSync(join(tmpdir(), "pi-mcp-search-eval-"));
  const adapter = catalogAdapter(home, catalogs);
  try {
    const everything = await adapter.search(".", { regex: true, limit: 1_000_000, includeSchemas: false });
    const toolNames = everything.details.matches.map((m) => m.tool);
    const rows = [];
    for (const q of queries) {
      const result = await adapter.search(q.query);
      const names = result.details.matches.map((m) => m.tool);
      const rank = names.findIndex((n) => q.expect.includes(n)) + 1;
      const text = result.content.map((c) => c.text).join("\n");
      const weak = Boolean(result.details.weak);
      rows.push({ ...q, rank, tokens: encode(text).length, top: names.slice(0, 3), text, weak, servers: result.details.servers ?? [] });
    }
    const groups = { all: summary(rows) };
    for (const set of SETS) groups[set] = summary(rows.filter((r) => r.set === set));
    for (const kind of KINDS) groups[kind] = summary(rows.filter((r) => r.kind === kind));
    const blind = rows.filter((r) => r.author === "lead-blind");
    groups.blind = summary(blind);
    for (const set of SETS) groups[`${set}/blind`] = summary(blind.filter((r) => r.set === set));
    for (const set of SETS) {
      for (const kind of KINDS) groups[`${set}/${kind}`] = summary(rows.filter((r) => r.set === set && r.kind === kind));
    }
    return { servers: catalogs.length, toolCount: toolNames.length, toolNames, rows, groups };
  } finally {
    await adapter.shutdown();
    rmSync(home, { recursive: true, force: true });
  }
}

/** The report as a Markdown table, one line per non-empty group. */
export function table({ groups }) {
  const lines = ["| queries | n | recall@1 | recall@5 | MRR | answer tokens (avg) |", "|---|---|---|---|---|---|"];
  for (const [name, s] of Object.entries(groups)) {
    if (!s.queries) continue;
    lines.push(`| ${name} | ${s.queries} | ${s.recallAt1.toFixed(2)} | ${s.recallAt5.toFixed(2)} | ${s.mrr.toFixed(3)} | ${s.avgTokens.toFixed(0)} |`);
  }
  return lines.join("\n");
}

if (process.argv[1] && fileURLToPath(import.meta.url) === process.argv[1]) {
  const report = await evaluate({ v1: process.argv.includes("--v1") });
  console.log(`catalog: ${report.toolCount} tools from ${report.servers} servers\n`);
  console.log(table(report));
  if (process.argv.includes("--verbose")) {
    console.log("\nnot first:");
    for (const r of report.rows.filter((r) => r.rank !== 1)) {
      console.log(`rank ${r.rank || "-"}  [${r.set} ${r.kind}] ${r.query}  → ${r.top.join(", ")}`);
    }
  }
}
