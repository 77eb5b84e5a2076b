#!/usr/bin/env node
// What pi-mcp-native itself adds to Pi's start-up, without Pi's own noise: in a fresh Node 22
// process (as Pi would), the import of extension/pi-mcp-native/index.js (the addon loads here), the factory
// (config + cache read, tool definition), and the session_start handler, with a metadata cache
// on disk and without. Prints medians; not a test. Usage: node bench/extension-startup.mjs [--reps 30]
import { execFileSync } from "node:child_process";
import { createRequire } from "node:module";
import { mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { fileURLToPath, pathToFileURL } from "node:url";
import { ROOT } from "./lib/setup.mjs";
import { summary } from "./lib/stats.mjs";

const EXTENSION = join(ROOT, JSON.parse(readFileSync(join(ROOT, "package.json"), "utf8")).pi.extensions[0]);

/** Child mode: one cold start of the extension against a stub of Pi's API. */
async function child() {
  const t0 = performance.now();
  const { default: factory } = await import(pathToFileURL(EXTENSION).href);
  const t1 = performance.now();
  const handlers = new Map();
  const pi = {
    on: (event, handler) => handlers.set(event, handler),
    registerTool() {},
    registerCommand() {},
    registerFlag() {},
    getAllTools: () => [],
    getActiveTools: () => [],
    setActiveTools() {},
  };
  await factory(pi);
  const t2 = performance.now();
  await handlers.get("session_start")({ type: "session_start", reason: "startup" }, { cwd: process.cwd(), hasUI: false });
  const t3 = performance.now();
  await handlers.get("session_shutdown")({ type: "session_shutdown" }, {});
  console.log(JSON.stringify({ importMs: t1 - t0, factoryMs: t2 - t1, sessionStartMs: t3 - t2 }));
}

/** `reps` fresh processes with and without a metadata cache, interleaved → samples per case. */
export async function measureExtensionStartup({ node, serverCommand, reps = 30 }) {
  const home = mkdtempSync(join(tmpdir(), "pi-mcp-ext-startup-"));
  const [command, ...args] = serverCommand;
  const dirs = { cache: join(home, "cache"), nocache: join(home, "nocache") };
  for (const [name, dir] of Object.entries(dirs)) {
    mkdirSync(dir);
    writeFileSync(join(dir, "mcp.json"), JSON.stringify({ mcpServers: { everything: { command, args } } }));
  }
  // The cache a first session leaves behind: connect once through the native API.
  const { McpAdapter } = createRequire(import.meta.url)(join(ROOT, "index.js"));
  const filler = McpAdapter.open({ cwd: home, agentDir: dirs.cache, env: {} });
  await filler.connect("everything");
  await filler.shutdown();
  const out = { cache: [], nocache: [] };
  try {
    for (let i = 0; i < reps; i++) {
      for (const name of i % 2 ? ["cache", "nocache"] : ["nocache", "cache"]) {
        const env = { PATH: process.env.PATH, HOME: home, PI_CODING_AGENT_DIR: dirs[name] };
        const text = execFileSync(node, [fileURLToPath(import.meta.url), "--child"], { cwd: home, env, encoding: "utf8", timeout: 30_000 });
        out[name].push(JSON.parse(text));
      }
    }
    return out;
  } finally {
    rmSync(home, { recursive: true, force: true });
  }
}

/** Rows [label, with cache, without cache] of medians (p25–p75). */
export function extensionStartupRows(m) {
  const cell = (rows, f) => {
    const s = summary(rows.map(f));
    return `${s.median.toFixed(2)} ms (${s.p25.toFixed(2)}–${s.p75.toFixed(2)})`;
  };
  const phases = [
    ["import (addon load)", (r) => r.importMs],
    ["factory", (r) => r.factoryMs],
    ["session_start handler", (r) => r.sessionStartMs],
    ["total on Pi's main thread", (r) => r.importMs + r.factoryMs + r.sessionStartMs],
  ];
  return phases.map(([label, f]) => [label, cell(m.cache, f), cell(m.nocache, f)]);
}

if (process.argv.includes("--child")) {
  await child();
} else if (process.argv[1] === fileURLToPath(import.meta.url)) {
  const { ensureInstalled } = await import("./lib/setup.mjs");
  const paths = ensureInstalled();
  const i = process.argv.indexOf("--reps");
  const serverCommand = [paths.node, paths.everything, "stdio"];
  const m = await measureExtensionStartup({ node: paths.node, serverCommand, reps: i > 0 ? Number(process.argv[i + 1]) : 30 });
  for (const [label, cache, nocache] of extensionStartupRows(m)) console.log(`${label.padEnd(28)} cache: ${cache}   no cache: ${nocache}`);
}
