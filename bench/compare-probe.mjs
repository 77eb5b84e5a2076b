#!/usr/bin/env node
// One sample of `npm run bench -- --compare` in a fresh Node process, from the build of pi-mcp-native
// in --root (a checkout with its release addon): so that two commits' addons never share a process.
//   calls:   server-everything's echo over stdio. A cold call (spawn + initialize + call on a fresh
//            adapter), the median of 3 after one untimed (the files and the runtime warm); a warm
//            call, the median of 100 round trips after 20 untimed; 500 calls with 50 in flight,
//            the median wall time of 3 bursts after one untimed burst of 100.
//   catalog: a 10,000-tool metadata cache (100 servers, never started). Opening it, McpAdapter.open
//            and status() (the cache read and parsed), the median of 5 after one untimed; the
//            index's build, a fresh adapter's first search, the median of 3 (the related-words
//            table, once per process, paid by the untimed round).
// Prints the sample as JSON (milliseconds). Usage: node bench/compare-probe.mjs --root DIR
// --measure calls|catalog --server '["node", "…/server-everything/dist/index.js", "stdio"]'
import { rmSync, mkdtempSync } from "node:fs";
import { createRequire } from "node:module";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { parseArgs } from "node:util";
import { burst, echo, everythingHome, time } from "./lib/calls.mjs";
import { writeCatalog } from "./lib/catalog.mjs";
import { median } from "./lib/stats.mjs";

const { values } = parseArgs({ options: { root: { type: "string" }, measure: { type: "string" }, server: { type: "string" } } });
const { McpAdapter, configHash } = createRequire(import.meta.url)(join(values.root, "index.js"));

/** `runs` timings of `fn`, after one untimed run → their median. */
async function medianOf(runs, fn) {
  await fn();
  const samples = [];
  for (let i = 0; i < runs; i++) samples.push(await time(fn));
  return median(samples);
}

async function calls() {
  const { home, agentDir } = everythingHome(JSON.parse(values.server));
  const open = () => McpAdapter.open({ cwd: home, agentDir, env: {} });
  try {
    const coldMs = await medianOf(3, async () => {
      const adapter = open();
      await echo(adapter, "cold");
      await adapter.shutdown();
    });
    const adapter = open();
    try {
      await echo(adapter, "cold");
      for (let i = 0; i < 20; i++) await echo(adapter, `warm-up ${i}`);
      const warm = [];
      for (let i = 0; i < 100; i++) warm.push(await time(() => echo(adapter, `warm ${i}`)));
      await burst(adapter, 100, 50);
      const bursts = [];
      for (let i = 0; i < 3; i++) bursts.push((await burst(adapter, 500, 50)).totalMs);
      return { coldMs, warmMs: median(warm), inflightMs: median(bursts) };
    } finally {
      await adapter.shutdown();
    }
  } finally {
    rmSync(home, { recursive: true, force: true });
  }
}

async function catalog() {
  const home = mkdtempSync(join(tmpdir(), "pi-mcp-native-compare-"));
  try {
    const { agentDir } = writeCatalog(home, 10_000, configHash);
    const open = () => McpAdapter.open({ cwd: home, agentDir, env: {} });
    const openMs = await medianOf(5, async () => {
      const adapter = open();
      if ((await adapter.status()).details.totalTools !== 10_000) throw new Error("the catalog's 10,000 tools were not read");
      await adapter.shutdown();
    });
    const fresh = [];
    for (let i = 0; i < 4; i++) {
      const adapter = open();
      await adapter.status();
      fresh.push(await time(() => adapter.search("create a ticket", {})));
      await adapter.shutdown();
    }
    return { openMs, indexMs: median(fresh.slice(1)) };
  } finally {
    rmSync(home, { recursive: true, force: true });
  }
}

const measures = { calls, catalog };
console.log(JSON.stringify(await measures[values.measure]()));
