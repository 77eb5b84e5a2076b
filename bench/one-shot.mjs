// One-shot runs (`pi --mode json`, as subagents run): consecutive one-turn runs of the real Pi
// from an empty metadata cache, with three stdio servers and a model that never uses MCP. Counts
// the servers each run starts (each server, wrapped in `sh`, appends a line to a file when it
// starts) and Pi's exit delay: from the end of its last LLM request to its exit. pi-mcp-native
// and pi-mcp-adapter, alternating run by run; each keeps its agent dir (and cache) across its runs.
import { mkdtempSync, readFileSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { fileURLToPath } from "node:url";
import { runPi } from "../__test__/helpers/pi.mjs";
import { ROOT } from "./lib/setup.mjs";
import { fmt, summary } from "./lib/stats.mjs";

const ONE_TURN = { steps: [{ text: "done" }] };
const SERVERS = ["a", "b", "c"];

/** Per variant: servers started in each of `runs` consecutive runs, and each run's exit delay (ms). */
export async function measureOneShot({ paths, runs = 5 }) {
  const variants = {
    native: { extensionDir: ROOT },
    adapter: { extensionDir: paths.adapterDir, settings: { scriptMode: false, namespaceProxyTools: false } },
  };
  const out = {};
  const homes = {};
  try {
    for (const name of Object.keys(variants)) {
      homes[name] = mkdtempSync(join(tmpdir(), `pi-mcp-bench-oneshot-${name}-`));
      out[name] = { started: [], exitDelayMs: [] };
    }
    for (let i = 0; i < runs; i++) {
      for (const [name, variant] of Object.entries(variants)) {
        const home = homes[name];
        const starts = join(home, "starts");
        const before = lines(starts);
        // Each server announces its start, then becomes server-everything over stdio.
        const server = { command: "sh", args: ["-c", `echo x >> ${starts}; exec "$0" "$@"`, paths.node, paths.everything, "stdio"] };
        const mcpConfig = { mcpServers: Object.fromEntries(SERVERS.map((s) => [s, server])), ...(variant.settings && { settings: variant.settings }) };
        const tSpawn = Date.now();
        const r = await runPi({ node: paths.node, cli: paths.piCli, extensionDir: variant.extensionDir, home, mcpConfig, script: ONE_TURN, env: { PI_MCP_CONFIG_MODE: "exclusive" }, timeoutMs: 60_000 });
        const exited = tSpawn + r.timing.wallMs;
        if (r.code !== 0 || r.leftover) throw new Error(`${name} one-shot run ${i + 1}: Pi exited ${r.code}${r.leftover ? " leaving processes" : ""}\n${r.stderr.slice(-1500)}`);
        out[name].started.push(lines(starts) - before);
        out[name].exitDelayMs.push(exited - r.requests.at(-1).tDone);
      }
    }
    return out;
  } finally {
    for (const home of Object.values(homes)) rmSync(home, { recursive: true, force: true });
  }
}

function lines(file) {
  try {
    return readFileSync(file, "utf8").split("\n").filter(Boolean).length;
  } catch {
    return 0;
  }
}

/** Rows [label, native, adapter] for the report. */
export function oneShotRows(m) {
  const exit = (xs) => {
    const q = summary(xs);
    return `${fmt(q.median, 0)} ms (p25 ${fmt(q.p25, 0)}, p75 ${fmt(q.p75, 0)})`;
  };
  return [
    ["servers started in each of the consecutive runs", m.native.started.join(", "), m.adapter.started.join(", ")],
    ["servers started in all runs", String(m.native.started.reduce((a, b) => a + b, 0)), String(m.adapter.started.reduce((a, b) => a + b, 0))],
    ["Pi's exit delay (last LLM request → exit)", exit(m.native.exitDelayMs), exit(m.adapter.exitDelayMs)],
  ];
}

if (process.argv[1] === fileURLToPath(import.meta.url)) {
  const { ensureInstalled } = await import("./lib/setup.mjs");
  const i = process.argv.indexOf("--runs");
  const m = await measureOneShot({ paths: ensureInstalled(), runs: i > 0 ? Number(process.argv[i + 1]) : 5 });
  if (process.argv.includes("--json")) console.log(JSON.stringify(m));
  else for (const [label, native, adapter] of oneShotRows(m)) console.log(`${label}\n  native: ${native}\n  adapter: ${adapter}`);
}
