// A session's subagents use its servers, in the real Pi (0.87.1, 1.5.2 and 1.6.0) with Pi's own
// subagent example and the scripted fake LLM (each subagent its own conversation): the parent
// runs in RPC mode with the example and our extension; each subagent is a `pi --mode json -p`
// process that loads our extension from the sandbox's settings (`packages`), as a user's would.
// Four subagents call three servers (server-everything, server-memory, a Python server), a fifth
// uses no MCP: one process per server at a time, every call answered, the question one
// subagent's call raises shown in the parent's UI naming it, the idle one never joining. On
// 1.6.0 also `pi -p` through bash, a subagent elsewhere and one with another secret (their own
// servers), the parent killed mid-call, a session that starts nothing binding nothing, and two
// sessions of Pi's SDK in one Node process. A subagent's gated call is asked in the parent's
// dialog over RPC, naming it (allowed, denied, granted for the session: the parent's grant, which
// covers the next subagent), and refused when the parent is headless. Each case
// ends with no server left and no family socket.
import assert from "node:assert/strict";
import { existsSync, mkdtempSync, readFileSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { dirname, join } from "node:path";
import { spawn } from "node:child_process";
import { after, before } from "node:test";
import { NODE22, PI_16, assertRan, piCli, piSandbox, piTest, runPi, runPiRpc } from "./helpers/pi.mjs";
import { familySockets, installed, mcp, nothingLeft as leftNothing, serverPids, subagentExample, toolTextsOf } from "./helpers/subagents.mjs";
import { everything, memory, python, root, sampleProcesses, sleep, waitFor } from "./helpers/servers.mjs";

const OPTS = { timeout: 180_000 };
let serverCwd;

before(() => (serverCwd = mkdtempSync(join(tmpdir(), "pi-mcp-family-e2e-"))));
after(() => rmSync(serverCwd, { recursive: true, force: true }));

const nothingLeft = () => leftNothing(serverCwd);

function config(pi) {
  return {
    mcpServers: {
      everything: everything({ cwd: serverCwd }),
      memory: memory(join(serverCwd, `memory-${pi}.jsonl`), { cwd: serverCwd }),
      py: python({ cwd: serverCwd }),
    },
    settings: { shareWithSubagents: true },
  };
}

piTest("four subagents share the parent's servers, one process each; a subagent's question reaches the parent's UI", OPTS, async (pi) => {
  const tasks = ["one", "two", "three", "four", "idle"].map((task) => ({ agent: "worker", task }));
  const worker = (n) => [
    mcp("everything_echo", { message: `w${n}` }),
    mcp("memory_create_entities", { entities: [{ name: `w${n}`, entityType: "worker", observations: [] }] }),
    mcp("py_add", { a: n, b: 1 }),
    { text: `worker ${n} done` },
  ];
  const conversations = {
    "Task: one": [mcp("everything_trigger-elicitation-request"), ...worker(1)],
    "Task: two": worker(2),
    "Task: three": worker(3),
    "Task: four": worker(4),
    "Task: idle": [{ text: "nothing to call" }],
  };
  const steps = [{ tool_calls: [{ name: "subagent", arguments: { tasks } }] }, { text: "all done" }];
  const most = sampleProcesses(serverCwd);
  const r = await runPiRpc({
    pi,
    extensionDir: [subagentExample(pi), root],
    mcpConfig: config(pi),
    prepare: installed(pi),
    script: { steps, conversations },
    commands: ["go"],
    answer: (request) => (request.options?.includes("Decline") ? { value: "Decline" } : { cancelled: true }),
    timeoutMs: 150_000,
    keep: true,
  }).catch(async (e) => {
    await most();
    throw e;
  });
  const servers = await most();
  const logFile = join(r.agentDir, "mcp.log");
  const mcpLog = existsSync(logFile) ? readFileSync(logFile, "utf8") : "";
  rmSync(dirname(r.home), { recursive: true, force: true });
  assertRan(r);
  assert.equal(servers, 3, "one process per server for the parent and its subagents");
  const toolTexts = (key) => toolTextsOf(r, key);
  for (const [n, key] of ["Task: one", "Task: two", "Task: three", "Task: four"].entries()) {
    const texts = toolTexts(key);
    assert.ok(texts.some((t) => t.includes(`Echo: w${n + 1}`)), `${key}: ${texts.join(" | ")}`);
    assert.ok(texts.some((t) => new RegExp(`"name":\\s*"w${n + 1}"`).test(t)), `${key}: ${texts.join(" | ")}`);
    assert.ok(texts.some((t) => t.includes(String(n + 2))), `${key}: ${texts.join(" | ")}`);
  }
  assert.match(toolTexts("Task: one")[0], /User declined/);
  const asked = r.dialogs.find((d) => d.method === "select");
  // The server does not say which call its question is about: when other subagents' calls were in
  // flight on it too, the question names each of them.
  assert.match(asked?.title ?? "", /^MCP server "everything" asks for subagent "worker" \(pid \d+\)((, | and )subagent "worker" \(pid \d+\))*:/);
  const joined = mcpLog.match(/joined the family/g) ?? [];
  assert.equal(joined.length, 4, "the idle subagent never joined");
  await nothingLeft();
});

const echoConfig = () => ({ mcpServers: { everything: everything({ cwd: serverCwd }) }, settings: { shareWithSubagents: true } });

piTest(
  "pi -p through bash shares the parent's server; a subagent elsewhere and a run with another secret get their own; no socket before bash",
  { ...OPTS, pis: [PI_16] },
  async (pi) => {
    const elsewhere = mkdtempSync(join(tmpdir(), "pi-mcp-family-elsewhere-"));
    const steps = [
      mcp("everything_echo", { message: "parent" }),
      { tool_calls: [{ name: "bash", arguments: { command: 'pi -p "Task: bash" && GITHUB_TOKEN=other pi -p "Task: secret"' } }] },
      { tool_calls: [{ name: "subagent", arguments: { agent: "worker", task: "elsewhere", cwd: elsewhere } }] },
      { text: "all done" },
    ];
    const conversations = Object.fromEntries(["bash", "secret", "elsewhere"].map((t) => [`Task: ${t}`, [mcp("everything_echo", { message: t }), { text: `${t} done` }]]));
    // The parent's family socket, as the fake LLM gets its requests: none after the mcp call, one after bash.
    const sockets = [];
    const stop = serverPids(serverCwd);
    const r = await runPiRpc({
      pi,
      extensionDir: [subagentExample(pi), root],
      extraArgs: ["--tools", "bash,subagent,mcp"],
      mcpConfig: echoConfig(),
      prepare: installed(pi),
      script: { steps, conversations },
      commands: ["go"],
      onLlmRequest: (record) => record.conversation === null && sockets.push(familySockets().length),
      timeoutMs: 150_000,
    });
    rmSync(elsewhere, { recursive: true, force: true });
    assertRan(r);
    for (const task of ["bash", "secret", "elsewhere"]) assert.deepEqual(toolTextsOf(r, `Task: ${task}`), [`Echo: ${task}`]);
    assert.deepEqual(sockets.slice(0, 3), [0, 0, 1], "the family's socket appears with the first bash call");
    assert.equal(stop().size, 3, "the parent's and the bash run's one, the secret's, the one elsewhere");
    await nothingLeft();
  },
);

const gatedConfig = () => ({ mcpServers: { everything: everything({ cwd: serverCwd, approveTools: ["echo"] }) } });
const gatedSteps = (tasks) => [{ tool_calls: [{ name: "subagent", arguments: { tasks } }] }, { text: "all done" }];
const gatedConversations = (...tasks) => Object.fromEntries(tasks.map((t) => [`Task: ${t}`, [mcp("everything_echo", { message: t }), { text: `${t} done` }]]));

piTest("a subagent's gated call is asked in the parent's UI naming it: allowed it runs, denied it is approval_denied, a grant for the session is the parent's and covers the next subagent; a headless parent: approval_required", OPTS, async (pi) => {
  const tasks = ["allow", "deny"].map((task) => ({ agent: "worker", task }));
  const one = (task) => ({ tool_calls: [{ name: "subagent", arguments: { agent: "worker", task } }] });
  const steps = [...gatedSteps(tasks).slice(0, 1), one("grant"), one("covered"), { text: "all done" }];
  const choice = (title) => (/message: "allow"/.test(title) ? "Allow once" : /message: "grant"/.test(title) ? "Allow echo for this session" : "Deny");
  let entries = [];
  const r = await runPiRpc({
    pi,
    sessions: true,
    extensionDir: [subagentExample(pi), root],
    mcpConfig: gatedConfig(),
    prepare: installed(pi),
    script: { steps, conversations: gatedConversations("allow", "deny", "grant", "covered") },
    commands: [
      "go",
      async ({ request }) => {
        const file = (await request({ type: "get_state" })).data.sessionFile;
        entries = readFileSync(file, "utf8").split("\n").filter(Boolean).map((l) => JSON.parse(l));
      },
    ],
    answer: (request) => (request.method === "select" ? { value: choice(request.title) } : { cancelled: true }),
    timeoutMs: 150_000,
  });
  assertRan(r);
  const selects = r.dialogs.filter((d) => d.method === "select");
  assert.equal(selects.length, 3, JSON.stringify(selects, null, 2));
  for (const { title, options } of selects) {
    assert.match(title, /^MCP server "everything" wants to run echo\nAsked for subagent "worker" \(pid \d+\) in .+, in this session's family \(its model's call\)\.\n/, title);
    assert.deepEqual(options, ["Allow once", "Allow echo for this session", 'Allow everything of "everything" for this session', "Deny"]);
  }
  assert.deepEqual(toolTextsOf(r, "Task: allow"), ["Echo: allow"]);
  assert.match(toolTextsOf(r, "Task: deny")[0], /^The user declined the MCP tool "everything_echo" of server "everything"; it did not run\./);
  assert.deepEqual(toolTextsOf(r, "Task: covered"), ["Echo: covered"], "the parent's grant covers the next subagent, unasked");
  const grants = entries.filter((e) => e.type === "custom" && e.customType === "pi-mcp-native/approval");
  assert.deepEqual(grants.map((g) => Object.keys(g.data).sort()), [["hash", "server", "tool"]], "kept in the parent's session");

  const headless = await runPi({
    pi,
    extensionDir: [subagentExample(pi), root],
    mcpConfig: gatedConfig(),
    prepare: installed(pi),
    script: { steps: gatedSteps([{ agent: "worker", task: "alone" }]), conversations: gatedConversations("alone") },
    timeoutMs: 150_000,
  });
  assertRan(headless);
  const [alone] = toolTextsOf(headless, "Task: alone");
  assert.match(alone, /needs the user's approval .*and neither has its family's session \(pi, pid \d+\)\. It did not run\./, alone);
  await nothingLeft();
});

piTest("the parent killed during a subagent's call: the subagent ends, no server or socket is left", { ...OPTS, pis: [PI_16] }, async (pi) => {
  const conversations = {
    "Task: long": [mcp("everything_trigger-long-running-operation", { duration: 6, steps: 6 }), mcp("everything_echo", { message: "after" }), { text: "long done" }],
  };
  const steps = [{ tool_calls: [{ name: "subagent", arguments: { agent: "worker", task: "long" } }] }, { text: "all done" }];
  let box;
  let parent;
  const r = await runPiRpc({
    pi,
    extensionDir: [subagentExample(pi), root],
    mcpConfig: echoConfig(),
    prepare: (sandbox) => {
      installed(pi)(sandbox);
      box = sandbox;
    },
    script: { steps, conversations },
    commands: [
      async ({ send }) => {
        send({ type: "prompt", message: "go" });
        const log = join(box.agentDir, "mcp.log");
        await waitFor(() => existsSync(log) && readFileSync(log, "utf8").includes("joined the family"), 60_000, "the subagent to join");
        await sleep(1500);
        parent.kill("SIGKILL");
      },
    ],
    onSpawn: (child) => (parent = child),
    leftoverGraceMs: 30_000,
    timeoutMs: 150_000,
  });
  assert.equal(r.signal, "SIGKILL");
  // The subagent's output went to the parent, so it ends with it (Pi's own pipe), without a
  // hang; that a member carries on alone, saying why its call failed, family.test.mjs shows.
  assert.equal(r.leftover, false, "the subagent exits by itself");
  await nothingLeft();
});

piTest("two sessions of Pi's SDK in one Node process share one server process", { ...OPTS, pis: [PI_16] }, async (pi) => {
  const conversations = Object.fromEntries(["a", "b"].map((t) => [`Task: ${t}`, [mcp("everything_echo", { message: t }), { text: `${t} done` }]]));
  const most = sampleProcesses(serverCwd);
  const out = await piSandbox({ pi, mcpConfig: echoConfig(), prepare: installed(pi), script: { steps: [], conversations } }, ({ box, env }) => {
    const args = [join(root, "__test__", "fixtures", "sdk-sessions.mjs"), join(dirname(piCli(pi)), "..", ".."), root, box.cwd, "Task: a", "Task: b"];
    return new Promise((resolve, reject) => {
      const child = spawn(NODE22, args, { cwd: box.cwd, env, stdio: ["ignore", "pipe", "pipe"], timeout: 120_000 });
      let stdout = "";
      let stderr = "";
      child.stdout.on("data", (d) => (stdout += d));
      child.stderr.on("data", (d) => (stderr += d));
      child.on("close", (code) => (code === 0 ? resolve(stdout) : reject(new Error(`exit ${code}: ${stderr.slice(-2000)}`))));
    });
  });
  assert.deepEqual(JSON.parse(out.trim().split("\n").pop()), [["Echo: a"], ["Echo: b"]]);
  assert.equal(await most(), 1, "one server process for both sessions");
  await nothingLeft();
});
