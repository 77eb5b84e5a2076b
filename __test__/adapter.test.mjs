// The native API against real servers: every mode, the cache shared between instances, lazy
// connects, cancellation, events and a clean shutdown.
import { after, before, describe, test } from "node:test";
import assert from "node:assert/strict";
import { createRequire } from "node:module";
import { existsSync, readFileSync } from "node:fs";
import { join } from "node:path";
import { everything, faulty, memory, processesIn, python, tempAgent, waitFor } from "./helpers/servers.mjs";

const { McpAdapter } = createRequire(import.meta.url)("../index.js");
const text = (outcome) => outcome.content.map((c) => c.text ?? "").join("\n");

describe("McpAdapter with server-everything and server-memory", () => {
  let agent;
  let adapter;
  before(() => {
    agent = tempAgent(({ home, cwd }) => ({
      mcpServers: {
        everything: everything({ cwd }),
        memory: memory(join(home, "memory.jsonl"), { cwd }),
      },
    }));
    adapter = McpAdapter.open({ cwd: agent.cwd, agentDir: agent.agentDir, env: agent.env });
  });
  after(async () => {
    await adapter?.shutdown();
    agent?.cleanup();
  });

  test("opens without starting anything and names its servers", async () => {
    const def = adapter.toolDefinition();
    assert.equal(def.name, "mcp");
    assert.match(def.description, /everything, memory/);
    assert.deepEqual(adapter.servers(), ["everything", "memory"]);
    const status = await adapter.status();
    assert.equal(status.details.mode, "status");
    assert.match(text(status), /0\/2 servers/);
    assert.deepEqual(processesIn(agent.cwd), []);
    console.log(`# mcp tool definition: ${JSON.stringify(def).length} bytes`);
  });

  test("list connects lazily and writes the cache", async () => {
    const listed = await adapter.list("everything");
    assert.equal(listed.isError, false, text(listed));
    assert.match(text(listed), /everything_echo/);
    // The cache is written in the background, off the call's path.
    await waitFor(() => existsSync(agent.cachePath), 5000, "the cache file");
    const cache = JSON.parse(readFileSync(agent.cachePath, "utf8"));
    assert.equal(cache.version, 1);
    assert.ok(cache.servers.everything.tools.some((t) => t.name === "echo"));
    assert.match(cache.servers.everything.configHash, /^[0-9a-f]{64}$/);
  });

  test("search, describe and call", async () => {
    const found = await adapter.search("echo");
    assert.match(text(found), /^everything_echo/m);
    const described = await adapter.describe("everything_echo");
    assert.match(text(described), /message/);
    const called = await adapter.call("everything_echo", { message: "hi" });
    assert.deepEqual(called.content, [{ type: "text", text: "Echo: hi" }]);
    assert.equal(called.isError, false);
  });

  test("execute picks the mode, accepts args as a JSON string", async () => {
    const called = await adapter.execute({ tool: "everything_get-sum", args: '{"a": 2, "b": 3}' });
    assert.match(text(called), /5/);
    const nested = await adapter.execute({ args: { search: "echo" } });
    assert.equal(nested.details.error, "nested_params");
    const status = await adapter.execute({});
    assert.equal(status.details.mode, "status");
  });

  test("memory server round trip", async () => {
    const created = await adapter.execute({
      tool: "memory_create_entities",
      args: { entities: [{ name: "pi", entityType: "agent", observations: ["uses MCP"] }] },
    });
    assert.equal(created.isError, false, text(created));
    const graph = await adapter.call("memory_read_graph", {});
    assert.match(text(graph), /uses MCP/);
  });

  test("instructions and connect", async () => {
    const instructions = await adapter.execute({ instructions: "everything" });
    assert.equal(instructions.isError, false, text(instructions));
    assert.match(text(instructions), /^Instructions of "everything":/);
    const before = processesIn(agent.cwd);
    const connected = await adapter.execute({ connect: "everything" });
    assert.equal(connected.details.mode, "connect");
    assert.match(text(connected), /^everything: \d+ tools \(connected\)/);
    await waitFor(() => processesIn(agent.cwd).length === before.length, 5000, "the old server process to be replaced");
    assert.notDeepEqual(processesIn(agent.cwd), before, "connect restarts the server");
    const unknown = await adapter.execute({ connect: "nope" });
    assert.equal(unknown.details.error, "server_not_found");
    assert.match(text(unknown), /Configured servers: everything, memory/);
  });

  test("unknown tools get suggestions", async () => {
    const missing = await adapter.call("everything_ecko", {});
    assert.equal(missing.details.error, "tool_not_found");
    assert.match(text(missing), /everything_echo/);
  });

  test("cancel aborts a running call promptly", async () => {
    const started = Date.now();
    const running = adapter.execute({ tool: "everything_trigger-long-running-operation", args: { duration: 30, steps: 1 } }, "call-1");
    setTimeout(() => adapter.cancel("call-1"), 300);
    const result = await running;
    assert.equal(result.details.error, "aborted");
    assert.ok(Date.now() - started < 3000);
  });

  test("a second instance works from the cache without starting servers", async () => {
    const second = McpAdapter.open({ cwd: agent.cwd, agentDir: agent.agentDir, env: agent.env });
    const before = processesIn(agent.cwd).length;
    const status = await second.status();
    assert.match(text(status), /everything/);
    const found = await second.search("sum");
    assert.match(text(found), /everything_get-sum/);
    assert.equal(processesIn(agent.cwd).length, before, "search from cache must not spawn a server");
    await second.shutdown();
  });

  test("shutdown stops every server", async () => {
    assert.ok(processesIn(agent.cwd).length >= 2);
    await adapter.shutdown();
    await waitFor(() => processesIn(agent.cwd).length === 0, 5000, "servers to exit");
  });
});

describe("first run", () => {
  test("start() fills the cache in the background and emits events", async () => {
    const agent = tempAgent(({ cwd }) => ({ mcpServers: { everything: everything({ cwd }), broken: { command: "no-such-binary-for-mcp" } } }));
    const adapter = McpAdapter.open({ cwd: agent.cwd, agentDir: agent.agentDir, env: agent.env });
    const events = [];
    adapter.onEvent((e) => events.push(e));
    try {
      const started = Date.now();
      await adapter.start();
      assert.ok(Date.now() - started < 200, "start must not wait for servers");
      await waitFor(() => existsSync(agent.cachePath) && readFileSync(agent.cachePath, "utf8").includes("everything"), 20000, "cache fill");
      await waitFor(() => events.some((e) => e.type === "connected" && e.server === "everything"), 5000, "connected event");
      await waitFor(() => events.some((e) => e.type === "failed" && e.server === "broken"), 5000, "failed event");
      const status = text(await adapter.status());
      assert.match(status, /broken/);
      assert.match(status, /command not found/);
    } finally {
      await adapter.shutdown();
      agent.cleanup();
    }
  });

  test("a bad server entry is reported and the rest works", async () => {
    const agent = tempAgent(({ cwd }) => ({ mcpServers: { everything: everything({ cwd }), nocommand: { args: ["x"] } } }));
    const adapter = McpAdapter.open({ cwd: agent.cwd, agentDir: agent.agentDir, env: agent.env });
    try {
      assert.ok(adapter.diagnostics().some((d) => d.includes("nocommand")), adapter.diagnostics().join("\n"));
      const called = await adapter.call("everything_echo", { message: "still works" });
      assert.equal(text(called), "Echo: still works");
    } finally {
      await adapter.shutdown();
      agent.cleanup();
    }
  });
});

describe("servers that misbehave while listing", () => {
  test("a malformed entry, a duplicate and a repeating cursor lose nothing else", async () => {
    const agent = tempAgent(({ cwd }) => ({ mcpServers: { faulty: faulty(["bad-listing"], { cwd }) } }));
    const adapter = McpAdapter.open({ cwd: agent.cwd, agentDir: agent.agentDir, env: agent.env });
    try {
      const listed = await adapter.list("faulty");
      assert.equal(listed.isError, false, text(listed));
      const names = [...text(listed).matchAll(/^- (\S+?)(?::|$)/gm)].map((m) => m[1]);
      assert.deepEqual(names, ["faulty_first", "faulty_second", "faulty_echo", "faulty_crash", "faulty_hang", "faulty_freeze", "faulty_big", "faulty_grow", "faulty_slow", "faulty_seen"]);
      const called = await adapter.call("faulty_echo", { text: "ok" });
      assert.equal(text(called), "echo: ok");
    } finally {
      await adapter.shutdown();
      agent.cleanup();
    }
  });

  test("pages are followed to the end", async () => {
    const agent = tempAgent(({ cwd }) => ({ mcpServers: { many: faulty(["many-tools=250"], { cwd }) } }));
    const adapter = McpAdapter.open({ cwd: agent.cwd, agentDir: agent.agentDir, env: agent.env });
    try {
      const listed = await adapter.list("many");
      assert.match(text(listed), /^many: 250 tools/);
      const found = await adapter.search("tool_249");
      assert.match(text(found), /^many_tool_249/m);
    } finally {
      await adapter.shutdown();
      agent.cleanup();
    }
  });
});

describe("a server on the official Python SDK", () => {
  test("tools, every content type, errors, progress, resources, prompts and instructions", async () => {
    const agent = tempAgent(({ cwd }) => ({ mcpServers: { py: python({ cwd }) } }));
    const adapter = McpAdapter.open({ cwd: agent.cwd, agentDir: agent.agentDir, env: agent.env });
    const events = [];
    adapter.onEvent((e) => events.push(e));
    try {
      const listed = await adapter.list("py");
      assert.match(text(listed), /^py: 15 tools/);
      assert.match(text(listed), /- py_get_hello: A greeting/);
      assert.match(text(listed), /Instructions: A Python test server/);
      assert.equal(text(await adapter.call("py_echo", { message: "hi" })), "py echo: hi");
      assert.match(text(await adapter.call("py_add", { a: 2, b: 40 })), /42/);

      const mixed = await adapter.call("py_mixed", {});
      assert.deepEqual(mixed.content.map((c) => c.type), ["text", "image", "text", "text", "text"]);
      assert.equal(mixed.content[1].mimeType, "image/png");
      assert.match(mixed.content[2].text, /^\[Audio: audio\/wav, \d+ bytes, not shown\]$/);
      assert.equal(mixed.content[3].text, '[Resource link: hello]\nURI: test://hello\nRead it: mcp({ read: "test://hello", server: "py" })');
      assert.equal(mixed.content[4].text, "[Resource: test://embedded]\nembedded text");

      const failed = await adapter.call("py_fail", { reason: "no such file" });
      assert.equal(failed.isError, true);
      assert.equal(failed.details.error, "tool_error");
      assert.match(text(failed), /Error executing tool fail/);

      const slow = await adapter.execute({ tool: "py_slow", args: { steps: 3, delay: 0.05 } }, "slow-1");
      assert.equal(text(slow), "slow done after 3 steps");
      const progress = events.filter((e) => e.type === "progress" && e.callId === "slow-1");
      assert.deepEqual(progress.map((e) => e.text), [1, 2, 3].map((i) => `py_slow: ${i}/3 (step ${i} of 3)`));

      assert.equal(text(await adapter.call("py_get_hello", {})), "hello from a resource");
      assert.equal(text(await adapter.call("py_read_hello", {})), "hello from a resource", "read_<r> is an alias");
      await waitFor(() => existsSync(agent.cachePath), 5000, "the cache file");
      const cached = JSON.parse(readFileSync(agent.cachePath, "utf8")).servers.py;
      assert.deepEqual(cached.prompts.map((p) => p.name), ["greet"]);
      assert.equal(cached.instructions, "A Python test server: echo, add, slow, fail, mixed.");
    } finally {
      await adapter.shutdown();
      agent.cleanup();
    }
  });
});
