#!/usr/bin/env node
// In-process figures of the native API against server-everything (stdio), side by side with a
// bare rmcp client (crates/connection/examples/raw_rmcp.rs) to the same server, interleaved: McpAdapter.open, a
// cold call (spawn + initialize + call on a new adapter; the raw client with and without a
// tools/list before the call), sequential warm calls, and a burst of calls with many in flight. Prints medians and spread; not a test. Needs `npm run build` and
// the raw client (`npm run bench` builds both).
// Usage: node bench/native-api.mjs [--reps 10] [--warm 200] [--burst 1000] [--inflight 50] [--json]
import { createRequire } from "node:module";
import { rmSync } from "node:fs";
import { join } from "node:path";
import { fileURLToPath } from "node:url";
import { burst, echo, everythingHome, time } from "./lib/calls.mjs";
import { rawRmcp } from "./lib/raw.mjs";
import { ROOT } from "./lib/setup.mjs";
import { fmt, summary } from "./lib/stats.mjs";

/** Raw samples (ms) of the native API and of the raw rmcp client, interleaved over `reps`. */
export async function measureNativeApi({ serverCommand, reps = 10, warm = 200, burstCalls = 1000, inflight = 50 }) {
  // Loaded here, not at import: the report imports this module without running it.
  const { McpAdapter } = createRequire(import.meta.url)(join(ROOT, "index.js"));
  const { home, agentDir } = everythingHome(serverCommand);
  const open = () => McpAdapter.open({ cwd: home, agentDir, env: {} });
  const out = { inflight, open: [], cold: [], rawCold: [], rawColdListed: [], warm: [], rawWarm: [], burst: [], rawBurst: [] };
  const warmPerRep = Math.ceil(warm / reps);
  const burstReps = Math.min(reps, 3);
  try {
    for (let i = 0; i < reps; i++) {
      let adapter;
      out.open.push(await time(() => (adapter = open())));
      out.cold.push(await time(() => echo(adapter, "cold")));
      for (let k = 0; k < warmPerRep; k++) out.warm.push(await time(() => echo(adapter, `warm ${k}`)));
      if (i < burstReps) out.burst.push(await burst(adapter, burstCalls, inflight));
      await adapter.shutdown();
      const raw = rawRmcp(serverCommand, { cold: 1, warm: warmPerRep, ...(i < burstReps ? { burst: burstCalls, inflight } : {}) });
      out.rawCold.push(raw.cold[0].totalMs);
      out.rawColdListed.push(rawRmcp(serverCommand, { cold: 1, list: 1 }).cold[0].totalMs);
      out.rawWarm.push(...raw.warm);
      if (i < burstReps) out.rawBurst.push(raw.burst);
    }
    return out;
  } finally {
    rmSync(home, { recursive: true, force: true });
  }
}

/** Rows [label, native, raw] for the report. */
export function nativeApiRows(m) {
  const s = (xs, d = 2) => {
    const q = summary(xs);
    return `${fmt(q.median, d)} ms (p25 ${fmt(q.p25, d)}, p75 ${fmt(q.p75, d)}, n=${q.n})`;
  };
  const burstRow = (runs) => {
    const lat = runs.flatMap((r) => r.latencies);
    const q = summary(lat);
    const calls = runs.reduce((n, r) => n + r.latencies.length, 0);
    const secs = runs.reduce((t, r) => t + r.totalMs, 0) / 1000;
    return `${fmt(calls / secs, 0)} calls/s, p50 ${fmt(q.median, 2)} ms, p99 ${fmt(q.p99, 2)} ms (${runs.length} runs)`;
  };
  return [
    ["McpAdapter.open (config + cache)", s(m.open), "–"],
    ["cold call (spawn → result)", s(m.cold, 1), s(m.rawCold, 1)],
    ["cold call, the raw client listing tools first (as a gateway without a metadata cache must)", "–", s(m.rawColdListed ?? [], 1)],
    ["warm call round trip", s(m.warm, 3), s(m.rawWarm, 3)],
    [`${m.burst[0]?.latencies.length ?? 0} calls, ${m.inflight} in flight`, burstRow(m.burst), burstRow(m.rawBurst)],
  ];
}

if (process.argv[1] === fileURLToPath(import.meta.url)) {
  const { ensureInstalled } = await import("./lib/setup.mjs");
  const arg = (name, fallback) => {
    const i = process.argv.indexOf(`--${name}`);
    return i > 0 ? Number(process.argv[i + 1]) : fallback;
  };
  const paths = ensureInstalled();
  const m = await measureNativeApi({
    serverCommand: [paths.node, paths.everything, "stdio"],
    reps: arg("reps", 10),
    warm: arg("warm", 200),
    burstCalls: arg("burst", 1000),
    inflight: arg("inflight", 50),
  });
  if (process.argv.includes("--json")) console.log(JSON.stringify(m));
  else for (const [label, native, raw] of nativeApiRows(m)) console.log(`${label}\n  native: ${native}\n  raw rmcp: ${raw}`);
}
