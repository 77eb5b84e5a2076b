#!/usr/bin/env node
// Writes link-order.txt: the functions of the addon that a session runs, for the linker to place
// together at the start of the code (build.rs passes the file to lld as --symbol-ordering-file).
// Linux maps a shared library's code 64 KiB or more at a time around each page a process first
// touches, so code spread over the whole library makes Pi hold most of it in memory; placed
// together, a session maps little more than the code it runs.
// The session, in Node under valgrind's callgrind (which counts every instruction run): the
// extension against a stub of Pi's API, a metadata cache on disk, server-everything over stdio,
// Pi's events of a one-shot run, the `mcp` tool's status, search, a cold and a warm call (the
// bench's session), then shutdown.
// It builds the release addon (as `npm run build` does, with the linker's map of where each function
// went), runs the session, and writes the functions run. Usage: node scripts/link-order.mjs, then
// `npm run build`. Regenerate it after a Rust toolchain or dependency update (their functions'
// names change, and functions the file does not name are placed after the others).
import { execFileSync } from "node:child_process";
import { createRequire } from "node:module";
import { mkdirSync, mkdtempSync, readdirSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { fileURLToPath, pathToFileURL } from "node:url";

const root = join(fileURLToPath(import.meta.url), "..", "..");
export const ORDER_FILE = join(root, "link-order.txt");
const everything = join(root, "node_modules", "@modelcontextprotocol", "server-everything", "dist", "index.js");

/**
 * Child mode: the session, through the extension, with the addon PI_MCP_NATIVE_BINARY names; as
 * Pi before 0.99 runs it and as Pi ≥ 0.99 does (its own MCP API present).
 */
async function session() {
  const extension = join(root, JSON.parse(readFileSync(join(root, "package.json"), "utf8")).pi.extensions[0]);
  const { default: factory } = await import(pathToFileURL(extension).href);
  for (const newer of [false, true]) {
    const handlers = new Map();
    const tools = new Map();
    const pi = {
      on: (event, handler) => handlers.set(event, handler),
      registerTool: (tool) => tools.set(tool.name, tool),
      registerCommand() {},
      registerFlag() {},
      getAllTools: () => [...tools.values()],
      getActiveTools: () => [...tools.keys()],
      setActiveTools() {},
      ...(newer && { registerMcpServer() {}, unregisterMcpServer() {}, getMcpServers: () => [] }),
    };
    await factory(pi);
    const ctx = { cwd: process.cwd(), hasUI: false, mode: "json", isProjectTrusted: () => true };
    await handlers.get("session_start")({ type: "session_start", reason: "startup" }, ctx);
    await handlers.get("before_agent_start")({ systemPrompt: "", systemPromptOptions: { sections: {} } }, ctx);
    await handlers.get("before_provider_request")({}, ctx);
    const mcp = tools.get("mcp");
    for (const params of [{}, { search: "echo" }, { tool: "everything_echo", args: { message: "cold" } }, { tool: "everything_echo", args: { message: "warm" } }]) {
      const result = await mcp.execute(`call-${Math.random()}`, params, undefined, undefined, ctx);
      if (result.details?.error) throw new Error(`${JSON.stringify(params)}: ${result.content.map((c) => c.text).join("\n")}`);
      await handlers.get("tool_result")?.({ toolName: "mcp", details: result.details }, ctx);
    }
    await handlers.get("session_shutdown")({ type: "session_shutdown" }, ctx);
  }
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

if (process.argv.includes("--session")) {
  await session();
} else if (process.argv[1] === fileURLToPath(import.meta.url)) {
  const home = mkdtempSync(join(tmpdir(), "pi-mcp-link-order-"));
  try {
    // The release build as `npm run build` makes it, with the linker's map beside it.
    const map = join(home, "link.map");
    execFileSync(process.execPath, [join(root, "scripts", "build-native.mjs")], { cwd: root, env: { ...process.env, PI_MCP_NATIVE_LINK_MAP: map }, stdio: "inherit" });
    const addon = join(root, readdirSync(root).find((f) => /^pi-mcp-native\..*\.node$/.test(f)));
    const agentDir = join(home, ".pi", "agent");
    mkdirSync(agentDir, { recursive: true });
    writeFileSync(join(agentDir, "mcp.json"), JSON.stringify({ mcpServers: { everything: { command: process.execPath, args: [everything, "stdio"] } } }));
    const env = { PATH: process.env.PATH, HOME: home, PI_CODING_AGENT_DIR: agentDir, PI_MCP_NATIVE_BINARY: addon };
    // The cache a first session leaves behind, written outside valgrind.
    const { McpAdapter } = createRequire(import.meta.url)(join(root, "index.js"));
    const filler = McpAdapter.open({ cwd: home, agentDir, env });
    await filler.connect("everything");
    await filler.shutdown();
    const out = join(home, "callgrind.out");
    const callgrind = ["--tool=callgrind", "--dump-instr=yes", "--compress-strings=no", "--compress-pos=no", `--callgrind-out-file=${out}`];
    execFileSync("valgrind", [...callgrind, process.execPath, fileURLToPath(import.meta.url), "--session"], { cwd: home, env, stdio: ["ignore", "ignore", "inherit"], timeout: 600_000 });
    const names = functionsRun(out, addon, codeSections(map));
    writeFileSync(ORDER_FILE, `${names.join("\n")}\n`);
    console.log(`Wrote ${ORDER_FILE}: ${names.length} functions; \`npm run build\` places them first.`);
  } finally {
    rmSync(home, { recursive: true, force: true });
  }
}
