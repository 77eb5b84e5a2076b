// Shared servers (issue 20) through the native API and `pi-mcp`, with real servers: sessions with
// the same launch share one process through the per-user broker, other launches do not, a
// session killed mid-call releases its share, and `pi-mcp broker status|stop` see and stop it.
// Each test ends with no server and no broker left.
import { describe, test } from "node:test";
import assert from "node:assert/strict";
import { spawn } from "node:child_process";
import { once } from "node:events";
import { existsSync, readFileSync, readdirSync, statSync, writeFileSync } from "node:fs";
import { createConnection } from "node:net";
import { createRequire } from "node:module";
import { join } from "node:path";
import { frontEnd, piModel } from "../extension/pi-mcp-native/front-end.js";
import { row } from "./helpers/matrix.mjs";
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
  test("sessions in different terminals share one process; unshared they run one each", async () => {
    const config = ({ cwd }) => ({ mcpServers: { ev: everything({ cwd, shared: true }), solo: everything({ cwd: join(cwd, "..") }) } });
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

/** VmRSS and VmHWM (the peak since `clear_refs`) of `pid`, in MiB. */
function memoryOf(pid) {
  const status = readFileSync(`/proc/${pid}/status`, "utf8");
  const mib = (key) => Number(new RegExp(`${key}:\\s+(\\d+)`).exec(status)[1]) / 1024;
  return { rss: mib("VmRSS"), peak: mib("VmHWM") };
}

/**
 * A client of the broker's socket that reads nothing unless told to. `send` waits while the
 * socket is full and says false once the broker has closed it; `lines()` reads what the broker
 * said until it closed the connection (10 s at most).
 */
async function rogueClient(endpoint) {
  const socket = createConnection(endpoint);
  await once(socket, "connect");
  socket.on("error", () => {});
  let buffered = "";
  const nextLine = async () => {
    for (;;) {
      const at = buffered.indexOf("\n");
      if (at >= 0) {
        const line = buffered.slice(0, at);
        buffered = buffered.slice(at + 1);
        return line;
      }
      const chunk = socket.read();
      if (chunk) buffered += chunk;
      else if (socket.destroyed || socket.readableEnded) return null;
      else await Promise.race([once(socket, "readable"), once(socket, "close")]);
    }
  };
  return {
    socket,
    send: async (text) => {
      if (socket.destroyed) return false;
      if (!socket.write(text)) await Promise.race([once(socket, "drain"), once(socket, "close")]);
      return !socket.destroyed;
    },
    lines: async (limit = 10000) => {
      const lines = [];
      const timer = setTimeout(() => socket.destroy(), limit);
      for (let line = await nextLine(); line !== null; line = await nextLine()) lines.push(line);
      clearTimeout(timer);
      return lines;
    },
    /** Attaches to the shared server `name` of `adapter` (its identity from the broker). */
    attach: async (adapter, name) => {
      const server = (await adapter.brokerStatus()).details.broker.servers.find((s) => s.name === name);
      const attach = {
        name: "rogue",
        identity: server.identity,
        launch: { command: "false", args: [], env: [], cwd: "/" },
        protocol: "initialize",
        client: { elicitation: "off", sampling: false, roots: false, tasks: false, logLevel: "info" },
        timeoutMs: 120000,
        idleMs: null,
        debug: false,
        session: { id: "rogue", pid: process.pid, ui: false },
      };
      const params = { protocolVersion: "2025-11-25", capabilities: { experimental: { "pi-mcp-native/broker": { attach } } }, clientInfo: { name: "rogue", version: "0" } };
      socket.write(`${JSON.stringify({ jsonrpc: "2.0", id: 0, method: "initialize", params })}\n`);
      const answer = JSON.parse(await nextLine());
      assert.ok(answer.result, JSON.stringify(answer));
    },
  };
}

/** The broker grows no more than this over its size before an attack, or the test stops it. */
const GUARD_MIB = 512;

/**
 * Runs `flood(rogue)` against the broker of session `a`, then waits for the broker to drop the
 * rogue with a note matching `why`; notes the broker's RSS before, its peak, and its RSS once
 * the rogue has left; checks that session `a` is served all along. Returns what `flood` did.
 */
async function attack(a, note, what, why, flood) {
  assert.equal(text(await a.call("ev_echo", { message: "before" })), "Echo: before");
  const { pid, endpoint } = (await a.brokerStatus()).details.broker;
  const log = endpoint.replace(/\.sock$/, ".log");
  const logged = readNow(log).length;
  const before = memoryOf(pid).rss;
  writeFileSync(`/proc/${pid}/clear_refs`, "5"); // resets VmHWM
  const rogue = await rogueClient(endpoint);
  let grew = null;
  const guard = setInterval(() => {
    const { rss } = memoryOf(pid);
    if (rss > before + GUARD_MIB) (grew = rss), rogue.socket.destroy();
  }, 50);
  let done, dropped;
  try {
    done = await flood(rogue);
    const served = text(await a.call("ev_echo", { message: "during" }));
    assert.equal(served, "Echo: during", "another session is served meanwhile");
    await waitFor(() => grew !== null || /dropped a connection/.test(readNow(log).slice(logged)), 15000, `the broker to drop the client (${what})`);
    dropped = readNow(log).slice(logged).split("\n").find((l) => /dropped a connection/.test(l));
  } finally {
    clearInterval(guard);
    rogue.socket.destroy();
  }
  assert.equal(grew, null, `${what}: the broker grew to ${grew} MiB, more than ${GUARD_MIB} MiB over its ${before} MiB`);
  const { peak } = memoryOf(pid);
  assert.match(dropped, new RegExp(`dropped a connection of pid ${process.pid} \\(session rogue|dropped a connection of pid ${process.pid} \\(not attached`), dropped);
  assert.match(dropped, why);
  let after = memoryOf(pid).rss;
  const settled = () => (after = memoryOf(pid).rss) <= before + 16;
  await waitFor(settled, 5000, `the broker's memory to come back (${what})`).catch(() => {});
  note(`${what}: RSS ${before.toFixed(0)} MiB before, peak ${peak.toFixed(0)} MiB, ${after.toFixed(0)} MiB after the client left`);
  assert.ok(peak - before <= 200, `${what}: peak ${peak} MiB, ${before} MiB before`);
  assert.ok(after - before <= 16, `${what}: ${after} MiB after the client left, ${before} MiB before`);
  assert.equal(text(await a.call("ev_echo", { message: "after" })), "Echo: after");
  return done;
}

/** The broker's own log (beside its socket), from its status. */
async function brokerLog(adapter) {
  return (await adapter.brokerStatus()).details.broker.endpoint.replace(/\.sock$/, ".log");
}

const MB = 1024 * 1024;

/** A file's text, or "" while it is missing (a rotation moves it before a new one begins). */
function readNow(file) {
  try {
    return readFileSync(file, "utf8");
  } catch {
    return "";
  }
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

  // Item 11: a same-user client that floods the broker is dropped; the broker's memory stays
  // bounded and comes back, and the other sessions do not notice. The bounds per connection
  // (README "Shared servers"): a message of 16 MiB, 256 requests in flight, 64 MiB unread.
  const attacked = ({ cwd }) => ({ mcpServers: { ev: everything({ cwd, shared: true }) } });

  row("F11", "a message just past 16 MiB, and a 1 GiB line that never ends", here, async ({ note }) => {
    await withAgent(attacked, async (agent) => {
      const a = session(agent, 1);
      const pad = (bytes) => "x".repeat(bytes);
      const past = `${JSON.stringify({ jsonrpc: "2.0", id: 1, method: "ping", params: { pad: pad(16 * MB + 1024) } })}\n`;
      const heard = await attack(a, note, "a 16 MiB + 1 KiB message", /a message over 16 MiB/, async (rogue) => {
        await rogue.send(past);
        return rogue.lines();
      });
      const farewell = heard.map((l) => JSON.parse(l)).find((m) => m.method === "notifications/pi-mcp-native/farewell");
      assert.match(farewell?.params.message ?? "", /a message over 16 MiB/, JSON.stringify(heard).slice(0, 300));
      const chunk = pad(MB);
      await attack(a, note, "1 GiB without a newline", /a message over 16 MiB/, async (rogue) => {
        let sent = 0;
        while (sent < 1024 && (await rogue.send(chunk))) sent++;
        note(`the broker closed the connection after ${sent} MiB were sent`);
        assert.ok(sent < 1024, "dropped before the end");
      });
      await a.shutdown();
    });
  });

  row("F11", "2,560 and 256,000 requests that never end (10× and 1000× the 256 in flight), answers unread", here, async ({ note }) => {
    const config = ({ cwd }) => ({ mcpServers: { ev: everything({ cwd, shared: true }), f: faulty([], { cwd, shared: true }) } });
    await withAgent(config, async (agent) => {
      const a = session(agent, 1);
      await a.call("f_echo", { text: "started" });
      const hang = (id) => `${JSON.stringify({ jsonrpc: "2.0", id, method: "tools/call", params: { name: "hang", arguments: {} } })}\n`;
      for (const count of [2560, 256000]) {
        await attack(a, note, `${count.toLocaleString("en")} hanging calls`, /more than 256 requests in flight/, async (rogue) => {
          await rogue.attach(a, "f");
          let sent = 0;
          while (sent < count && (await rogue.send(hang(sent + 1)))) sent++;
          note(`${sent.toLocaleString("en")} sent`);
        });
      }
      await a.shutdown();
    });
  });

  row("F11", "answers left unread: 80 MiB and 1 GiB of them (past the 64 MiB bound)", here, async ({ note }) => {
    await withAgent(attacked, async (agent) => {
      const a = session(agent, 1);
      const id = "i".repeat(256 * 1024); // echoed in each answer
      const ping = (n) => `${JSON.stringify({ jsonrpc: "2.0", id: `${n}${id}`, method: "ping" })}\n`;
      for (const [what, count] of [["80 MiB", 320], ["1 GiB", 4096]]) {
        await attack(a, note, `${what} of answers`, /more than 64 MiB of answers unread/, async (rogue) => {
          let sent = 0;
          while (sent < count && (await rogue.send(ping(sent)))) sent++;
          note(`${sent.toLocaleString("en")} pings sent`);
        });
      }
      await a.shutdown();
    });
  });
});
