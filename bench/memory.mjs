#!/usr/bin/env node
// Pi's peak RSS (VmHWM of the `pi` process) with pi-mcp-native against pi-mcp-adapter 2.36.0 with
// only its `mcp` tool, server-everything over stdio, a warm metadata cache, and the turns status →
// search → cold call → warm call, on each Pi of --pis; the variants alternate in every repetition.
// This checkout's addon is built as the release workflow builds the published one for x86_64 Linux
// (its own command: `napi build --use-napi-cross`, glibc 2.17's gcc driving Rust's lld). `--native
// DIR` measures pi-mcp-native as built in DIR (a checkout with its release addon) instead of this
// one, which is then not built; `--baseline DIR` adds another such build (e.g. the commit
// before a change), measured in the same repetitions; `--floor` adds Pi with no extension and Pi
// with a no-op `mcp` tool, the same turns (Pi alone answers each call with its unknown-tool
// error): what no gateway could go below. Not a test.
// Writes bench/MEMORY.md (raw samples in bench/.cache/memory-run.json; --report-only rewrites the
// report from them). Usage: node bench/memory.mjs [--reps 9] [--pis 0.87.1,1.6.0] [--native DIR]
// [--baseline DIR] [--baseline-label TEXT] [--floor] [--no-build] [--json] [--out FILE]
// (or `npm run bench -- --only memory …`).
import { spawnSync } from "node:child_process";
import { readFileSync, writeFileSync } from "node:fs";
import { join, resolve } from "node:path";
import { fileURLToPath } from "node:url";
import { PiSuite, SEARCH_SESSION } from "./lib/pi-suite.mjs";
import { machine } from "./lib/report.mjs";
import { CACHE, ROOT, VERSIONS, ensureInstalled, ensurePi, releaseBuild } from "./lib/setup.mjs";
import { fmt, medianIqr, summary } from "./lib/stats.mjs";

const log = (text) => console.error(`bench memory: ${text}`);

/** Pi's own floor: no extension at all, and a no-op `mcp` tool (bench/fixtures/noop-extension.mjs). */
const FLOOR = [
  ["pi", "Pi alone, MB", "Pi alone ÷ adapter"],
  ["noop", "Pi + no-op tool, MB", "no-op ÷ adapter"],
];

/** The figures as a markdown table, one row per Pi. */
export function memoryRows({ pis, runs, baseline }) {
  const med = (pi, key) => summary(runs.map((r) => r[pi][key])).median;
  const ratio = (pi, key) => {
    const perRep = summary(runs.map((r) => r[pi][key] / r[pi].adapter));
    return `${fmt(med(pi, key) / med(pi, "adapter"), 3)} (${fmt(perRep.p25, 3)}–${fmt(perRep.p75, 3)})`;
  };
  const more = [...(baseline ? [["baseline", `baseline ${baseline}, MB`, "baseline ÷ adapter"]] : []), ...FLOOR.filter(([key]) => runs[0][pis[0]][key] !== undefined)];
  const head = ["Pi", "pi-mcp-native, MB", "pi-mcp-adapter (1 tool), MB", "native ÷ adapter", ...more.flatMap(([, mb, r]) => [mb, r])];
  const lines = [`| ${head.join(" | ")} |`, `|${head.map(() => "---").join("|")}|`];
  for (const pi of pis) {
    const cells = [pi, medianIqr(runs.map((r) => r[pi].native)), medianIqr(runs.map((r) => r[pi].adapter)), ratio(pi, "native")];
    for (const [key] of more) cells.push(medianIqr(runs.map((r) => r[pi][key])), ratio(pi, key));
    lines.push(`| ${cells.join(" | ")} |`);
  }
  return lines.join("\n");
}

/** bench/MEMORY.md from one run's result. */
function report(result, baselineLabel) {
  const { before, after, pis, reps, runs } = result;
  const baseline = result.baseline && (baselineLabel ?? result.baseline);
  return [
    "# Pi's memory with pi-mcp-native and with pi-mcp-adapter",
    "",
    `Written by \`node bench/memory.mjs\` on ${after.date.slice(0, 10)}; raw samples in \`bench/.cache/memory-run.json\`. Pi's peak RSS (VmHWM of the \`pi\` process), medians with the interquartile range in brackets, of ${reps} repetitions; each repetition runs every variant on every Pi, in a rotated order. The ratio is of the medians (in brackets, the interquartile range of the per-repetition ratios).`,
    "",
    `- Machine: ${before.cpu}, ${before.memGb} GB, Linux ${before.kernel}; load average ${before.load} at the start, ${after.load} at the end.`,
    `- pi-mcp-native from ${result.native} (${result.build ? `built as the release workflow builds the published x86_64 Linux addon: \`${result.build}\`` : "release build"})${baseline ? `; baseline: ${baseline}` : ""}.`,
    `- ${VERSIONS.adapter.join("@")} with \`settings.scriptMode: false\` and \`settings.namespaceProxyTools: false\` (only its \`mcp\` tool); ${VERSIONS.everything.join("@")} over stdio; a metadata cache on disk; Pi runs headless (\`--mode json\`) against a scripted fake LLM: \`mcp({})\`, \`mcp({ search: "echo" })\`, a cold call, a warm call, a final answer.`,
    "",
    memoryRows({ pis, runs, baseline }),
    "",
  ].join("\n");
}

export async function runMemoryBench(argv) {
  const arg = (name, fallback) => {
    const i = argv.indexOf(`--${name}`);
    return i >= 0 ? argv[i + 1] : fallback;
  };
  const out = arg("out", join(ROOT, "bench", "MEMORY.md"));
  if (argv.includes("--report-only")) {
    const result = JSON.parse(readFileSync(join(CACHE, "memory-run.json"), "utf8"));
    writeFileSync(out, report(result, arg("baseline-label")));
    return { result, table: memoryRows({ ...result, baseline: result.baseline && (arg("baseline-label") ?? result.baseline) }) };
  }
  const reps = Number(arg("reps", 9));
  const pis = arg("pis", "0.87.1,1.6.0").split(",");
  const baselineDir = arg("baseline") && resolve(arg("baseline"));
  const nativeDir = resolve(arg("native", ROOT));
  const paths = ensureInstalled({ log });
  const build = nativeDir === ROOT && !argv.includes("--no-build") ? releaseBuild({ log }) : undefined;
  const variant = (label, extensionDir) => ({ label, extensionDir, settings: { scriptMode: false, namespaceProxyTools: false }, mcp: true });
  const extra = { native: variant("pi-mcp-native", nativeDir), ...(baselineDir && { baseline: variant("pi-mcp-native (baseline)", baselineDir) }) };
  const names = ["native", "adapter", ...(baselineDir ? ["baseline"] : []), ...(argv.includes("--floor") ? FLOOR.map(([key]) => key) : [])];
  const suites = Object.fromEntries(pis.map((pi) => [pi, new PiSuite({ ...paths, piCli: ensurePi(pi, { log }) }, extra)]));
  const before = machine();
  const runs = [];
  try {
    for (const pi of pis) {
      log(`warm-up on Pi ${pi}`);
      await suites[pi].warmUp(names);
    }
    for (let i = 0; i < reps; i++) {
      const rep = {};
      for (const pi of pis) {
        rep[pi] = {};
        for (let k = 0; k < names.length; k++) {
          const name = names[(k + i) % names.length];
          const r = await suites[pi].run(name, { session: true, cached: true, script: SEARCH_SESSION });
          rep[pi][name] = r.piRssMb;
        }
      }
      runs.push(rep);
      log(`repetition ${i + 1}/${reps}: ${pis.map((pi) => `${pi} ${names.map((n) => `${n} ${rep[pi][n].toFixed(1)}`).join(", ")}`).join("; ")} (load ${machine().load})`);
    }
  } finally {
    Object.values(suites).forEach((s) => s.close());
  }
  const after = machine();
  const result = { before, after, pis, reps, native: nativeDir, build, baseline: baselineDir, runs };
  writeFileSync(join(CACHE, "memory-run.json"), JSON.stringify(result, null, 1));
  writeFileSync(out, report(result, arg("baseline-label")));
  const table = memoryRows({ pis, runs, baseline: baselineDir && (arg("baseline-label") ?? baselineDir) });
  return { result, table };
}

if (process.argv[1] === fileURLToPath(import.meta.url)) {
  const argv = process.argv.slice(2);
  const { result, table } = await runMemoryBench(argv);
  if (argv.includes("--json")) console.log(JSON.stringify(result));
  else {
    console.log(`Pi peak RSS (VmHWM), medians (p25–p75) of ${result.reps} alternating repetitions; pi-mcp-native from ${result.native}; load ${result.before.load} → ${result.after.load}.\n`);
    console.log(table);
  }
}
