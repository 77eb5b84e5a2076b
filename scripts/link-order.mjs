#!/usr/bin/env node
// Writes link-order.txt: the functions of the addon that a session runs, for the linker to place
// together at the start of the code (build.rs gives the list to lld in a linker script).
// Linux maps a shared library's code 64 KiB or more at a time around each page a process first
// touches, so code spread over the whole library makes Pi hold most of it in memory; placed
// together, a session maps little more than the code it runs.
// The session is the memory bench's (bench/memory.mjs), in the real Pi before and after 0.99 (its
// own MCP API), each under valgrind's callgrind (which counts every instruction run): the
// extension, a metadata cache on disk as pi-mcp-adapter leaves it, server-everything over stdio,
// the `mcp` tool's status, search, a cold and a warm call.
// It builds the release addon (as the release workflow does, with the linker's map of where each
// function went), runs the sessions, and writes the functions run as patterns of their symbols
// without the hashes Rust puts in them (which change with every dependency or compiler update);
// it fails, writing nothing, when callgrind saw implausibly little of the addon run.
// Usage: node scripts/link-order.mjs [--map MAP] (MAP: the map of the release addon built here
// already, which is then not built again), then `npm run build`; again when the code a session
// runs changes much. `node scripts/link-order.mjs --check MAP` reads the map of a release link
// (build.rs writes one where PI_MCP_NATIVE_LINK_MAP says) and fails when less than 90 % of the
// list matches the link's functions, as the linker matches it, or when the linker did not place
// them first: the release workflow runs it.
import { chmodSync, mkdtempSync, readFileSync, realpathSync, rmSync, writeFileSync } from "node:fs";
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
/** The share of the addon's functions below which a recording missed code (a session runs about 15 %). */
const LEAST_RUN = 0.05;
/** The share of the functions the list placed first that a recording must see run again. */
const LEAST_RUN_AGAIN = 0.5;

/**
 * A function's symbol as link-order.txt gives it, a pattern (`*` any characters) that still finds it
 * when the build's metadata changes: a v0 Rust name (.cargo/config.toml) without its crates'
 * disambiguators (`Cs…_`, hashes of their metadata) and back-references (`B…_`, offsets into the
 * name, which move with the hashes' lengths); a legacy one without its hash (`17h…E`); either
 * without the number LLVM appends to the copies of a function it makes local (`.4633`), which
 * moves with every change to the code.
 */
export function listName(symbol) {
  const name = symbol.replace(/\.\d+$/, ".*");
  if (name.startsWith("_R")) return name.replace(/Cs[0-9A-Za-z]*_/g, "Cs*_").replace(/B[0-9A-Za-z]*_/g, "B*_");
  if (name.startsWith("_ZN")) return name.replace(/17h[0-9a-f]{16}E$/, "17h*E");
  return name;
}

/**
 * Code a native session runs that callgrind cannot see run (found with `perf record -e page-faults
 * -d` on the bench's session: each fault in the addon's code outside the list's block): sha2's
 * SHA-NI compression (valgrind emulates no SHA extensions, so sha2 takes its portable path
 * there), tokio's pidfd child reaper and its registration's drop (valgrind has no pidfd, so tokio
 * reaps by signal there), and for each entry point the session ran (`names`, the list's names so
 * far), its task's slow paths (a JoinHandle dropped before the task ended, and the task's memory
 * freed by the other side), which valgrind's pace does not bring about.
 */
export function unseenUnderValgrind(names) {
  const entryPoints = new Set(names.flatMap((name) => /McpAdapter_0\d+[a-z_]+?_c_callback/.exec(name) ?? []));
  const task = (path) => [...entryPoints].map((entry) => `_RINvNtNtNtCs*_5tokio7runtime4task3raw${path}*${entry}*`);
  const pidfdReaper = ["*pidfd_reaper*", "_RINvNtCs*_4core3ptr13drop_in_placeNtNtNtNtCs*_5tokio7runtime2io12registration12RegistrationE*"];
  return ["_RNvNtNtCs*_4sha26sha2567x86_sha8compress", ...pidfdReaper, ...task("21drop_join_handle_slow"), ...task("7dealloc")];
}

/** A name of the list as the linker reads it (build.rs's linker script): a glob, `*` any characters. */
function globRegex(name) {
  return new RegExp(`^${name.split("*").map((part) => part.replace(/[.+?^${}()|[\]\\]/g, "\\$&")).join(".*")}$`);
}

/**
 * The code of the linker's map, by input section, in address order: [{ start, end, section }],
 * `section` the function a `.text.<function>` section holds, as the linker script names it
 * (`.text.unlikely.` and `.text.startup.` too); undefined for a whole object's `.text`, which no
 * name can place.
 */
export function codeSections(mapFile) {
  const sections = [];
  for (const line of readFileSync(mapFile, "utf8").split("\n")) {
    const input = /^\s*([0-9a-f]+)\s+[0-9a-f]+\s+([0-9a-f]+)\s+\d+\s+.*:\((\.text[^)]*)\)$/.exec(line);
    if (!input) continue;
    const start = parseInt(input[1], 16);
    sections.push({ start, end: start + parseInt(input[2], 16), section: /^\.text(?:\.unlikely|\.startup)?\.(?!(?:unlikely|startup)$)(.+)$/.exec(input[3])?.[1] });
  }
  return sections.sort((a, b) => a.start - b.start);
}

/**
 * How the list fared in the link whose code is `sections` (codeSections): `missing`, its names
 * that match no function of the link; `placed`, the functions they match, which the linker put
 * first; `outOfPlace`, how many of those are not among as many functions at the start of the code
 * (nearly all when the list was not given to the linker). A name counts as the linker counts it:
 * a glob matching a function's section.
 */
export function listInLink(sections, list) {
  const functions = sections.filter((s) => s.section);
  const byListName = new Map();
  for (const f of functions) {
    const name = listName(f.section);
    byListName.set(name, [...(byListName.get(name) ?? []), f]);
  }
  const placed = new Set();
  const missing = [];
  for (const name of list) {
    // listName leaves a pattern that matches the name it came from: most names are found as such.
    let matches = byListName.get(name);
    if (!matches && name.includes("*")) {
      const glob = globRegex(name);
      matches = functions.filter((f) => glob.test(f.section));
    }
    if (!matches?.length) missing.push(name);
    else for (const f of matches) placed.add(f);
  }
  const first = sections.filter((s) => s.end > s.start).slice(0, placed.size);
  const outOfPlace = placed.size - first.filter((s) => placed.has(s)).length;
  return { missing, placed, outOfPlace };
}

/**
 * The functions whose code callgrind saw run (its instruction addresses are the library's own), by
 * section as the list names them. Fails when callgrind saw nothing of `library`: Pi loaded
 * another addon, or callgrind could not tell the library's code apart.
 */
function functionsRun(callgrindOut, library, sections) {
  const names = [];
  const seen = new Set();
  const objects = new Set();
  let object = "";
  let instructions = 0;
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
    if (line.startsWith("ob=")) objects.add((object = line.slice(3)));
    const address = object === library && /^0x([0-9a-f]+) /.exec(line);
    if (!address) continue;
    instructions++;
    const section = find(parseInt(address[1], 16));
    if (section?.section && !seen.has(section)) {
      seen.add(section);
      names.push(section.section);
    }
  }
  if (!instructions) {
    const addons = [...objects].filter((o) => o.endsWith(".node"));
    throw new Error(`callgrind saw no code of ${library} run (${addons.length ? `native addons it saw: ${addons.join(", ")}` : "it saw no native addon"}): is PI_MCP_NATIVE_BINARY set?`);
  }
  return { names, seen };
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
    const echoes = r.toolResults.filter((t) => /^Echo: (cold|warm)/.test(t.text)).length;
    if (echoes !== 2) throw new Error(`Pi ${version} under callgrind: the calls failed, so the session did not run their code: ${JSON.stringify(r.toolResults.map((t) => t.text.slice(0, 300)))}`);
  } finally {
    suite.close();
  }
}

/** The list's names the link whose map is `mapFile` places first; fails (exit 1) below LEAST_FOUND, or when the linker was not given the list. */
function check(mapFile) {
  const list = readFileSync(ORDER_FILE, "utf8").split("\n").filter(Boolean);
  const { missing, placed, outOfPlace } = listInLink(codeSections(mapFile), list);
  const found = 1 - missing.length / list.length;
  console.log(`link-order.txt: ${list.length - missing.length} of ${list.length} names found (${(found * 100).toFixed(1)} %); ${placed.size - outOfPlace} of the ${placed.size} functions they match placed first.`);
  if (outOfPlace > (1 - LEAST_FOUND) * placed.size) {
    console.error(`${outOfPlace} of the ${placed.size} functions it names are not at the start of the code: the linker was not given this link-order.txt (build.rs gives it to lld in a release build for x86_64-unknown-linux-gnu, Rust 1.90 or later).`);
    process.exit(1);
  }
  if (found < LEAST_FOUND) {
    console.error(`Less than ${LEAST_FOUND * 100} %: the code a session runs has changed. Run \`node scripts/link-order.mjs\` and commit link-order.txt. Not found:\n${missing.slice(0, 20).join("\n")}`);
    process.exit(1);
  }
}

/**
 * Records the sessions with the addon built here (its linker map `map`) and writes the list. Fails
 * rather than write a fraction of the session's code: when callgrind saw few of the addon's
 * functions run, or few of those the present list placed first (code it could not see).
 */
async function record(map, home) {
  const sections = codeSections(map);
  const functions = sections.filter((s) => s.section).length;
  const { placed } = listInLink(sections, readFileSync(ORDER_FILE, "utf8").split("\n").filter(Boolean));
  const addon = realpathSync(join(root, "pi-mcp-native.linux-x64-gnu.node"));
  const paths = ensureInstalled();
  const names = [];
  const seen = new Set();
  for (const version of PIS) {
    const out = join(home, `callgrind-${version}.out`);
    await recordSession(version, paths, home, out);
    const run = functionsRun(out, addon, sections);
    for (const name of run.names.map(listName)) if (!names.includes(name)) names.push(name);
    for (const section of run.seen) seen.add(section);
  }
  for (const name of unseenUnderValgrind(names)) {
    if (!names.includes(name) && !listInLink(sections, [name]).missing.length) names.push(name);
  }
  if (names.length < LEAST_RUN * functions) {
    throw new Error(`callgrind saw ${names.length} of the addon's ${functions} functions run, fewer than a session runs (about 15 %): it did not see all of the addon's code. link-order.txt is left as it was.`);
  }
  const placedRun = [...placed].filter((section) => seen.has(section)).length;
  if (placedRun < LEAST_RUN_AGAIN * placed.size) {
    throw new Error(`Of the ${placed.size} functions link-order.txt placed first in this build, callgrind saw ${placedRun} run: it did not see all of the addon's code (or the session changed that much: then empty link-order.txt, build and run this again). link-order.txt is left as it was.`);
  }
  writeFileSync(ORDER_FILE, `${names.join("\n")}\n`);
  console.log(`Wrote ${ORDER_FILE}: ${names.length} functions (${placedRun} of the ${placed.size} the list placed first in this build); \`npm run build\` places them first.`);
}

const main = process.argv[1] === fileURLToPath(import.meta.url);
if (main && process.argv[2] === "--check") check(process.argv[3]);
else if (main) {
  const home = mkdtempSync(join(tmpdir(), "pi-mcp-link-order-"));
  try {
    // The release build as the release workflow makes it, with the linker's map beside it; or, with
    // `--map MAP`, the addon built here already, whose link wrote MAP.
    const given = process.argv.indexOf("--map");
    const map = given > 0 ? process.argv[given + 1] : join(home, "link.map");
    if (given < 0) releaseBuild({ env: { ...process.env, PI_MCP_NATIVE_LINK_MAP: map } });
    await record(map, home);
  } finally {
    rmSync(home, { recursive: true, force: true });
  }
}
