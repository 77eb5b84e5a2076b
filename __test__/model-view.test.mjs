// What the model sees, through the native API: argument checks before dispatch, the output guard,
// and direct tool definitions from the cache.
import { after, before, describe, test } from "node:test";
import assert from "node:assert/strict";
import { createRequire } from "node:module";
import { readFileSync, statSync } from "node:fs";
import { dirname } from "node:path";
import { everything, faulty, processesIn, tempAgent, waitFor } from "./helpers/servers.mjs";

const { McpAdapter, configHash } = createRequire(import.meta.url)("../index.js");
const text = (outcome) => outcome.content.map((c) => c.text ?? "").join("\n");
const open = (agent, env = {}) => McpAdapter.open({ cwd: agent.cwd, agentDir: agent.agentDir, env: { ...agent.env, ...env } });

describe("arguments are checked against the tool's schema", () => {
  let agent;
  before(async () => {
    agent = tempAgent(({ cwd }) => ({ mcpServers: { everything: everything({ cwd }) } }));
    // Fill the cache, then stop: later instances know the schemas without a server.
    const first = open(agent);
    await first.list("everything");
    await first.shutdown();
    await waitFor(() => processesIn(agent.cwd).length === 0, 5000, "the server to stop");
  });
  after(() => agent?.cleanup());

  test("a mismatch names each problem and the parameters, and starts no server", async () => {
    const adapter = open(agent);
    try {
      const wrong = await adapter.execute({ tool: "everything_get-sum", args: { a: "one", c: 2 } });
      assert.equal(wrong.isError, true);
      assert.equal(wrong.details.error, "invalid_args");
      assert.deepEqual(wrong.details.problems, [
        "`b`: required (number), missing",
        "`a`: expected number, got string \"one\"",
      ]);
      assert.match(text(wrong), /^Arguments for everything_get-sum do not fit its schema; nothing was sent:/);
      assert.match(text(wrong), /Expected parameters:\n- a \(number, required\)/);
      const missing = await adapter.execute({ tool: "everything_echo", args: "{}" });
      assert.match(text(missing), /`message`: required \(string\), missing/);
      assert.deepEqual(processesIn(agent.cwd), [], "no server was started for a wrong call");

      const right = await adapter.execute({ tool: "everything_get-sum", args: '{"a": 1, "b": 2}' });
      assert.equal(right.isError, false, text(right));
      assert.match(text(right), /3/);
      // Numbers sent as text, as models do, are converted where the schema wants a number.
      const coerced = await adapter.execute({ tool: "everything_get-sum", args: { a: "2", b: " 5 " } });
      assert.equal(coerced.isError, false, text(coerced));
      assert.match(text(coerced), /7/);
    } finally {
      await adapter.shutdown();
    }
  });

  test("gateway fields nested in args and args of the wrong kind get a specific error", async () => {
    const adapter = open(agent);
    try {
      const nested = await adapter.execute({ args: { tool: "everything_echo", message: "x" } });
      assert.equal(nested.details.error, "nested_params");
      const notObject = await adapter.execute({ tool: "everything_echo", args: "[1, 2]" });
      assert.match(text(notObject), /`args` must be a JSON object, got an array/);
      const broken = await adapter.execute({ tool: "everything_echo", args: "{message: hi" });
      assert.match(text(broken), /`args` is not valid JSON/);
    } finally {
      await adapter.shutdown();
    }
  });
});

describe("output guard", () => {
  test("a 1 MB result is cut to a preview; the whole text is in a private file; images pass", { timeout: 60_000 }, async () => {
    const agent = tempAgent(({ cwd }) => ({
      mcpServers: { faulty: faulty(["big-result=1"], { cwd }), everything: everything({ cwd }) },
    }));
    const adapter = open(agent);
    try {
      const big = await adapter.execute({ tool: "faulty_big" });
      assert.equal(big.isError, false);
      const shown = text(big);
      assert.ok(Buffer.byteLength(shown) < 52 * 1024, `the preview is ${Buffer.byteLength(shown)} bytes`);
      assert.match(shown, /\[Output cut: showing 1 of 1 lines \(50\.0 KB of 1\.0 MB\)\. The full text is in (\S+) — read it/);
      const file = big.details.fullOutputPath;
      assert.equal(readFileSync(file, "utf8"), "y".repeat(1024 * 1024));
      assert.equal(statSync(file).mode & 0o777, 0o600);
      assert.equal(statSync(dirname(file)).mode & 0o777, 0o700);

      const image = await adapter.execute({ tool: "everything_get-tiny-image" });
      assert.ok(image.content.some((c) => c.type === "image" && c.data.length > 100), "images are kept");
      assert.equal(image.details.fullOutputPath, undefined);
    } finally {
      await adapter.shutdown();
      agent.cleanup();
    }
  });
});

describe("direct tools", () => {
  const cacheEntry = (entry, env, tools) => ({
    configHash: configHash(entry, env),
    tools: tools.map((name) => ({ name, description: `Does ${name}.`, inputSchema: { $schema: "x", type: "object", properties: { q: { type: "string" } }, required: ["q"], additionalProperties: false } })),
    resources: [{ name: "readme", uri: "file:///readme" }],
    cachedAt: Date.now(),
  });

  test("selected tools come from the cache with their schemas; collisions are skipped with a warning", () => {
    const a = faulty([], { directTools: ["echo", "read", "nope"], toolPrefix: "none" });
    const b = faulty(["x"], { directTools: true, toolPrefix: "none" });
    const c = faulty(["y"], { directTools: ["get_readme"] });
    const config = { mcpServers: { a, b, c }, settings: { toolPrefix: "server" } };
    const agent = tempAgent(config);
    const cache = { version: 1, servers: {
      a: cacheEntry(a, agent.env, ["echo", "read", "solo"]),
      b: cacheEntry(b, agent.env, ["echo", "other"]),
      c: cacheEntry(c, agent.env, ["lookup"]),
    } };
    agent.cleanup();
    const withCache = tempAgent(config, { cache });
    try {
      const { tools, warnings } = open(withCache).directTools();
      assert.deepEqual(tools.map((t) => `${t.server}/${t.name}`), ["b/other", "b/get_readme", "c/c_get_readme"]);
      const other = tools[0];
      assert.deepEqual(other.parameters, { type: "object", properties: { q: { type: "string" } }, required: ["q"] });
      assert.equal(other.label, "MCP: other");
      assert.equal(other.description, "Does other.");
      assert.match(tools[2].description, /Reads the MCP resource file:\/\/\/readme/);
      assert.deepEqual(warnings.sort(), [
        'MCP: direct tool "echo" of server "a" is skipped: another server has a tool of that name; set a toolPrefix.',
        'MCP: direct tool "echo" of server "b" is skipped: another server has a tool of that name; set a toolPrefix.',
        'MCP: direct tool "nope" is not a tool of server "a"; check `directTools`.',
        'MCP: direct tool "read" of server "a" is skipped: it collides with Pi\'s built-in tool; call it with mcp({ tool: "read", server: "a" }).',
      ]);

      const fromEnv = open(withCache, { MCP_DIRECT_TOOLS: "a/solo, c" }).directTools();
      assert.deepEqual(fromEnv.tools.map((t) => t.name), ["solo", "c_lookup", "c_get_readme"]);
      assert.deepEqual(open(withCache, { MCP_DIRECT_TOOLS: "__none__" }).directTools().tools, []);
      assert.deepEqual(processesIn(withCache.cwd), [], "nothing was started");
    } finally {
      withCache.cleanup();
    }
  });
});
