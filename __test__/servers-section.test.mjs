// The system prompt's `mcp_servers` section through the native API (`serversSection()`): which
// servers it names, their summaries (cleaned by the one rule) measured with the real o200k
// tokenizer on hostile text, the 30-server bound, and the same bytes for the same config and
// cache (two opens, a reconnect).
import { describe, test } from "node:test";
import assert from "node:assert/strict";
import { readFileSync, writeFileSync } from "node:fs";
import { createRequire } from "node:module";
import { join } from "node:path";
import { encode } from "gpt-tokenizer/encoding/o200k_base";
import { tables } from "../scripts/o200k-tables.mjs";
import { row } from "./helpers/matrix.mjs";
import { everything, faulty, processesIn, tempAgent, waitFor } from "./helpers/servers.mjs";

const { McpAdapter } = createRequire(import.meta.url)("../index.js");
const open = (agent) => McpAdapter.open({ cwd: agent.cwd, agentDir: agent.agentDir, env: agent.env });
/** A server that is never started: only its config entry matters. */
const idle = (extra = {}) => ({ command: "/nonexistent/never-started", ...extra });
/** The section's server lines as { name, summary }. */
const lines = (section) =>
  section
    .split("\n")
    .filter((l) => l.startsWith("- "))
    .map((l) => {
      const [, name, summary = ""] = /^- (.*?)(?:: (.*))?$/.exec(l);
      return { name, summary };
    });
const UNSAFE = /[\u0000-\u001f\u007f-\u009f\u202a-\u202e\u2066-\u2069\u200e\u200f\u061c\ufeff]/u;

const HOSTILE = {
  english: "Filesystem operations: read, write, move and search files and directories within the allowed roots, with glob patterns",
  "long-word": "Supercalifragilisticexpialidocious".repeat(40),
  base64: Buffer.from("x".repeat(600).split("").map((_, i) => String.fromCharCode(i % 256)).join(""), "latin1").toString("base64"),
  cjk: "这是一个用于读取和写入文件的服务器，它支持搜索、移动和删除文件，以及列出允许访问的目录。".repeat(3),
  emoji: "🙂👨‍👩‍👧‍👦🏳️‍🌈🇯🇵".repeat(30),
  mixed: "GitHub の issue と pull request を扱う server: naïve café Ünïcödé 🙂 and more words after that",
  escapes: "\u001b]0;owned\u0007\u001b[2J\u001b[31mRed alert\u001b[0m: \u202eexe.txt\u202c and \u009b31mC1\u0007 bells\u0008\u0000",
  megabyte: `A line of a megabyte ${"m ".repeat(512 * 1024)}`,
  // Each word a vocabulary entry of 16 bytes: the most a token of the bound covers.
  "long-entries": Array(40).fill("MERCHANTABILITY").join(" "),
  "digits-and-symbols": "1234567890".repeat(20) + " ~!@#$%^&*()_+{}|:<>?".repeat(10),
};

row("F4", "hostile descriptions and instructions: each server's line is cleaned and ≤ 20 o200k tokens", import.meta.url, async ({ note }) => {
  const mcpServers = Object.fromEntries(Object.entries(HOSTILE).map(([name, description]) => [name, idle({ description })]));
  // One server's summary comes from the instructions it gave (escape sequences, 1 MB on one line).
  const instructions = `\u001b[1mBold\u001b[0m instructions \u202eof a server\u202c ${"w".repeat(1 << 20)}\nsecond line`;
  const agent = tempAgent(({ cwd }) => {
    writeFileSync(join(cwd, "instructions.txt"), instructions);
    return { mcpServers: { ...mcpServers, instructed: faulty([], { cwd, env: { FAULT_INSTRUCTIONS: join(cwd, "instructions.txt") } }) } };
  });
  try {
    const filler = open(agent);
    await filler.list("instructed");
    await filler.shutdown();
    await waitFor(() => processesIn(agent.cwd).length === 0, 5000, "the server to stop");
    const adapter = open(agent);
    const section = adapter.serversSection();
    await adapter.shutdown();
    for (const line of section.split("\n")) assert.doesNotMatch(line, UNSAFE);
    const byName = Object.fromEntries(lines(section).map((l) => [l.name, l.summary]));
    assert.deepEqual(Object.keys(byName).sort(), [...Object.keys(HOSTILE), "instructed"].sort());
    const tokens = Object.fromEntries(Object.entries(byName).map(([name, summary]) => [name, encode(summary).length]));
    for (const [name, count] of Object.entries(tokens)) assert.ok(count <= 20, `${name}: ${count} tokens in ${JSON.stringify(byName[name])}`);
    // Cut, but not to nothing: the bound is conservative, not degenerate.
    assert.match(byName.english, /^Filesystem operations: read, write, move and search \w[\w ]*…$/);
    // Escape sequences removed, other controls and bidi controls shown as text (the one rule).
    assert.match(byName.escapes, /^Red alert: \\u\{202e\}exe\.txt\\u\{202c\}/);
    assert.match(byName.instructed, /^Bold instructions \\u\{202e\}of a server\\u\{202c\}( w+)?…$/);
    assert.match(byName.cjk, /^这是一个用…$/);
    for (const name of ["long-word", "base64", "emoji", "megabyte", "long-entries"]) assert.ok(byName[name].length >= 4, `${name}: ${byName[name]}`);
    note(`o200k tokens per summary: ${Object.entries(tokens).map(([n, t]) => `${n} ${t}`).join(", ")}; section ${Buffer.byteLength(section)} B`);
  } finally {
    agent.cleanup();
  }
});

row("F4", "300 configured servers: 30 named, sorted, then \"+270 more\"; 30 servers: all named", import.meta.url, async ({ note }) => {
  const config = (n) => ({ mcpServers: Object.fromEntries(Array.from({ length: n }, (_, i) => [`server-${String(n - i).padStart(3, "0")}`, idle({ description: `Server number ${n - i}` })])) });
  for (const [n, named, more] of [[30, 30, null], [300, 30, "+270 more"]]) {
    const agent = tempAgent(config(n));
    try {
      const adapter = open(agent);
      const section = adapter.serversSection();
      await adapter.shutdown();
      const names = lines(section).map((l) => l.name);
      assert.equal(names.length, named);
      assert.deepEqual(names, [...names].sort());
      assert.equal(names[0], "server-001");
      const last = section.split("\n").at(-1);
      if (more) assert.equal(last, `${more}: \`mcp\` without arguments lists them all.`);
      else assert.match(last, /^- server-030: Server number 30$/);
      note(`${n} servers: ${names.length} named, ${encode(section).length} o200k tokens`);
    } finally {
      agent.cleanup();
    }
  }
});

describe("the servers the section names", () => {
  test("those whose tools are not all declared to the model: not direct-only, hidden or disabled ones", async () => {
    const agent = tempAgent({
      mcpServers: {
        plain: idle(),
        codemode: idle({ exposure: "codemode" }),
        deferred: idle({ exposure: "deferred" }),
        "some-direct": idle({ toolExposure: { search: "direct" } }),
        "direct-but-one": idle({ exposure: "direct", toolExposure: { delete: "codemode" } }),
        direct: idle({ exposure: "direct" }),
        "all-direct": idle({ toolExposure: { "*": "direct" } }),
        "direct-tools": idle({ directTools: true }),
        "some-direct-tools": idle({ directTools: ["echo"] }),
        hidden: idle({ exposure: "hidden" }),
        "direct-or-hidden": idle({ exposure: "direct", toolExposure: { "delete_*": "hidden" } }),
        off: idle({ enabled: false }),
      },
    });
    try {
      const adapter = open(agent);
      assert.deepEqual(lines(adapter.serversSection()).map((l) => l.name), ["codemode", "deferred", "direct-but-one", "plain", "some-direct", "some-direct-tools"]);
      await adapter.shutdown();
      // MCP_DIRECT_TOOLS from a parent agent declares every tool of a server.
      const sub = McpAdapter.open({ cwd: agent.cwd, agentDir: agent.agentDir, env: { ...agent.env, MCP_DIRECT_TOOLS: "plain" } });
      assert.ok(!lines(sub.serversSection()).some((l) => l.name === "plain"));
      await sub.shutdown();
    } finally {
      agent.cleanup();
    }
  });

  test("none: no section", async () => {
    const agent = tempAgent({ mcpServers: { direct: idle({ exposure: "direct" }) } });
    try {
      const adapter = open(agent);
      assert.equal(adapter.serversSection(), null);
      await adapter.shutdown();
    } finally {
      agent.cleanup();
    }
  });
});

test("the same config and cache give the same bytes: two opens, a connection, a reconnect, a failed server", async () => {
  const agent = tempAgent(({ cwd }) => ({
    mcpServers: {
      everything: everything({ cwd }),
      broken: faulty(["exit-at-start"], { cwd, description: "Fails at every start" }),
      memory: idle({ description: "Knowledge graph memory" }),
    },
  }));
  try {
    const filler = open(agent);
    await filler.list("everything");
    await filler.shutdown();
    const first = open(agent);
    const cached = first.serversSection();
    // everything's summary is the first line of its instructions, from the cache.
    assert.match(cached, /\n- everything: \S/);
    const second = open(agent);
    assert.equal(second.serversSection(), cached, "a second open");
    await second.shutdown();
    await first.execute({ tool: "everything_echo", args: { message: "hi" } });
    assert.equal(first.serversSection(), cached, "connected");
    await first.connect("everything"); // a reconnect: the server is listed again
    assert.equal(first.serversSection(), cached, "reconnected");
    await first.execute({ tool: "broken_anything", args: {} });
    assert.equal(first.serversSection(), cached, "after a failed start");
    await first.shutdown();
    assert.equal(first.serversSection(), cached, "after shutdown");
    await waitFor(() => processesIn(agent.cwd).length === 0, 5000, "the servers to stop");
  } finally {
    agent.cleanup();
  }
});

test("the o200k tables the bound is made from are o200k's, as scripts/o200k-tables.mjs writes them", () => {
  for (const [file, content] of Object.entries(tables())) assert.ok(readFileSync(file).equals(content), `${file} is stale: run node scripts/o200k-tables.mjs`);
});
