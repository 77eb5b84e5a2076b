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
import { installed, mcp, nothingLeft as leftNothing, serverPids, subagentExample, toolTextsOf } from "./helpers/subagents.mjs";
import { row } from "./helpers/matrix.mjs";
import { everything, filledCache, root, sleep, waitFor } from "./helpers/servers.mjs";

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

const nothingLeft = () => leftNothing(serverCwd, soloCwd);

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

for (const [n, [pi, what, env]] of BAD_TOKENS.entries()) {
  row(`K1${"abc"[n]}`, `Pi ${pi}: ${what}: the run's own server, one warning, status says why`, import.meta.url, async ({ note }) => {
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
    note(`first call ${r.toolResults[0].details?.elapsedMs} ms`);
    await nothingLeft();
  });
}

test(`Pi ${PI_15}: opt-outs: a server with shared: false runs in each process; shareWithSubagents: false shares nothing`, TIMEOUT, async () => {
  const both = [mcp("everything_echo", { message: "e" }), mcp("solo_echo", { message: "s" })];
  const steps = [...both, { tool_calls: [{ name: "subagent", arguments: { agent: "worker", task: "a" } }] }, { text: "done" }];
  const conversations = { "Task: a": [...both, { text: "a done" }] };
  // A warm cache: a listing of a cold one may start a lazy server and stop it before its call.
  const mcpConfig = config(undefined, { solo: everything({ cwd: soloCwd, shared: false }) });
  const cacheJson = await filledCache(mcpConfig);
  const [shared, solo] = [serverPids(serverCwd), serverPids(soloCwd)];
  const opts = { pi: PI_15, extensionDir: [subagentExample(PI_15), root], extraArgs: ["--tools", "subagent,mcp"], prepare: installed(PI_15), script: { steps, conversations } };
  const r = await runPi({ ...opts, mcpConfig, cacheJson });
  assert.equal(r.code, 0, r.stderr);
  assert.deepEqual(toolTextsOf(r, "Task: a"), ["Echo: e", "Echo: s"]);
  assert.equal(shared().size, 1, "the family's one process");
  assert.equal(solo().size, 2, "shared: false: the parent's and the subagent's");
  await nothingLeft();

  const offConfig = config({ shareWithSubagents: false });
  const offCache = await filledCache(offConfig);
  const off = serverPids(serverCwd);
  // What the parent's hub noted, as each request reaches the model (the sandbox is gone after).
  let agentDir;
  let notes = "";
  const alone = await runPi({
    ...opts,
    mcpConfig: offConfig,
    cacheJson: offCache,
    prepare: (box) => {
      opts.prepare(box);
      agentDir = box.agentDir;
    },
    script: { steps: [mcp("everything_echo", { message: "e" }), ...steps.slice(2)], conversations: { "Task: a": [mcp("everything_echo", { message: "e" }), { text: "a done" }] } },
    onLlmRequest: () => (notes = existsSync(join(agentDir, "mcp.log")) ? readFileSync(join(agentDir, "mcp.log"), "utf8") : notes),
  });
  assert.equal(alone.code, 0, alone.stderr);
  assert.deepEqual(toolTextsOf(alone, "Task: a"), ["Echo: e"]);
  assert.equal(off().size, 2, "each process its own");
  assert.doesNotMatch(notes, /joined the family/, "no family: the subagent joined none");
  await nothingLeft();
});

test(`Pi ${PI_16}: a member whose project is untrusted reaches no project server through its parent`, TIMEOUT, async () => {
  const project = serverPids(soloCwd);
  const trust = (box) => `printf '{"%s": false}' "$PWD" > "${join(box.agentDir, "trust.json")}" && pi -p "Task: untrusted"`;
  let box;
  const steps = () => [mcp("p_echo", { message: "parent" }), { tool_calls: [{ name: "bash", arguments: { command: trust(box) } }] }, { text: "done" }];
  const conversations = { "Task: untrusted": [mcp("p_echo", { message: "through the parent?" }), mcp("everything_echo", { message: "x" }), { text: "untrusted done" }] };
  const script = { steps: [], conversations };
  const r = await runPi({
    pi: PI_16,
    extensionDir: root,
    extraArgs: ["--tools", "bash,mcp"],
    mcpConfig: config(),
    projectFiles: { ".mcp.json": { mcpServers: { p: everything({ cwd: soloCwd }) } } },
    prepare: (b) => {
      installed(PI_16)(b);
      box = b;
      script.steps.push(...steps());
    },
    script,
  });
  assert.equal(r.code, 0, r.stderr);
  assert.equal(r.toolResults[0].text, "Echo: parent");
  const [reached, user] = toolTextsOf(r, "Task: untrusted");
  assert.doesNotMatch(reached, /Echo: through the parent/, "the project's server is not the untrusting member's");
  assert.equal(user, "Echo: x", "the user's server is still shared");
  assert.equal(project().size, 1, "only the parent's project server ran");
  await nothingLeft();
});

/** The pid of the first process that joined the family, from the hub's notes in `agentDir`'s mcp.log. */
async function joined(agentDir) {
  const log = join(agentDir, "mcp.log");
  const pid = () => existsSync(log) && /pid (\d+)[^\n]* joined the family/.exec(readFileSync(log, "utf8"))?.[1];
  await waitFor(pid, 60_000, "a member to join the family");
  return Number(pid());
}

row("K2", `Pi ${PI_087}: a subagent killed mid-call: the parent and its servers carry on`, import.meta.url, async () => {
  const conversations = { "Task: doomed": [mcp("everything_trigger-long-running-operation", { duration: 20, steps: 20 }), { text: "never" }] };
  const steps = [
    { tool_calls: [{ name: "subagent", arguments: { agent: "worker", task: "doomed" } }] },
    mcp("everything_echo", { message: "parent after" }),
    { text: "all done" },
  ];
  let box;
  const r = await runPiRpc({
    pi: PI_087,
    extensionDir: [subagentExample(PI_087), root],
    mcpConfig: config(),
    prepare: (b) => {
      installed(PI_087)(b);
      box = b;
    },
    script: { steps, conversations },
    commands: [
      async ({ send, events }) => {
        send({ type: "prompt", message: "go" });
        const member = await joined(box.agentDir);
        await sleep(1000);
        process.kill(member, "SIGKILL");
        await waitFor(() => events.some((e) => e.type === "agent_end"), 60_000, "the parent's turn to end");
      },
    ],
    timeoutMs: 100_000,
  });
  assert.equal(r.code, 0, r.stderr);
  const [subagent, echo] = toolTextsOf(r, null);
  assert.doesNotMatch(subagent, /never/);
  assert.equal(echo, "Echo: parent after");
  await nothingLeft();
});

row("K3", `Pi ${PI_16}: the parent killed while a pi -p it started detached is mid-call: that call fails saying why, the member carries on with its own server`, import.meta.url, async () => {
  const conversations = {
    "Task: orphan": [mcp("everything_trigger-long-running-operation", { duration: 10, steps: 10 }), mcp("everything_echo", { message: "after" }), { text: "orphan done" }],
  };
  const detached = `setsid pi -p "Task: orphan" > orphan.out 2>&1 < /dev/null & echo $! > orphan.pid`;
  const steps = [
    { tool_calls: [{ name: "bash", arguments: { command: detached } }] },
    mcp("everything_trigger-long-running-operation", { duration: 60, steps: 60 }),
    { text: "never" },
  ];
  const options = { pi: PI_16, extensionDir: root, extraArgs: ["--tools", "bash,mcp", "--mode", "json", "go"], mcpConfig: config(), prepare: installed(PI_16), script: { steps, conversations }, timeoutMs: 100_000 };
  await piSandbox(options, async ({ box, llm, args, env }) => {
    const parent = spawn(NODE22, args, { cwd: box.cwd, env, stdio: "ignore" });
    const orphanPid = () => Number(readFileSync(join(box.cwd, "orphan.pid"), "utf8"));
    try {
      await joined(box.agentDir);
      await sleep(1500);
      parent.kill("SIGKILL");
      await waitFor(() => !alive(orphanPid()), 60_000, "the member to finish by itself");
    } finally {
      parent.kill("SIGKILL");
      if (existsSync(join(box.cwd, "orphan.pid")) && alive(orphanPid())) process.kill(orphanPid(), "SIGKILL");
    }
    const [lost, after] = toolTextsOf({ requests: llm.requests }, "Task: orphan");
    assert.match(lost, /ran in pi \(pid \d+\), which exited; this call was lost/);
    assert.equal(after, "Echo: after", "then its own server");
  });
  await nothingLeft();
});

function alive(pid) {
  try {
    process.kill(pid, 0);
    return true;
  } catch {
    return false;
  }
}
