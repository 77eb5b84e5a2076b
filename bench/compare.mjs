#!/usr/bin/env node
// `npm run bench -- --compare BASE [--head REF]`: a before/after regression bench between two
// commits of pi-mcp-native. Each commit is checked out into a git worktree under
// bench/.cache/compare/<hash> (reused while it is at that commit) and built by its own
// `npm run build` (the release addon and helper, cargo alone) into a target of its own beside it.
// Then, in ≥ 20 interleaved pairs (each pair runs every measure on both builds, the measures in a
// rotated order, each measure's base first every other pair), bench/compare-probe.mjs times in
// fresh processes a warm call, a cold call, 500 calls with 50 in flight, opening a 10,000-tool
// cache and the search index's build over it, and the real Pi (0.87.1 unless --pi) times its
// start-up with each build's extension. Per measure: the medians, the median of the paired
// differences (head − base) with the sign test's distribution-free 95 % interval, and
// "regression" iff that interval lies above zero. Also each commit's addon and helper sizes, Rust
// lines per crate and its `json!` and `.get("…")` outside tests. Writes bench/COMPARE.md; raw samples in bench/.cache/compare/<base>-<head>.json.
// Not a test and not part of CI.
// Usage: npm run bench -- --compare BASE [--head main] [--reps 20] [--pi 0.87.1] [--no-build]
//   [--rebuild] [--report-only] [--clean] [--out FILE]
// (--clean: remove both worktrees and their targets after the run.)
import { execFileSync, spawnSync } from "node:child_process";
import { existsSync, mkdirSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { join, resolve } from "node:path";
import { fileURLToPath } from "node:url";
import { PiSuite } from "./lib/pi-suite.mjs";
import { binaryFigures, sourceFigures, TEST_FILE, PATTERNS } from "./lib/figures.mjs";
import { machine } from "./lib/report.mjs";
import { CACHE, ROOT, VERSIONS, ensureInstalled, ensurePi } from "./lib/setup.mjs";
import { fmt, medianDifference, summary } from "./lib/stats.mjs";

const COMPARE = join(CACHE, "compare");
const PROBE = join(ROOT, "bench", "compare-probe.mjs");
const log = (text) => console.error(`bench compare: ${text}`);

/** [key, label] of each measure, all in milliseconds (lower is better). */
export const MEASURES = [
  ["warmMs", "warm call (round trip; median of 100 per sample)"],
  ["coldMs", "cold call (spawn + initialize + call; median of 3)"],
  ["inflightMs", "500 calls, 50 in flight (wall; median of 3)"],
  ["openMs", "opening a 10,000-tool cache (open + status; median of 5)"],
  ["indexMs", "search index build over 10,000 tools (a fresh adapter's first search; median of 3)"],
  ["piStartupMs", "Pi's start-up with the extension (spawn → first LLM request)"],
  ["piImportMs", "… of it, the extension's import (Pi's `PI_TIMING`, whole ms)"],
  ["piFactoryMs", "… of it, the extension's factory (Pi's `PI_TIMING`, whole ms)"],
];

const git = (...args) => execFileSync("git", args, { cwd: ROOT, encoding: "utf8" }).trim();

/** The commit `ref` names: { ref, hash, short, subject }. */
function commit(ref) {
  const hash = git("rev-parse", "--verify", `${ref}^{commit}`);
  return { ref, hash, short: hash.slice(0, 12), subject: git("log", "-1", "--format=%s", hash) };
}

/** A worktree of `c` under bench/.cache/compare, made or reused → its directory. */
function checkout(c) {
  const dir = join(COMPARE, c.short);
  if (existsSync(dir) && spawnSync("git", ["-C", dir, "rev-parse", "HEAD"], { encoding: "utf8" }).stdout.trim() !== c.hash) {
    log(`${dir} is not at ${c.short}: removing it`);
    git("worktree", "remove", "--force", dir);
  }
  if (!existsSync(dir)) {
    mkdirSync(COMPARE, { recursive: true });
    log(`git worktree add --detach ${dir} ${c.short}`);
    git("worktree", "add", "--detach", dir, c.hash);
  }
  return dir;
}

/**
 * The release build of the worktree `dir` by its own `npm run build`, into the target `dir`.target;
 * skipped when a build of the same commit is recorded and its binaries are there (unless `rebuild`)
 * → { command, script, seconds, target }.
 */
function build(c, dir, { rebuild, noBuild }) {
  const stampFile = `${dir}.build.json`;
  const target = `${dir}.target`;
  if (!rebuild && existsSync(stampFile)) {
    const stamp = JSON.parse(readFileSync(stampFile, "utf8"));
    try {
      binaryFigures(dir);
      if (stamp.hash === c.hash) return stamp;
    } catch {
      // A binary is missing: build again.
    }
  }
  if (noBuild) throw new Error(`${c.short} has no release build in ${dir}: run without --no-build`);
  const script = JSON.parse(readFileSync(join(dir, "package.json"), "utf8")).scripts.build;
  log(`${c.short}: npm run build (${script}) with CARGO_TARGET_DIR=${target}`);
  const started = Date.now();
  const r = spawnSync("npm", ["run", "build"], { cwd: dir, env: { ...process.env, CARGO_TARGET_DIR: target }, stdio: ["ignore", "inherit", "inherit"] });
  if (r.status !== 0) throw new Error(`npm run build failed in ${dir} (exit ${r.status ?? r.signal})`);
  const stamp = { hash: c.hash, command: "npm run build", script, seconds: (Date.now() - started) / 1000, load: machine().load, target };
  writeFileSync(stampFile, JSON.stringify(stamp, null, 1));
  return stamp;
}

/** One sample of `measure` from the build in `dir`, in a fresh process. */
function probe(node, dir, measure, serverCommand) {
  const args = [PROBE, "--root", dir, "--measure", measure, "--server", JSON.stringify(serverCommand)];
  return JSON.parse(execFileSync(node, args, { cwd: dir, encoding: "utf8", timeout: 180_000, stdio: ["ignore", "pipe", "inherit"] }));
}

/** `reps` pairs of samples of every measure, both builds in each, interleaved. */
async function measure({ paths, piCli, dirs, reps }) {
  const extension = (label, dir) => ({ label, extensionDir: dir, settings: { scriptMode: false, namespaceProxyTools: false }, mcp: true });
  const suite = new PiSuite({ ...paths, piCli }, { base: extension("pi-mcp-native (base)", dirs.base), head: extension("pi-mcp-native (head)", dirs.head) });
  const jobs = {
    calls: (side) => probe(paths.node, dirs[side], "calls", suite.serverCommand),
    catalog: (side) => probe(paths.node, dirs[side], "catalog", suite.serverCommand),
    pi: async (side) => {
      const r = await suite.run(side, { session: false, cached: true });
      return { piStartupMs: r.startupMs, piImportMs: r.importMs, piFactoryMs: r.factoryMs };
    },
  };
  const names = Object.keys(jobs);
  const pairs = [];
  try {
    log("warm-up: each build once through every measure (file caches, Pi's compile cache)");
    await suite.warmUp(["base", "head"]);
    for (const side of ["base", "head"]) for (const name of ["calls", "catalog"]) await jobs[name](side);
    for (let i = 0; i < reps; i++) {
      const started = Date.now();
      const pair = { base: {}, head: {}, order: [], loadBefore: machine().load };
      for (let k = 0; k < names.length; k++) {
        // The measures in a rotated order; each measure's two builds in turn, base first every other pair.
        const m = (i + k) % names.length;
        const name = names[m];
        const order = (i + m) % 2 ? ["head", "base"] : ["base", "head"];
        pair.order.push(`${name}: ${order.join(" → ")}`);
        for (const side of order) Object.assign(pair[side], await jobs[name](side));
      }
      pairs.push(pair);
      log(`pair ${i + 1}/${reps} (${((Date.now() - started) / 1000).toFixed(1)} s, load ${machine().load}): ${MEASURES.map(([key]) => `${key} ${fmt(pair.base[key], 1)}/${fmt(pair.head[key], 1)}`).join(", ")}`);
    }
  } finally {
    suite.close();
  }
  return pairs;
}

/** The verdict of a paired difference's interval. */
const verdict = (d) => (d.low > 0 ? "**regression**" : d.high < 0 ? "faster" : "no difference shown");

/** The comparison table (markdown), one row per measure. */
export function compareRows(pairs) {
  const head = ["measure (ms)", "base median", "head median", "head − base: median paired difference [95 % interval]", "relative", "verdict"];
  const lines = [`| ${head.join(" | ")} |`, `|${head.map(() => "---").join("|")}|`];
  for (const [key, label] of MEASURES.filter(([key]) => pairs.some((p) => key in p.base))) {
    const base = summary(pairs.map((p) => p.base[key]));
    const headMedian = summary(pairs.map((p) => p.head[key])).median;
    const d = medianDifference(pairs.map((p) => p.head[key] - p.base[key]));
    const digits = base.median < 10 ? 3 : 1;
    const relative = `${d.median >= 0 ? "+" : ""}${fmt((100 * d.median) / base.median, 1)} %`;
    lines.push(`| ${label} | ${fmt(base.median, digits)} | ${fmt(headMedian, digits)} | ${fmt(d.median, digits)} [${fmt(d.low, digits)}, ${fmt(d.high, digits)}] (n=${d.n}, coverage ${fmt(100 * d.coverage, 1)} %) | ${relative} | ${verdict(d)} |`);
  }
  return lines.join("\n");
}

const mb = (bytes) => `${(bytes / 1e6).toFixed(2)} MB (${bytes.toLocaleString("en")} B)`;

/** The static figures of both commits (markdown). */
export function figureRows({ base, head }) {
  const binary = (side, which) => {
    const b = side.binaries[which];
    return `${mb(b.bytes)}${b.stripped ? "" : ", **not stripped**"}`;
  };
  const total = (side, key) => side.sources.reduce((n, c) => n + c[key], 0);
  const crates = (side, key) => side.sources.map((c) => `${c.crate} ${c[key].toLocaleString("en")}`).join("; ");
  const rows = [
    ["addon (`pi-mcp-native.linux-x64-gnu.node`)", binary(base, "addon"), binary(head, "addon")],
    ["helper (`pi-mcp-native-helper-linux-x64-gnu`)", binary(base, "helper"), binary(head, "helper")],
    ["Rust lines under `src/` (all: tests included)", `${total(base, "lines").toLocaleString("en")}: ${crates(base, "lines")}`, `${total(head, "lines").toLocaleString("en")}: ${crates(head, "lines")}`],
    ["Rust lines under `src/` outside tests", `${total(base, "nonTestLines").toLocaleString("en")}: ${crates(base, "nonTestLines")}`, `${total(head, "nonTestLines").toLocaleString("en")}: ${crates(head, "nonTestLines")}`],
    ...Object.keys(PATTERNS).map((p) => [`\`${p}\` outside tests`, `${total(base, p)}: ${crates(base, p)}`, `${total(head, p)}: ${crates(head, p)}`]),
  ];
  return ["| figure | base | head |", "|---|---|---|", ...rows.map((r) => `| ${r.join(" | ")} |`)].join("\n");
}

/** The hand-written section of the report in `out` (from its "## Notes" heading on), kept when it is rewritten. */
function notes(out) {
  const text = existsSync(out) ? readFileSync(out, "utf8") : "";
  const at = text.indexOf("\n## Notes");
  return at >= 0 ? text.slice(at + 1).trim() : "";
}

/** bench/COMPARE.md from one run's result (with the notes of the one it replaces). */
function report(result, out) {
  const { base, head, before, after, reps, pi, pairs } = result;
  const command = `npm run bench -- --compare ${base.ref} --head ${head.ref} --reps ${reps}${pi === VERSIONS.pi[1] ? "" : ` --pi ${pi}`}`;
  return [
    "# Before and after: two commits of pi-mcp-native side by side",
    "",
    `Written by \`${command}\` on ${after.date.slice(0, 10)}; raw samples in \`bench/.cache/compare/${base.short}-${head.short}.json\` (\`--report-only\` rewrites this file from them).`,
    "",
    `- Base: \`${base.short}\` (${base.ref}) ${base.subject}`,
    `- Head: \`${head.short}\` (${head.ref}) ${head.subject}`,
    `- Each built by its own \`npm run build\` (base: \`${base.build.script}\`; head: \`${head.build.script}\`): cargo's release profile (LTO, one codegen unit, symbols stripped), x86_64-unknown-linux-gnu, the host's linker, in a worktree and target of its own under bench/.cache/compare.`,
    `- Machine: ${before.cpu}, ${before.memGb} GB, Linux ${before.kernel}, shared with other work: load average ${before.load} at the start, ${after.load} at the end.`,
    `- ${reps} pairs; each pair runs every measure on both builds, the measures in a rotated order and each measure's builds in turn, base first every other pair. Calls go to ${VERSIONS.everything.join("@")} over stdio from fresh Node ${VERSIONS.node[1]} processes (bench/compare-probe.mjs says what each sample is); Pi ${pi} runs headless against a scripted fake LLM with a metadata cache on disk and only the \`mcp\` tool.`,
    "- The interval is the sign test's distribution-free 95 % interval for the median of the paired differences (order statistics of the sorted differences; it assumes independent pairs, not symmetry); **regression** means the whole interval lies above zero, *faster* below it.",
    "",
    compareRows(pairs),
    "",
    "## Sizes and source",
    "",
    `Sizes of the binaries each commit's \`npm run build\` placed beside its index.js (\`file\` reports them stripped unless said). Lines: the \`.rs\` files under the root package's \`src/\` and each \`crates/*/src\`; outside tests leaves out files matching \`${TEST_FILE.source}\` (test modules and files, the MCP test server, the tests' support crate) and every \`#[cfg(test)]\` item. The counts are occurrences of \`${PATTERNS["json!"].source}\` and \`${PATTERNS['.get("…")'].source}\` in that non-test code. The same run measures them; \`node bench/compare.mjs --figures DIR\` prints them for a built checkout. Targets of issue 29: the helper ≤ 6 MB, the addon not larger than the base's.`,
    "",
    figureRows(result),
    "",
    notes(out),
    "",
  ].join("\n");
}

export async function runCompare(argv) {
  const arg = (name, fallback) => {
    const i = argv.indexOf(`--${name}`);
    return i >= 0 ? argv[i + 1] : fallback;
  };
  const out = arg("out", join(ROOT, "bench", "COMPARE.md"));
  const [base, head] = [commit(arg("compare")), commit(arg("head", "main"))];
  const samples = join(COMPARE, `${base.short}-${head.short}.json`);
  if (argv.includes("--report-only")) {
    const result = JSON.parse(readFileSync(samples, "utf8"));
    writeFileSync(out, report(result, out));
    return compareRows(result.pairs);
  }
  const reps = Number(arg("reps", 20));
  const pi = arg("pi", VERSIONS.pi[1]);
  const paths = ensureInstalled({ log });
  const dirs = { base: checkout(base), head: checkout(head) };
  for (const side of ["base", "head"]) {
    const c = side === "base" ? base : head;
    c.build = build(c, dirs[side], { rebuild: argv.includes("--rebuild"), noBuild: argv.includes("--no-build") });
    c.binaries = binaryFigures(dirs[side]);
    c.sources = sourceFigures(dirs[side]);
  }
  const before = machine();
  const pairs = await measure({ paths, piCli: ensurePi(pi, { log }), dirs, reps });
  const result = { base, head, before, after: machine(), reps, pi, pairs };
  writeFileSync(samples, JSON.stringify(result, null, 1));
  writeFileSync(out, report(result, out));
  log(`wrote ${out} (raw samples: ${samples})`);
  if (argv.includes("--clean")) {
    for (const dir of Object.values(dirs)) {
      log(`removing ${dir} and ${dir}.target`);
      git("worktree", "remove", "--force", dir);
      rmSync(`${dir}.target`, { recursive: true, force: true });
      rmSync(`${dir}.build.json`, { force: true });
    }
  }
  return `${compareRows(pairs)}\n\n${figureRows(result)}`;
}

if (process.argv[1] === fileURLToPath(import.meta.url)) {
  const argv = process.argv.slice(2);
  const i = argv.indexOf("--figures");
  const dir = i >= 0 && resolve(argv[i + 1]);
  if (dir) console.log(JSON.stringify({ binaries: binaryFigures(dir), sources: sourceFigures(dir) }, null, 1));
  else console.log(await runCompare(argv));
}
