#!/usr/bin/env node
// `npm run bench`: pi-mcp-native side by side with pi-mcp-adapter 2.36.0 inside the real Pi,
// the native API against a bare rmcp client, shared servers against unshared ones, a session's
// subagents with their family's servers and with their own, and search
// over 10,000 tools. Installs what it
// needs into bench/.cache, builds the release addon, then writes bench/RESULTS.md.
// Not a test and not part of CI. Usage: npm run bench [-- --reps 30 --no-build --out FILE]
// (--report-only: rewrite the report from the samples of the last run; --only memory: only Pi's
// peak RSS against the adapter, see bench/memory.mjs for its flags; --compare BASE: this
// commit's predecessor BASE against main (or --head REF) in interleaved pairs, see
// bench/compare.mjs).
import { execFileSync, spawnSync } from "node:child_process";
import { readFileSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { measureExtensionStartup } from "./extension-startup.mjs";
import { measureOneShot } from "./one-shot.mjs";
import { PiSuite } from "./lib/pi-suite.mjs";
import { machine, writeReport } from "./lib/report.mjs";
import { CACHE, ROOT, ensureInstalled } from "./lib/setup.mjs";

const argv = process.argv.slice(2);
const arg = (name, fallback) => {
  const i = argv.indexOf(`--${name}`);
  return i >= 0 ? argv[i + 1] : fallback;
};
const reps = Number(arg("reps", 30));
const out = arg("out", join(ROOT, "bench", "RESULTS.md"));
const log = (text) => console.error(`bench: ${text}`);

function step(title, command, args) {
  log(`${title}: ${command} ${args.join(" ")}`);
  const r = spawnSync(command, args, { cwd: ROOT, stdio: ["ignore", "inherit", "inherit"] });
  if (r.status !== 0) throw new Error(`${title} failed (exit ${r.status ?? r.signal})`);
}

if (arg("only") === "memory") {
  const { runMemoryBench } = await import("./memory.mjs");
  console.log((await runMemoryBench(argv)).table);
  process.exit(0);
}
if (arg("compare")) {
  const { runCompare } = await import("./compare.mjs");
  console.log(await runCompare(argv));
  process.exit(0);
}
const paths = ensureInstalled({ log });
if (argv.includes("--report-only")) {
  // Re-renders the report from the samples of the last run.
  const last = JSON.parse(readFileSync(join(CACHE, "last-run.json"), "utf8"));
  console.log(writeReport({ out, reps: last.runs.length, paths, ...last }));
  process.exit(0);
}
if (!argv.includes("--no-build")) {
  step("release build of the addon", "npm", ["run", "build"]);
  step("release build of the raw rmcp client", "cargo", ["build", "--release", "--target", "x86_64-unknown-linux-gnu", "-p", "pi-mcp-connection", "--example", "raw_rmcp"]);
}

const before = machine();
const suite = new PiSuite(paths);
const runs = [];
try {
  log("warm-up (jiti and compile caches, the adapter's metadata cache)");
  await suite.warmUp();
  for (let i = 0; i < reps; i++) {
    const t = Date.now();
    runs.push(await suite.repetition(i));
    log(`repetition ${i + 1}/${reps} (${((Date.now() - t) / 1000).toFixed(1)} s, load ${machine().load})`);
  }
} finally {
  suite.close();
}

log("pi-mcp-native's own start-up in fresh Node 22 processes");
const startup = await measureExtensionStartup({ node: paths.node, serverCommand: suite.serverCommand, reps });
log("one-shot runs from an empty cache");
const oneShot = await measureOneShot({ paths, runs: 5 });
log("native API vs raw rmcp");
// In a process of its own: the benchmark's own heap and history stay out of the timings.
const api = JSON.parse(execFileSync(process.execPath, [join(ROOT, "bench", "native-api.mjs"), "--json"], { cwd: ROOT, encoding: "utf8" }));
log("shared servers: 4 sessions, shared and not");
const shared = JSON.parse(execFileSync(process.execPath, [join(ROOT, "bench", "shared.mjs"), "--json"], { cwd: ROOT, encoding: "utf8" }));
log("a session's family: Pi's subagent example, shared and not");
const family = JSON.parse(execFileSync(process.execPath, [join(ROOT, "bench", "family.mjs"), "--json"], { cwd: ROOT, encoding: "utf8", stdio: ["ignore", "pipe", "inherit"] }));
log("search over 10,000 tools");
const search = execFileSync(process.execPath, [join(ROOT, "bench", "search-speed.mjs")], { cwd: ROOT, encoding: "utf8" });
log("cold calls through the process supervisor and without it");
const supervisor = execFileSync(process.execPath, [join(ROOT, "bench", "supervisor.mjs")], { cwd: ROOT, encoding: "utf8" });

const after = machine();
writeFileSync(join(CACHE, "last-run.json"), JSON.stringify({ before, after, runs, startup, oneShot, api, shared, family, search, supervisor }, null, 1));
const report = writeReport({ out, before, after, reps, runs, startup, oneShot, api, shared, family, search, supervisor, paths });
console.log(report);
log(`wrote ${out} (raw samples: ${join(CACHE, "last-run.json")})`);
