// pi-mcp-adapter's keys inside the real Pi (0.87.1, 1.5.2 and 1.6.0), one run each against the
// scripted fake LLM: a server on a Unix socket (`socket`) whose tools are Pi tools of their own
// (`directTools`), `settings.disableProxyTool` leaving the `mcp` tool out of what the model is
// given, and the protocol trace (`settings.trace`) written in the session's `.pi/mcp-traces/`.
import assert from "node:assert/strict";
import { spawn } from "node:child_process";
import { mkdtempSync, readdirSync, readFileSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { after, before } from "node:test";
import { assertRan, piTest, runPi } from "./helpers/pi.mjs";
import { everything, filledCache, root } from "./helpers/servers.mjs";

let dir;
let relay;
let mcpConfig;
let cacheJson;

before(async () => {
  dir = mkdtempSync(join(tmpdir(), "pi-mcp-native-keys-"));
  const socket = join(dir, "ev.sock");
  const server = everything();
  relay = spawn(process.execPath, [join(root, "__test__", "fixtures", "socket-relay.mjs"), socket, server.command, ...server.args], { stdio: ["ignore", "pipe", "ignore"] });
  await new Promise((resolve) => relay.stdout.on("data", (d) => String(d).includes("ready") && resolve()));
  mcpConfig = { settings: { disableProxyTool: true, trace: true }, mcpServers: { mux: { socket, directTools: ["echo"] } } };
  cacheJson = await filledCache(mcpConfig);
});
after(async () => {
  await new Promise((resolve) => (relay.exitCode !== null ? resolve() : (relay.once("exit", resolve), relay.kill("SIGTERM"))));
  rmSync(dir, { recursive: true, force: true });
});

piTest("a socket server's direct tool without the mcp tool (disableProxyTool), traced", { timeout: 60_000 }, async (pi) => {
  const steps = [{ tool_calls: [{ name: "mux_echo", arguments: { message: "over the socket" } }] }, { text: "done" }];
  const r = await runPi({ pi, extensionDir: root, mcpConfig, cacheJson, script: { steps }, keep: true });
  try {
    assertRan(r);
    const declared = r.requests[0].body.tools.map((t) => t.function.name);
    assert.ok(declared.includes("mux_echo"), JSON.stringify(declared));
    assert.ok(!declared.includes("mcp"), JSON.stringify(declared));
    assert.equal(r.toolResults[0].text, "Echo: over the socket");
    const traces = join(r.cwd, ".pi", "mcp-traces");
    const [file] = readdirSync(traces);
    const events = readFileSync(join(traces, file), "utf8").trim().split("\n").map((l) => JSON.parse(l));
    assert.ok(events.some((e) => e.method === "tools/call" && e.server === "mux" && e.transport === "unix-socket"), JSON.stringify(events));
    assert.doesNotMatch(readFileSync(join(traces, file), "utf8"), /over the socket/);
  } finally {
    rmSync(join(r.home, ".."), { recursive: true, force: true });
  }
});
