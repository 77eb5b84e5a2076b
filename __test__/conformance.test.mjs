// The official MCP conformance suite's client scenarios, driven through the native core by
// conformance/client.mjs. The suite (two versions) is installed on demand by `npm test` and runs
// on the Node 22 that the Pi end-to-end tests use.
import assert from "node:assert/strict";
import { spawn } from "node:child_process";
import { mkdtempSync, readdirSync, readFileSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { test } from "node:test";
import { NODE22 } from "./helpers/pi.mjs";
import { root } from "./helpers/servers.mjs";

const suiteDir = join(root, "__test__", "conformance");
const client = `${process.execPath} ${join(suiteDir, "client.mjs")}`;
const SCENARIO_TIMEOUT_MS = 60_000;

/** Runs one scenario; resolves with its checks (from checks.json) and the runner's output. */
function runScenario(version, scenario, extra = []) {
  const out = mkdtempSync(join(tmpdir(), "pi-mcp-conformance-out-"));
  const cli = join(suiteDir, "node_modules", `conformance-${version}`, "dist", "index.js");
  const args = [cli, "client", "--command", client, "--scenario", scenario, "-o", out, ...extra];
  return new Promise((resolve, reject) => {
    const child = spawn(NODE22, args, { cwd: suiteDir, stdio: ["ignore", "pipe", "pipe"] });
    let output = "";
    child.stdout.on("data", (d) => (output += d));
    child.stderr.on("data", (d) => (output += d));
    const timer = setTimeout(() => child.kill("SIGKILL"), SCENARIO_TIMEOUT_MS);
    child.on("error", reject);
    child.on("close", (code) => {
      clearTimeout(timer);
      try {
        const [run] = readdirSync(out);
        const checks = JSON.parse(readFileSync(join(out, run, "checks.json"), "utf8"));
        resolve({ code, checks, output });
      } catch (error) {
        reject(new Error(`no results for ${scenario} (exit ${code}): ${error.message}\n${output}`));
      } finally {
        rmSync(out, { recursive: true, force: true });
      }
    });
  });
}

const cases = [
  ["0.1", "initialize", []],
  ["0.1", "tools_call", []],
  ["0.1", "sse-retry", []],
  ["0.2", "tools_call", ["--spec-version", "2026-07-28"]],
  ["0.2", "request-metadata", ["--spec-version", "2026-07-28"]],
  ["0.2", "http-standard-headers", ["--spec-version", "2026-07-28"]],
  ["0.2", "json-schema-2020-12-preservation", ["--spec-version", "2026-07-28"]],
];

for (const [version, scenario, extra] of cases) {
  test(`conformance ${version}: ${scenario} ${extra.join(" ")}`.trim(), async () => {
    const { code, checks, output } = await runScenario(version, scenario, extra);
    const failed = checks.filter((c) => c.status === "FAILURE" || c.status === "WARNING");
    const passed = checks.filter((c) => c.status === "SUCCESS");
    assert.deepEqual(failed.map((c) => `${c.id}: ${c.errorMessage ?? c.description}`), [], output);
    assert.ok(passed.length > 0, `no check passed:\n${output}`);
    assert.equal(code, 0, output);
  });
}
