// A same-user client that floods the shared-server broker (issue 26, item 11), for the F11 rows
// of __test__/shared.test.mjs and bench/broker-flood.mjs: a raw connection to the broker's socket
// that reads nothing unless told to, the floods each bound per connection is tried with (one
// size just past it, one far past it), and the broker's memory as /proc shows it.
import assert from "node:assert/strict";
import { once } from "node:events";
import { readFileSync, writeFileSync } from "node:fs";
import { createConnection } from "node:net";
import { everything, faulty, sleep } from "./servers.mjs";

export const MB = 1024 * 1024;

/** VmRSS and VmHWM (the peak since `clear_refs` was given 5) of `pid`, in MiB. */
export function memoryOf(pid) {
  const status = readFileSync(`/proc/${pid}/status`, "utf8");
  const mib = (key) => Number(new RegExp(`${key}:\\s+(\\d+)`).exec(status)[1]) / 1024;
  return { rss: mib("VmRSS"), peak: mib("VmHWM") };
}

/** The config the floods run in: `ev` serves another session meanwhile, `f`'s `hang` never ends. */
export const floodConfig = ({ cwd }) => ({ mcpServers: { ev: everything({ cwd, shared: true }), f: faulty([], { cwd, shared: true }) } });

const line = (message) => `${JSON.stringify({ jsonrpc: "2.0", ...message })}\n`;

/** Sends `make(n)` for n = 0, 1, … `count` times or until the broker closes; how many went. */
async function sendMany(rogue, count, make) {
  let sent = 0;
  while (sent < count && (await rogue.send(make(sent)))) sent++;
  return sent;
}

/**
 * The floods, by the bound they test (README "Shared servers": a message of 16 MiB, 256
 * requests in flight, 64 MiB of answers unread): `run(rogue, adapter)` floods and returns what
 * the test checks; `why` is what the broker's note on dropping the client says.
 */
export const FLOODS = [
  {
    bound: "message",
    what: "a 16 MiB + 1 KiB message",
    why: /a message over 16 MiB/,
    run: async (rogue) => {
      await rogue.send(line({ id: 1, method: "ping", params: { pad: "x".repeat(16 * MB + 1024) } }));
      return { heard: await rogue.lines() };
    },
  },
  {
    bound: "message",
    what: "1 GiB without a newline",
    why: /a message over 16 MiB/,
    run: async (rogue) => ({ sentMiB: await sendMany(rogue, 1024, () => "x".repeat(MB)) }),
  },
  ...[2560, 256000].map((count) => ({
    bound: "in flight",
    what: `${count.toLocaleString("en")} calls that never end`,
    why: /more than 256 requests in flight/,
    run: async (rogue, adapter) => {
      await rogue.attach(adapter, "f");
      const hang = (n) => line({ id: n + 1, method: "tools/call", params: { name: "hang", arguments: {} } });
      return { sent: await sendMany(rogue, count, hang) };
    },
  })),
  ...[
    ["80 MiB", 320],
    ["1 GiB", 4096],
  ].map(([size, count]) => ({
    bound: "unread",
    what: `${size} of answers (pings with 256 KiB ids)`,
    why: /more than 64 MiB of answers unread/,
    run: async (rogue) => {
      const id = "i".repeat(256 * 1024); // each answer echoes it
      return { sent: await sendMany(rogue, count, (n) => line({ id: `${n}${id}`, method: "ping" })) };
    },
  })),
];

/** Resolves at the first of `events` on `emitter` (an error is no reason to reject here). */
function either(emitter, ...events) {
  return new Promise((resolve) => {
    const done = () => {
      for (const event of events) emitter.off(event, done);
      resolve();
    };
    for (const event of events) emitter.on(event, done);
  });
}

/**
 * A client of the broker's socket that reads nothing unless told to. `send` waits while the
 * socket is full and says false once the broker has closed it; `lines()` reads what the broker
 * says until it closes the connection (10 s at most).
 */
export async function rogueClient(endpoint) {
  const socket = createConnection(endpoint);
  await once(socket, "connect");
  socket.on("error", () => {});
  let buffered = "";
  const nextLine = async () => {
    for (;;) {
      const at = buffered.indexOf("\n");
      if (at >= 0) {
        const text = buffered.slice(0, at);
        buffered = buffered.slice(at + 1);
        return text;
      }
      const chunk = socket.read();
      if (chunk) buffered += chunk;
      else if (socket.destroyed || socket.readableEnded) return null;
      else await either(socket, "readable", "close");
    }
  };
  return {
    socket,
    send: async (text) => {
      if (socket.destroyed) return false;
      if (!socket.write(text)) await either(socket, "drain", "close");
      return !socket.destroyed;
    },
    lines: async (limit = 10000) => {
      const lines = [];
      const timer = setTimeout(() => socket.destroy(), limit);
      for (let next = await nextLine(); next !== null; next = await nextLine()) lines.push(next);
      clearTimeout(timer);
      return lines;
    },
    /** Attaches to the shared server `name` of `adapter`'s broker (its identity from the broker). */
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
      const capabilities = { experimental: { "pi-mcp-native/broker": { attach } } };
      const params = { protocolVersion: "2025-11-25", capabilities, clientInfo: { name: "rogue", version: "0" } };
      socket.write(line({ id: 0, method: "initialize", params }));
      const answer = JSON.parse(await nextLine());
      assert.ok(answer.result, JSON.stringify(answer));
    },
  };
}

/** A file's text, or "" while it is missing (a rotation moves it before a new one begins). */
export function readNow(file) {
  try {
    return readFileSync(file, "utf8");
  } catch {
    return "";
  }
}

/**
 * Runs `flood` against the broker of session `adapter` and measures the broker: its RSS before,
 * its peak (VmHWM), and its RSS once the client left (given up to 5 s to come within 4 MiB of
 * before). Waits up to `dropWait` ms for the broker's note that it dropped the client (`dropped`,
 * null without one); stops the client when the broker grows `guardMiB` past before (`grew`).
 * `meanwhile()` runs between the flood and that wait.
 */
export async function measureFlood(adapter, flood, { guardMiB = 512, dropWait = 15000, meanwhile } = {}) {
  const { pid, endpoint } = (await adapter.brokerStatus()).details.broker;
  const log = endpoint.replace(/\.sock$/, ".log");
  const logged = readNow(log).length;
  const droppedNote = () => readNow(log).slice(logged).split("\n").find((l) => l.includes("dropped a connection")) ?? null;
  const before = memoryOf(pid).rss;
  writeFileSync(`/proc/${pid}/clear_refs`, "5"); // VmHWM from here
  const rogue = await rogueClient(endpoint);
  let grew = null;
  const guard = setInterval(() => {
    const { rss } = memoryOf(pid);
    if (rss > before + guardMiB) (grew = rss), rogue.socket.destroy();
  }, 50);
  const started = performance.now();
  let result, dropped;
  try {
    result = await flood.run(rogue, adapter);
    await meanwhile?.();
    const until = Date.now() + dropWait;
    while (grew === null && !(dropped = droppedNote()) && Date.now() < until) await sleep(50);
  } finally {
    clearInterval(guard);
    rogue.socket.destroy();
  }
  const ms = Math.round(performance.now() - started);
  const { peak } = memoryOf(pid);
  let after = memoryOf(pid).rss;
  for (const until = Date.now() + 5000; after > before + 4 && Date.now() < until; after = memoryOf(pid).rss) await sleep(100);
  return { before, peak, after, grew, dropped, result, ms };
}
