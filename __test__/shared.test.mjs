// Shared servers (issue 20) through the native API and `pi-mcp`, with real servers: sessions with
// the same launch share one process through the per-user broker, other launches do not, a
// session killed mid-call releases its share, and `pi-mcp broker status|stop` see and stop it.
// Each test ends with no server and no broker left.
import { describe, test } from "node:test";
import assert from "node:assert/strict";
import { spawn } from "node:child_process";
import { existsSync, readFileSync, readdirSync, statSync } from "node:fs";
import { createRequire } from "node:module";
import { join } from "node:path";
import { frontEnd, piModel } from "../extension/pi-mcp-native/front-end.js";
import { row } from "./helpers/matrix.mjs";
import { FLOODS, MB, floodConfig, measureFlood, readNow } from "./helpers/rogue.mjs";
import { everything, faulty, memory, pimcp, processesIn, python, tempAgent, text, waitFor } from "./helpers/servers.mjs";

const { McpAdapter } = createRequire(import.meta.url)("../index.js");

/** Live broker processes serving `agentDir`. */
function brokers(agentDir) {
  return readdirSync("/proc")
    .filter((entry) => /^\d+$/.test(entry))
    .filter((pid) => {
      try {
        const args = readFileSync(`/proc/${pid}/cmdline`, "utf8").split("\0");
        return args.includes("broker") && args.includes(agentDir) && !/\) Z/.test(readFileSync(`/proc/${pid}/stat`, "utf8"));
      } catch {
        return false;
      }
    })
    .map(Number);
}

/** A session of `agent` as from a terminal of its own (its terminal variables differ). */
function session(agent, terminal) {
  const env = { ...agent.env, TERM_SESSION_ID: `term-${terminal}`, SHLVL: String(terminal), PWD: agent.cwd };
  return McpAdapter.open({ cwd: agent.cwd, agentDir: agent.agentDir, env });
}

/**
 * A session's dialogs (elicitation forms, sampling approvals) for one question at a time: the
 * first dialog of each question waits until `release()`, then `accept` says what is answered.
 * `shown` resolves when that first dialog opens; `seen` keeps every dialog's title.
 */
function heldDialogs(adapter, accept) {
  const seen = [];
  let shown, release;
  const hold = async () => (shown(), await new Promise((resolve) => (release = resolve)));
  const state = {
    seen,
    next: () => (state.shown = new Promise((resolve) => (shown = resolve))),
    release: () => release(),
  };
  const ui = {
    select: async (title, options) => {
      seen.push(title);
      if (options.includes("Decline")) return (await hold(), accept ? "Answer" : "Decline");
      return title.startsWith("Favorite Color") ? "Blue" : title.startsWith("Terms") ? "Yes" : "(leave empty)";
    },
    input: async (title) => (seen.push(title), "Ada"),
    confirm: async (title, preview) => (seen.push(`${title}\n${preview}`), await hold(), accept),
    notify: () => {},
  };
  const answer = { role: "assistant", content: [{ type: "text", text: "forty-two" }], model: "pi-model", stopReason: "stop" };
  const ctx = { hasUI: true, ui, model: { id: "pi-model", provider: "fake" }, modelRegistry: { getAvailable: () => [], complete: async () => answer } };
  adapter.setInteractive(true);
  adapter.setFrontEnd(frontEnd(adapter, { ui: () => ui, runModel: piModel(() => ctx) }));
  return state;
}

/** Runs `run(agent)` on a temp agent dir with `config`; then no server and no broker may be left. */
async function withAgent(config, run) {
  const agent = tempAgent(config);
  try {
    await run(agent);
  } finally {
    const stopper = McpAdapter.open({ cwd: agent.cwd, agentDir: agent.agentDir, env: agent.env });
    await stopper.brokerStop();
    await stopper.shutdown();
    await waitFor(() => processesIn(agent.cwd).length === 0 && brokers(agent.agentDir).length === 0, 10000, "servers and broker to stop");
    agent.cleanup();
  }
}

describe("shared servers", () => {
  test("sessions in different terminals share one process; with shared: false they run one each", async () => {
    const config = ({ cwd }) => ({ mcpServers: { ev: everything({ cwd, shared: true }), solo: everything({ cwd: join(cwd, ".."), shared: false }) } });
    await withAgent(config, async (agent) => {
      const [a, b] = [session(agent, 1), session(agent, 2)];
      assert.equal(text(await a.call("ev_echo", { message: "from a" })), "Echo: from a");
      assert.equal(text(await b.call("ev_echo", { message: "from b" })), "Echo: from b");
      assert.equal(processesIn(agent.cwd).length, 1, "one server-everything for both sessions");
      assert.equal(brokers(agent.agentDir).length, 1);
      const status = await a.status();
      const ev = status.details.servers.find((s) => s.name === "ev");
      assert.equal(ev.shared.sessions, 2, JSON.stringify(ev.shared));
      assert.match(text(status), /✓ ev: connected, \d+ tools \[shared with 1 other session\]/);
      assert.equal(status.details.servers.find((s) => s.name === "solo").shared, null);

      // Not shared: each session its own.
      await a.call("solo_echo", { message: "1" });
      await b.call("solo_echo", { message: "2" });
      assert.equal(processesIn(join(agent.cwd, "..")).length, 2, "two solo processes");

      const cli = await pimcp(agent, ["broker", "status"]);
      assert.equal(cli.code, 0, cli.stderr);
      assert.match(cli.stdout, /Shared-server broker .* 2 sessions, 1 server\n- ev \(.*\): pid \d+, 2 sessions/);
      await a.shutdown();
      await waitFor(async () => (await b.status()).details.servers.find((s) => s.name === "ev").shared.sessions === 1, 5000, "the share released");
      assert.equal(processesIn(agent.cwd).length, 1, "the shared server stays for the other session");
      assert.equal(text(await b.call("ev_echo", { message: "still" })), "Echo: still");
      await b.shutdown();
      const stopped = await pimcp(agent, ["broker", "stop"]);
      assert.match(stopped.stdout, /Stopped the shared-server broker \(pid \d+\) and its 1 server/);
      assert.equal(processesIn(agent.cwd).length, 0);
      assert.equal(brokers(agent.agentDir).length, 0);
      assert.match((await pimcp(agent, ["broker", "status"])).stdout, /No shared-server broker runs/);
    });
  });

  test("identity: a declared env difference makes two processes, the same launch one (settings.sharedServers)", async () => {
    const config = ({ cwd }) => ({
      settings: { sharedServers: true },
      mcpServers: { mem: memory(join(cwd, "${MEMORY_NAME}.json"), { cwd }) },
    });
    await withAgent(config, async (agent) => {
      const open = (name, terminal) => McpAdapter.open({ cwd: agent.cwd, agentDir: agent.agentDir, env: { ...agent.env, MEMORY_NAME: name, TERM_SESSION_ID: `t${terminal}` } });
      const [a, b, c] = [open("graph-a", 1), open("graph-a", 2), open("graph-b", 3)];
      await a.call("mem_create_entities", { entities: [{ name: "Ada", entityType: "person", observations: ["shared"] }] });
      assert.match(text(await b.call("mem_read_graph", {})), /Ada/, "the same graph: one server");
      assert.doesNotMatch(text(await c.call("mem_read_graph", {})), /Ada/, "another file: another server");
      assert.equal(processesIn(agent.cwd).length, 2);
      const status = (await a.brokerStatus()).details.broker;
      assert.deepEqual(status.servers.map((s) => s.sessions).sort(), [1, 2]);
      for (const s of [a, b, c]) await s.shutdown();
    });
  });

  test("an inherited token the entry does not reference does not separate sessions (the first one's is used); sharedEnv does", async () => {
    const config = ({ cwd }) => ({
      mcpServers: {
        plain: everything({ cwd, shared: true }),
        listed: everything({ cwd: join(cwd, ".."), shared: true, sharedEnv: ["GITHUB_TOKEN"] }),
      },
    });
    await withAgent(config, async (agent) => {
      const open = (token, terminal) => McpAdapter.open({ cwd: agent.cwd, agentDir: agent.agentDir, env: { ...agent.env, GITHUB_TOKEN: token, TERM_SESSION_ID: `t${terminal}` } });
      const [a, b] = [open("token-a", 1), open("token-b", 2)];
      const token = async (session, server) => JSON.parse(text(await session.call(`${server}_get-env`, {}))).GITHUB_TOKEN;
      assert.equal(await token(a, "plain"), "token-a");
      assert.equal(await token(b, "plain"), "token-a", "the second session uses the first one's process, and its token");
      assert.equal(processesIn(agent.cwd).length, 1);
      assert.equal(await token(a, "listed"), "token-a");
      assert.equal(await token(b, "listed"), "token-b", "listed in sharedEnv: a process of its own");
      assert.equal(processesIn(join(agent.cwd, "..")).length, 2);
      for (const s of [a, b]) await s.shutdown();
    });
  });

  test("a session killed mid-call has its call cancelled and its share released", async () => {
    const config = ({ cwd }) => ({ mcpServers: { ev: everything({ cwd, shared: true }) } });
    await withAgent(config, async (agent) => {
      const stays = session(agent, 1);
      await stays.call("ev_echo", { message: "hi" });
      const script = `
        const { McpAdapter } = require(${JSON.stringify(join(process.cwd(), "index.js"))});
        const a = McpAdapter.open(${JSON.stringify({ cwd: agent.cwd, agentDir: agent.agentDir, env: agent.env })});
        setTimeout(() => process.exit(3), 30000);
        console.log("calling");
        a.call("ev_trigger-long-running-operation", { duration: 20, steps: 20 });`;
      const doomed = spawn(process.execPath, ["-e", script], { stdio: ["ignore", "pipe", "inherit"] });
      await new Promise((resolve) => doomed.stdout.once("data", resolve));
      await waitFor(async () => (await stays.brokerStatus()).details.broker?.servers[0]?.sessions === 2, 10000, "the second session on the server");
      doomed.kill("SIGKILL");
      await waitFor(async () => (await stays.brokerStatus()).details.broker.servers[0].sessions === 1, 10000, "its share released");
      assert.equal(processesIn(agent.cwd).length, 1);
      assert.equal(text(await stays.call("ev_echo", { message: "still" })), "Echo: still");
      await stays.shutdown();
    });
  });

  test("the 2026-07-28 tasks extension is offered to a shared server: each session follows its own task, an abort cancels only that one", async () => {
    const config = ({ cwd, home }) => ({
      mcpServers: { py: python({ cwd, shared: true, protocolVersion: "2026-07-28", env: { PY_TASK_LOG: join(home, "tasks.log") } }) },
    });
    await withAgent(config, async (agent) => {
      const [alice, bob] = [session(agent, 1), session(agent, 2)];
      const started = [];
      alice.onEvent((e) => e.type === "progress" && started.push(e.text));
      const aborted = alice.call("py_wait", { seconds: 30, label: "alice" }, { callId: "alice-1" });
      const done = bob.call("py_wait", { seconds: 1, label: "bob" }, { callId: "bob-1" });
      await waitFor(() => started.some((t) => /waiting for alice/.test(t)), 15000, "alice's task to start");
      alice.cancel("alice-1");
      assert.equal((await aborted).details.error, "aborted");
      assert.equal(text(await done), "waited as a task: bob", "bob's call ran as a task to its end");
      const log = join(agent.home, "tasks.log");
      await waitFor(() => existsSync(log) && readFileSync(log, "utf8") === "cancelled alice\n", 5000, "alice's task cancelled at the server");
      assert.equal(processesIn(agent.cwd).length, 1, "one shared server");
      await alice.shutdown();
      await bob.shutdown();
    });
  });

  test("questions a shared server asks as tasks (2025-11-25 -async tools) reach the session whose call asked: accepted in one, declined in the other", async () => {
    const config = ({ cwd }) => ({ mcpServers: { ev: everything({ cwd, shared: true }) } });
    await withAgent(config, async (agent) => {
      const [alice, bob] = [session(agent, 1), session(agent, 2)];
      const [aliceUi, bobUi] = [heldDialogs(alice, true), heldDialogs(bob, false)];
      // Overlapping: each question is asked while the other session's call is in flight too.
      const both = async (tool, args) => {
        aliceUi.next();
        bobUi.next();
        const asked = alice.call(tool, args, { callId: "alice" });
        await aliceUi.shown;
        const declined = bob.call(tool, args, { callId: "bob" });
        await bobUi.shown;
        aliceUi.release();
        bobUi.release();
        return [text(await asked), text(await declined)];
      };
      const [accepted, declined] = await both("ev_trigger-elicitation-request-async", {});
      assert.match(accepted, /\[COMPLETED\] User provided the requested information!\nUser inputs:\n- Name: Ada\n- Favorite Color: Blue\n- Agreed to terms: true/);
      assert.match(declined, /\[DECLINED\] User declined/);
      const forms = (seen) => seen.filter((title) => title.startsWith('MCP server "ev" asks:'));
      assert.equal(forms(aliceUi.seen).length, 1, JSON.stringify(aliceUi.seen));
      assert.equal(forms(bobUi.seen).length, 1, JSON.stringify(bobUi.seen));
      assert.ok(!bobUi.seen.some((title) => title.startsWith("Name")), "bob was not asked alice's fields");

      const [approved, refused] = await both("ev_trigger-sampling-request-async", { prompt: "the answer", maxTokens: 50 });
      assert.match(approved, /\[COMPLETED\] Async sampling completed!/);
      assert.match(approved, /"text": "forty-two"/);
      assert.match(refused, /\[FAILED\] the user declined ev's sampling request/);
      const approvals = (seen) => seen.filter((title) => title.includes('MCP server "ev" asks the model (1 message, up to 50 tokens)'));
      assert.equal(approvals(aliceUi.seen).length, 1, JSON.stringify(aliceUi.seen));
      assert.equal(approvals(bobUi.seen).length, 1, JSON.stringify(bobUi.seen));
      assert.equal(processesIn(agent.cwd).length, 1, "one server-everything for both sessions");
      await alice.shutdown();
      await bob.shutdown();
    });
  });
});

/** The broker's own log (beside its socket), from its status. */
async function brokerLog(adapter) {
  return (await adapter.brokerStatus()).details.broker.endpoint.replace(/\.sock$/, ".log");
}

describe("the broker's bounds (issue 26)", () => {
  const here = import.meta.url;

  row("F12", "shared servers with debug: true write 6 MB and 60 MB to stderr: the broker's log is rotated while it runs", here, async ({ note }) => {
    const config = ({ cwd }) => ({
      mcpServers: {
        six: faulty(["stderr-flood=6"], { cwd, shared: true, debug: true }),
        sixty: faulty(["stderr-flood=60"], { cwd, shared: true, debug: true }),
      },
    });
    await withAgent(config, async (agent) => {
      const a = session(agent, 1);
      for (const [name, mb] of [["six", 6], ["sixty", 60]]) {
        assert.equal(text(await a.call(`${name}_echo`, { text: "hi" })), "echo: hi");
        const log = await brokerLog(a);
        await waitFor(() => readNow(log).includes("fault-server: flood done"), 20000, `${name}'s flood echoed to the log`);
        const [size, previous] = [statSync(log).size, statSync(`${log}.1`).size];
        note(`${mb} MB of stderr: log ${(size / MB).toFixed(2)} MB, .1 ${(previous / MB).toFixed(2)} MB`);
        assert.ok(size <= 5 * MB && previous <= 5 * MB, `${size} and ${previous} bytes`);
      }
      assert.equal(text(await a.call("six_echo", { text: "still" })), "echo: still", "the broker serves on");
      await a.shutdown();
    });
  });

  // Item 11: a same-user client that floods the broker is dropped, the broker's memory stays
  // bounded and comes back, and another session is served meanwhile (FLOODS: each bound per
  // connection, just past it and far past it).
  for (const bound of ["message", "in flight", "unread"]) {
    const floods = FLOODS.filter((f) => f.bound === bound);
    row("F11", `past the bound on ${bound}: ${floods.map((f) => f.what).join("; ")}`, here, async ({ note }) => {
      await withAgent(floodConfig, async (agent) => {
        const a = session(agent, 1);
        await a.call("f_echo", { text: "started" });
        for (const flood of floods) {
          const echo = async (message) => assert.equal(text(await a.call("ev_echo", { message })), `Echo: ${message}`);
          await echo("before");
          const m = await measureFlood(a, flood, { meanwhile: () => echo("meanwhile") });
          note(`${flood.what}: RSS ${m.before.toFixed(0)} MiB before, peak ${m.peak.toFixed(0)} MiB, ${m.after.toFixed(0)} MiB after the client left (${JSON.stringify(m.result).slice(0, 60)})`);
          assert.equal(m.grew, null, `${flood.what}: the broker grew to ${m.grew} MiB from ${m.before} MiB`);
          assert.match(m.dropped ?? "no note", new RegExp(`dropped a connection of pid ${process.pid} `), flood.what);
          assert.match(m.dropped, flood.why);
          assert.doesNotMatch(m.dropped, /x{64}|i{64}|hang/, "nothing the client sent is in the note");
          assert.ok(m.peak - m.before <= 200, `${flood.what}: peak ${m.peak} MiB, ${m.before} MiB before`);
          assert.ok(m.after - m.before <= 16, `${flood.what}: ${m.after} MiB after the client left, ${m.before} MiB before`);
          const farewell = m.result.heard?.map((l) => JSON.parse(l)).find((l) => l.method === "notifications/pi-mcp-native/farewell");
          if (m.result.heard) assert.match(farewell?.params.message ?? "no farewell", flood.why);
          await echo("after");
        }
        await a.shutdown();
      });
    });
  }
});
