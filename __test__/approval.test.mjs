// Tool approval (`approveTools`) through the native API and the `pi-mcp` command line: what asks,
// the dialog the core writes, session grants and what restores them, the answers the model gets
// (approval_required without anyone to ask, approval_denied), the dialog nobody answers, reads and
// prompts of a server whose every use asks, and `pi-mcp call --yes` inside and outside Pi.
import assert from "node:assert/strict";
import { writeFileSync } from "node:fs";
import { createRequire } from "node:module";
import { join } from "node:path";
import { describe, test } from "node:test";
import { frontEnd } from "../extension/pi-mcp-native/front-end.js";
import { everything, memory, pimcp, processesIn, tempAgent, text, waitFor } from "./helpers/servers.mjs";

const { McpAdapter } = createRequire(import.meta.url)("../index.js");

/** An agent dir whose mcp.json holds `config({ home })`, and adapters opened on it; all closed by `close()`. */
function agentWith(config) {
  const agent = tempAgent(config);
  const opened = [];
  const open = (options = {}) => {
    const adapter = McpAdapter.open({ cwd: agent.cwd, agentDir: agent.agentDir, env: agent.env, ...options });
    opened.push(adapter);
    return adapter;
  };
  const close = async () => {
    await Promise.all(opened.map((a) => a.shutdown()));
    await waitFor(() => processesIn(agent.cwd).length === 0, 5000, "servers to stop");
    agent.cleanup();
  };
  return { agent, open, close };
}

/** A front end whose dialogs `pick(question)` answers (a label; undefined: closed unanswered); it records what was asked and kept. */
function answering(adapter, pick) {
  const asked = [];
  const kept = [];
  const withdrawn = [];
  const ui = { select: async (title, options, opts) => (asked.push({ title, options, timeout: opts?.timeout }), pick(title, options, opts)) };
  const front = frontEnd(adapter, { ui: () => ui, remember: (entry) => kept.push(entry) });
  adapter.setFrontEnd({ ...front, withdraw: (id) => (withdrawn.push(id), front.withdraw(id)) });
  return { asked, kept, withdrawn };
}

const memoryConfig = (settings) => ({ home }) => ({ settings, mcpServers: { mem: memory(join(home, "graph.json")) } });

describe("approveTools: \"destructive\" over server-memory", () => {
  test("a destructive tool asks; Allow once, for the session, Deny; read-only and non-destructive ones run unasked", async () => {
    const { open, close } = agentWith(memoryConfig({ approveTools: "destructive" }));
    try {
      const adapter = open();
      let answer = "Allow once";
      const { asked, kept } = answering(adapter, () => answer);
      // destructiveHint false: runs unasked.
      const created = await adapter.call("mem_create_entities", { entities: [{ name: "Ada", entityType: "person", observations: [] }] });
      assert.equal(created.isError, false, text(created));
      assert.equal(asked.length, 0);
      const deleted = await adapter.call("mem_delete_observations", { deletions: [{ entityName: "Ada", observations: ["x"] }], apiKey: "sk-1" });
      assert.equal(deleted.isError, false, text(deleted));
      assert.equal(asked.length, 1);
      const [dialog] = asked;
      assert.equal(
        dialog.title.split("\n").slice(0, 3).join("\n"),
        'MCP server "mem" wants to run delete_observations\n\nHints (the server\'s own claim): destructive, idempotent',
      );
      assert.match(dialog.title, /^Arguments:\n {2}deletions: \[\{"entityName":"Ada","observations":\["x"\]\}\]\n {2}apiKey: \(hidden\)$/m);
      assert.doesNotMatch(dialog.title, /sk-1/);
      assert.match(dialog.title, /Asked because of `settings\.approveTools` in ~\/\.pi\/agent\/mcp\.json\.$/);
      assert.deepEqual(dialog.options, ["Allow once", "Allow delete_observations for this session", 'Allow everything of "mem" for this session', "Deny"]);
      assert.equal(dialog.timeout, 120_000);
      assert.equal(kept.length, 0, "allowed once: nothing kept");

      // Once is once.
      answer = "Deny";
      const denied = await adapter.call("mem_delete_entities", { entityNames: ["Ada"] });
      assert.equal(denied.details.error, "approval_denied");
      assert.equal(text(denied), 'The user declined the MCP tool "mem_delete_entities" of server "mem"; it did not run. Do not try it again unless the user asks for it.');
      const graph = await adapter.call("mem_read_graph", {});
      assert.match(text(graph), /"name": "Ada"/, "the denied call did not run");
      assert.equal(asked.length, 2, "read_graph is read-only");

      // For the session: kept as an entry of names and a hash, asked no more.
      answer = "Allow delete_entities for this session";
      assert.equal((await adapter.call("mem_delete_entities", { entityNames: ["Ada"] })).isError, false);
      assert.equal((await adapter.call("mem_delete_entities", { entityNames: ["Bob"] })).isError, false);
      assert.equal(asked.length, 3);
      assert.deepEqual(Object.keys(kept[0].data).sort(), ["hash", "server", "tool"]);
      assert.equal(kept[0].customType, "pi-mcp-native/approval");
      assert.equal(kept[0].data.tool, "delete_entities");

      // A session opened again gets its grants back from its entries (Pi's /reload, resume, a branch).
      const reopened = open();
      const again = answering(reopened, () => "Deny");
      reopened.restoreGrants([{ customType: "something-else", data: { server: "mem" } }, ...kept]);
      assert.equal((await reopened.call("mem_delete_entities", { entityNames: ["Cy"] })).isError, false);
      assert.equal(again.asked.length, 0);
      const other = await reopened.call("mem_delete_relations", { relations: [] });
      assert.equal(other.details.error, "approval_denied", "the grant was for delete_entities only");
      reopened.restoreGrants([]);
      assert.equal((await reopened.call("mem_delete_entities", { entityNames: ["Cy"] })).details.error, "approval_denied", "a branch without the grant asks again");
    } finally {
      await close();
    }
  });

  test("nobody to ask: approval_required naming the setting, and the server is not started", async () => {
    const { agent, open, close } = agentWith(memoryConfig({ approveTools: "destructive" }));
    try {
      const filler = open();
      await filler.list("mem");
      await filler.shutdown();
      await waitFor(() => processesIn(agent.cwd).length === 0, 5000, "the lister to stop");
      const headless = open();
      const r = await headless.call("mem_delete_entities", { entityNames: ["Ada"] });
      assert.equal(r.details.error, "approval_required");
      assert.equal(r.details.tool, "mem_delete_entities");
      assert.match(text(r), /^The MCP tool "mem_delete_entities" of server "mem" needs the user's approval \(`settings\.approveTools` in ~\/\.pi\/agent\/mcp\.json\), and nobody can be asked here/);
      assert.equal(processesIn(agent.cwd).length, 0, "known from the cache, refused before its server started");
      // The same through the mcp tool's parameters (Pi's direct tools call this way).
      const direct = await headless.execute({ tool: "delete_entities", server: "mem", args: { entityNames: ["Ada"] } });
      assert.equal(direct.details.error, "approval_required");
    } finally {
      await close();
    }
  });

  test("an answer naming no option and a null one deny the call, as closing the dialog does", async () => {
    const { open, close } = agentWith(memoryConfig({ approveTools: "destructive" }));
    try {
      const adapter = open();
      for (const answer of [{ choice: "maybe" }, { choice: "" }, { choice: null }]) {
        adapter.setFrontEnd({ elicit: async () => null, sample: async () => null, withdraw() {}, approve: async () => answer });
        const r = await adapter.call("mem_delete_entities", { entityNames: ["Ada"] });
        assert.equal(r.details.error, "approval_denied", JSON.stringify(answer));
        assert.match(text(r), /^The user declined the MCP tool "mem_delete_entities" of server "mem"; it did not run\./, JSON.stringify(answer));
      }
    } finally {
      await close();
    }
  });

  test("an answer without a choice denies the call as closing the dialog does, not as if nobody could be asked", async () => {
    const { open, close } = agentWith(memoryConfig({ approveTools: "destructive" }));
    try {
      const adapter = open();
      for (const answer of [{}, { choice: undefined }]) {
        adapter.setFrontEnd({ elicit: async () => null, sample: async () => null, withdraw() {}, approve: async () => answer });
        const r = await adapter.call("mem_delete_entities", { entityNames: ["Ada"] });
        assert.equal(r.details.error, "approval_denied", `${JSON.stringify(answer)}: ${text(r)}`);
        assert.match(text(r), /^The user declined the MCP tool "mem_delete_entities"/);
      }
    } finally {
      await close();
    }
  });

  test("a dialog nobody answers is closed after approvalTimeoutMs and the call denied", async () => {
    const { open, close } = agentWith(memoryConfig({ approveTools: "destructive", approvalTimeoutMs: 1000 }));
    try {
      const adapter = open();
      // A front end that never closes its dialog itself: the core withdraws it.
      const { asked, withdrawn } = answering(adapter, (_t, _o, { signal }) => new Promise((resolve) => signal.addEventListener("abort", () => resolve(undefined))));
      const started = Date.now();
      const r = await adapter.call("mem_delete_entities", { entityNames: ["Ada"] });
      assert.equal(r.details.error, "approval_denied");
      assert.equal(text(r), 'Nobody answered the approval question for the MCP tool "mem_delete_entities" of server "mem" within 1 s; it did not run.');
      assert.equal(asked[0].timeout, 1000, "the front end's own timer");
      assert.equal(withdrawn.length, 1);
      assert.ok(Date.now() - started < 15_000);
    } finally {
      await close();
    }
  });
});

test("every use of a server asks where approveTools is true: its resource reads and prompts too", async () => {
  const { open, close } = agentWith({ mcpServers: { ev: everything({ approveTools: true }) } });
  try {
    const adapter = open();
    const { asked } = answering(adapter, () => "Allow once");
    const read = await adapter.execute({ read: "demo://resource/static/document/architecture.md", server: "ev" });
    assert.equal(read.isError, false, text(read));
    assert.match(asked[0].title, /^MCP server "ev" wants to read demo:\/\/resource\/static\/document\/architecture\.md\n\nAsked because of `approveTools`/);
    assert.deepEqual(asked[0].options, ["Allow once", 'Allow everything of "ev" for this session', "Deny"]);
    const prompt = await adapter.getPrompt("ev", "args-prompt", { city: "Oslo" });
    assert.equal(prompt.isError, false, text(prompt));
    assert.match(asked[1].title, /^MCP server "ev" wants to give the prompt "args-prompt"\n\nArguments:\n {2}city: "Oslo"/);
    // Pi's read_mcp_resource and a resource tool go through the same gate.
    const piRead = await adapter.piResourceTool("read_mcp_resource", { server: "ev", uri: "demo://resource/static/document/architecture.md" });
    assert.equal(piRead.isError, false, text(piRead));
    assert.equal(asked.length, 3);
    // A read-only tool asks too: true means every tool.
    answering(adapter, () => "Allow everything of \"ev\" for this session");
    assert.equal((await adapter.call("ev_echo", { message: "hi" })).isError, false);
    const after = answering(adapter, () => "Deny");
    assert.equal((await adapter.call("ev_get-sum", { a: 1, b: 2 })).isError, false);
    assert.equal((await adapter.getPrompt("ev", "simple-prompt", {})).isError, false);
    assert.equal(after.asked.length, 0, "the server's grant covers its tools, reads and prompts");
  } finally {
    await close();
  }
});

describe("pi-mcp", () => {
  const config = ({ home }) => ({ settings: { approveTools: ["delete_*"] }, mcpServers: { mem: memory(join(home, "graph.json")) } });
  const call = ["call", "mem_delete_entities", '{"entityNames":["Ada"]}'];
  const outside = { PI_CODING_AGENT: "" };
  const inside = { PI_CODING_AGENT: "true" };

  test("without a terminal it refuses; --yes runs; inside Pi --yes is refused unless the user's own settings allow it", async () => {
    const agent = tempAgent(config);
    try {
      let r = await pimcp(agent, call, { env: outside });
      assert.equal(r.code, 1);
      assert.match(r.stdout, /needs the user's approval \(`settings\.approveTools` in ~\/\.pi\/agent\/mcp\.json\), and nobody can be asked here/);
      r = await pimcp(agent, [...call, "--yes"], { env: outside });
      assert.equal(r.code, 0, r.stdout + r.stderr);
      r = await pimcp(agent, [...call, "--yes", "--json"], { env: inside });
      assert.equal(r.code, 1);
      assert.equal(JSON.parse(r.stdout).details.error, "approval_required");
      assert.match(r.stdout, /does not skip it inside a Pi session \(PI_CODING_AGENT is set\)/);
      // A project's file cannot allow it…
      writeFileSync(join(agent.cwd, ".mcp.json"), JSON.stringify({ settings: { allowYesInsidePi: true } }));
      r = await pimcp(agent, [...call, "--yes", "--approve"], { env: inside });
      assert.equal(r.code, 1, r.stdout);
      // …the user's own can.
      writeFileSync(join(agent.agentDir, "mcp.json"), JSON.stringify({ ...config({ home: agent.home }), settings: { approveTools: ["delete_*"], allowYesInsidePi: true } }));
      r = await pimcp(agent, [...call, "--yes"], { env: inside });
      assert.equal(r.code, 0, r.stdout + r.stderr);
      r = await pimcp(agent, ["doctor", "--offline", "--approve"], { env: inside });
      assert.match(r.stdout, /allowYesInsidePi.*only your own config files/, r.stdout);
    } finally {
      await waitFor(() => processesIn(agent.cwd).length === 0, 5000, "servers to stop");
      agent.cleanup();
    }
  });

  test("on a terminal it asks there", async () => {
    const agent = tempAgent(config);
    try {
      let r = await pimcp(agent, call, { env: outside, tty: true, input: "4" });
      assert.equal(r.code, 1);
      assert.match(r.stdout, /MCP server "mem" wants to run delete_entities[\s\S]*1\) Allow once[\s\S]*4\) Deny/);
      assert.match(r.stdout, /The user declined the MCP tool "mem_delete_entities"/);
      r = await pimcp(agent, call, { env: outside, tty: true, input: "1" });
      assert.equal(r.code, 0, r.stdout);
    } finally {
      await waitFor(() => processesIn(agent.cwd).length === 0, 5000, "servers to stop");
      agent.cleanup();
    }
  });
});
