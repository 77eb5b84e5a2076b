// The reliability matrix: servers that crash, hang, flood and lie, bad caches and configs, load,
// aborts. Every row must end in a specific error (or a working call) with the other servers
// unaffected; each records its result, time and figures for docs/reliability.md.
// (Row 11 is a Rust test, 9b is in pi-e2e.test.mjs, 13 in lifecycle.test.mjs, the security rows in
// security.test.mjs.)
import { describe, test } from "node:test";
import assert from "node:assert/strict";
import { existsSync, mkdirSync, readFileSync, readdirSync, rmSync, statSync, writeFileSync } from "node:fs";
import { createRequire } from "node:module";
import { join } from "node:path";
import { row, timed } from "./helpers/matrix.mjs";
import { everything, extensionEntry, faulty, processesIn, sleep, tempAgent, text, waitFor, withAdapter } from "./helpers/servers.mjs";

const { McpAdapter } = createRequire(import.meta.url)("../index.js");
const here = import.meta.url;
const mb = (bytes) => (bytes / 1024 / 1024).toFixed(0);

describe("reliability matrix", () => {
  row("1", "server exits during a call", here, async ({ note }) => {
    await withAdapter(({ cwd }) => ({ s: faulty([], { cwd }), other: faulty([], { cwd }) }), async ({ adapter }) => {
      assert.equal(text(await adapter.call("s_echo", { text: "up" })), "echo: up");
      const [crashed, ms] = await timed(() => adapter.call("s_crash", {}));
      assert.equal(crashed.details.error, "connection_lost");
      assert.match(text(crashed), /exited with code 3\. Its stderr ends with:\nfault-server: segfault in handler \(simulated\)/);
      assert.ok(ms < 1000, `the in-flight call failed after ${ms} ms`);
      assert.equal(text(await adapter.call("other_echo", { text: "fine" })), "echo: fine");
      note(`in-flight call failed after ${ms} ms with exit code and stderr tail; other server unaffected`);
    });
  });

  row("2a", "server hangs on a call: timeout, then notifications/cancelled", here, async ({ note }) => {
    await withAdapter(({ cwd, home }) => ({ s: faulty([], { cwd, env: { FAULT_LOG: join(home, "fault.log") } }) }), async ({ adapter, agent }) => {
      assert.equal(text(await adapter.call("s_echo", { text: "up" })), "echo: up");
      const [pid] = processesIn(agent.cwd);
      const [hung, ms] = await timed(() => adapter.call("s_hang", {}, { timeoutMs: 300 }));
      assert.equal(hung.details.error, "timeout");
      assert.match(text(hung), /no answer within 0\.3 s \(request timed out\)/);
      const log = await waitFor(() => existsSync(join(agent.home, "fault.log")) && readFileSync(join(agent.home, "fault.log"), "utf8"), 3000, "the cancellation");
      assert.match(log, /^cancelled \d+ /);
      assert.equal(text(await adapter.call("s_echo", { text: "still" })), "echo: still");
      assert.deepEqual(processesIn(agent.cwd), [pid], "a server that still answers is kept");
      note(`timed out after ${ms} ms (timeout 300 ms); the server got notifications/cancelled and, still answering pings, was kept`);
    });
  });

  row("2b", "server stops answering altogether: restarted on next use", here, async ({ note }) => {
    await withAdapter(({ cwd }) => ({ s: faulty([], { cwd }) }), async ({ adapter, agent, has }) => {
      assert.equal(text(await adapter.call("s_echo", { text: "up" })), "echo: up");
      const [before] = processesIn(agent.cwd);
      const frozen = await adapter.call("s_freeze", {}, { timeoutMs: 300 });
      assert.equal(frozen.details.error, "timeout");
      const [after, ms] = await timed(() => adapter.call("s_echo", { text: "back" }));
      assert.equal(text(after), "echo: back");
      assert.ok(has("disconnected", "s"));
      await waitFor(() => has("reconnected", "s"), 3000, "the reconnected event (sent once the new process is listed)");
      const [now] = processesIn(agent.cwd);
      assert.ok(now && now !== before, "a new process serves the server");
      note(`next call: the ping went unanswered for 2 s, the server was restarted and the call answered after ${ms} ms in all`);
    });
  });

  row("2c", "server hangs during initialize: connect timeout", here, async ({ note }) => {
    await withAdapter(({ cwd }) => ({ s: faulty(["hang-on-init"], { cwd, requestTimeoutMs: 500 }), other: faulty([], { cwd }) }), async ({ adapter, agent }) => {
      const [failed, ms] = await timed(() => adapter.call("s_echo", {}));
      assert.equal(failed.details.error, "server_unavailable");
      assert.match(text(failed), /did not answer `initialize` within 0\.5 s/);
      await waitFor(() => processesIn(agent.cwd).length === 0, 3000, "the hung server to be stopped");
      assert.equal(text(await adapter.call("other_echo", { text: "fine" })), "echo: fine");
      note(`failed after ${ms} ms (connect timeout 500 ms); the process was stopped`);
    });
  });

  row("3", "non-JSON garbage and a 17 MB line on stdout", here, async ({ note }) => {
    await withAdapter(({ cwd }) => ({ s: faulty(["garbage", "huge-line=17"], { cwd }) }), async ({ adapter }) => {
      const [listed, ms] = await timed(() => adapter.list("s"));
      assert.match(text(listed), /^s: 8 tools/);
      for (let i = 0; i < 20; i++) assert.equal(text(await adapter.call("s_echo", { text: `${i}` })), `echo: ${i}`);
      note(`garbage skipped, the oversize line dropped; listed in ${ms} ms, 20 calls answered`);
    });
  });

  row("4", "server writes 50 MB to stderr", here, async ({ note }) => {
    await withAdapter(({ cwd }) => ({ s: faulty(["stderr-flood=50"], { cwd }) }), async ({ adapter }) => {
      global.gc?.();
      const rss = process.memoryUsage().rss;
      const [called, ms] = await timed(() => adapter.call("s_echo", { text: "after the flood" }));
      assert.equal(text(called), "echo: after the flood");
      const grown = process.memoryUsage().rss - rss;
      assert.ok(grown < 64 * 1024 * 1024, `RSS grew by ${mb(grown)} MB`);
      note(`no deadlock: connected and answered in ${ms} ms; host RSS +${mb(Math.max(grown, 0))} MB (stderr tail kept: 8 KiB)`);
    });
  });

  row("5a", "server returns a 10 MB result", here, async ({ note }) => {
    await withAdapter(({ cwd }) => ({ s: faulty(["big-result=10"], { cwd }) }), async ({ adapter }) => {
      assert.equal(text(await adapter.call("s_echo", {})), "echo: ");
      const rss = process.memoryUsage().rss;
      const [big, ms] = await timed(() => adapter.call("s_big", {}, { timeoutMs: 30000 }));
      const grown = process.memoryUsage().rss - rss;
      assert.equal(big.isError, false, text(big).slice(0, 200));
      const shown = text(big).length;
      assert.ok(shown < 100 * 1024, `${shown} characters reached the model`);
      const full = big.details.fullOutputPath;
      assert.equal(statSync(full).size, 10 * 1024 * 1024);
      assert.equal((statSync(full).mode & 0o777).toString(8), "600");
      assert.ok(grown < 400 * 1024 * 1024, `RSS grew by ${mb(grown)} MB`);
      rmSync(full);
      note(`answered in ${ms} ms; the output guard showed the model ${(shown / 1024).toFixed(0)} KiB and saved the 10 MiB to a 0600 file; host RSS +${mb(Math.max(grown, 0))} MB`);
    });
  });

  row("5b", "server returns a 40 MB result (over rmcp's 16 MiB line limit)", here, async ({ note }) => {
    await withAdapter(({ cwd }) => ({ s: faulty(["big-result=40"], { cwd }) }), async ({ adapter }) => {
      assert.equal(text(await adapter.call("s_echo", {})), "echo: ");
      const [big, ms] = await timed(() => adapter.call("s_big", {}, { timeoutMs: 60000 }));
      assert.equal(big.details.error, "result_too_large");
      assert.match(text(big), /result too large: the answer was 40\.0 MiB, over the 16 MiB limit/);
      assert.ok(ms < 20000, `failed after ${ms} ms`);
      assert.equal(text(await adapter.call("s_echo", { text: "same server" })), "echo: same server");
      note(`failed with "result too large" after ${ms} ms (call timeout 60 s); the server stays usable`);
    });
  });

  row("6", "server exits at startup / command not found / permission denied", here, async ({ note }) => {
    const servers = ({ cwd, home }) => {
      writeFileSync(join(home, "not-executable"), "#!/bin/sh\n");
      return {
        exits: faulty(["exit-at-start"], { cwd }),
        missing: { command: "no-such-mcp-server-binary", cwd },
        denied: { command: join(home, "not-executable"), cwd },
        ok: faulty([], { cwd }),
      };
    };
    await withAdapter(servers, async ({ adapter }) => {
      const expected = {
        exits: /exited with code 2 before answering `initialize`\. Its stderr ends with:\nfault-server: missing API key FAULT_TOKEN/,
        missing: /cannot start `no-such-mcp-server-binary`: command not found \(check `command` and PATH\)/,
        denied: /cannot start `.*not-executable`: permission denied \(is it executable\?\)/,
      };
      const times = [];
      for (const [server, message] of Object.entries(expected)) {
        const [failed, ms] = await timed(() => adapter.call(`${server}_anything`, {}));
        assert.equal(failed.details.error, "server_unavailable", text(failed));
        assert.match(text(failed), message);
        times.push(`${server} ${ms} ms`);
      }
      assert.match(text(await adapter.status()), /✗ missing: failed \d+ s ago: cannot start/);
      assert.equal(text(await adapter.call("ok_echo", { text: "fine" })), "echo: fine");
      note(`specific errors after ${times.join(", ")}; status shows each failure; other server unaffected`);
    });
  });

  row("7", "tools/list: malformed entries, duplicates, a repeating cursor, 5,000 tools", here, async ({ note }) => {
    await withAdapter(({ cwd }) => ({ bad: faulty(["bad-listing"], { cwd }), many: faulty(["many-tools=5000"], { cwd }) }), async ({ adapter }) => {
      const listed = await adapter.list("bad");
      const names = [...text(listed).matchAll(/^- bad_(\S+?)(?::|$)/gm)].map((m) => m[1]);
      assert.deepEqual(names, ["first", "second", "echo", "crash", "hang", "freeze", "big", "grow", "slow", "seen"]);
      const [many, ms] = await timed(() => adapter.list("many"));
      assert.match(text(many), /^many: 5000 tools/);
      const [found, searchMs] = await timed(() => adapter.search("tool_4999"));
      assert.match(text(found), /^many_tool_4999/m);
      assert.equal(text(await adapter.call("many_tool_17", {})), "unknown tool tool_17");
      note(`malformed, nameless and duplicate entries dropped, the repeated cursor stopped paging; 5,000 tools (50 pages) listed in ${ms} ms, searched in ${searchMs} ms`);
    });
  });

  const burst = async (call, total, parallel) => {
    let next = 0;
    const wrong = [];
    const worker = async () => {
      while (next < total) {
        const i = next++;
        const got = await call(i);
        if (got.actual !== got.expected) wrong.push(`${i}: ${got.actual}`);
      }
    };
    await Promise.all(Array.from({ length: parallel }, worker));
    return wrong;
  };

  row("8a", "500 calls, 50 in flight, on one server", here, async ({ note }) => {
    await withAdapter(({ cwd }) => ({ s: faulty([], { cwd }) }), async ({ adapter }) => {
      const call = async (i) => ({
        expected: `echo: call-${i}`,
        actual: text(await adapter.call("s_echo", { text: `call-${i}`, delayMs: (i * 7) % 20 })),
      });
      const [wrong, ms] = await timed(() => burst(call, 500, 50));
      assert.deepEqual(wrong, []);
      note(`500 calls (answered out of order) in ${ms} ms: 0 lost, 0 mixed up`);
    });
  });

  row("8b", "500 calls, 50 in flight, across 5 servers", here, async ({ note }) => {
    const servers = ({ cwd }) => ({
      f1: faulty([], { cwd }),
      f2: faulty([], { cwd }),
      f3: faulty([], { cwd }),
      e1: everything({ cwd }),
      e2: everything({ cwd }),
    });
    await withAdapter(servers, async ({ adapter }) => {
      const names = ["f1", "f2", "f3", "e1", "e2"];
      const call = async (i) => {
        const server = names[i % names.length];
        const word = `${server}-${i}`;
        const result = server.startsWith("f")
          ? adapter.call(`${server}_echo`, { text: word, delayMs: (i * 7) % 20 })
          : adapter.call(`${server}_echo`, { message: word });
        const expected = server.startsWith("f") ? `echo: ${word}` : `Echo: ${word}`;
        return { expected, actual: text(await result) };
      };
      const [wrong, ms] = await timed(() => burst(call, 500, 50));
      assert.deepEqual(wrong, []);
      note(`500 calls over 3 fault servers and 2 server-everything in ${ms} ms: 0 lost, 0 mixed up`);
    });
  });

  /** An adapter on a fresh agent dir with one fault server, after `prepare(agent)` ran. */
  async function withAgent(prepare, run) {
    const agent = tempAgent(({ cwd }) => ({ mcpServers: { s: faulty([], { cwd }) } }));
    prepare(agent);
    const adapter = McpAdapter.open({ cwd: agent.cwd, agentDir: agent.agentDir, env: agent.env });
    try {
      await run({ adapter, agent });
    } finally {
      await adapter.shutdown();
      await waitFor(() => processesIn(agent.cwd).length === 0, 5000, "servers to stop");
      agent.cleanup();
    }
  }

  row("10", "corrupt, truncated, unreadable and other-version cache files", here, async ({ note }) => {
    const valid = JSON.stringify({ version: 1, servers: { s: { configHash: "x", tools: [], resources: [], cachedAt: Date.now() } } });
    const cases = {
      corrupt: "\u0000\u00ffnot json at all",
      truncated: valid.slice(0, valid.length / 2),
      "other version": JSON.stringify({ version: 2, servers: {} }),
    };
    const rewritten = (path) => {
      try {
        return JSON.parse(readFileSync(path, "utf8")).servers.s.tools.length === 8;
      } catch {
        return false;
      }
    };
    for (const [kind, content] of Object.entries(cases)) {
      await withAgent((agent) => writeFileSync(agent.cachePath, content), async ({ adapter, agent }) => {
        const warning = adapter.diagnostics().find((d) => d.includes("metadata cache"));
        assert.match(warning ?? "", /is ignored and will be rewritten/, kind);
        assert.equal(text(await adapter.call("s_echo", { text: kind })), `echo: ${kind}`);
        await waitFor(() => rewritten(agent.cachePath), 5000, `the ${kind} cache to be rewritten`);
        const backups = readdirSync(agent.agentDir).filter((f) => /^mcp-cache\.json\.bak-\d+$/.test(f));
        if (kind === "other version") {
          assert.equal(backups.length, 1);
          assert.equal(readFileSync(join(agent.agentDir, backups[0]), "utf8"), content);
        } else {
          assert.deepEqual(backups, []);
        }
      });
    }
    // Unreadable: a directory where the file should be. Warned about; the gateway works without it.
    await withAgent((agent) => mkdirSync(agent.cachePath), async ({ adapter }) => {
      assert.match(adapter.diagnostics().join("\n"), /mcp-cache\.json is a directory, not a regular file; it is ignored/);
      assert.equal(text(await adapter.call("s_echo", { text: "x" })), "echo: x");
    });
    note(`${Object.keys(cases).join(", ")}: warned, ignored, rewritten (the other version first backed up as mcp-cache.json.bak-<time>); unreadable: warned, calls work`);
  });

  row("12", "config: bad JSON, wrong types, missing command and url, unknown values", here, async ({ note }) => {
    const agent = tempAgent({
      mcpServers: {
        good: faulty([]),
        typed: { command: 42, args: "not a list" },
        empty: { args: ["x"] },
        odd: { ...faulty([]), lifecycle: "sometimes", colour: "blue" },
      },
    });
    writeFileSync(join(agent.cwd, ".mcp.json"), '{ "mcpServers": { "broken": { "command": "x", } ');
    const adapter = McpAdapter.open({ cwd: agent.cwd, agentDir: agent.agentDir, env: agent.env });
    try {
      const lines = adapter.diagnostics();
      const about = (pattern) => lines.find((l) => pattern.test(l)) ?? assert.fail(`no diagnostic matches ${pattern}:\n${lines.join("\n")}`);
      assert.match(about(/project\/\.mcp\.json/), /^error: .*JSON/);
      assert.match(about(/"typed"/), /^error: .*mcp\.json.*`command`: must be a string/);
      assert.match(about(/"empty"/), /^error: .*mcp\.json.*`command`.*`url`/);
      assert.match(about(/"odd"/), /^warning: .*`lifecycle`.*"sometimes"/);
      const status = text(await adapter.status());
      assert.match(status, /Configuration problems:/);
      assert.equal(text(await adapter.call("good_echo", { text: "works" })), "echo: works");
      note(`${lines.length} diagnostics naming file (and line), server and field: errors for the bad JSON, the wrong type and the missing command/url, a warning for the unknown value; the valid server works`);
    } finally {
      await adapter.shutdown();
      await waitFor(() => processesIn(agent.cwd).length === 0, 5000, "servers to stop");
      agent.cleanup();
    }
  });
});

describe("reliability matrix: Pi's abort signal", () => {
  row("9a", "abort mid-call through the extension's signal handling (Pi stubbed)", here, async ({ note }) => {
    const agent = tempAgent(({ cwd, home }) => ({ mcpServers: { s: faulty([], { cwd, env: { FAULT_LOG: join(home, "fault.log") } }) } }));
    const saved = { HOME: process.env.HOME, PI_CODING_AGENT_DIR: process.env.PI_CODING_AGENT_DIR };
    Object.assign(process.env, { HOME: agent.home, PI_CODING_AGENT_DIR: agent.agentDir });
    const handlers = {};
    let tool;
    const pi = {
      registerTool: (t) => (tool = t),
      registerCommand: () => {},
      registerFlag: () => {},
      on: (event, handler) => (handlers[event] = handler),
    };
    try {
      const { default: extension } = await import(extensionEntry);
      extension(pi);
      handlers.session_start({}, { cwd: agent.cwd });
      const first = await tool.execute("warm-up", { tool: "s_echo", args: { text: "up" } }, undefined, undefined);
      assert.equal(text(first), "echo: up");
      const controller = new AbortController();
      const running = tool.execute("abort-me", { tool: "s_hang", args: {} }, controller.signal, () => {});
      await sleep(200);
      const aborted = Date.now();
      controller.abort();
      const result = await running;
      const ms = Date.now() - aborted;
      assert.equal(result.details.error, "aborted");
      assert.match(text(result), /aborted; the server was told to stop/);
      assert.ok(ms < 1000, `returned ${ms} ms after the abort`);
      const log = await waitFor(() => existsSync(join(agent.home, "fault.log")) && readFileSync(join(agent.home, "fault.log"), "utf8"), 3000, "the cancellation");
      assert.match(log, /^cancelled \d+ cancelled by the user/);
      const after = await tool.execute("after", { tool: "s_echo", args: { text: "again" } }, new AbortController().signal, undefined);
      assert.equal(text(after), "echo: again");
      note(`the call returned as aborted ${ms} ms after the signal; the server got notifications/cancelled`);
    } finally {
      await handlers.session_shutdown?.();
      Object.assign(process.env, saved);
      for (const [k, v] of Object.entries(saved)) if (v === undefined) delete process.env[k];
      await waitFor(() => processesIn(agent.cwd).length === 0, 5000, "servers to stop");
      agent.cleanup();
    }
  });
});
