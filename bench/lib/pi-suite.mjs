// The side-by-side run inside the real Pi: plain Pi, Pi with a no-op tool, Pi with a bare
// JSON-RPC client as its tool (the floor of a call inside Pi), pi-mcp-native, and
// pi-mcp-adapter 2.36.0 (one-tool settings, and its default 3-tool surface), interleaved in
// every repetition so that machine load hits all of them alike. Timings come from the fake
// LLM's log (spawn → first request, and the gap between a tool-call answer and Pi's next request).
import { mkdtempSync, readFileSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { dirname, join } from "node:path";
import { encode } from "gpt-tokenizer/encoding/o200k_base";
import { runPi } from "../../__test__/helpers/pi.mjs";
import { ROOT } from "./setup.mjs";
import { rawRmcp } from "./raw.mjs";
import { sampleRss } from "./rss.mjs";

const ONE_TOOL = { scriptMode: false, namespaceProxyTools: false };
const call = (args) => ({ tool_calls: [{ name: "mcp", arguments: args }] });
const echo = (message) => call({ tool: "everything_echo", args: { message } });
// mcp({}), a cold call (server spawned on demand), a warm call, then the final answer.
const SESSION = { steps: [call({}), echo("cold"), echo("warm"), { text: "done" }] };
const ONE_TURN = { steps: [{ text: "done" }] };
/** The memory comparison's session: status, a search, a cold call, a warm call, the final answer. */
export const SEARCH_SESSION = { steps: [call({}), call({ search: "echo" }), echo("cold"), echo("warm"), { text: "done" }] };

/** The variants: which extension, which mcp.json settings, whether it has MCP at all. */
export function variants(paths) {
  return {
    pi: { label: "Pi alone" },
    noop: { label: "Pi + no-op tool", extensionDir: join(ROOT, "bench", "fixtures", "noop-extension.mjs") },
    floor: { label: "Pi + bare JSON-RPC client", extensionDir: join(ROOT, "bench", "fixtures", "floor-extension.mjs") },
    native: { label: "pi-mcp-native", extensionDir: ROOT, settings: ONE_TOOL, mcp: true },
    adapter: { label: "pi-mcp-adapter (1 tool)", extensionDir: paths.adapterDir, settings: ONE_TOOL, mcp: true },
    adapter3: { label: "pi-mcp-adapter (default 3 tools)", extensionDir: paths.adapterDir, mcp: true },
  };
}

/** Import and factory milliseconds of the extension from Pi's PI_TIMING=1 report. */
function extensionTiming(stderr, extensionDir) {
  if (!extensionDir) return { importMs: NaN, factoryMs: NaN };
  const ms = (what) => {
    const line = stderr.split("\n").find((l) => l.includes(extensionDir) && l.includes(what));
    return Number(/(\d+)ms/.exec(line ?? "")?.[1] ?? NaN);
  };
  return { importMs: ms("module import"), factoryMs: ms("factory") };
}

function toolPayload(request) {
  const tools = JSON.stringify(request.body.tools ?? []);
  const body = JSON.stringify(request.body);
  return { toolBytes: Buffer.byteLength(tools), toolTokens: encode(tools).length, requestBytes: Buffer.byteLength(body), requestTokens: encode(body).length, toolNames: (request.body.tools ?? []).map((t) => t.function?.name ?? t.name) };
}

export class PiSuite {
  /** `paths.piCli`: the Pi to run; `extra`: more variants (a baseline build of ours). */
  constructor(paths, extra = {}) {
    this.paths = paths;
    this.variants = { ...variants(paths), ...extra };
    this.tmpDir = mkdtempSync(join(tmpdir(), "pi-mcp-bench-tmp-")); // shared: warm jiti + compile caches
    this.serverCommand = [paths.node, paths.everything, "stdio"];
    this.cacheJson = undefined;
  }

  mcpConfig(variant) {
    const config = { mcpServers: { everything: { command: this.paths.node, args: [this.paths.everything, "stdio"] } } };
    if (variant.settings) config.settings = variant.settings;
    return config;
  }

  /**
   * One Pi run → the figures of that run. `cached`: start with a metadata cache on disk;
   * `session`: the four-turn session (or `script`, another one), else one turn.
   */
  async run(name, { session, cached, keep = false, script = session ? SESSION : ONE_TURN }) {
    const variant = this.variants[name];
    let rss;
    const r = await runPi({
      node: this.paths.node,
      cli: this.paths.piCli,
      extensionDir: variant.extensionDir,
      mcpConfig: variant.mcp ? this.mcpConfig(variant) : undefined,
      cacheJson: variant.mcp && cached ? this.cacheJson : undefined,
      script,
      env: { PI_TIMING: "1", PI_MCP_CONFIG_MODE: "exclusive", BENCH_FLOOR_SERVER: JSON.stringify(this.serverCommand) },
      tmpDir: this.tmpDir,
      timeoutMs: 60_000,
      keep,
      onSpawn: (child) => (rss = sampleRss(child.pid)),
    });
    const memory = rss.stop();
    const steps = script.steps.length;
    if (r.code !== 0 || r.requests.length !== steps || r.leftover) {
      throw new Error(`${variant.label}: Pi exited ${r.code}${r.leftover ? " leaving processes" : ""} after ${r.requests.length}/${steps} requests\n${r.stderr.slice(-2000)}`);
    }
    if (session && !r.toolResults.filter((t) => t.args?.tool).every((t) => /Echo: (cold|warm)/.test(t.text) || name === "noop" || name === "pi")) {
      throw new Error(`${variant.label}: the echo calls failed: ${JSON.stringify(r.toolResults.map((t) => t.text.slice(0, 200)))}`);
    }
    const gap = (i) => r.requests[i + 1].tRecv - r.requests[i].tDone;
    return {
      startupMs: r.timing.firstRequestMs,
      firstStatusMs: session ? gap(0) : NaN,
      coldCallMs: session ? gap(1) : NaN,
      warmCallMs: session ? gap(2) : NaN,
      // How long before Pi's first request a process of Pi's (an MCP server) was first seen
      // (sampled every 50 ms; negative: after it; NaN: none).
      serverLeadMs: memory.firstChildAt === null ? NaN : r.requests[0].tRecv - memory.firstChildAt,
      piRssMb: memory.rootMb,
      childRssMb: memory.childrenMb,
      ...extensionTiming(r.stderr, variant.extensionDir),
      payload: toolPayload(r.requests[0]),
      requestTimes: r.requests.map((q) => [q.tRecv, q.tDone]),
      agentDir: r.agentDir,
      home: r.home,
    };
  }

  /**
   * Untimed: fills the jiti/compile caches and takes the metadata cache the adapter writes, then
   * runs each of `names` once.
   */
  async warmUp(names = Object.keys(this.variants)) {
    const boot = await this.run("adapter", { session: false, cached: false, keep: true });
    try {
      this.cacheJson = JSON.parse(readFileSync(join(boot.agentDir, "mcp-cache.json"), "utf8"));
    } finally {
      rmSync(dirname(boot.home), { recursive: true, force: true });
    }
    for (const name of names) await this.run(name, { session: name !== "pi", cached: true });
    if (names.includes("floor")) rawRmcp(this.serverCommand, { cold: 1 });
  }

  /** One repetition: every variant in a rotated order, with and without cache, plus the raw floor. */
  async repetition(index) {
    const jobs = [
      ["pi", "pi", { session: false, cached: false }],
      ["noop", "noop", { session: true, cached: false }],
      ["noop:1turn", "noop", { session: false, cached: false }],
      ["floor", "floor", { session: true, cached: false }],
      ["native", "native", { session: true, cached: true }],
      ["adapter", "adapter", { session: true, cached: true }],
      ["adapter3", "adapter3", { session: true, cached: true }],
      ["native:nocache", "native", { session: false, cached: false }],
      ["adapter:nocache", "adapter", { session: false, cached: false }],
      ["raw", null, null],
    ];
    const out = {};
    for (let k = 0; k < jobs.length; k++) {
      const [key, name, opts] = jobs[(k + index) % jobs.length];
      out[key] = name ? await this.run(name, opts) : rawRmcp(this.serverCommand, { cold: 1 }).cold[0];
    }
    return out;
  }

  close() {
    rmSync(this.tmpDir, { recursive: true, force: true });
  }
}
