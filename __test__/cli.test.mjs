// The `pi-mcp` CLI as a user runs it: a subprocess against real servers, `--json` parsed, exit
// codes checked, config discovery shared with the extension (HOME, agent dir, project, imports,
// trust), a spinner only on a terminal, and no server left running.
import { after, before, describe, test } from "node:test";
import assert from "node:assert/strict";
import { spawn, spawnSync } from "node:child_process";
import { cpSync, mkdirSync, readFileSync, realpathSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { cli, everything, faulty, memory, pimcp, processesIn, root, tempAgent, waitFor } from "./helpers/servers.mjs";

/** Nothing the CLI started outlives it (the watchdog shell exits right after its host). */
const nothingLeftIn = (dir) => waitFor(() => processesIn(dir).length === 0, 3000, `no process left in ${dir}`);

const json = (run) => {
  try {
    return JSON.parse(run.stdout);
  } catch (e) {
    throw new Error(`not JSON (exit ${run.code}): ${e.message}\nstdout: ${run.stdout}\nstderr: ${run.stderr}`);
  }
};
const text = (outcome) => outcome.content.map((c) => c.text ?? "").join("\n");

describe("pi-mcp against server-everything and server-memory", () => {
  let agent;
  before(() => {
    agent = tempAgent(({ home }) => ({
      mcpServers: {
        everything: everything(),
        memory: memory(join(home, "memory.jsonl"), { lifecycle: "lazy-keep-alive", colour: "blue" }),
        broken: faulty(["exit-at-start"]),
      },
    }));
  });
  after(() => agent?.cleanup());

  test("status: the default command; nothing started, no spinner without a terminal", async () => {
    const run = await pimcp(agent, []);
    assert.equal(run.code, 0, run.stderr);
    assert.equal(run.stderr, "");
    assert.match(run.stdout, /^MCP: 0\/3 servers connected/);
    const status = json(await pimcp(agent, ["status", "--json"]));
    assert.equal(status.details.mode, "status");
    assert.deepEqual(status.details.servers.map((s) => s.name), ["everything", "memory", "broken"]);
    await nothingLeftIn(agent.cwd);
  });

  test("search connects servers it knows nothing about and ranks their tools", async () => {
    const run = await pimcp(agent, ["search", "echo", "sum", "--json"]);
    const outcome = json(run);
    assert.equal(run.code, 0, run.stderr);
    assert.equal(outcome.details.query, "echo sum");
    const names = outcome.details.matches.map((m) => `${m.server}/${m.tool}`);
    assert.ok(names.includes("everything/everything_get-sum") && names.includes("everything/everything_echo"), names.join());
    assert.match(text(outcome), /Server "broken" was not searched/);
    const scoped = json(await pimcp(agent, ["search", "entit", "--regex", "--server", "memory", "--limit", "2", "--json"]));
    assert.equal(scoped.details.matches.length, 2);
    assert.ok(scoped.details.matches.every((m) => m.server === "memory"));
    await nothingLeftIn(agent.cwd);
  });

  test("describe and list answer from the cache the search filled", async () => {
    const described = await pimcp(agent, ["describe", "everything_get-sum"]);
    assert.equal(described.code, 0);
    assert.match(described.stdout, /- a \(number, required\)/);
    const echo = await pimcp(agent, ["describe", "everything_echo"]);
    assert.match(echo.stdout, /^Hints: read-only, idempotent\.$/m, "a person gets every hint");
    const outcome = json(await pimcp(agent, ["describe", "get-sum", "--server", "everything", "--json"]));
    assert.deepEqual([outcome.details.server, outcome.details.tool], ["everything", "everything_get-sum"]);
    const listed = json(await pimcp(agent, ["list", "memory", "--json"]));
    assert.equal(listed.details.tools, 10);
    const unknown = await pimcp(agent, ["describe", "everything_ecko", "--json"]);
    assert.equal(unknown.code, 1);
    assert.match(text(json(unknown)), /everything_echo/);
    const noServer = await pimcp(agent, ["list", "nope", "--json"]);
    assert.equal(noServer.code, 1);
    assert.ok(json(noServer).details.error);
  });

  test("call: JSON arguments, from stdin too; a failing server or tool exits 1", async () => {
    const sum = await pimcp(agent, ["call", "everything_get-sum", '{"a": 2, "b": 40}']);
    assert.equal(sum.code, 0, sum.stderr);
    assert.match(sum.stdout, /42/);
    const stdin = json(await pimcp(agent, ["call", "everything_echo", "-", "--json"], { input: '{"message": "via stdin"}' }));
    assert.equal(stdin.isError, false);
    assert.match(text(stdin), /via stdin/);
    const created = await pimcp(agent, ["call", "memory_create_entities", JSON.stringify({ entities: [{ name: "cli", entityType: "test", observations: ["o"] }] })]);
    assert.equal(created.code, 0, created.stdout);
    const found = json(await pimcp(agent, ["call", "memory_search_nodes", '{"query":"cli"}', "--json"]));
    assert.match(text(found), /"cli"/);
    const toolError = await pimcp(agent, ["call", "everything_get-sum", '{"a": "two"}', "--json"]);
    assert.equal(toolError.code, 1);
    assert.equal(json(toolError).isError, true);
    const down = await pimcp(agent, ["call", "broken_anything", "{}", "--json"]);
    assert.equal(down.code, 1);
    assert.match(text(json(down)), /broken/);
    await nothingLeftIn(agent.cwd);
  });

  test("usage errors exit 2 with what to do", async () => {
    const cases = [
      [["call", "everything_echo", "{not json"], /json-args is not valid JSON/],
      [["call", "everything_echo", "[1]"], /must be a JSON object like/],
      [["frobnicate"], /unknown command "frobnicate"/],
      [["describe"], /describe: missing <tool>/],
      [["list", "a", "b"], /unexpected argument "b"/],
      [["search", "x", "--limit", "0"], /--limit must be a whole number above 0/],
      [["status", "--colour"], /Unknown option '--colour'/],
    ];
    for (const [args, message] of cases) {
      const run = await pimcp(agent, args);
      assert.equal(run.code, 2, args.join(" "));
      assert.match(run.stderr, message);
      assert.equal(run.stdout, "");
    }
    const help = await pimcp(agent, ["--help"]);
    assert.equal(help.code, 0);
    assert.match(help.stdout, /Exit codes:/);
  });

  test("connect refreshes one server; doctor checks them all with timings and provenance", async () => {
    const connected = json(await pimcp(agent, ["connect", "everything", "--json"]));
    assert.equal(connected.details.mode, "connect");
    assert.equal(connected.isError, false);

    const run = await pimcp(agent, ["doctor", "--json"]);
    assert.equal(run.code, 1, "a server fails to start");
    const doctor = json(run);
    assert.equal(doctor.details.error, "connect_failed");
    const byName = Object.fromEntries(doctor.details.configured.map((s) => [s.name, s]));
    assert.equal(byName.everything.connect.ok, true);
    assert.equal(byName.everything.connect.tools, byName.everything.connect.tools | 0);
    assert.ok(byName.everything.connect.tools > 10);
    assert.ok(byName.everything.connect.ms > 0);
    assert.equal(byName.memory.lifecycle, "lazy-keep-alive");
    assert.equal(byName.broken.connect.ok, false);
    assert.ok(byName.broken.connect.error.length > 0);
    assert.equal(byName.everything.source, join(agent.agentDir, "mcp.json"));
    const pi = doctor.details.sources.find((s) => s.role === "pi-global");
    assert.deepEqual([pi.state, pi.servers], ["loaded", ["everything", "memory", "broken"]]);
    assert.deepEqual(
      doctor.details.sources.map((s) => [s.role, s.state]),
      [["shared", "missing"], ["shared", "missing"], ["shared", "missing"], ["pi-global", "loaded"], ["project", "missing"], ["project", "missing"]],
    );
    const note = doctor.details.diagnostics.find((d) => d.field === "colour");
    assert.equal(note.level, "note");
    assert.equal(note.server, "memory");
    assert.match(text(doctor), /✓ everything: \d+ ms, \d+ tools/);
    assert.match(text(doctor), /✗ broken: failed after \d+ ms/);
    assert.match(text(doctor), /Summary: 3 servers \(3 enabled\), 2 connected, 1 failed, 0 errors, 0 warnings, 1 note/);
    await nothingLeftIn(agent.cwd);
  });

  test("a spinner on a terminal only, on stderr, showing a call's progress (util-linux `script` gives it a terminal)", () => {
    const args = ["call", "everything_trigger-long-running-operation", '{"duration": 1, "steps": 3}'];
    const command = [process.execPath, cli, ...args].map((a) => `'${a}'`).join(" ") + " 2>&1 >/dev/null";
    const run = spawnSync("script", ["-qec", command, "/dev/null"], { cwd: agent.cwd, env: agent.env, encoding: "utf8", timeout: 30000 });
    assert.equal(run.status, 0, run.stdout);
    assert.match(run.stdout, /[⠋⠙⠹⠸⠼⠴⠦⠧⠇⠏] calling…/);
    assert.match(run.stdout, /[⠋⠙⠹⠸⠼⠴⠦⠧⠇⠏] everything_trigger-long-running-operation: [123]\/3/);
    assert.match(run.stdout, /\r\x1b\[K$/, "the spinner line is cleared");
  });

  test("Ctrl-C cancels a running call, stops its server and exits 130", async () => {
    const args = ["call", "everything_trigger-long-running-operation", '{"duration": 60, "steps": 60}'];
    const child = spawn(process.execPath, [cli, ...args], { cwd: agent.cwd, env: agent.env, stdio: "ignore" });
    const timer = setTimeout(() => child.kill("SIGKILL"), 30000);
    const closed = new Promise((resolve) => child.on("close", (code, signal) => resolve({ code, signal })));
    const isServer = (pid) => {
      try {
        return readFileSync(`/proc/${pid}/cmdline`, "utf8").includes("server-everything");
      } catch {
        return false; // already gone
      }
    };
    await waitFor(() => processesIn(agent.cwd).some((pid) => pid !== child.pid && isServer(pid)), 15000, "the server to start");
    await new Promise((resolve) => setTimeout(resolve, 500)); // the call is under way
    child.kill("SIGINT");
    const { code } = await closed;
    clearTimeout(timer);
    assert.equal(code, 130);
    await nothingLeftIn(agent.cwd);
  });
});

describe("pi-mcp's own stderr", () => {
  test("a server's stderr with `debug` goes to mcp.log, never to the terminal (Pi's TUI owns it)", async () => {
    const agent = tempAgent(({ cwd }) => ({ mcpServers: { noisy: faulty(["stderr-flood=0"], { cwd, debug: true }) } }));
    try {
      const run = await pimcp(agent, ["call", "noisy_echo", '{"text": "hi"}']);
      assert.equal(run.code, 0, run.stderr);
      assert.doesNotMatch(run.stderr, /flood done/);
      const log = readFileSync(join(agent.agentDir, "mcp.log"), "utf8");
      assert.match(log, /\[pi-mcp-native\] info pi_mcp_connection::pool::stderr: \[noisy\] stderr: fault-server: flood done/);
      await nothingLeftIn(agent.cwd);
    } finally {
      agent.cleanup();
    }
  });
});

describe("pi-mcp config discovery", () => {
  test("--config replaces the Pi file (a pipe too: /dev/stdin); PI_MCP_CONFIG_MODE=exclusive reads only it", async () => {
    const agent = tempAgent({ mcpServers: { fromPi: everything() } });
    try {
      mkdirSync(join(agent.home, ".config", "mcp"), { recursive: true });
      writeFileSync(join(agent.home, ".config", "mcp", "mcp.json"), JSON.stringify({ mcpServers: { shared: everything() } }));
      const other = join(agent.home, "other.json");
      writeFileSync(other, JSON.stringify({ mcpServers: { fromFlag: everything() } }));
      const names = async (args, env) => json(await pimcp(agent, [...args, "--json"], { env })).details.servers.map((s) => s.name);
      assert.deepEqual(await names(["status"]), ["shared", "fromPi"]);
      assert.deepEqual(await names(["--config", other, "status"]), ["shared", "fromFlag"]);
      assert.deepEqual(await names(["status", "--config", other], { PI_MCP_CONFIG_MODE: "exclusive" }), ["fromFlag"]);
      // A shell pipe into /dev/stdin (Node's own stdio pipes are sockets, which /dev/stdin cannot reopen).
      const shell = `printf '%s' "$CONFIG" | "${process.execPath}" "${cli}" --config /dev/stdin status --json`;
      const config = JSON.stringify({ mcpServers: { fromStdin: everything() } });
      const piped = spawnSync("sh", ["-c", shell], { cwd: agent.cwd, env: { ...agent.env, CONFIG: config }, encoding: "utf8", timeout: 30000 });
      assert.deepEqual(json(piped).details.servers.map((s) => s.name), ["shared", "fromStdin"]);
      const missing = await pimcp(agent, ["--config", join(agent.home, "nope.json"), "doctor", "--offline", "--json"]);
      assert.equal(missing.code, 1);
      assert.equal(json(missing).details.error, "config_error");
      assert.match(text(json(missing)), /nope\.json: the config file does not exist/);
    } finally {
      agent.cleanup();
    }
  });

  test("an untrusted project's config is left out and status says so; --approve uses it", async () => {
    const agent = tempAgent({ mcpServers: { everything: everything() } });
    try {
      writeFileSync(join(agent.cwd, ".mcp.json"), JSON.stringify({ mcpServers: { local: everything(), everything: { lifecycle: "eager" } } }));
      const names = async (args) => json(await pimcp(agent, [...args, "status", "--json"])).details.servers.map((s) => s.name);
      assert.deepEqual(await names([]), ["everything", "local"], "no decision saved: trusted");
      assert.deepEqual(await names(["--no-approve"]), ["everything"]);
      writeFileSync(join(agent.agentDir, "trust.json"), JSON.stringify({ [realpathSync(agent.cwd)]: false }));
      const status = json(await pimcp(agent, ["status", "--json"]));
      assert.deepEqual(status.details.servers.map((s) => s.name), ["everything"]);
      assert.match(text(status), /\.mcp\.json: not used, because Pi does not trust this project .*servers "local", "everything"/);
      assert.equal(status.details.problems.length, 1);
      assert.match(status.details.problems[0], /^warning: .*\.mcp\.json: not used/);
      const doctor = json(await pimcp(agent, ["doctor", "--offline", "--json"]));
      assert.deepEqual(doctor.details.trust, { trusted: false, basis: "saved", file: join(agent.agentDir, "trust.json"), folder: realpathSync(agent.cwd) });
      assert.equal(doctor.details.sources.find((s) => s.role === "project").state, "untrusted");

      const contradiction = await pimcp(agent, ["--approve", "--no-approve"]);
      assert.equal(contradiction.code, 2);
      assert.match(contradiction.stderr, /contradict/);

      const approved = json(await pimcp(agent, ["--approve", "doctor", "--offline", "--json"]));
      const everythingServer = approved.details.configured.find((s) => s.name === "everything");
      assert.deepEqual(approved.details.configured.map((s) => s.name), ["everything", "local"]);
      assert.equal(everythingServer.lifecycle, "eager");
      assert.deepEqual(everythingServer.files, [join(agent.agentDir, "mcp.json"), join(agent.cwd, ".mcp.json")]);
      assert.match(text(approved), /fields overridden by .*\.mcp\.json/);
    } finally {
      agent.cleanup();
    }
  });

  test("imports: another tool's servers with where they came from; defined servers win", async () => {
    const agent = tempAgent({ imports: ["cursor"], mcpServers: { github: everything() } });
    try {
      cpSync(join(root, "__test__", "fixtures", "homes", "cursor"), agent.home, { recursive: true });
      const doctor = json(await pimcp(agent, ["doctor", "--offline", "--json"], { env: { GITHUB_TOKEN: "t", LINEAR_API_KEY: "k" } }));
      const byName = Object.fromEntries(doctor.details.configured.map((s) => [s.name, s]));
      assert.equal(byName.github.source, join(agent.agentDir, "mcp.json"));
      assert.equal(byName.github.imported, undefined);
      assert.deepEqual(byName.linear.imported, { kind: "cursor", by: join(agent.agentDir, "mcp.json") });
      assert.equal(byName.linear.transport, "http");
      assert.equal(byName.notes.command, join(agent.home, "bin", "notes-mcp"));
      const cursorFile = doctor.details.sources.find((s) => s.path === join(agent.home, ".cursor", "mcp.json"));
      assert.deepEqual([cursorFile.role, cursorFile.import, cursorFile.state], ["import", "cursor", "loaded"]);
      assert.deepEqual(cursorFile.shadowed, ["github"]);
      assert.match(text(doctor), /imported from ~\/\.cursor\/mcp\.json \(cursor\)/);
    } finally {
      agent.cleanup();
    }
  });
});

test("npm run demo's script (on the addon already built) runs every step as expected", () => {
  const run = spawnSync(process.execPath, [join(root, "scripts", "demo.mjs")], { encoding: "utf8", timeout: 120000 });
  assert.equal(run.status, 0, `${run.stdout}\n${run.stderr}`);
  for (const step of ["status", "search 'echo sum'", "describe everything_get-sum", "call everything_get-sum", "doctor"]) {
    assert.ok(run.stdout.includes(`$ pi-mcp ${step}`), step);
  }
  assert.match(run.stdout, /The sum of 2 and 40 is 42/);
  assert.match(run.stdout, /Did you mean: everything_echo/);
  assert.match(run.stdout, /Summary: 2 servers \(2 enabled\), 2 connected, 0 failed/);
});
