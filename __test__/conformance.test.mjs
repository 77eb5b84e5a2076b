// The official MCP conformance suite's client scenarios, driven through the `pi-mcp` command line
// by conformance/client.mjs. Every non-auth client scenario of 0.2.0-alpha.12 runs at the wire of
// each requirement set that holds it (the runner refuses `--requirements` with `--scenario`, and
// the whole sets also hold the auth scenarios), and 0.1.16's three scenarios are kept; each runs
// also as a user's second session, from the metadata cache (and token store) a first one left.
// The suite (two versions) is installed on demand by `npm test` and runs on the Node 22 of the Pi
// end-to-end tests.
import assert from "node:assert/strict";
import { spawn } from "node:child_process";
import { mkdtempSync, readdirSync, readFileSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { dirname, join } from "node:path";
import { test } from "node:test";
import { NODE22 } from "./helpers/pi.mjs";
import { root } from "./helpers/servers.mjs";

const suiteDir = join(root, "__test__", "conformance");
const client = `${process.execPath} ${join(suiteDir, "client.mjs")}`;
/** The auth scenarios' client: the `pi-mcp` command line, as a user signs in with it. */
const authClient = `${process.execPath} ${join(suiteDir, "auth-client.mjs")}`;
const SCENARIO_TIMEOUT_MS = 60_000;

/** Runs one scenario; resolves with its checks (from checks.json), the runner's output and the client's (stdout.txt). */
function runScenario(version, scenario, extra = [], command = client) {
  const out = mkdtempSync(join(tmpdir(), "pi-mcp-conformance-out-"));
  const cli = join(suiteDir, "node_modules", `conformance-${version}`, "dist", "index.js");
  const args = [cli, "client", "--command", command, "--scenario", scenario, "-o", out, ...extra];
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
        // <out>/<scenario>-<time>/checks.json; auth/… scenarios nest one level deeper.
        const found = readdirSync(out, { recursive: true }).find((f) => f.endsWith("checks.json")) ?? "checks.json";
        const checks = JSON.parse(readFileSync(join(out, found), "utf8"));
        const clientOutput = readFileSync(join(out, dirname(found), "stdout.txt"), "utf8");
        resolve({ code, checks, output, clientOutput });
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

const STATELESS_HANDSHAKE = new Set(["ClientMcpMethodHeader_initialize", "ClientMcpMethodHeader_notifications_initialized"]);

// Each scenario also as a user's second session (client.mjs --second-session): one process
// connects and lists, the flow's calls then go from the metadata cache in new processes, before
// any listing. Independent runs (own servers, own ports, own agent dirs): four at a time.
test("conformance: client scenarios through pi-mcp, first and second session", { concurrency: 4 }, async (t) => {
  const runs = cases.flatMap((c) => [[...c, false], [...c, true]]);
  await Promise.all(
    runs.map(([version, scenario, extra, second]) =>
      t.test(`${version}: ${[scenario, ...extra].join(" ")}${second ? " (second session)" : ""}`, async () => {
        const command = second ? `${client} --second-session` : client;
        const { code, checks, output } = await runScenario(version, scenario, extra, command);
        const failed = checks.filter((c) => c.status === "FAILURE" || c.status === "WARNING");
        const passed = checks.filter((c) => c.status === "SUCCESS");
        // A skipped check is a path our flow did not exercise; only the handshake a stateless
        // (2026-07-28) connection does not have may be missing.
        const skipped = checks.filter((c) => c.status === "SKIPPED" && !STATELESS_HANDSHAKE.has(c.name));
        assert.deepEqual(skipped.map((c) => `${c.id}: ${c.errorMessage ?? c.description}`), [], output);
        assert.deepEqual(failed.map((c) => `${c.id}: ${c.errorMessage ?? c.description}`), [], output);
        assert.ok(passed.length > 0, `no check passed:\n${output}`);
        assert.equal(code, 0, output);
      }),
    ),
  );
});

// Every auth/* client scenario the 2026-07-28 and 2025-11-25 requirement sets score, each run at
// its revision's wire as `--requirements` runs it (`--spec-version <revision> --force`), plus the
// 2025-03-26 back-compat pair and the client-credentials extension.
const AUTH_BOTH = [
  "metadata-default", "metadata-var1", "metadata-var2", "metadata-var3", "basic-cimd",
  "scope-from-www-authenticate", "scope-from-scopes-supported", "scope-omitted-when-undefined",
  "scope-step-up", "scope-retry-limit", "token-endpoint-auth-basic", "token-endpoint-auth-post",
  "token-endpoint-auth-none", "pre-registration",
];
const AUTH_2026_ONLY = [
  "resource-mismatch", "offline-access-scope", "offline-access-not-supported", "authorization-server-migration",
  "iss-supported", "iss-not-advertised", "iss-supported-missing", "iss-wrong-issuer", "iss-unexpected",
  "iss-normalized", "metadata-issuer-mismatch",
];
/** Where a conformant client stops (a check failed on purpose): it exits 1, which the suite allows. */
const STOPS = new Set([
  "resource-mismatch", "iss-supported-missing", "iss-wrong-issuer", "iss-unexpected", "iss-normalized",
  "metadata-issuer-mismatch", "scope-retry-limit",
]);
/** Where the server demands a scope the first sign-in did not get at the second session's call. */
const SIGNS_IN_AGAIN = new Set(["scope-step-up"]);
const at = (revision) => ["--spec-version", revision, "--force"];
const authRuns = [
  ...[...AUTH_BOTH, ...AUTH_2026_ONLY].map((s) => ["2026-07-28", `auth/${s}`, at("2026-07-28")]),
  ...AUTH_BOTH.map((s) => ["2025-11-25", `auth/${s}`, at("2025-11-25")]),
  ["2025-03-26", "auth/2025-03-26-oauth-metadata-backcompat", []],
  ["2025-03-26", "auth/2025-03-26-oauth-endpoint-fallback", []],
  ["extension", "auth/client-credentials-basic", at("2026-07-28")],
];

// Independent scenarios (own servers, own ports, own agent dirs): four at a time.
test("conformance 0.2: auth scenarios through pi-mcp", { concurrency: 4 }, async (t) => {
  await Promise.all(
    authRuns.map(([label, scenario, extra]) =>
      t.test(`${label} ${scenario}`, async () => {
        const { checks, output, clientOutput } = await runScenario("0.2", scenario, extra, authClient);
        const failed = checks.filter((c) => c.status === "FAILURE" || c.status === "WARNING");
        assert.deepEqual(failed.map((c) => `${c.id}: ${c.errorMessage ?? c.description}`), [], output);
        assert.ok(checks.some((c) => c.status === "SUCCESS"), `no check passed:\n${output}`);
        if (!STOPS.has(scenario.slice("auth/".length))) assert.doesNotMatch(output, /CLIENT EXITED WITH ERROR/, output);
        // The second session (new processes) uses the token store the first left: it signs in
        // again only where the server demands more at a call.
        const signIns = Number(/sign-ins in the second session: (\d+)/.exec(clientOutput)?.[1]);
        assert.equal(signIns, SIGNS_IN_AGAIN.has(scenario.slice("auth/".length)) ? 1 : 0, clientOutput);
      }),
    ),
  );
});
