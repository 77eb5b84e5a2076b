// bench/RESULTS.md from one run: the machine, the versions, the side-by-side table, the
// overheads over plain Pi against the targets, the native API figures and search speed.
import { execSync } from "node:child_process";
import { cpus, loadavg, release, totalmem } from "node:os";
import { readFileSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { extensionStartupRows } from "../extension-startup.mjs";
import { nativeApiRows } from "../native-api.mjs";
import { oneShotRows } from "../one-shot.mjs";
import { ROOT, VERSIONS } from "./setup.mjs";
import { fmt, medianIqr, paired, summary } from "./stats.mjs";

export function machine() {
  return {
    date: new Date().toISOString(),
    cpu: `${cpus()[0]?.model ?? "?"} × ${cpus().length}`,
    memGb: (totalmem() / 2 ** 30).toFixed(1),
    kernel: release(),
    load: loadavg().map((x) => x.toFixed(2)).join(" "),
    commit: sh("git rev-parse --short HEAD"),
  };
}

const sh = (cmd) => {
  try {
    return execSync(cmd, { cwd: ROOT, encoding: "utf8" }).trim();
  } catch {
    return "?";
  }
};

const COLUMNS = ["pi", "noop", "floor", "native", "adapter", "adapter3"];

export function writeReport({ out, before, after, reps, runs, startup, oneShot, api, shared, family, search, supervisor, paths }) {
  const series = (key, metric) => runs.map((r) => r[key]?.[metric] ?? NaN);
  const cell = (key, metric, digits = 0) => (runs[0][key] && Number.isFinite(runs[0][key][metric]) ? medianIqr(series(key, metric), digits) : "–");
  const first = runs[0];
  const payload = (key, field) => first[key].payload[field];

  const sideBySide = [
    ["startup, metadata cache on disk (spawn → 1st LLM request), ms", (k) => cell(k, "startupMs")],
    ["startup, no cache, ms", (k) => (k === "native" || k === "adapter" ? cell(`${k}:nocache`, "startupMs") : k === "pi" ? cell("pi", "startupMs") : "–")],
    ["first `mcp({})` (tool answer → next request), ms", (k) => cell(k, "firstStatusMs")],
    ["cold `everything_echo` call (spawn + initialize + call), ms", (k) => cell(k, "coldCallMs")],
    ["warm `everything_echo` call, ms", (k) => cell(k, "warmCallMs")],
    ["no cache: server process first seen before Pi's 1st request (sampled every 50 ms), ms", (k) => (k === "native" || k === "adapter" ? cell(`${k}:nocache`, "serverLeadMs") : "–")],
    ["peak RSS of Pi, MB", (k) => cell(k, "piRssMb", 1)],
    ["peak RSS of Pi's children (the MCP server), MB", (k) => cell(k, "childRssMb", 1)],
    ["extension import (PI_TIMING), ms", (k) => cell(k, "importMs")],
    ["extension factory (PI_TIMING), ms", (k) => cell(k, "factoryMs")],
    ["tools in the request", (k) => payload(k, "toolNames").join(", ") || "none"],
    ["tool definitions: bytes / o200k tokens", (k) => `${payload(k, "toolBytes")} B / ${payload(k, "toolTokens")}`],
    ["whole first request: bytes / o200k tokens", (k) => `${payload(k, "requestBytes")} B / ${payload(k, "requestTokens")}`],
  ];

  // An overhead: the difference of the medians (robust to a slow run on either side), with the
  // spread of the per-repetition differences.
  const overhead = (samples, value) => Object.assign(samples, { value });
  const med = (xs) => summary(xs).median;
  const d = (a, am, b, bm = am) => overhead(paired(series(a, am), series(b, bm)), med(series(a, am)) - med(series(b, bm)));
  const rawTotal = runs.map((r) => r.raw.totalMs);
  const coldOverFloor = (k) => {
    const samples = paired(paired(series(k, "coldCallMs"), series("noop", "coldCallMs")), rawTotal);
    return overhead(samples, med(series(k, "coldCallMs")) - med(series("noop", "coldCallMs")) - med(rawTotal));
  };
  const plain = (samples) => overhead(samples, med(samples));
  const importFactory = (k) => plain(runs.map((r) => r[k].importMs + r[k].factoryMs));
  const valueOf = (samples) => samples.value ?? med(samples);
  const verdict = (samples, limit) => (valueOf(samples) <= limit ? "**met**" : "**missed**");
  const shown = (samples) => (samples.length ? `${fmt(valueOf(samples), 1)} (${fmt(summary(samples).p25, 1)}–${fmt(summary(samples).p75, 1)})` : "–");
  const targets = [
    ["startup overhead, cache on disk (vs Pi alone), ms", d("native", "startupMs", "pi"), d("adapter", "startupMs", "pi"), "≤ 15", 15],
    ["startup overhead, no cache (vs Pi alone), ms", d("native:nocache", "startupMs", "pi"), d("adapter:nocache", "startupMs", "pi"), "≤ 15", 15],
    ["startup overhead, cache on disk (vs Pi + no-op extension), ms", d("native", "startupMs", "noop"), d("adapter", "startupMs", "noop"), "(context)", null],
    ["startup overhead, no cache (vs Pi + no-op extension), ms", d("native:nocache", "startupMs", "noop"), d("adapter:nocache", "startupMs", "noop"), "(context)", null],
    ["first `mcp({})` over Pi's own turn gap (no-op tool), ms", d("native", "firstStatusMs", "noop"), d("adapter", "firstStatusMs", "noop"), "≤ 5", 5],
    ["cold call over the raw rmcp floor (spawn + initialize + call), ms", coldOverFloor("native"), coldOverFloor("adapter"), "≤ 10", 10],
    ["cold call over a bare JSON-RPC client in the same Pi session (spawn + initialize + call), ms", d("native", "coldCallMs", "floor"), d("adapter", "coldCallMs", "floor"), "≤ 10", 10],
    ["warm call over a bare JSON-RPC client in the same Pi session, ms", d("native", "warmCallMs", "floor"), d("adapter", "warmCallMs", "floor"), "(context)", null],
    ["warm call over Pi's own turn gap, ms", d("native", "warmCallMs", "noop"), d("adapter", "warmCallMs", "noop"), "≤ adapter", null],
    ["Pi peak RSS overhead (vs Pi alone), MB", d("native", "piRssMb", "pi"), d("adapter", "piRssMb", "pi"), "≤ 15", 15],
    ["Pi peak RSS overhead (vs Pi + no-op tool, same 4 turns), MB", d("native", "piRssMb", "noop"), d("adapter", "piRssMb", "noop"), "(context)", null],
    ["Pi's own RSS for loading any extension (no-op, 1 turn, vs Pi alone), MB", d("noop:1turn", "piRssMb", "pi"), [], "(context)", null],
    ["Pi's own RSS for 3 more turns with a tool (no-op, 4 vs 1 turn), MB", d("noop", "piRssMb", "noop:1turn"), [], "(context)", null],
    ["extension import + factory, ms", importFactory("native"), importFactory("adapter"), "≤ 10", 10],
  ];
  const own = (key, f) => plain(startup[key].map(f));
  const mainThread = (r) => r.importMs + r.factoryMs + r.sessionStartMs;
  targets.splice(
    2,
    0,
    ["pi-mcp-native's own start-up on Pi's main thread, cache on disk (fresh process), ms", own("cache", mainThread), [], "≤ 15", 15],
    ["pi-mcp-native's own start-up on Pi's main thread, no cache (fresh process), ms", own("nocache", mainThread), [], "≤ 15", 15],
  );
  targets.push(["import + factory in a fresh Node 22 process (no Pi), ms", own("cache", (r) => r.importMs + r.factoryMs), [], "≤ 10", 10]);
  const warmVsAdapter = d("native", "warmCallMs", "adapter");
  const rawFloor = summary(runs.map((r) => r.raw.totalMs));
  const rawInit = summary(runs.map((r) => r.raw.initializeMs));

  const lines = [];
  const row = (cells) => lines.push(`| ${cells.join(" | ")} |`);
  lines.push("# Benchmark results", "");
  lines.push(`Written by \`npm run bench\` (bench/index.mjs) on ${after.date.slice(0, 10)}; raw samples in \`bench/.cache/last-run.json\`. Medians with the interquartile range in brackets; ${reps} interleaved repetitions (every repetition runs every variant, in a rotated order).`, "");
  lines.push("## Machine and versions", "");
  lines.push(`- Machine: ${before.cpu}, ${before.memGb} GB, Linux ${before.kernel}; shared with other builds: load average ${before.load} at the start, ${after.load} at the end.`);
  lines.push(`- pi-mcp-native ${before.commit} (release build), ${sh("rustc --version")}`);
  lines.push(`- ${VERSIONS.adapter.join("@")}; Pi ${VERSIONS.pi.join("@")} on Node ${sh(`${paths.node} --version`)} (${VERSIONS.node.join("@")}); ${VERSIONS.everything.join("@")} over stdio.`);
  lines.push(`- pi-mcp-adapter is configured with \`settings.scriptMode: false\` and \`settings.namespaceProxyTools: false\` (one \`mcp\` tool, as ours); "default 3 tools" is its out-of-the-box surface. Pi runs headless (\`--mode json\`) against a scripted fake LLM: \`mcp({})\`, a cold call, a warm call, a final answer.`, "");

  lines.push("## Side by side inside Pi", "");
  row(["", "Pi alone", "Pi + no-op tool", "Pi + bare JSON-RPC client", "**pi-mcp-native**", "pi-mcp-adapter (1 tool)", "pi-mcp-adapter (default 3 tools)"]);
  row(COLUMNS.map(() => "---").concat("---"));
  for (const [label, f] of sideBySide) row([label, ...COLUMNS.map(f)]);
  lines.push("");
  lines.push(`Raw floor, measured in the same repetitions by a bare rmcp client (crates/connection/examples/raw_rmcp.rs) against the same server: spawn → initialize ${fmt(rawInit.median, 1)} ms, spawn → initialize → first call ${fmt(rawFloor.median, 1)} ms (${fmt(rawFloor.p25, 1)}–${fmt(rawFloor.p75, 1)}). "Pi + bare JSON-RPC client" is the same floor taken inside Pi: its \`mcp\` tool (bench/fixtures/floor-extension.mjs) spawns the server, initializes and calls, at the moment a gateway would, with Pi's own work around it.`, "");

  lines.push("## Overheads over plain Pi and the targets", "");
  lines.push("Each overhead is the difference of the two medians of the same run; in brackets, the interquartile range of the per-repetition differences (how noisy one pair is on this machine).", "");
  row(["", "**pi-mcp-native**", "pi-mcp-adapter (1 tool)", "native ÷ adapter", "target", "native"]);
  row(["---", "---", "---", "---", "---", "---"]);
  for (const [label, native, adapter, target, limit] of targets) {
    const ratio = valueOf(native) / valueOf(adapter);
    const v = limit !== null ? verdict(native, limit) : target === "≤ adapter" ? (valueOf(warmVsAdapter) <= 0 ? "**met**" : "**missed**") : "";
    row([label, shown(native), shown(adapter), Number.isFinite(ratio) && valueOf(native) > 0 && valueOf(adapter) > 0 ? `${ratio.toFixed(2)}×` : "–", target, v]);
  }
  const tokens = payload("native", "toolTokens");
  row(["default tool surface, o200k tokens", String(tokens), `${payload("adapter", "toolTokens")} (default: ${payload("adapter3", "toolTokens")})`, `${(tokens / payload("adapter3", "toolTokens")).toFixed(2)}×`, "≤ 300", tokens <= 300 ? "**met**" : "**missed**"]);
  lines.push("");
  lines.push(`Warm call, native − adapter: ${shown(warmVsAdapter)} ms.`, "");

  lines.push("## pi-mcp-native's own start-up (fresh Node 22 process, a stub of Pi's extension API)", "");
  lines.push(`Import of the extension (extension/pi-mcp-native/index.js), the factory and the session_start handler, ${startup.cache.length} fresh processes each, interleaved; medians (p25–p75). This is the part of Pi's start-up that is ours, without the noise of Pi's own start-up.`, "");
  row(["", "metadata cache on disk", "no cache (first run)"]);
  row(["---", "---", "---"]);
  for (const r of extensionStartupRows(startup)) row(r);
  lines.push("");
  if (oneShot) {
    lines.push("## One-shot runs from an empty cache (bench/one-shot.mjs)", "");
    lines.push(`${oneShot.native.started.length} consecutive one-turn runs (\`pi --mode json\`) per variant, alternating, each with three stdio servers (server-everything) and a model that never uses MCP; each variant keeps its agent dir, so a cache written in one run serves the next.`, "");
    row(["", "**pi-mcp-native**", "pi-mcp-adapter (1 tool)"]);
    row(["---", "---", "---"]);
    for (const r of oneShotRows(oneShot)) row(r);
    lines.push("");
  }
  lines.push("## Native API in process (vs a bare rmcp client to the same server)", "");
  row(["", "pi-mcp-native (napi, from Node)", "raw rmcp (Rust)"]);
  row(["---", "---", "---"]);
  for (const r of nativeApiRows(api)) row(r);
  lines.push("");
  if (shared) {
    lines.push("## Shared servers (bench/shared.mjs)", "");
    lines.push("4 concurrent sessions (a process each, started with different terminal variables) using the same 3 stdio servers (server-everything, server-memory, server-filesystem), not shared and shared through the broker, in one run. The hop's overhead pairs each warm call through the broker with one to the same server run by the session itself.", "");
    row(["", "not shared", "shared"]);
    row(["---", "---", "---"]);
    for (const r of shared.rows) row(r);
    lines.push("");
  }
  if (family) {
    lines.push("## A session's family: Pi's subagent example (bench/family.mjs)", "");
    lines.push("A parent (`pi --mode json -p`) runs 4 parallel subagents of Pi's subagent example (`pi --mode json -p` processes loading pi-mcp-native installed as a package), each calling server-everything, server-memory and the Python SDK server, first and again; the servers shared with the family (the hub in the parent, no process of its own) and each process's own (`shareWithSubagents: false`), in one run. Call times are the core's (`details.elapsedMs`), not Pi's turns.", "");
    const pis = Object.keys(family.pis);
    row(["", ...pis.flatMap((pi) => [`Pi ${pi}, family`, `Pi ${pi}, own servers`])]);
    row(["---", ...pis.flatMap(() => ["---", "---"])]);
    for (const r of family.rows) row(r);
    lines.push("");
  }
  lines.push("## Search over 10,000 tools (bench/search-speed.mjs)", "", "```", search.trim(), "```", "");
  if (supervisor) {
    lines.push("## Servers started through the helper, and directly (bench/supervisor.mjs, Linux)", "", "```", supervisor.trim(), "```", "");
  }
  const notes = join(ROOT, "bench", "ANALYSIS.md");
  let extra = "";
  try {
    extra = readFileSync(notes, "utf8");
  } catch {}
  if (extra) lines.push(extra.trim(), "");
  const text = lines.join("\n");
  writeFileSync(out, text);
  return text;
}
