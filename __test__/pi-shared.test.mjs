// Two real Pi processes (headless, scripted fake LLM) on one agent dir, with a shared server:
// one server process serves both, both calls are answered, and nothing is left afterwards.
import { test } from "node:test";
import assert from "node:assert/strict";
import { mkdirSync, mkdtempSync, rmSync } from "node:fs";
import { createRequire } from "node:module";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { piTest, runPi } from "./helpers/pi.mjs";
import { everything, processesIn, root, sleep, waitFor } from "./helpers/servers.mjs";

const { McpAdapter } = createRequire(import.meta.url)("../index.js");
const mcp = (args) => ({ tool_calls: [{ name: "mcp", arguments: args }] });

piTest("two Pi processes share one server process", { timeout: 120_000 }, async (pi) => {
  const base = mkdtempSync(join(tmpdir(), "pi-mcp-shared-e2e-"));
  const [home, tmpDir, serverCwd] = ["home", "tmp", "servers"].map((d) => join(base, d));
  for (const dir of [home, tmpDir, serverCwd]) mkdirSync(dir, { recursive: true });
  const agentDir = join(home, ".pi", "agent");
  const mcpConfig = { mcpServers: { everything: everything({ cwd: serverCwd, shared: true }) } };
  let most = 0;
  const sampler = setInterval(() => (most = Math.max(most, processesIn(serverCwd).length)), 25);
  try {
    const long = [mcp({ tool: "everything_trigger-long-running-operation", args: { duration: 2, steps: 2 } }), { text: "done" }];
    const first = runPi({ pi, extensionDir: root, mcpConfig, home, tmpDir, script: { steps: long } });
    await waitFor(() => processesIn(serverCwd).length === 1, 60_000, "the first Pi's server");
    const echo = [mcp({ tool: "everything_echo", args: { message: "second Pi" } }), { text: "done" }];
    const second = await runPi({ pi, extensionDir: root, mcpConfig, home, tmpDir, script: { steps: echo } });
    const firstDone = await first;
    for (const r of [firstDone, second]) assert.equal(r.code, 0, r.stderr);
    assert.match(firstDone.toolResults[0].text, /Long running operation completed/);
    assert.equal(second.toolResults[0].text, "Echo: second Pi");
    assert.equal(most, 1, "one server process for both Pi processes");
  } finally {
    clearInterval(sampler);
    const stopper = McpAdapter.open({ cwd: serverCwd, agentDir, env: { ...process.env, HOME: home } });
    await stopper.brokerStop();
    await stopper.shutdown();
    await waitFor(() => processesIn(serverCwd).length === 0, 10_000, "the shared server to stop");
    rmSync(base, { recursive: true, force: true });
  }
});
