// A session's family through the native API, each session a Node process (fixtures/family-session.mjs):
// a host takes the family's variable as the extension does, its children inherit it and use its
// servers through its hub, one process per server. Every bad case ends in one warning and the
// member's own servers, within a second; a rogue client is dropped while members are served;
// opt-outs start nothing shared; a killed member's servers stop a grace after it, a killed host's
// members carry on alone. A member's gated call is asked in the host's UI, whatever its server, and
// fails closed where nobody can answer. Each case ends with no server left.
import { test } from "node:test";
import assert from "node:assert/strict";
import { spawn } from "node:child_process";
import { createHash, randomBytes } from "node:crypto";
import { existsSync, mkdtempSync, readFileSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { faultyHttp, freePort, processesIn, root, sampleProcesses, sleep, tempAgent, testServer, waitFor } from "./helpers/servers.mjs";
import { row } from "./helpers/matrix.mjs";

const SCRIPT = join(root, "__test__", "fixtures", "family-session.mjs");
const VAR = "PI_MCP_NATIVE_FAMILY";

/** A private agent dir whose config has `servers` ({ name: scenarios }) in its cwd, shared with the family. */
function familyAgent(servers = { t: [], u: ["resources=2"], v: ["asks"] }, settings = { shareWithSubagents: true }, extra = {}) {
  return tempAgent(({ cwd }) => ({
    mcpServers: Object.fromEntries(Object.entries(servers).map(([name, scenarios]) => [name, testServer(scenarios, { cwd, ...extra[name] })])),
    settings,
  }));
}

/** Runs one session (and its children) as a process: { proc, done } (done: its JSON line, or { exit }). */
function session(agent, spec, env = agent.env) {
  const proc = spawn(process.execPath, [SCRIPT, JSON.stringify({ cwd: agent.cwd, agentDir: agent.agentDir, ...spec })], { env, stdio: ["ignore", "pipe", "pipe"] });
  let out = "";
  let err = "";
  proc.stdout.on("data", (d) => (out += d));
  proc.stderr.on("data", (d) => (err += d));
  const said = () => new RegExp(`ready ${proc.pid} (\\S+)`).exec(err)?.[1];
  const ready = new Promise((resolve) => proc.stderr.on("data", () => said() && resolve(said())));
  const done = new Promise((resolve) =>
    proc.on("close", (code, signal) => {
      const last = out.trim().split("\n").pop();
      resolve(last ? { ...JSON.parse(last), stderr: err } : { exit: code ?? signal, stderr: err });
    }),
  );
  return { proc, ready, done };
}

const echo = (server, text, extra = {}) => ({ tool: `${server}_echo`, args: { text, ...extra } });
const member = (label, calls, more = {}) => ({ label, calls, ...more });

const logOf = (agent) => (existsSync(join(agent.agentDir, "mcp.log")) ? readFileSync(join(agent.agentDir, "mcp.log"), "utf8") : "");

async function noneLeft(agent) {
  await waitFor(() => processesIn(agent.cwd).length === 0, 5000, "every server to stop");
  agent.cleanup();
}

/** The hex digits that name a token's socket (as the core computes them). */
const nameOf = (token) => createHash("sha256").update("pi-mcp-native family\0").update(token).digest("hex").slice(0, 32);
/** The abstract socket a token names on Linux, without its leading NUL. */
const abstractName = (token) => `pi-mcp-native/family/${process.getuid()}/${nameOf(token)}`;

/** A Python peer at the abstract socket of `token` (fixtures/abstract-peer.py), once it is set up. */
async function peer(mode, token, { args = [], unjoined = false, ...options } = {}) {
  const extra = mode === "ask" ? [unjoined ? "-" : token, ...args] : args;
  const proc = spawn("python3", [join(root, "__test__", "fixtures", "abstract-peer.py"), mode, abstractName(token), ...extra], { stdio: ["ignore", "pipe", "inherit"], ...options });
  let said = "";
  proc.stdout.on("data", (d) => (said += d));
  await waitFor(() => said.includes("ready"), 10_000, `the ${mode} peer`);
  return { proc, said: () => said, closed: () => said.includes("closed") };
}

const freshToken = () => `v1.${randomBytes(32).toString("base64url")}`;

test("a host and its members share one process per server, nothing is left after", { timeout: 60_000 }, async () => {
  const agent = familyAgent();
  const most = sampleProcesses(agent.cwd);
  const children = [1, 2, 3, 4].map((i) => member(`subagent "w${i}"`, [echo("t", `m${i}`), echo("u", `m${i}`), echo("v", `m${i}`)]));
  const host = await session(agent, { host: true, calls: [echo("t", "host")], children }).done;
  assert.equal(await most(), 3, "one process per server for the host and four members");
  assert.equal(host.family.role, "host");
  assert.match(host.family.endpoint, /^@pi-mcp-native\/family\/\d+\/[0-9a-f]{8}…$/);
  assert.deepEqual(host.results.map((r) => r.text), ["echo: host"]);
  for (const [i, child] of host.children.entries()) {
    assert.deepEqual(child.results.map((r) => r.text), ["t", "u", "v"].map(() => `echo: m${i + 1}`));
    assert.equal(child.family.role, "member");
    assert.equal(child.family.hubPid, host.pid);
    assert.match(child.shared.t.text, new RegExp(`runs in pi \\(pid ${host.pid}\\)$`));
    assert.deepEqual(child.events, [], "no warning");
  }
  await noneLeft(agent);
});

test("a parent with apps on and its headless member declare the same UI capability: one process, not two", { timeout: 60_000 }, async () => {
  const capabilities = { tool: "v_capabilities" };
  for (const [settings, declared] of [[{ shareWithSubagents: true }, true], [{ shareWithSubagents: true, ui: false }, false]]) {
    const agent = familyAgent({ v: ["asks"] }, settings);
    const most = sampleProcesses(agent.cwd);
    const host = await session(agent, { host: true, apps: true, calls: [capabilities], children: [member('subagent "headless"', [capabilities])] }).done;
    assert.equal(await most(), 1, `ui ${settings.ui ?? "default"}: the member uses the parent's process`);
    const [parent, child] = [host.results[0], host.children[0].results[0]].map((r) => JSON.parse(r.text));
    assert.deepEqual(child, parent, "the same capabilities from both");
    assert.equal(Boolean(parent.extensions?.["io.modelcontextprotocol/ui"]), declared, JSON.stringify(parent));
    assert.equal(host.children[0].shared.v?.scope, "family", "the member used the family's server");
    await noneLeft(agent);
  }
});

test("eight members asking for three servers at once start three processes", { timeout: 60_000 }, async () => {
  const agent = familyAgent();
  const most = sampleProcesses(agent.cwd);
  const children = [...Array(8).keys()].map((i) => member(`m${i}`, [echo("t", "x"), echo("u", "x"), echo("v", "x")]));
  const host = await session(agent, { host: true, children }).done;
  assert.equal(await most(), 3);
  assert.equal(host.children.flatMap((c) => c.results).filter((r) => r.text === "echo: x").length, 24);
  await noneLeft(agent);
});

test("a host filling a cold cache as its members start: one process per server", { timeout: 60_000 }, async () => {
  const agent = familyAgent();
  const ran = new Set();
  const sampler = setInterval(() => processesIn(agent.cwd).forEach((pid) => ran.add(pid)), 10);
  // The host lists its three servers (the fill) while four members start and call them: the host
  // used to stop each as soon as it was listed, and a member then started it again.
  const children = [1, 2, 3, 4].map((i) => member(`m${i}`, [echo("t", "x"), echo("u", "x"), echo("v", "x")], { start: true }));
  const host = await session(agent, { host: true, start: true, children }).done;
  clearInterval(sampler);
  assert.equal(host.children.flatMap((c) => c.results).filter((r) => r.text === "echo: x").length, 12);
  assert.equal(ran.size, 3, "one process per server, in all");
  await noneLeft(agent);
});

test("a stale, forged or malformed token: one warning, the member's own servers, at once", { timeout: 60_000 }, async () => {
  const agent = familyAgent({ t: [] });
  const { token: stale } = await session(agent, { host: true, calls: [echo("t", "host")] }).done;
  assert.match(stale, /^v1\.[A-Za-z0-9_-]{43}$/);
  for (const [what, token] of [["stale", stale], ["forged", freshToken()], ["malformed", "v1.nope"]]) {
    const alone = await session(agent, { calls: [echo("t", what), echo("t", "again")] }, { ...agent.env, [VAR]: token }).done;
    assert.deepEqual(alone.results.map((r) => r.text), [`echo: ${what}`, "echo: again"], what);
    assert.equal(alone.events.length, 1, `${what}: one warning`);
    assert.match(alone.events[0].text, /runs its own servers, not its family's/);
    assert.equal(alone.family.role, "off", what);
    assert.match(alone.shared.t.text, /^this session runs its own: /, what);
    assert.ok(alone.results[0].ms < 1000, `${what}: ${alone.results[0].ms} ms`);
  }
  await noneLeft(agent);
});

test("a listener that never answers, a file at the path: one warning within a second", { timeout: 60_000 }, async () => {
  const agent = familyAgent({ t: [] });
  const token = freshToken();
  const silent = await peer("listen-silent", token);
  try {
    const alone = await session(agent, { calls: [echo("t", "x")] }, { ...agent.env, [VAR]: token }).done;
    assert.equal(alone.results[0].text, "echo: x");
    assert.match(alone.events[0].text, /did not answer within 1 s/);
    assert.ok(alone.results[0].ms < 2500, `${alone.results[0].ms} ms`);
  } finally {
    silent.proc.kill("SIGKILL");
  }
  const dir = mkdtempSync(join(tmpdir(), "pi-mcp-family-dir-"));
  writeFileSync(join(dir, `f-${nameOf(token)}.sock`), "not a socket");
  const env = { ...agent.env, [VAR]: token, PI_MCP_FAMILY_DIR: dir };
  const alone = await session(agent, { calls: [echo("t", "y")] }, env).done;
  assert.equal(alone.results[0].text, "echo: y");
  assert.match(alone.events[0].text, /no family hub answers/);
  await noneLeft(agent);
});

test("another user's socket at the address is not sent the token", { timeout: 60_000, skip: process.getuid() !== 0 && "needs root" }, async () => {
  const agent = familyAgent({ t: [] });
  const token = freshToken();
  const listener = await peer("listen-print", token, { uid: 4242, gid: 4242 });
  try {
    const alone = await session(agent, { calls: [echo("t", "x")] }, { ...agent.env, [VAR]: token }).done;
    assert.equal(alone.results[0].text, "echo: x");
    assert.match(alone.events[0].text, /served by uid 4242, not by you/);
    await sleep(200);
    assert.ok(!listener.said().includes(token), "the token was never sent");
  } finally {
    listener.proc.kill("SIGKILL");
  }
  await noneLeft(agent);
});

test("rogue clients are dropped while a member is served", { timeout: 60_000 }, async () => {
  const agent = familyAgent({ t: [] });
  const host = session(agent, { host: true, calls: [echo("t", "host")], holdMs: 4000 });
  const token = await host.ready;
  const since = Date.now();
  const [garbage, silent] = [await peer("garbage", token), await peer("silent", token)];
  const served = await session(agent, { calls: [echo("t", "member")] }, { ...agent.env, [VAR]: token }).done;
  assert.equal(served.results[0].text, "echo: member");
  await waitFor(garbage.closed, 1000, "the garbage client dropped");
  await waitFor(silent.closed, 4000, "the silent client dropped after 2 s");
  assert.ok(Date.now() - since >= 2000, "the silent one had its 2 s");
  await host.done;
  await noneLeft(agent);
});


test("a member whose project is untrusted cannot use the project's server the host runs", { timeout: 60_000 }, async () => {
  const agent = familyAgent({ t: [] });
  writeFileSync(join(agent.cwd, ".mcp.json"), JSON.stringify({ mcpServers: { p: testServer(["resources=1"], { cwd: agent.cwd }) } }));
  const child = member("untrusting", [echo("p", "through the hub?"), echo("t", "x")], { projectTrusted: false });
  const host = await session(agent, { host: true, calls: [echo("p", "host")], children: [child] }).done;
  assert.equal(host.results[0].text, "echo: host");
  const [project, global] = host.children[0].results;
  assert.equal(project.error, true, "the project's server is not the untrusting member's");
  assert.doesNotMatch(project.text, /echo:/);
  assert.equal(global.text, "echo: x");
  await noneLeft(agent);
});

test("opt-outs: shared: false, and shareWithSubagents: false in the parent or in a child", { timeout: 60_000 }, async () => {
  const own = familyAgent({ t: [], o: [] }, { shareWithSubagents: true }, { o: { shared: false } });
  const most = sampleProcesses(own.cwd);
  const calls = [echo("t", "x"), echo("o", "x")];
  const host = await session(own, { host: true, calls, children: [member("a", calls, { holdMs: 800 }), member("b", calls, { holdMs: 800 })] }).done;
  assert.equal(await most(), 4, "t once; o in each of the three sessions");
  assert.ok(host.children.every((c) => c.results.every((r) => r.text === "echo: x")));
  await noneLeft(own);

  const off = familyAgent({ t: [] }, { shareWithSubagents: false });
  const offMost = sampleProcesses(off.cwd);
  const parent = await session(off, { host: true, calls: [echo("t", "x")], children: [member("a", [echo("t", "x")], { holdMs: 800 })] }).done;
  assert.equal(parent.hasVariable, false, "no variable for the children");
  assert.equal(parent.family, null, "nothing to say: alone");
  assert.equal(await offMost(), 2);
  await noneLeft(off);

  const shared = familyAgent({ t: [] });
  const childAgent = familyAgent({ t: [] }, { shareWithSubagents: false });
  const childMost = sampleProcesses(childAgent.cwd);
  const token = session(shared, { host: true, calls: [echo("t", "x")], holdMs: 2000 });
  const child = await session(childAgent, { calls: [echo("t", "own")], holdMs: 800 }, { ...childAgent.env, [VAR]: await token.ready }).done;
  assert.equal(child.results[0].text, "echo: own");
  assert.equal(await childMost(), 1, "its own server");
  assert.deepEqual(child.events, [], "it never tried the family");
  await token.done;
  await noneLeft(shared);
  await noneLeft(childAgent);
});

test("a member killed mid-call: its call is cancelled, the hub's server stops a grace after", { timeout: 60_000 }, async () => {
  const agent = familyAgent({ t: [] });
  const host = session(agent, { host: true, holdMs: 15_000 });
  const token = await host.ready;
  const doomed = session(agent, { calls: [{ tool: "t_slow", args: { steps: 200, delayMs: 50 } }] }, { ...agent.env, [VAR]: token });
  await waitFor(() => processesIn(agent.cwd).length === 1, 10_000, "the hub's server");
  await sleep(300);
  doomed.proc.kill("SIGKILL");
  const killed = Date.now();
  await waitFor(() => processesIn(agent.cwd).length === 0, 8000, "the server to stop after its last member");
  const after = Date.now() - killed;
  assert.ok(after < 6000, `stopped ${after} ms after the member was killed (grace 3 s)`);
  host.proc.kill("SIGKILL");
  await host.done;
  await noneLeft(agent);
});

test("the host killed during a member's call: the call fails at once, saying so; the member carries on alone", { timeout: 60_000 }, async () => {
  const agent = familyAgent({ t: [] });
  const host = session(agent, { host: true, calls: [echo("t", "host")], holdMs: 30_000 });
  const token = await host.ready;
  const calls = [{ tool: "t_slow", args: { steps: 100, delayMs: 50 } }, echo("t", "after")];
  const orphan = session(agent, { calls }, { ...agent.env, [VAR]: token });
  await waitFor(() => logOf(agent).includes(`pid ${orphan.proc.pid} joined the family`), 10_000, "the member to join");
  await sleep(500);
  host.proc.kill("SIGKILL");
  const [lost, after] = (await orphan.done).results;
  assert.equal(lost.error, true);
  assert.match(lost.text, new RegExp(`ran in pi \\(pid ${host.proc.pid}\\), which exited; this call was lost`));
  assert.ok(lost.ms < 4000, `the call failed ${lost.ms} ms after it started (it would take 5 s)`);
  assert.equal(after.text, "echo: after", "then its own server");
  await host.done;
  await noneLeft(agent);
});

/** An agent whose servers all ask before every call: `t` shared with the family, `o` never shared, `h` a URL server (if `url`). */
function gatedAgent(url) {
  const servers = { t: [], o: [] };
  const extra = { t: { approveTools: true }, o: { approveTools: true, shared: false } };
  const agent = familyAgent(servers, { shareWithSubagents: true }, extra);
  if (url) {
    const file = join(agent.agentDir, "mcp.json");
    const config = JSON.parse(readFileSync(file, "utf8"));
    config.mcpServers.h = { url, approveTools: true };
    writeFileSync(file, JSON.stringify(config));
  }
  return agent;
}

test("a member's gated calls are asked in the host's UI, whatever the server; a grant there covers the next; the host's wait applies; a headless host answers approval_required", { timeout: 60_000 }, async () => {
  const port = await freePort();
  const http = await faultyHttp(port);
  try {
    const agent = gatedAgent(`http://127.0.0.1:${port}/mcp`);
    const calls = [echo("t", "denied"), echo("t", "once", { api_token: "s3cr3t" }), echo("t", "tool"), echo("t", "covered"), echo("o", "own"), echo("h", "url")];
    const approve = ["deny", "once", "tool", "once", "once"];
    const host = await session(agent, { host: true, interactive: true, approve, children: [member('subagent "w"', calls)] }).done;
    const [child] = host.children;
    assert.deepEqual(child.results.slice(0, 5).map((r) => r.code ?? r.text), ["approval_denied", "echo: once", "echo: tool", "echo: covered", "echo: own"]);
    assert.equal(child.results[5].error, false, child.results[5].text);
    const titles = host.events.filter((e) => e.type === "asked").map((e) => e.title);
    assert.equal(titles.length, 5, titles.join("\n---\n"));
    assert.ok(titles[0].startsWith(`MCP server "t" wants to run echo\nAsked for subagent "w" (pid ${child.pid}) in `), titles[0]);
    assert.ok(titles[1].includes("  api_token: (hidden)") && !titles.join("").includes("s3cr3t"), titles[1]);
    assert.match(titles[3], /^MCP server "o" wants to run echo\n/);
    assert.match(titles[4], /^MCP server "h" wants to run echo\n/);
    assert.deepEqual(host.events[0].options.map((o) => o.value), ["once", "tool", "server", "deny"]);
    // A host without a UI: nobody to ask, at once.
    const headless = await session(agent, { host: true, children: [member("m", [echo("t", "x")])] }).done;
    const [refused] = headless.children[0].results;
    assert.equal(refused.code, "approval_required");
    assert.match(refused.text, /and neither has its family's session \(pi, pid \d+\)\. It did not run\./);
    // The host's approvalTimeoutMs applies, not the member's: its dialog closed unanswered.
    const quick = familyAgent({ t: [] }, { shareWithSubagents: true, approvalTimeoutMs: 2000 }, { t: { approveTools: true } });
    const other = { label: "m", cwd: agent.cwd, agentDir: agent.agentDir, calls: [echo("o", "x")] };
    const timed = await session(quick, { host: true, interactive: true, approve: [null], children: [other] }).done;
    const [unanswered] = timed.children[0].results;
    assert.equal(unanswered.code, "approval_denied", unanswered.text);
    assert.match(unanswered.text, /^Nobody answered the approval question for the MCP tool "o_echo" of server "o" within 2 s/);
    await noneLeft(quick);
    await noneLeft(agent);
  } finally {
    await http.stop();
  }
});

const here = import.meta.url;
row("P1", "a subagent's approval where its family cannot answer: stale or forged token, host killed mid-question, member killed mid-question, a rogue member's forged question", here, async ({ note }) => {
  const agent = gatedAgent();
  const { token: stale } = await session(agent, { host: true }).done;
  for (const [what, token] of [["stale", stale], ["forged", freshToken()]]) {
    const alone = await session(agent, { calls: [echo("t", what)] }, { ...agent.env, [VAR]: token }).done;
    const [refused] = alone.results;
    assert.equal(refused.code, "approval_required", `${what}: ${refused.text}`);
    assert.match(refused.text, /and its family's session cannot be asked: /, what);
    assert.ok(refused.ms < 2500, `${what}: ${refused.ms} ms`);
    note(`${what} token: approval_required in ${Math.round(refused.ms)} ms`);
  }
  // The host killed while its dialog is open: the member's call fails at once, saying so.
  const host = session(agent, { host: true, interactive: true, approve: ["hold"], holdMs: 30_000 });
  const token = await host.ready;
  const asked = new Promise((resolve) => host.proc.stderr.on("data", (d) => String(d).includes("asked") && resolve()));
  const orphan = session(agent, { calls: [echo("t", "x")] }, { ...agent.env, [VAR]: token });
  await asked;
  const killed = performance.now();
  host.proc.kill("SIGKILL");
  const [lost] = (await orphan.done).results;
  const after = performance.now() - killed;
  assert.equal(lost.code, "approval_required", lost.text);
  assert.match(lost.text, new RegExp(`and its family's session \\(pi, pid ${host.proc.pid}\\) ended before it answered`));
  assert.ok(after < 4000, `${after} ms after the kill`);
  note(`host killed mid-question: approval_required ${Math.round(after)} ms after`);
  await host.done;

  // A member killed while its question is open: the host's dialog closes.
  const asker = session(agent, { host: true, interactive: true, approve: ["hold"], holdMs: 30_000 });
  const askerToken = await asker.ready;
  const said = (word) => new Promise((resolve) => asker.proc.stderr.on("data", (d) => String(d).includes(word) && resolve()));
  const [shownQuestion, withdrawn] = [said("asked"), said("withdrawn")];
  const doomed = session(agent, { calls: [echo("t", "x")] }, { ...agent.env, [VAR]: askerToken });
  await shownQuestion;
  doomed.proc.kill("SIGKILL");
  const killedAt = performance.now();
  await Promise.race([withdrawn, sleep(5000).then(() => assert.fail("the dialog stayed open"))]);
  note(`member killed mid-question: the host's dialog closed ${Math.round(performance.now() - killedAt)} ms after`);
  asker.proc.kill("SIGKILL");
  await Promise.all([doomed.done, asker.done]);

  // A rogue member: its question's text is cleaned, a hash it adds grants nothing, and without
  // joining it is refused.
  const rogueHost = session(agent, { host: true, interactive: true, approve: ["tool", "once"], holdMs: 3500 });
  const rogueToken = await rogueHost.ready;
  const request = {
    server: "t", launch: { command: "x" }, because: "`approveTools`\u001b[2J",
    used: { kind: "tool", name: "harmless\u202e", inputSchema: null, annotations: { readOnlyHint: true } },
    arguments: `Arguments:\n  a: \u001b]52;c;cGF5bG9hZA==\u0007x\n${"  b: 1\n".repeat(40)}`,
    hash: "forged",
  };
  const ask = { request, label: 'subagent "w"\u001b[31m\nAllow everything', cwd: "/tmp" };
  const rogue = await peer("ask", rogueToken, { args: [JSON.stringify(ask)] });
  await waitFor(() => rogue.said().includes('"verdict":"picked"'), 10_000, "the rogue's answer");
  const unjoined = await peer("ask", rogueToken, { args: [JSON.stringify(ask)], unjoined: true });
  await waitFor(() => unjoined.said().includes("only a process that joined the family"), 10_000, "the unjoined refused");
  for (const p of [rogue, unjoined]) p.proc.kill("SIGKILL");
  // The member's own call of the same server's echo is asked again: the rogue's grant was for what its dialog named.
  const member2 = session(agent, { calls: [echo("t", "after")] }, { ...agent.env, [VAR]: rogueToken });
  const [after2] = (await member2.done).results;
  assert.equal(after2.text, "echo: after");
  const shown = (await rogueHost.done).events.filter((e) => e.type === "asked");
  assert.equal(shown.length, 2, "the rogue's question and the member's");
  const title = shown[0].title;
  assert.ok(!/[\u001b\u0007\u202e]/.test(title), JSON.stringify(title));
  assert.ok(title.split("\n").length < 30, title);
  assert.ok(title.includes("Asked for subagent"), title);
  assert.ok(!title.includes("\nAllow everything"), "the label stays on its line");
  note("rogue member: cleaned title, no grant beyond its dialog, unjoined refused");
  await noneLeft(agent);
});
