#!/usr/bin/env node
// Shared servers (issue 20): 4 concurrent sessions, each a process of its own started with
// different terminal variables, using the same 3 stdio servers (server-everything, server-memory,
// server-filesystem), once not shared and once shared through the broker, in one run:
// server processes and their summed RSS once every session has used every server, the first
// call's latency in sessions 2-4 against a warm call, the broker hop's overhead on a warm call
// (paired with a direct server in the same session), and throughput with 50 calls in flight.
// Not a test. Usage: node bench/shared.mjs [--pairs 300] [--calls 2000] [--json]
import { fork } from "node:child_process";
import { mkdirSync, readFileSync, readdirSync } from "node:fs";
import { createRequire } from "node:module";
import { join } from "node:path";
import { everything, filesystem, memory, processesIn, tempAgent, waitFor } from "../__test__/helpers/servers.mjs";
import { ROOT } from "./lib/setup.mjs";
import { fmt, median, summary } from "./lib/stats.mjs";

const { McpAdapter } = createRequire(import.meta.url)(join(ROOT, "index.js"));
const arg = (name, fallback) => {
  const i = process.argv.indexOf(`--${name}`);
  return i > 0 ? Number(process.argv[i + 1]) : fallback;
};
const PAIRS = arg("pairs", 300);
const CALLS = arg("calls", 2000);
const SESSIONS = 4;
const SERVERS = { ev: ["ev_echo", { message: "hi" }], mem: ["mem_read_graph", {}], fs: ["fs_list_allowed_directories", {}] };

const rssKb = (pid) => {
  try {
    return Number(/VmRSS:\s+(\d+)/.exec(readFileSync(`/proc/${pid}/status`, "utf8"))?.[1] ?? 0);
  } catch {
    return 0;
  }
};

/** Live broker processes of `agentDir` (by their command line). */
const brokers = (agentDir) =>
  readdirSync("/proc")
    .filter((e) => /^\d+$/.test(e))
    .filter((pid) => {
      try {
        const args = readFileSync(`/proc/${pid}/cmdline`, "utf8").split("\0");
        return args.includes("broker") && args.includes(agentDir);
      } catch {
        return false;
      }
    })
    .map(Number);

/** A session process of `agent`, from terminal `n`. */
async function session(agent, n) {
  const env = { ...agent.env, TERM_SESSION_ID: `w0t${n}p0`, WINDOWID: String(1000 + n), SHLVL: String(n), TMUX_PANE: `%${n}` };
  const child = fork(join(ROOT, "bench", "shared-session.mjs"), [JSON.stringify({ cwd: agent.cwd, agentDir: agent.agentDir, env })], { env });
  const replies = [];
  let wake;
  child.on("message", (m) => {
    replies.push(m);
    wake?.();
  });
  const next = async () => {
    while (!replies.length) await new Promise((r) => (wake = r));
    const m = replies.shift();
    if (m.error) throw new Error(m.error);
    return m;
  };
  await next(); // ready
  return { ask: (m) => (child.send(m), next()), child };
}

/** One variant: `shared` or not. */
async function variant(shared) {
  const dirs = {};
  const agent = tempAgent(({ cwd }) => {
    for (const name of Object.keys(SERVERS)) mkdirSync((dirs[name] = join(cwd, name)));
    return {
      settings: { sharedServers: shared },
      mcpServers: {
        ev: everything({ cwd: dirs.ev }),
        mem: memory(join(cwd, "graph.jsonl"), { cwd: dirs.mem }),
        fs: filesystem(cwd, { cwd: dirs.fs }),
        // The hop's reference: the same server, never shared, beside the shared one.
        direct: everything({ cwd, shared: false }),
      },
    };
  });
  const sessions = [];
  const first = [];
  const warm = [];
  try {
    // Sessions start one after another, each calling every server once (its first call), then
    // again (a warm call); all stay open, as concurrent sessions do.
    for (let n = 1; n <= SESSIONS; n++) {
      const s = await session(agent, n);
      sessions.push(s);
      for (const [tool, args] of Object.values(SERVERS)) {
        const cold = (await s.ask({ call: tool, args })).ms;
        const again = (await s.ask({ call: tool, args })).ms;
        if (n > 1) {
          first.push(cold);
          warm.push(again);
        }
      }
    }
    const pids = Object.values(dirs).flatMap((dir) => processesIn(dir));
    const serverRssMb = pids.reduce((sum, pid) => sum + rssKb(pid), 0) / 1024;
    const brokerRssMb = brokers(agent.agentDir).reduce((sum, pid) => sum + rssKb(pid), 0) / 1024;
    // Warm calls through the broker against the same server run by the session itself.
    await sessions[0].ask({ call: "direct_echo", args: { message: "warm-up" } });
    const pair = await sessions[0].ask({ pair: ["ev_echo", "direct_echo"], n: PAIRS });
    const burstMs = (await sessions[0].ask({ burst: "ev_echo", count: CALLS, inflight: 50 })).ms;
    return { processes: pids.length, serverRssMb, brokerRssMb, first, warm, pair, throughput: (CALLS / burstMs) * 1000 };
  } finally {
    for (const s of sessions) await s.ask({ shutdown: true }).catch(() => s.child.kill("SIGKILL"));
    const stopper = McpAdapter.open({ cwd: agent.cwd, agentDir: agent.agentDir, env: agent.env });
    await stopper.brokerStop();
    await stopper.shutdown();
    await waitFor(() => Object.values(dirs).every((d) => processesIn(d).length === 0) && brokers(agent.agentDir).length === 0, 15000, "servers and broker to stop");
    agent.cleanup();
  }
}

const off = await variant(false);
const on = await variant(true);
const ms = (x) => `${fmt(x, 2)} ms`;
const paired = (v) => v.pair.a.map((a, i) => a - v.pair.b[i]);
const rows = [
  ["server processes (4 sessions × 3 servers)", `${off.processes}`, `${on.processes} (+ 1 broker)`],
  ["summed server RSS", `${fmt(off.serverRssMb, 0)} MB`, `${fmt(on.serverRssMb, 0)} MB (+ broker ${fmt(on.brokerRssMb, 0)} MB)`],
  ["first call, sessions 2-4, median of 9 (3 servers × 3 sessions)", ms(median(off.first)), ms(median(on.first))],
  ["warm call, sessions 2-4, median of 9", ms(median(off.warm)), ms(median(on.warm))],
  ["first call − warm call, median", ms(median(off.first) - median(off.warm)), ms(median(on.first) - median(on.warm))],
  [`warm echo, median of ${PAIRS} (paired with a direct server in the same session)`, ms(median(off.pair.a)), ms(median(on.pair.a))],
  ["broker hop overhead on a warm call, median of paired differences", "–", ms(median(paired(on)))],
  [`throughput, ${CALLS} echo calls, 50 in flight`, `${fmt(off.throughput, 0)} calls/s`, `${fmt(on.throughput, 0)} calls/s`],
];
if (process.argv.includes("--json")) {
  console.log(JSON.stringify({ off, on, rows }));
} else {
  console.log(`| ${["", "not shared", "shared"].join(" | ")} |\n|---|---|---|`);
  for (const r of rows) console.log(`| ${r.join(" | ")} |`);
  const s = summary(paired(on));
  console.log(`\nhop overhead: median ${ms(s.median)}, p25 ${ms(s.p25)}, p75 ${ms(s.p75)} (n=${s.n})`);
}
