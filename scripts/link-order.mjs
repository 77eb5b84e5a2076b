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
// It builds the release addon (as the release workflow does, with the linker's map of where each
// function went), runs the sessions, and writes the functions run as patterns of their symbols
// without the hashes Rust puts in them (which change with every dependency or compiler update). Usage: node scripts/link-order.mjs, then `npm run build`; again when the code a session
// runs changes much. `node scripts/link-order.mjs --check MAP` reads the map of a release link
// (build.rs writes one where PI_MCP_NATIVE_LINK_MAP says) and fails when less than 90 % of the list
// was found: the release workflow runs it.
import { chmodSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { fileURLToPath } from "node:url";
import { PiSuite, SEARCH_SESSION } from "../bench/lib/pi-suite.mjs";
import { ensureInstalled, ensurePi, releaseBuild } from "../bench/lib/setup.mjs";
import { runPi } from "../__test__/helpers/pi.mjs";

const root = join(fileURLToPath(import.meta.url), "..", "..");
export const ORDER_FILE = join(root, "link-order.txt");
/** Pi before 0.99 and after (its own MCP API, which the extension then uses). */
const PIS = ["0.87.1", "1.6.0"];

/** The share of the list's names that must name a function of the build. */
const LEAST_FOUND = 0.9;

/**
 * A function's symbol as link-order.txt gives it, a pattern (`*` any characters) that still finds it
 * when the build's metadata changes: a v0 Rust name (.cargo/config.toml) without its crates'
 * disambiguators (`Cs…_`, hashes of their metadata) and back-references (`B…_`, offsets into the
 * name, which move with the hashes' lengths); a legacy one without its hash (`17h…E`).
 */
export function listName(symbol) {
  if (symbol.startsWith("_R")) return symbol.replace(/Cs[0-9A-Za-z]*_/g, "Cs*_").replace(/B[0-9A-Za-z]*_/g, "B*_");
  if (symbol.startsWith("_ZN")) return symbol.replace(/17h[0-9a-f]{16}E$/, "17h*E");
  return symbol;
}

/** The names of link-order.txt that name no function placed first by the link whose map is `mapFile`. */
export function missingNames(mapFile, list = readFileSync(ORDER_FILE, "utf8").split("\n").filter(Boolean)) {
  const placed = new Set();
  let inSession = false;
  for (const line of readFileSync(mapFile, "utf8").split("\n")) {
    const entry = /^\s*[0-9a-f]+\s+[0-9a-f]+\s+[0-9a-f]+\s+\d+ (\s*)(.*)$/.exec(line);
    if (!entry) continue;
    if (entry[1] === "") inSession = entry[2] === ".text.session";
    const section = inSession && /:\(\.text\.(?:unlikely\.|startup\.)?([^)]*)\)$/.exec(entry[2]);
    if (section) placed.add(listName(section[1]));
  }
  return list.filter((name) => !placed.has(name));
}

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

if (process.argv[1] === fileURLToPath(import.meta.url) && process.argv[2] === "--check") {
  const list = readFileSync(ORDER_FILE, "utf8").split("\n").filter(Boolean);
  const missing = missingNames(process.argv[3], list);
  const found = 1 - missing.length / list.length;
  console.log(`link-order.txt: ${list.length - missing.length} of ${list.length} functions found and placed first (${(found * 100).toFixed(1)} %).`);
  if (found < LEAST_FOUND) {
    console.error(`Less than ${LEAST_FOUND * 100} %: the code a session runs has changed. Run \`node scripts/link-order.mjs\` and commit link-order.txt. Not found:\n${missing.slice(0, 20).join("\n")}`);
    process.exit(1);
  }
} else if (process.argv[1] === fileURLToPath(import.meta.url)) {
  const home = mkdtempSync(join(tmpdir(), "pi-mcp-link-order-"));
  try {
    // The release build as the release workflow makes it, with the linker's map beside it.
    const map = join(home, "link.map");
    releaseBuild({ env: { ...process.env, PI_MCP_NATIVE_LINK_MAP: map } });
    const addon = join(root, "pi-mcp-native.linux-x64-gnu.node");
    const paths = ensureInstalled();
    const sections = codeSections(map);
    const names = [];
    for (const version of PIS) {
      const out = join(home, `callgrind-${version}.out`);
      await recordSession(version, paths, home, out);
      for (const name of functionsRun(out, addon, sections).map(listName)) if (!names.includes(name)) names.push(name);
    }
    writeFileSync(ORDER_FILE, `${names.join("\n")}\n`);
    console.log(`Wrote ${ORDER_FILE}: ${names.length} functions; \`npm run build\` places them first.`);
  } finally {
    rmSync(home, { recursive: true, force: true });
  }
}
