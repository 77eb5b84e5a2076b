#!/usr/bin/env node
// Writes link-order.txt: the functions of the addon that a session runs, for the linker to place
// together at the start of the code (build.rs passes the file to lld as --symbol-ordering-file).
// Linux maps a shared library's code 64 KiB or more at a time around each page a process first
// touches, so code spread over the whole library makes Pi hold most of it in memory; placed
// together, a session maps little more than the code it runs.
// The session is the memory bench's (bench/memory.mjs), in the real Pi before and after 0.99 (its
// own MCP API), each under valgrind's callgrind (which counts every instruction run): the
// extension, a metadata cache on disk as pi-mcp-adapter leaves it, server-everything over stdio,
// the `mcp` tool's status, search, a cold and a warm call.
// It builds the release addon (as `npm run build` does, with the linker's map of where each function
// went), runs the sessions, and writes the functions run. Usage: node scripts/link-order.mjs, then
// `npm run build`. Regenerate it after a Rust toolchain or dependency update (their functions'
// names change, and functions the file does not name are placed after the others).
import { execFileSync } from "node:child_process";
import { chmodSync, mkdtempSync, readdirSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { fileURLToPath } from "node:url";
import { PiSuite, SEARCH_SESSION } from "../bench/lib/pi-suite.mjs";
import { ensureInstalled, ensurePi } from "../bench/lib/setup.mjs";
import { runPi } from "../__test__/helpers/pi.mjs";

const root = join(fileURLToPath(import.meta.url), "..", "..");
export const ORDER_FILE = join(root, "link-order.txt");
/** Pi before 0.99 and after (its own MCP API, which the extension then uses). */
const PIS = ["0.87.1", "1.6.0"];

/**
 * The code of the linker's map, by input section: [{ start, end, name }], `name` the section's
 * first symbol (one function for Rust's `.text.<function>` sections; a whole object's `.text`, or
 * the static constructors' `.text.startup`, moves with any of its symbols).
 */
function codeSections(mapFile) {
  const sections = [];
  let current;
  for (const line of readFileSync(mapFile, "utf8").split("\n")) {
    const section = /^\s*([0-9a-f]+)\s+[0-9a-f]+\s+([0-9a-f]+)\s+\d+\s+.*:\((\.[^)]*)\)$/.exec(line);
    if (section) {
      const start = parseInt(section[1], 16);
      current = section[3].startsWith(".text") ? { start, end: start + parseInt(section[2], 16), name: undefined } : undefined;
      if (current) sections.push(current);
      continue;
    }
    const symbol = /^\s*[0-9a-f]+\s+[0-9a-f]+\s+[0-9a-f]+\s+\d+\s+(\S+)$/.exec(line);
    if (symbol && current && !current.name) current.name = symbol[1];
  }
  return sections.filter((s) => s.name).sort((a, b) => a.start - b.start);
}

/** The functions whose code callgrind saw run (its instruction addresses are the library's own). */
function functionsRun(callgrindOut, library, sections) {
  const names = [];
  const seen = new Set();
  let object = "";
  const find = (vma) => {
    let [low, high] = [0, sections.length - 1];
    while (low <= high) {
      const mid = (low + high) >> 1;
      if (vma < sections[mid].start) high = mid - 1;
      else if (vma >= sections[mid].end) low = mid + 1;
      else return sections[mid];
    }
    return undefined;
  };
  for (const line of readFileSync(callgrindOut, "utf8").split("\n")) {
    if (line.startsWith("ob=")) object = line.slice(3);
    const address = object === library && /^0x([0-9a-f]+) /.exec(line);
    const section = address && find(parseInt(address[1], 16));
    if (section && !seen.has(section.name)) {
      seen.add(section.name);
      names.push(section.name);
    }
  }
  return names;
}

/** The bench's session in Pi `version` under callgrind, writing `out`. */
async function recordSession(version, paths, home, out) {
  const suite = new PiSuite({ ...paths, piCli: ensurePi(version) }, { native: { label: "pi-mcp-native", extensionDir: root, settings: { scriptMode: false, namespaceProxyTools: false }, mcp: true } });
  try {
    await suite.warmUp([]);
    const node = join(home, `callgrind-node-${version}`);
    const callgrind = ["--tool=callgrind", "--dump-instr=yes", "--compress-strings=no", "--compress-pos=no", `--callgrind-out-file=${out}`];
    writeFileSync(node, `#!/bin/sh\nexec valgrind ${callgrind.join(" ")} ${paths.node} "$@"\n`);
    chmodSync(node, 0o755);
    const r = await runPi({ node, cli: suite.paths.piCli, extensionDir: root, mcpConfig: suite.mcpConfig(suite.variants.native), cacheJson: suite.cacheJson, script: SEARCH_SESSION, env: { PI_MCP_CONFIG_MODE: "exclusive" }, tmpDir: suite.tmpDir, timeoutMs: 900_000 });
    if (r.code !== 0 || r.requests.length !== SEARCH_SESSION.steps.length) throw new Error(`Pi ${version} under callgrind exited ${r.code} after ${r.requests.length} requests\n${r.stderr.slice(-2000)}`);
  } finally {
    suite.close();
  }
}

if (process.argv[1] === fileURLToPath(import.meta.url)) {
  const home = mkdtempSync(join(tmpdir(), "pi-mcp-link-order-"));
  try {
    // The release build as `npm run build` makes it, with the linker's map beside it.
    const map = join(home, "link.map");
    execFileSync(process.execPath, [join(root, "scripts", "build-native.mjs")], { cwd: root, env: { ...process.env, PI_MCP_NATIVE_LINK_MAP: map }, stdio: "inherit" });
    const addon = join(root, readdirSync(root).find((f) => /^pi-mcp-native\..*\.node$/.test(f)));
    const paths = ensureInstalled();
    const sections = codeSections(map);
    const names = [];
    for (const version of PIS) {
      const out = join(home, `callgrind-${version}.out`);
      await recordSession(version, paths, home, out);
      names.push(...functionsRun(out, addon, sections).filter((name) => !names.includes(name)));
    }
    writeFileSync(ORDER_FILE, `${names.join("\n")}\n`);
    console.log(`Wrote ${ORDER_FILE}: ${names.length} functions; \`npm run build\` places them first.`);
  } finally {
    rmSync(home, { recursive: true, force: true });
  }
}
