#!/usr/bin/env node
// The package's contract as TypeScript sees it (`npm test` runs this; so can you): a consumer of
// index.d.ts that calls every method and reads every field (__test__/types), and the extension's
// and the command line's JavaScript checked against index.d.ts and Pi's types (jsconfig.json,
// their `// @ts-check`). Node's and Pi's types come from the end-to-end tests' Pi 1.6 install.
import { spawnSync } from "node:child_process";
import { existsSync } from "node:fs";
import { dirname, join } from "node:path";
import { fileURLToPath } from "node:url";

const root = join(dirname(fileURLToPath(import.meta.url)), "..");
const PROJECTS = [join("__test__", "types"), "jsconfig.json"];

if (!existsSync(join(root, "__test__", "e2e", "pi-1.6", "node_modules", "@types", "node"))) {
  console.error("type check: Pi 1.6's install (Node's and Pi's types) is missing: run `npm test` once, or `npm ci` in __test__/e2e/pi-1.6.");
  process.exit(1);
}
const tsc = join(root, "node_modules", "typescript", "bin", "tsc");
const start = performance.now();
const failed = PROJECTS.filter((project) => spawnSync(process.execPath, [tsc, "--noEmit", "-p", project], { cwd: root, stdio: ["ignore", "inherit", "inherit"] }).status !== 0);
const seconds = ((performance.now() - start) / 1000).toFixed(1);
if (failed.length) {
  console.error(`type check: errors in ${failed.join(", ")} (${seconds} s)`);
  process.exit(1);
}
console.log(`type check: ${PROJECTS.join(" and ")} clean (${seconds} s)`);
