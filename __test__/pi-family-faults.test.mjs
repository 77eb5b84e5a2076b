// A session's family when things go wrong, in the real Pi with the scripted fake LLM (the cases
// family.test.mjs shows on the native API, here as a user meets them): a stale, a forged token and
// a file where the family's socket would be (one Pi version each) → the run's own server, one
// warning, status saying why; the opt-outs (`shared: false`, `shareWithSubagents: false`); a
// member whose project is untrusted reaches no project server through its parent; a subagent
// killed mid-call (the parent carries on); the parent killed while a `pi -p` it started detached
// through bash is mid-call (the call fails saying why, the member carries on with its own server,
// never hangs). Each case ends with no server and no family socket left.
import assert from "node:assert/strict";
import { spawn, spawnSync } from "node:child_process";
import { createHash, randomBytes } from "node:crypto";
import { existsSync, mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { after, before, test } from "node:test";
import { NODE22, PI_087, PI_15, PI_16, piSandbox, runPi, runPiRpc } from "./helpers/pi.mjs";
import { familySockets, installed, mcp, subagentExample, toolTextsOf } from "./helpers/subagents.mjs";
import { everything, processesIn, root, sleep, waitFor } from "./helpers/servers.mjs";

const TIMEOUT = { timeout: 120_000 };
const VAR = "PI_MCP_NATIVE_FAMILY";
const WARNING = "runs its own servers, not its family's";
let serverCwd;
let soloCwd;

before(() => {
  serverCwd = mkdtempSync(join(tmpdir(), "pi-mcp-family-faults-"));
  soloCwd = mkdtempSync(join(tmpdir(), "pi-mcp-family-solo-"));
});
after(() => [serverCwd, soloCwd].forEach((dir) => rmSync(dir, { recursive: true, force: true })));

async function nothingLeft() {
  await waitFor(() => processesIn(serverCwd).length + processesIn(soloCwd).length === 0, 5000, "every server to stop");
  await waitFor(() => familySockets().length === 0, 5000, "the family's socket to go");
}

/** Every server process that ran in `cwd` until `stop()`: their pids. */
function serverPids(cwd) {
  const seen = new Set();
  const timer = setInterval(() => processesIn(cwd).forEach((pid) => seen.add(pid)), 20);
  return () => {
    clearInterval(timer);
    return seen;
  };
}

const config = (settings = { shareWithSubagents: true }, more = {}) => ({ mcpServers: { everything: everything({ cwd: serverCwd }), ...more }, settings });
const status = { tool_calls: [{ name: "mcp", arguments: {} }] };

/** The token of a family whose host has exited (fixtures/family-session.mjs hosts one and exits). */
function staleToken(box) {
  const spec = { cwd: box.cwd, agentDir: box.agentDir, host: true };
  const run = spawnSync(process.execPath, [join(root, "__test__", "fixtures", "family-session.mjs"), JSON.stringify(spec)], { encoding: "utf8", timeout: 30_000 });
  return JSON.parse(run.stdout.trim().split("\n").pop()).token;
}

const forgedToken = () => `v1.${randomBytes(32).toString("base64url")}`;
/** The hex digits that name a token's socket (as the core computes them). */
const socketName = (token) => createHash("sha256").update("pi-mcp-native family\0").update(token).digest("hex").slice(0, 32);

const BAD_TOKENS = [
  [PI_087, "a stale token (its host exited)", (box) => ({ [VAR]: staleToken(box) })],
  [PI_15, "a forged token", () => ({ [VAR]: forgedToken() })],
  [
    PI_16,
    "a file where the family's socket would be",
    (box) => {
      const dir = join(box.root, "family");
      mkdirSync(dir, { mode: 0o700 });
      const token = forgedToken();
      writeFileSync(join(dir, `f-${socketName(token)}.sock`), "not a socket");
      return { [VAR]: token, PI_MCP_FAMILY_DIR: dir };
    },
  ],
];

for (const [pi, what, env] of BAD_TOKENS) {
  test(`Pi ${pi}: ${what}: the run's own server, one warning, status says why`, TIMEOUT, async () => {
    const steps = [mcp("everything_echo", { message: "alone" }), mcp("everything_echo", { message: "again" }), status, { text: "done" }];
    // Pi's environment is made after the sandbox is set up: the token's set-up needs the sandbox.
    const extra = {};
    const r = await runPi({ pi, extensionDir: root, mcpConfig: config(), script: { steps }, prepare: (box) => Object.assign(extra, env(box)), env: extra });
    assert.equal(r.code, 0, r.stderr);
    const [first, second, said] = r.toolResults.map((t) => t.text);
    assert.equal(first, "Echo: alone");
    assert.equal(second, "Echo: again");
    assert.match(said, /this session runs its own: /);
    assert.equal(r.stderr.split(WARNING).length - 1, 1, `one warning: ${r.stderr}`);
    await nothingLeft();
  });
}
