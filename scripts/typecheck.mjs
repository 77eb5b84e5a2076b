#!/usr/bin/env node
// The package's contract as TypeScript sees it (`npm test` runs this; so can you): a consumer of
// index.d.ts that calls every method and reads every field (__test__/types), the extension's and
// the command line's JavaScript checked against index.d.ts and Pi's types (jsconfig.json, their
// `// @ts-check`), and the source of the extension's bundled app-host.js against the DOM's and
// ext-apps' (scripts/apps/jsconfig.json). Node's and Pi's types come from the end-to-end tests'
// Pi 1.6 install.
import { execFile } from "node:child_process";
import { existsSync } from "node:fs";
import { dirname, join } from "node:path";
import { fileURLToPath } from "node:url";

const root = join(dirname(fileURLToPath(import.meta.url)), "..");
const PROJECTS = [join("__test__", "types"), "jsconfig.json", join("scripts", "apps", "jsconfig.json")];

if (!existsSync(join(root, "__test__", "e2e", "pi-1.6", "node_modules", "@types", "node"))) {
  console.error("type check: Pi 1.6's install (Node's and Pi's types) is missing: run `npm test` once, or `npm ci` in __test__/e2e/pi-1.6.");
  process.exit(1);
}
const tsc = join(root, "node_modules", "typescript", "bin", "tsc");
const start = performance.now();
// The projects at once (CI has two cores); each one's errors printed together.
const checked = await Promise.all(
  PROJECTS.map(
    (project) =>
      new Promise((resolve) =>
        execFile(process.execPath, [tsc, "--noEmit", "-p", project], { cwd: root, maxBuffer: 64 * 1024 * 1024 }, (error, stdout, stderr) => {
          process.stdout.write(stdout);
          process.stderr.write(stderr);
          resolve({ project, ok: !error });
        }),
      ),
  ),
);
const failed = checked.filter((c) => !c.ok).map((c) => c.project);
const seconds = ((performance.now() - start) / 1000).toFixed(1);
if (failed.length) {
  console.error(`type check: errors in ${failed.join(", ")} (${seconds} s)`);
  process.exit(1);
}
console.log(`type check: ${PROJECTS.join(", ")} clean (${seconds} s)`);
