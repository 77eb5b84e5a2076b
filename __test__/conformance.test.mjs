// The official MCP conformance suite's client scenarios, driven through the `pi-mcp` command line
// by conformance/client.mjs. Every non-auth client scenario of 0.2.0-alpha.12 runs at the wire of
// each requirement set that holds it (the runner refuses `--requirements` with `--scenario`, and
// the whole sets also hold the auth scenarios), and 0.1.16's three scenarios are kept. The suite
// (two versions) is installed on demand by `npm test` and runs on the Node 22 of the Pi
// end-to-end tests.
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

/** The non-auth client scenarios each requirement set of 0.2.0-alpha.12 scores (and the one added after release). */
const REQUIRED = {
  "2025-11-25": ["initialize", "tools_call", "elicitation-sep1034-client-defaults", "sse-retry", "json-schema-2020-12-preservation"],
  "2026-07-28": [
    "tools_call",
    "request-metadata",
    "sep-2322-client-request-state",
    "http-standard-headers",
    "http-custom-headers",
    "http-invalid-tool-headers",
    "json-schema-ref-no-deref",
    "json-schema-2020-12-preservation",
  ],
};

const cases = [
  ["0.1", "initialize", []],
  ["0.1", "tools_call", []],
  ["0.1", "sse-retry", []],
  ...Object.entries(REQUIRED).flatMap(([revision, scenarios]) => scenarios.map((s) => ["0.2", s, ["--spec-version", revision]])),
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
