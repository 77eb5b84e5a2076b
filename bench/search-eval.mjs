#!/usr/bin/env node
// Search quality on real catalogs, each figure beside a plain BM25 baseline's on the same tools
// (bench/lib/bm25.mjs says what it is). Short requests: recall@1, recall@5 and MRR of
// `mcp({ search })` over the labelled requests in __test__/fixtures/search-eval/queries.json, for
// all of them, per kind of query, and for the tuning and held-out sets. Tasks (tasks.json there,
// when present): task recall@5 and hit@5 (bench/lib/task-scores.mjs) per set, per language and
// for tasks that need a tool described in another script, with 95 % intervals. For both, how
// well "No strong match" tells missed answers apart, and the size of the answers in o200k tokens.
// Runs the native search from a metadata cache built from the captured catalogs (those the
// requests were labelled over, `servers` in each file; all of them without it): no server is
// started. `--v1` reproduces the first eval (its 13 catalogs and 75 queries, split as they were then).
// Usage: node bench/search-eval.mjs [--v1] [--verbose]
import { createHash } from "node:crypto";
import { createRequire } from "node:module";
import { existsSync, mkdirSync, mkdtempSync, readdirSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { dirname, join } from "node:path";
import { fileURLToPath } from "node:url";
import { encode } from "gpt-tokenizer/encoding/o200k_base";
import { bm25, toolText } from "./lib/bm25.mjs";
import { calibration, catalogScripts, coverage, needsOtherScript, recallDifference, taskSummary } from "./lib/task-scores.mjs";

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

/** recall@1, recall@5, MRR and the average answer size of ranked rows; `bm25`: the baseline's. */
export function summary(rows) {
  const share = (hit) => (rows.length ? rows.filter(hit).length / rows.length : NaN);
  const mean = (value) => (rows.length ? rows.reduce((s, r) => s + value(r), 0) / rows.length : NaN);
  const scores = (rank) => ({
    recallAt1: share((r) => rank(r) === 1),
    recallAt5: share((r) => rank(r) >= 1 && rank(r) <= 5),
    mrr: mean((r) => (rank(r) ? 1 / rank(r) : 0)),
  });
  return {
    queries: rows.length,
    ...scores((r) => r.rank),
    avgTokens: mean((r) => r.tokens),
    bm25: scores((r) => r.bm25Rank),
  };
}

/** The lines of a search answer, each the names of the tools it stands for (the same tool on several servers is one line). */
const answerLines = (result) => result.details.matches.map((m) => [m.tool, ...(m.also ?? []).map((a) => a.tool)]);

/** The tools `adapter` offers of `server`, as its exposure panel lists them: `{ name, tool, description }`. */
const offered = (adapter, server) => adapter.exposure().servers.find((s) => s.server === server)?.tools ?? [];

/**
 * The BM25 baseline over the tools `adapter` offers from `catalogs`, each a flat document of the
 * catalog's definition (a resource's: the first line the adapter gives).
 */
function baseline(adapter, catalogs) {
  const docs = [];
  for (const { server, tools } of catalogs) {
    const definitions = new Map(tools.map((t) => [t.name, t]));
    for (const { name, tool, description } of offered(adapter, server)) {
      const definition = definitions.get(tool) ?? { description };
      docs.push({ id: name, text: toolText({ server, name: tool, description: definition.description, inputSchema: definition.inputSchema }) });
    }
  }
  return bm25(docs);
}

/**
 * An answer as the eval keeps it: its lines, text (`answer`), size, whether it said "No strong
 * match" and what that was decided on (`signals`).
 */
async function answer(adapter, query) {
  const result = await adapter.search(query);
  const text = result.content.map((c) => c.text).join("\n");
  const { weak, likelyServers: servers = [], signals } = result.details;
  return { lines: answerLines(result), answer: text, tokens: encode(text).length, weak: Boolean(weak), servers, signals };
}

/**
 * Runs every query through the native search and the BM25 baseline. Returns the catalog's size,
 * every tool name the model can be offered (`toolNames`), one row per query (`rank`, `bm25Rank`
 * 0: not in the answer), the summaries (`all`, `tuning`, `heldout`, each kind, the requests
 * written blind (`blind`, `heldout/blind`) and each kind within each set (`heldout/paraphrase`))
 * and "No strong match"'s calibration per set.
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
    const index = baseline(adapter, catalogs);
    const rankOf = (lines, expect) => lines.findIndex((names) => names.some((n) => expect.includes(n))) + 1;
    const rows = [];
    for (const q of queries) {
      const { lines, ...seen } = await answer(adapter, q.query);
      const rank = rankOf(lines, q.expect);
      const bm25Rank = rankOf(index.rank(q.query, 12).map((n) => [n]), q.expect);
      rows.push({ ...q, ...seen, rank, bm25Rank, hit: rank >= 1 && rank <= 5, top: lines.slice(0, 3).map((l) => l[0]) });
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
    const calibrated = Object.fromEntries(SETS.map((set) => [set, calibration(rows.filter((r) => r.set === set))]));
    return { servers: catalogs.length, toolCount: toolNames.length, toolNames, rows, groups, calibrated };
  } finally {
    await adapter.shutdown();
    rmSync(home, { recursive: true, force: true });
  }
}

const f2 = (x) => (Number.isFinite(x) ? x.toFixed(2) : "–");

/** The report as a Markdown table, one line per non-empty group, ours beside BM25's. */
export function table({ groups }) {
  const lines = ["| queries | n | recall@1 | recall@5 | MRR | BM25 r@1 / r@5 / MRR | answer tokens (avg) |", "|---|---|---|---|---|---|---|"];
  for (const [name, s] of Object.entries(groups)) {
    if (!s.queries) continue;
    const b = s.bm25;
    lines.push(`| ${name} | ${s.queries} | ${f2(s.recallAt1)} | ${f2(s.recallAt5)} | ${s.mrr.toFixed(3)} | ${f2(b.recallAt1)} / ${f2(b.recallAt5)} / ${b.mrr.toFixed(3)} | ${s.avgTokens.toFixed(0)} |`);
  }
  return lines.join("\n");
}

/** "No strong match" per set: of the answers missing every needed tool in the top 5, the share flagged; of the flagged, the share missing. */
export function calibrationTable(calibrated) {
  const lines = ["| set | missed | flagged | flagged of missed (≥ 0.70) | missed of flagged (≥ 0.60) |", "|---|---|---|---|---|"];
  for (const [set, c] of Object.entries(calibrated)) lines.push(`| ${set} | ${c.missed} | ${c.flagged} | ${f2(c.flaggedOfMissed)} | ${f2(c.missedOfFlagged)} |`);
  return lines.join("\n");
}

export const TASKS = join(fixtures, "search-eval", "tasks.json");

/** The task-shaped eval (tasks.json), or null before it exists. */
export function loadTasks(file = TASKS) {
  return existsSync(file) ? JSON.parse(readFileSync(file, "utf8")) : null;
}

/**
 * The tools of `catalogs` by every name a label may give them: the name the model sees, and the
 * server's name joined to the tool's MCP name (`slack_slack_post_message` for the model's
 * `slack_post_message`, whose MCP name already starts with the server's); each to
 * `{ name, server }` with the name the model sees.
 */
function toolLabels(adapter, catalogs) {
  const labels = new Map();
  for (const { server } of catalogs) {
    for (const { name, tool } of offered(adapter, server)) {
      labels.set(`${server}_${tool}`, { name, server });
      labels.set(name, { name, server });
    }
  }
  return labels;
}

/**
 * Runs every task of `spec` (tasks.json's shape) through the native search and the BM25
 * baseline over `catalogs` (by default those `spec.servers` names, else all). Returns one row per
 * task (`needs`, `covered`, `hit`, `weak`, `otherScript`: it needs a tool described in another
 * script, `bm25`: the baseline's coverage), the summaries per group (`all`, each set, each set's
 * languages and its tasks with and without other-script needs), the difference of other-script
 * tasks' recall@5 from the others' per set, "No strong match"'s calibration per set, the
 * catalogs' scripts, and the labels that name no tool (`unknown`).
 */
export async function evaluateTasks(spec, catalogs = loadCatalogs(spec.servers)) {
  const scripts = catalogScripts(catalogs);
  const home = mkdtempSync(join(tmpdir(), "pi-mcp-task-eval-"));
  const adapter = catalogAdapter(home, catalogs);
  try {
    const index = baseline(adapter, catalogs);
    const labels = toolLabels(adapter, catalogs);
    const unknown = new Set();
    const named = (label) => labels.get(label)?.name ?? (unknown.add(label), label);
    const rows = [];
    for (const labelled of spec.tasks) {
      const task = { ...labelled, needs: labelled.needs.map((n) => ({ ...n, tools: n.tools.map(named) })) };
      if (!task.needs.some((n) => n.tools.length)) continue;
      const { lines, ...seen } = await answer(adapter, task.text);
      const ours = coverage(task, lines);
      const bm25 = coverage(task, index.rank(task.text, 5).map((n) => [n]));
      const otherScript = needsOtherScript(task, scripts.other, (tool) => labels.get(tool)?.server);
      rows.push({ id: task.id, set: task.set, lang: task.lang, text: task.text, otherScript, ...seen, ...ours, hit: ours.covered > 0, bm25, top: lines.slice(0, 5) });
    }
    const groups = {};
    const add = (name, subset) => {
      if (subset.length) groups[name] = { ...taskSummary(subset), bm25: taskSummary(subset.map((r) => ({ ...r.bm25, tokens: 0 }))) };
    };
    add("all", rows);
    const differences = {};
    for (const set of SETS) {
      const inSet = rows.filter((r) => r.set === set);
      add(set, inSet);
      for (const lang of [...new Set(inSet.map((r) => r.lang))].sort()) add(`${set}/${lang}`, inSet.filter((r) => r.lang === lang));
      const [other, same] = [inSet.filter((r) => r.otherScript), inSet.filter((r) => !r.otherScript)];
      add(`${set}/other-script`, other);
      add(`${set}/same-script`, same);
      if (other.length && same.length) {
        const bm25 = (subset) => subset.map((r) => r.bm25);
        differences[set] = { ours: recallDifference(other, same), bm25: recallDifference(bm25(other), bm25(same)), n: other.length };
      }
    }
    const calibrated = Object.fromEntries(SETS.map((set) => [set, calibration(rows.filter((r) => r.set === set))]));
    return { servers: catalogs.length, scripts, rows, groups, differences, calibrated, unknown: [...unknown] };
  } finally {
    await adapter.shutdown();
    rmSync(home, { recursive: true, force: true });
  }
}

const interval = ([lo, hi]) => `${f2(lo)} to ${f2(hi)}`;

/** The task report as a Markdown table, ours beside BM25's, and the cross-script differences. */
export function taskTable({ groups, differences }) {
  const lines = [
    "| tasks | n | recall@5 (95 % CI) | by needs | hit@5 (95 % CI) | BM25 recall@5 | BM25 hit@5 | answer tokens (avg) |",
    "|---|---|---|---|---|---|---|---|",
  ];
  for (const [name, s] of Object.entries(groups)) {
    lines.push(
      `| ${name} | ${s.tasks} | ${f2(s.recallAt5)} (${interval(s.recallInterval)}) | ${f2(s.recallNeeds)} | ${f2(s.hitAt5)} (${interval(s.hitInterval)}) | ${f2(s.bm25.recallAt5)} | ${f2(s.bm25.hitAt5)} | ${s.avgTokens.toFixed(0)} |`,
    );
  }
  for (const [set, d] of Object.entries(differences)) {
    lines.push(
      `\n${set}: other-script tasks' recall@5 − the others' (${d.n} tasks): ours ${f2(d.ours.difference)} (${interval(d.ours.interval)}), BM25 ${f2(d.bm25.difference)} (${interval(d.bm25.interval)})`,
    );
  }
  return lines.join("\n");
}

/** The targets on the held-out tasks, each with whether it holds. */
export function targets(tasks, short) {
  const h = tasks.groups.heldout;
  const d = tasks.differences.heldout;
  const c = tasks.calibrated.heldout;
  const s = short.calibrated.heldout;
  const check = (ok, text) => `${ok ? "✓" : "✗"} ${text}`;
  return [
    check(h.recallAt5 >= 1.2 * h.bm25.recallAt5, `task recall@5 ${f2(h.recallAt5)} ≥ 1.2 × BM25's ${f2(h.bm25.recallAt5)} (${f2(1.2 * h.bm25.recallAt5)})`),
    check(h.hitAt5 >= 0.85, `task hit@5 ${f2(h.hitAt5)} ≥ 0.85`),
    check(d && d.n >= 30 && d.ours.difference >= -0.1, `other-script tasks (${d?.n ?? 0}, ≥ 30) within 0.1 of the others: ${f2(d?.ours.difference)} (${d ? interval(d.ours.interval) : "–"})`),
    check(c.flaggedOfMissed >= 0.7 && c.missedOfFlagged >= 0.6, `tasks' "No strong match": ${f2(c.flaggedOfMissed)} of missed flagged (≥ 0.70), ${f2(c.missedOfFlagged)} of flagged missed (≥ 0.60)`),
    check(s.flaggedOfMissed >= 0.7 && s.missedOfFlagged >= 0.6, `short requests' "No strong match": ${f2(s.flaggedOfMissed)} of missed flagged (≥ 0.70), ${f2(s.missedOfFlagged)} of flagged missed (≥ 0.60)`),
    check(h.avgTokens <= 400 && short.groups.all.avgTokens <= 400, `answers ${h.avgTokens.toFixed(0)} (tasks) and ${short.groups.all.avgTokens.toFixed(0)} (short) o200k tokens on average (≤ 400)`),
  ].join("\n");
}

/** The entries of a report's object whose key passes `keep`. */
const only = (object, keep) => Object.fromEntries(Object.entries(object).filter(([key]) => keep(key)));

if (process.argv[1] && fileURLToPath(import.meta.url) === process.argv[1]) {
  const verbose = process.argv.includes("--verbose");
  // `--set tuning` prints the tuning set's figures alone: what tuning may look at.
  const set = process.argv.includes("--set") ? process.argv[process.argv.indexOf("--set") + 1] : null;
  const shown = (key) => !set || key === set || key.startsWith(`${set}/`);
  const report = await evaluate({ v1: process.argv.includes("--v1") });
  console.log(`short requests: ${report.toolCount} tools from ${report.servers} servers\n`);
  console.log(table({ groups: only(report.groups, shown) }));
  console.log(`\n"No strong match" on short requests:\n${calibrationTable(only(report.calibrated, shown))}`);
  if (verbose) {
    console.log("\nnot first:");
    for (const r of report.rows.filter((r) => r.rank !== 1 && shown(r.set))) {
      console.log(`rank ${r.rank || "-"}${r.weak ? " weak" : ""}  [${r.set} ${r.kind}] ${r.query}  → ${r.top.join(", ")}`);
    }
  }
  const spec = loadTasks();
  if (!spec) {
    console.log(`\nno task eval yet (${TASKS})`);
  } else if (!process.argv.includes("--v1")) {
    const tasks = await evaluateTasks(spec);
    const other = [...tasks.scripts.other].map((s) => `${s} (${tasks.scripts.byServer.get(s)})`).join(", ");
    console.log(`\ntasks: ${tasks.rows.length} over ${tasks.servers} catalogs; described in a script other than ${tasks.scripts.main}: ${other}\n`);
    console.log(taskTable({ groups: only(tasks.groups, shown), differences: only(tasks.differences, shown) }));
    console.log(`\n"No strong match" on tasks:\n${calibrationTable(only(tasks.calibrated, shown))}`);
    if (!set || set === "heldout") console.log(`\ntargets (held-out):\n${targets(tasks, report)}`);
    if (verbose) {
      console.log("\ntasks not fully covered:");
      for (const r of tasks.rows.filter((r) => r.covered < r.needs && shown(r.set))) {
        console.log(`${r.covered}/${r.needs}${r.weak ? " weak" : ""}  [${r.set} ${r.id} ${r.lang}] ${r.text}  → ${r.top.map((l) => l.join("+")).join(", ")}`);
      }
    }
  }
}
