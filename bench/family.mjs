#!/usr/bin/env node
// A session's family (issue 27): the real Pi (0.87.1 and 1.6.0) with Pi's subagent example and the
// scripted fake LLM, our extension installed as a package in the agent dir. A parent
// (`--mode json -p`) runs 4 parallel subagents (`tools: mcp`), each calling server-everything,
// server-memory and the Python SDK server once (its first calls) and again (warm calls); once
// shared with the family and once with `settings.shareWithSubagents: false`, in one run. Reports
// the server processes (at most at once, and every one that ran), the supervisors (the helper
// executable) and the broker processes apart (a family's hub runs in the parent: none), the summed
// server RSS at its peak, the native calls' time inside a subagent (details.elapsedMs, read from
// the subagent tool's details in the parent's output), the parent's wall time, the processes left
// 5 s after the parent (the last member) exits, and what a stale token adds to a member's first
// call (a Node process on the native API with a dead family's token vs none, median of 20).
// Not a test. Usage: node bench/family.mjs [--stale 20] [--json]
import { spawn } from "node:child_process";
import { mkdtempSync, readFileSync, readdirSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { fileURLToPath } from "node:url";
import { PI_087, PI_16, runPi } from "../__test__/helpers/pi.mjs";
import { everything, memory, processesIn, python, rssKb, tempAgent } from "../__test__/helpers/servers.mjs";
import { installed, mcp, subagentExample } from "../__test__/helpers/subagents.mjs";
import { ROOT } from "./lib/setup.mjs";
import { fmt, median } from "./lib/stats.mjs";

const arg = (name, fallback) => {
  const i = process.argv.indexOf(`--${name}`);
  return i > 0 ? Number(process.argv[i + 1]) : fallback;
};
const STALE_RUNS = arg("stale", 20);
const SUBAGENTS = 4;
const CALLS = [
  ["everything_echo", { message: "hi" }],
  ["memory_read_graph", {}],
  ["py_add", { a: 1, b: 2 }],
];
const VARIANTS = { family: { shareWithSubagents: true }, own: { shareWithSubagents: false } };

/** Our processes whose command line says `word` and whose environment names `agentDir`. */
function ours(word, agentDir) {
  const found = [];
  for (const entry of readdirSync("/proc")) {
    if (!/^\d+$/.test(entry)) continue;
    try {
      const args = readFileSync(`/proc/${entry}/cmdline`, "utf8");
      if (args.includes(word) && readFileSync(`/proc/${entry}/environ`, "utf8").includes(agentDir)) found.push(Number(entry));
    } catch {
      // gone
    }
  }
  return found;
}

const safeRss = (pid) => {
  try {
    return rssKb(pid);
  } catch {
    return 0;
  }
};

/** The native calls' times (details.elapsedMs) of each subagent, from the parent's subagent tool result. */
function callTimes(events) {
  const end = events.findLast((e) => e.type === "tool_execution_end" && e.toolName === "subagent");
  return (end?.result?.details?.results ?? []).map((child) =>
    (child.messages ?? []).filter((m) => m.role === "toolResult" && m.toolName === "mcp").map((m) => m.details?.elapsedMs),
  );
}

/** One parent run with 4 subagents on Pi `pi`, with `settings`. */
async function familyRun(pi, settings) {
  const serverCwd = mkdtempSync(join(tmpdir(), "pi-mcp-bench-family-"));
  const mcpConfig = {
    mcpServers: { everything: everything({ cwd: serverCwd }), memory: memory(join(serverCwd, "graph.jsonl"), { cwd: serverCwd }), py: python({ cwd: serverCwd }) },
    settings,
  };
  const tasks = Array.from({ length: SUBAGENTS }, (_, n) => ({ agent: "worker", task: `w${n + 1}` }));
  const calls = [...CALLS, ...CALLS].map(([tool, args]) => mcp(tool, args));
  const conversations = Object.fromEntries(tasks.map(({ task }) => [`Task: ${task}`, [...calls, { text: `${task} done` }]]));
  const seen = new Set();
  let most = 0;
  let peakRssKb = 0;
  let supervisors = 0;
  let brokers = 0;
  let agentDir;
  const sample = () => {
    const pids = processesIn(serverCwd);
    pids.forEach((pid) => seen.add(pid));
    most = Math.max(most, pids.length);
    peakRssKb = Math.max(peakRssKb, pids.reduce((sum, pid) => sum + safeRss(pid), 0));
    if (agentDir) {
      supervisors = Math.max(supervisors, ours("pi-mcp-native-helper", agentDir).length - ours("broker", agentDir).length);
      brokers = Math.max(brokers, ours("broker", agentDir).length);
    }
  };
  const sampler = setInterval(sample, 50);
  let left;
  try {
    const r = await runPi({
      pi,
      extensionDir: [subagentExample(pi), ROOT],
      extraArgs: ["--tools", "subagent"],
      mcpConfig,
      prepare: (box) => {
        installed(pi)(box);
        agentDir = box.agentDir;
      },
      script: { steps: [{ tool_calls: [{ name: "subagent", arguments: { tasks } }] }, { text: "done" }], conversations },
      leftoverGraceMs: 6000,
      timeoutMs: 180_000,
      onSpawn: (child) =>
        child.once("exit", () => {
          left = new Promise((resolve) =>
            setTimeout(() => resolve(processesIn(serverCwd).length + ours("pi-mcp-native-helper", agentDir).length), 5000),
          );
        }),
    });
    if (r.code !== 0) throw new Error(`Pi ${pi} exited ${r.code}\n${r.stderr.slice(-1500)}`);
    const times = callTimes(r.events);
    const answered = times.flat().filter(Number.isFinite).length;
    if (answered !== SUBAGENTS * CALLS.length * 2) throw new Error(`Pi ${pi}: ${answered} of ${SUBAGENTS * CALLS.length * 2} calls answered\n${r.stderr.slice(-1500)}`);
    return {
      most,
      ran: seen.size,
      supervisors,
      brokers,
      rssMb: peakRssKb / 1024,
      first: times.flatMap((t) => t.slice(0, CALLS.length)),
      warm: times.flatMap((t) => t.slice(CALLS.length)),
      wallMs: r.timing.wallMs,
      left: await left,
    };
  } finally {
    clearInterval(sampler);
    rmSync(serverCwd, { recursive: true, force: true });
  }
}

/** A member's first call (ms, inside the process) with a dead family's token, and without one. */
export async function staleToken(runs) {
  const agent = tempAgent(({ cwd }) => ({ mcpServers: { everything: everything({ cwd }) }, settings: { shareWithSubagents: true } }));
  const script = join(ROOT, "__test__", "fixtures", "family-session.mjs");
  const spec = JSON.stringify({ cwd: agent.cwd, agentDir: agent.agentDir, calls: [{ tool: "everything_echo", args: { message: "x" } }] });
  const once = (env) =>
    new Promise((resolve, reject) => {
      const child = spawn(process.execPath, [script, spec], { env, stdio: ["ignore", "pipe", "ignore"] });
      let out = "";
      child.stdout.on("data", (d) => (out += d));
      child.on("close", () => {
        try {
          resolve(JSON.parse(out.trim().split("\n").pop()).results[0].ms);
        } catch (e) {
          reject(e);
        }
      });
    });
  const dead = `v1.${Buffer.alloc(32, 7).toString("base64url")}`;
  const stale = [];
  const none = [];
  try {
    for (let i = 0; i < runs; i++) {
      stale.push(await once({ ...agent.env, PI_MCP_NATIVE_FAMILY: dead }));
      none.push(await once(agent.env));
    }
  } finally {
    agent.cleanup();
  }
  return { stale, none };
}

export async function measureFamily({ staleRuns = STALE_RUNS, log = () => {} } = {}) {
  const pis = {};
  for (const pi of [PI_087, PI_16]) {
    pis[pi] = {};
    for (const [name, settings] of Object.entries(VARIANTS)) {
      log(`family: Pi ${pi}, ${name}`);
      pis[pi][name] = await familyRun(pi, settings);
    }
  }
  log("family: a stale token");
  return { pis, stale: await staleToken(staleRuns) };
}

/** Rows [label, per Pi: shared with the family, own servers] for the report. */
export function familyRows(m) {
  const ms = (x) => `${fmt(x, 1)} ms`;
  const rows = [];
  const per = (label, cell) => rows.push([label, ...Object.values(m.pis).flatMap((v) => [cell(v.family), cell(v.own)])]);
  per("server processes at once (4 subagents × 3 servers)", (v) => String(v.most));
  per("server processes that ran", (v) => String(v.ran));
  per("supervisors (helper) / broker processes at most", (v) => `${v.supervisors} / ${v.brokers}`);
  per("summed server RSS, peak", (v) => `${fmt(v.rssMb, 0)} MB`);
  per(`first call of each server inside a subagent, median of ${SUBAGENTS * CALLS.length}`, (v) => ms(median(v.first)));
  per(`warm call inside a subagent, median of ${SUBAGENTS * CALLS.length}`, (v) => ms(median(v.warm)));
  per("first call, slowest", (v) => ms(Math.max(...v.first)));
  per("parent's wall time", (v) => `${fmt(v.wallMs / 1000, 1)} s`);
  per("processes left 5 s after the parent exits", (v) => String(v.left));
  const added = median(m.stale.stale) - median(m.stale.none);
  rows.push([`a stale token: first call with it − without, median of ${m.stale.stale.length}`, ms(added), "", "", ""]);
  return rows;
}

if (process.argv[1] === fileURLToPath(import.meta.url)) {
  const m = await measureFamily({ log: (t) => console.error(t) });
  const rows = familyRows(m);
  if (process.argv.includes("--json")) console.log(JSON.stringify({ ...m, rows }));
  else {
    const head = ["", ...Object.keys(m.pis).flatMap((pi) => [`Pi ${pi}, family`, `Pi ${pi}, own`])];
    console.log(`| ${head.join(" | ")} |\n|${"---|".repeat(head.length)}`);
    for (const r of rows) console.log(`| ${r.join(" | ")} |`);
  }
}
