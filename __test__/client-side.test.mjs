// The client side of MCP through the native API and the `pi-mcp` command line: what servers may
// ask (elicitation, sampling, roots) and what they log. server-everything offers its tools for
// these only to a client that advertises them; the fault server sends what no real server does.
import { after, describe, test } from "node:test";
import assert from "node:assert/strict";
import { spawn } from "node:child_process";
import { existsSync, mkdirSync, readFileSync, statSync } from "node:fs";
import { createRequire } from "node:module";
import { join } from "node:path";
import { frontEnd, piModel } from "../extension/pi-mcp-native/front-end.js";
import { resourceUpdates } from "../extension/pi-mcp-native/updates.js";
import { recordingBrowser } from "./helpers/browser.mjs";
import { everything, everythingHttp, faulty, freePort, pimcp, python, root, tempAgent, waitFor } from "./helpers/servers.mjs";

const { McpAdapter } = createRequire(import.meta.url)("../index.js");
const text = (outcome) => outcome.content.map((c) => c.text ?? "").join("\n");

/** An adapter over `servers` (mcp.json `mcpServers`, plus `settings`), with `env` added to its environment. */
function open(servers, settings = {}, env = {}) {
  const agent = tempAgent({ settings, mcpServers: servers });
  const adapter = McpAdapter.open({ cwd: agent.cwd, agentDir: agent.agentDir, env: { ...agent.env, ...env } });
  return { agent, adapter, close: async () => (await adapter.shutdown(), agent.cleanup()) };
}

/**
 * Dialogs answered from a script: `pick(title, options)` and `type(title, placeholder)` return the
 * answer (undefined = Esc); everything shown is kept in `seen`.
 */
function scriptedUi({ pick = () => undefined, type = () => undefined } = {}) {
  const seen = [];
  return {
    seen,
    ui: {
      select: async (title, options, opts) => (seen.push({ select: title, options }), pick(title, options, opts)),
      input: async (title, placeholder, opts) => (seen.push({ input: title, placeholder }), type(title, placeholder, opts)),
      notify: (message, level) => seen.push({ notify: message, level }),
    },
  };
}

describe("elicitation through the native API (server-everything)", () => {
  const browser = recordingBrowser();
  const run = open({ ev: everything() }, {}, { BROWSER: browser.path });
  after(async () => (await run.close(), browser.cleanup()));
  const { adapter } = run;
  const form = (answers) => {
    const script = scriptedUi(answers);
    adapter.setFrontEnd(frontEnd(adapter, { ui: () => script.ui }));
    return script;
  };

  test("accepted field by field: typed, picked, a multi-select, the rest from the defaults", async () => {
    const picks = ["Piano", "Drums"];
    // The integer is out of range the first time: the form says so and asks again.
    let integerAsked = 0;
    const { seen } = form({
      pick: (title, options) => {
        if (options.includes("Answer")) return "Answer";
        if (title.startsWith("Boolean")) return "Yes";
        if (title.startsWith("Untitled Multiple")) return picks.shift() ?? "Done";
        if (title.startsWith("Titled Multiple")) return "Done";
        return "(leave empty)";
      },
      type: (title) => (title.startsWith("String (") ? "Ada" : title.startsWith("Integer") && !integerAsked++ ? "500" : ""),
    });
    const outcome = await adapter.call("ev_trigger-elicitation-request", {});
    const answer = text(outcome);
    assert.match(answer, /- Name: Ada/);
    assert.match(answer, /- Agreed to terms: true/);
    assert.match(answer, /"untitledMultipleSelectEnum": \[\s*"Piano",\s*"Drums"\s*\]/);
    assert.match(answer, /"titledSingleSelectEnum": "hero-1"/, "left empty: its default");
    assert.match(answer, /- Favorite Integer: 42/, "500 refused, then left empty for the default");
    const first = seen[0];
    assert.equal(first.select, 'MCP server "ev" asks:\n\nPlease provide inputs for the following fields:');
    assert.deepEqual(first.options, ["Answer", "Decline"]);
    assert.ok(seen.some((s) => s.notify === "Integer: must be at most 100"), JSON.stringify(seen));
    assert.ok(seen.some((s) => s.input === "Integer (whole number from 1 to 100; default 42)\nYour favorite integer (do not give us your phone number, pin, or other sensitive info)"));
    const multi = seen.filter((s) => s.select?.startsWith("Untitled Multiple"));
    assert.deepEqual(multi[1].options, ["Guitar", "✓ Piano", "Violin", "Drums", "Bass", "Done"]);
  });

  test("declined, and cancelled with Esc", async () => {
    form({ pick: (_title, options) => (options.includes("Decline") ? "Decline" : undefined) });
    assert.match(text(await adapter.call("ev_trigger-elicitation-request", {})), /User declined/);
    form({ pick: () => undefined });
    assert.match(text(await adapter.call("ev_trigger-elicitation-request", {})), /User cancelled/);
    // Esc in the middle of the form cancels it too.
    form({ pick: (_t, options) => (options.includes("Answer") ? "Answer" : undefined), type: () => undefined });
    assert.match(text(await adapter.call("ev_trigger-elicitation-request", {})), /User cancelled/);
  });

  test("a URL is opened only after the user agrees", async () => {
    form({ pick: () => "Decline" });
    const url = "https://example.com/consent?x=1";
    assert.match(text(await adapter.call("ev_trigger-url-elicitation", { url })), /declined/i);
    assert.deepEqual(browser.opened(), []);

    const { seen } = form({ pick: (_t, options) => options[0] });
    const outcome = await adapter.call("ev_trigger-url-elicitation", { url, message: "Approve the payment" });
    assert.match(text(outcome), /User completed the URL elicitation flow/);
    assert.match(seen[0].select, /MCP server "ev" asks you to open a page\n\nPage: https:\/\/example.com\/consent\?x=1\n\nThe server's message:\n  Approve the payment\n\nOpen it in your browser\?/);
    await waitFor(() => browser.opened().length, 3000, "the browser was started");
    assert.deepEqual(browser.opened(), [url]);
  });

  test("agreed, but no browser can be started: the user is told the URL", async () => {
    const run = open({ ev: everything() }, {}, { BROWSER: "/nonexistent/browser" });
    try {
      const script = scriptedUi({ pick: (_t, options) => options[0] });
      run.adapter.setFrontEnd(frontEnd(run.adapter, { ui: () => script.ui }));
      const url = "https://example.com/consent?x=2";
      assert.match(text(await run.adapter.call("ev_trigger-url-elicitation", { url })), /User completed the URL elicitation flow/);
      const told = script.seen.find((s) => s.notify);
      assert.match(told.notify, /^No browser was opened \(no browser could be started \(\/nonexistent\/browser: .*\)\): open https:\/\/example\.com\/consent\?x=2 yourself\.$/);
      assert.equal(told.level, "warning");
    } finally {
      await run.close();
    }
  });

  test("the error path (-32042) shows the page and tells the model to retry", async () => {
    form({ pick: () => "Decline" });
    const outcome = await adapter.call("ev_trigger-url-elicitation", { url: "https://example.com/a", errorPath: true });
    assert.equal(outcome.isError, true);
    assert.match(text(outcome), /needs a step in a browser before this can run:\n- Open this link to satisfy the prerequisite, then retry the request\. https:\/\/modelcontextprotocol\.io \(not opened/);
  });

  test("a call aborted while its question is open closes the dialog", async () => {
    let aborted;
    form({ pick: (_t, _o, { signal }) => new Promise((resolve) => signal.addEventListener("abort", () => ((aborted = true), resolve(undefined)))) });
    const call = adapter.call("ev_trigger-elicitation-request", {}, { callId: "abort-me", timeoutMs: 200 });
    await new Promise((r) => setTimeout(r, 600)); // past the call's timeout: the open question holds it
    adapter.cancel("abort-me");
    const outcome = await call;
    assert.equal(outcome.details.error, "aborted", text(outcome));
    await waitFor(() => aborted, 3000, "the dialog was closed");
  });
});

describe("elicitation policies where nobody can answer, and bad questions", () => {
  test('"ask" declines, "defaults" accepts a form whose required fields have defaults, false is refused', async () => {
    const schema = { type: "object", properties: { size: { type: "integer", default: 3 } }, required: ["size"] };
    const ask = { method: "elicitation/create", params: { message: "How many?", requestedSchema: schema } };
    const run = open({ ask: faulty(["asks"]), defaults: faulty(["asks"], { elicitation: "defaults" }), off: faulty(["asks"], { elicitation: false }) });
    try {
      assert.equal(text(await run.adapter.call("ask_ask", ask)), 'answer: {"action":"decline"}');
      assert.equal(text(await run.adapter.call("defaults_ask", ask)), 'answer: {"action":"accept","content":{"size":3}}');
      assert.equal(
        text(await run.adapter.call("off_ask", ask)),
        "error -32601: off asked for user input (elicitation), but the client did not offer it: `elicitation` is false for this server",
      );
      const nested = { ...ask, params: { message: "Where?", requestedSchema: { type: "object", properties: { at: { type: "object" } } } } };
      assert.match(text(await run.adapter.call("ask_ask", nested)), /^error -32602: elicitation refused: requestedSchema is not a flat form: property `at` is an object/);
    } finally {
      await run.close();
    }
  });
});

describe("sampling through Pi's model (a stand-in ctx)", () => {
  const run = open({ ev: everything(), auto: everything({ samplingAutoApprove: true }) });
  after(run.close);
  const { adapter } = run;
  const calls = [];
  const answer = { role: "assistant", content: [{ type: "text", text: "forty-two" }], model: "pi-model", stopReason: "stop" };
  const ctx = (confirm) => ({
    hasUI: confirm !== undefined,
    ui: { confirm: async (title, message) => (calls.push({ confirm: title, message }), confirm) },
    model: { id: "pi-model", provider: "fake" },
    modelRegistry: { getAvailable: () => [], complete: async (model, context, options) => (calls.push({ model: model.id, context, options }), answer) },
  });
  const use = (c) => adapter.setFrontEnd(frontEnd(adapter, { ui: () => undefined, runModel: piModel(() => c) }));

  test("approved: runs on the session's model with the server's prompt and budget", async () => {
    use(ctx(true));
    const outcome = await adapter.call("ev_trigger-sampling-request", { prompt: "the answer", maxTokens: 50 });
    assert.match(text(outcome), /"text": "forty-two"/);
    assert.match(text(outcome), /"stopReason": "endTurn"/);
    assert.equal(calls[0].confirm, 'Allow MCP server "ev" to use the model?');
    assert.match(calls[0].message, /^MCP server "ev" asks the model \(1 message, up to 50 tokens\):\nSystem: You are a helpful test server\.\nLast message: Resource trigger-sampling-request context: the answer$/);
    assert.equal(calls[1].context.systemPrompt, "You are a helpful test server.");
    assert.equal(calls[1].options.maxTokens, 50);
  });

  test("declined, and refused without a UI unless samplingAutoApprove", async () => {
    use(ctx(false));
    assert.match(text(await adapter.call("ev_trigger-sampling-request", { prompt: "x" })), /the user declined ev's sampling request/);
    use(ctx(undefined));
    assert.match(text(await adapter.call("ev_trigger-sampling-request", { prompt: "x" })), /needs the user's approval, but nobody can be asked here; `samplingAutoApprove: true`/);
    calls.length = 0;
    assert.match(text(await adapter.call("auto_trigger-sampling-request", { prompt: "x" })), /forty-two/);
    assert.equal(calls.filter((c) => c.confirm).length, 0, "not asked");
  });

  test("a 10 MB request is refused before anyone sees it", async () => {
    const big = open({ f: faulty(["asks"]) });
    try {
      big.adapter.setFrontEnd(frontEnd(big.adapter, { ui: () => undefined, runModel: piModel(() => ctx(true)) }));
      calls.length = 0;
      const outcome = await big.adapter.call("f_ask", { method: "sampling/createMessage", params: { maxTokens: 5 }, padMB: 10 });
      assert.match(text(outcome), /^error -32005: sampling request refused: it weighs 10\.0 MiB, over the 4 MiB limit$/);
      assert.equal(calls.length, 0);
    } finally {
      await big.close();
    }
  });
});

test("roots are the session's directory, list_changed when it moves; server logs land in mcp.log", async () => {
  const run = open({ ev: everything() });
  try {
    const outcome = await run.adapter.call("ev_get-roots-list", {});
    assert.match(text(outcome), new RegExp(`1\\. project\\n   URI: file://${run.agent.cwd}`));
    const log = join(run.agent.agentDir, "mcp.log");
    await waitFor(() => existsSync(log) && readFileSync(log, "utf8").includes("Roots updated"), 5000, "the log line");
    assert.match(readFileSync(log, "utf8"), /^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{3}Z \[ev\] info everything-server: Roots updated: 1 root\(s\) received from client\n/m);
    assert.equal(statSync(log).mode & 0o777, 0o600);
    // The session moves: the server, still running, is told and asks for the new list.
    const moved = join(run.agent.cwd, "sub");
    mkdirSync(moved);
    await run.adapter.setCwd(moved);
    await waitFor(() => readFileSync(log, "utf8").split("Roots updated").length === 3, 5000, "the server to list the roots again");
    const after = await run.adapter.call("ev_get-roots-list", {});
    assert.match(text(after), new RegExp(`1\\. sub\\n   URI: file://${moved}`));
  } finally {
    await run.close();
  }
});

test("doctor shows a server's last logged warnings and errors, also from an earlier connection", async () => {
  const run = open({ f: faulty(["asks"]) });
  try {
    const log = (level, data) => run.adapter.call("f_log", { params: { level, logger: "db", data } });
    await log("error", "no connection");
    await log("info", "not kept");
    await log("critical", "giving up");
    // doctor reconnects: the lines of the connection before are still there.
    const doctor = await run.adapter.doctor();
    assert.match(text(doctor), /✓ f: \d+ ms, \d+ tools\n      last logged warnings and errors:\n        error db: no connection\n        critical db: giving up/);
    const server = doctor.details.configured.find((s) => s.name === "f");
    assert.deepEqual(server.connect.log, ["error db: no connection", "critical db: giving up"]);
  } finally {
    await run.close();
  }
});

describe("the command line", () => {
  test("without a terminal: elicitation follows the setting, sampling is refused", async () => {
    const agent = tempAgent({ mcpServers: { ev: everything() } });
    try {
      const declined = await pimcp(agent, ["call", "trigger-elicitation-request", "--server", "ev"]);
      assert.match(declined.stdout, /User declined/);
      const sampled = await pimcp(agent, ["call", "trigger-sampling-request", '{"prompt":"x"}', "--server", "ev"]);
      assert.match(sampled.stdout, /ev asked the model \(sampling\), but no model is available here/);
      // The same asked as tasks: answered in the background, the same way.
      const declinedAsTask = await pimcp(agent, ["call", "trigger-elicitation-request-async", "--server", "ev"]);
      assert.match(declinedAsTask.stdout, /\[DECLINED\] User declined/);
      const sampledAsTask = await pimcp(agent, ["call", "trigger-sampling-request-async", '{"prompt":"x"}', "--server", "ev"]);
      assert.match(sampledAsTask.stdout, /\[FAILED\] ev asked the model \(sampling\), but no model is available here/);
    } finally {
      agent.cleanup();
    }
  });

  test("on a terminal the user answers the form", async () => {
    const agent = tempAgent({ mcpServers: { f: faulty(["asks"]) } });
    try {
      const schema = { type: "object", properties: { name: { type: "string", title: "Name" }, size: { type: "integer", default: 3 } }, required: ["name"] };
      const args = JSON.stringify({ method: "elicitation/create", params: { message: "Who?", requestedSchema: schema } });
      const run = await pimcp(agent, ["call", "ask", args, "--server", "f"], { tty: true, input: "1\nAda\n" });
      assert.match(run.stdout, /MCP server "f" asks:\s+Who\?/);
      assert.match(run.stdout, /answer: \{"action":"accept","content":\{"name":"Ada","size":3\}\}/, run.stdout);
      assert.equal(run.code, 0, run.stdout);
    } finally {
      agent.cleanup();
    }
  });
});

test("tool use inside sampling reaches the model and comes back as tool_use", async () => {
  const run = open({ f: faulty(["asks"], { samplingAutoApprove: true }) });
  try {
    let seen;
    const call = { role: "assistant", content: [{ type: "toolCall", id: "c1", name: "weather", arguments: { city: "Oslo" } }], model: "m", stopReason: "toolUse" };
    const ctx = { hasUI: false, model: { id: "m", provider: "p" }, modelRegistry: { complete: async (_m, context) => ((seen = context), call) } };
    run.adapter.setFrontEnd(frontEnd(run.adapter, { ui: () => undefined, runModel: piModel(() => ctx) }));
    const params = {
      messages: [{ role: "user", content: { type: "text", text: "Weather in Oslo?" } }],
      tools: [{ name: "weather", description: "The weather", inputSchema: { type: "object", properties: { city: { type: "string" } } } }],
      maxTokens: 20,
    };
    const outcome = await run.adapter.call("f_ask", { method: "sampling/createMessage", params });
    const answer = JSON.parse(text(outcome).replace(/^answer: /, ""));
    assert.deepEqual(answer, { role: "assistant", content: [{ type: "tool_use", id: "c1", name: "weather", input: { city: "Oslo" } }], model: "m", stopReason: "toolUse" });
    assert.deepEqual(seen.tools, [{ name: "weather", description: "The weather", parameters: params.tools[0].inputSchema }]);
  } finally {
    await run.close();
  }
});

describe("tasks", () => {
  test("a tool that must run as a task: polled with its status as progress; an ambiguous one asks the user", async () => {
    const run = open({ ev: everything() });
    try {
      const events = [];
      run.adapter.onEvent((e) => e.type === "progress" && events.push(e.text));
      const { seen, ui } = scriptedUi({ pick: (_t, options) => options.find((o) => o.startsWith("Answer") || o.startsWith("Technical")) });
      run.adapter.setFrontEnd(frontEnd(run.adapter, { ui: () => ui }));
      const plain = await run.adapter.call("ev_simulate-research-query", { topic: "rust" }, { callId: "t1" });
      assert.match(text(plain), /^# Research Report: rust\n/);
      assert.ok(events.includes("ev_simulate-research-query: Generating report..."), JSON.stringify(events));
      const asked = await run.adapter.call("ev_simulate-research-query", { topic: "rust", ambiguous: true }, { callId: "t2" });
      assert.match(text(asked), /- \*\*Clarification\*\*: technical/);
      assert.match(seen[0].select, /could have multiple interpretations/);
    } finally {
      await run.close();
    }
  });

  test("callTimeoutMs stops a task that never finishes, and tells the server; its pollInterval is kept; tasks: false calls plainly", async () => {
    const run = open({ f: faulty(["asks"], { callTimeoutMs: 600 }), plain: faulty(["asks"], { tasks: false }) });
    try {
      const outcome = await run.adapter.call("f_forever", {});
      assert.equal(outcome.details.error, "timeout");
      assert.match(text(outcome), /ran longer than its limit of 0\.6 s \(callTimeoutMs\) and was stopped/);
      const seen = text(await run.adapter.call("f_seen", {}));
      assert.match(seen, /tasks\/get.*tasks\/cancel/);
      // The server asks for a poll every 100 ms (our default is 1 s): several polls in 0.6 s.
      assert.ok(seen.split("tasks/get").length - 1 >= 3, seen);
      const untasked = await run.adapter.call("plain_forever", {});
      assert.match(text(untasked), /requires task augmentation/);
    } finally {
      await run.close();
    }
  });
});

describe("sampling and elicitation as tasks (2025-11-25: server-everything's -async tools)", () => {
  const answer = { role: "assistant", content: [{ type: "text", text: "forty-two" }], model: "pi-model", stopReason: "stop" };
  const ctx = (confirm) => ({
    hasUI: confirm !== undefined,
    ui: { confirm: async () => confirm },
    model: { id: "pi-model", provider: "fake" },
    modelRegistry: { getAvailable: () => [], complete: async () => answer },
  });
  const form = (adapter, answers) => {
    const script = scriptedUi(answers);
    adapter.setFrontEnd(frontEnd(adapter, { ui: () => script.ui }));
    return script;
  };
  const fill = { pick: (title, options) => (options.includes("Answer") ? "Answer" : title.startsWith("Favorite Color") ? "Blue" : title.startsWith("Terms") ? "Yes" : "(leave empty)"), type: () => "Ada" };

  test("the form is answered in the background: accepted, declined, cancelled with Esc; tasks: false withholds the tools", async () => {
    const run = open({ ev: everything(), off: everything({ tasks: false }) });
    try {
      form(run.adapter, fill);
      const accepted = text(await run.adapter.call("ev_trigger-elicitation-request-async", {}));
      assert.match(accepted, /\[COMPLETED\] User provided the requested information!\nUser inputs:\n- Name: Ada\n- Favorite Color: Blue\n- Agreed to terms: true/);
      assert.match(accepted, /Task created: [0-9a-f]{32}\nPoll 1: completed/);
      assert.match(accepted, /"io\.modelcontextprotocol\/related-task": \{\s*"taskId": "[0-9a-f]{32}"/, "tasks/result names its task");
      form(run.adapter, { pick: (_t, options) => (options.includes("Decline") ? "Decline" : undefined) });
      assert.match(text(await run.adapter.call("ev_trigger-elicitation-request-async", {})), /\[DECLINED\] User declined/);
      form(run.adapter, { pick: () => undefined });
      assert.match(text(await run.adapter.call("ev_trigger-elicitation-request-async", {})), /\[CANCELLED\] User cancelled the elicitation dialog/);
      const listed = text(await run.adapter.list("off"));
      assert.match(listed, /trigger-elicitation-request\b/);
      assert.doesNotMatch(listed, /-async/);
    } finally {
      await run.close();
    }
  });

  test("the model is asked in the background: approved, declined, refused without a UI", async () => {
    const run = open({ ev: everything() });
    const use = (c) => run.adapter.setFrontEnd(frontEnd(run.adapter, { ui: () => undefined, runModel: piModel(() => c) }));
    try {
      use(ctx(true));
      const approved = text(await run.adapter.call("ev_trigger-sampling-request-async", { prompt: "the answer", maxTokens: 50 }));
      assert.match(approved, /\[COMPLETED\] Async sampling completed!/);
      assert.match(approved, /"text": "forty-two"/);
      use(ctx(false));
      assert.match(text(await run.adapter.call("ev_trigger-sampling-request-async", { prompt: "x" })), /\[FAILED\] the user declined ev's sampling request/);
      use(ctx(undefined));
      assert.match(text(await run.adapter.call("ev_trigger-sampling-request-async", { prompt: "x" })), /\[FAILED\] .*needs the user's approval, but nobody can be asked here/);
    } finally {
      await run.close();
    }
  });

  test("over Streamable HTTP and the legacy SSE transport too", async () => {
    const http = await everythingHttp("streamableHttp", await freePort());
    const sse = await everythingHttp("sse", await freePort());
    const run = open({ http: { url: `http://127.0.0.1:${http.port}/mcp` }, sse: { url: `http://127.0.0.1:${sse.port}/sse` } });
    try {
      form(run.adapter, fill);
      assert.match(text(await run.adapter.call("http_trigger-elicitation-request-async", {})), /\[COMPLETED\] User provided the requested information!\nUser inputs:\n- Name: Ada/);
      run.adapter.setFrontEnd(frontEnd(run.adapter, { ui: () => undefined, runModel: piModel(() => ctx(true)) }));
      assert.match(text(await run.adapter.call("sse_trigger-sampling-request-async", { prompt: "x" })), /"text": "forty-two"/);
    } finally {
      await run.close();
      await http.stop();
      await sse.stop();
    }
  });

  test("the server lists, polls and cancels: the open dialog closes, the task has no result, a second cancel is refused", async () => {
    const run = open({ f: faulty(["asks"]), off: faulty(["asks"], { tasks: false }) });
    try {
      let closed = false;
      form(run.adapter, { pick: (_t, _o, { signal }) => new Promise((resolve) => signal.addEventListener("abort", () => ((closed = true), resolve(undefined)))) });
      const question = { message: "Name?", requestedSchema: { type: "object", properties: { name: { type: "string" } } }, task: { ttl: 60000 } };
      const then = ["tasks/list", "tasks/get", "tasks/cancel", "tasks/get", "tasks/result", "tasks/cancel"].map((method) => ({ method, params: {} }));
      const lines = text(await run.adapter.call("f_ask", { method: "elicitation/create", params: question, then })).split("\n");
      const created = JSON.parse(lines[0].replace(/^answer: /, "")).task;
      assert.deepEqual([created.status, created.statusMessage, created.ttl, created.pollInterval], ["working", "asking the user", 60000, 1000]);
      const id = created.taskId;
      assert.equal(JSON.parse(lines[1].replace(/^answer: /, "")).tasks[0].taskId, id);
      assert.match(lines[2], /"status":"working"/);
      assert.match(lines[3], /"status":"cancelled","statusMessage":"The task was cancelled by request\."/);
      assert.match(lines[4], /"status":"cancelled"/);
      assert.equal(lines[5], `error -32602: task ${id} was cancelled: it has no result`);
      assert.equal(lines[6], `error -32602: cannot cancel task ${id}: it has already ended (cancelled)`);
      await waitFor(() => closed, 3000, "the dialog was closed");
      await waitFor(async () => /notifications\/tasks\/status/.test(text(await run.adapter.call("f_seen", {}))), 3000, "a status notification");

      // tasks: false: nothing declared, and a task-augmented question is answered as a plain one.
      assert.doesNotMatch(text(await run.adapter.call("off_capabilities", {})), /"tasks"/);
      assert.match(text(await run.adapter.call("f_capabilities", {})), /"tasks":\{"list":\{\},"cancel":\{\},"requests":\{"sampling":\{"createMessage":\{\}\},"elicitation":\{"create":\{\}\}\}\}/);
      form(run.adapter, { pick: () => "Decline" });
      assert.equal(text(await run.adapter.call("off_ask", { method: "elicitation/create", params: question })), 'answer: {"action":"decline"}');
      assert.match(text(await run.adapter.call("off_ask", { method: "tasks/list", params: {} })), /^error -32601: /);
    } finally {
      await run.close();
    }
  });

  test("tasks: false: a question asked as a task, answered as a plain one, is withdrawn when the server cancels it: the dialog and the approval close", async () => {
    const run = open({ off: faulty(["asks"], { tasks: false }) });
    try {
      // A dialog stays open until its signal aborts.
      let open = 0;
      let closed = 0;
      const held = (_t, _o, { signal }) =>
        new Promise((resolve) => {
          open += 1;
          signal.addEventListener("abort", () => ((closed += 1), resolve(undefined)));
        });
      const ask = async (params) => {
        const method = params.messages ? "sampling/createMessage" : "elicitation/create";
        const asking = run.adapter.call("off_ask", { method, params: { ...params, task: { ttl: 60000 } } });
        const opened = open + 1;
        await waitFor(() => open === opened, 5000, `the ${method} dialog to open`);
        assert.match(text(await run.adapter.call("off_withdraw", {})), /^withdrew ask-\d+$/);
        assert.equal(text(await asking), "withdrawn");
        await waitFor(() => closed === opened, 3000, `the ${method} dialog to close`);
      };
      form(run.adapter, { pick: held });
      await ask({ message: "Name?", requestedSchema: { type: "object", properties: { name: { type: "string" } } } });
      const withConfirm = { ...ctx(true), ui: { confirm: (title, preview, opts) => held(title, preview, opts) } };
      run.adapter.setFrontEnd(frontEnd(run.adapter, { ui: () => undefined, runModel: piModel(() => withConfirm) }));
      await ask({ messages: [{ role: "user", content: { type: "text", text: "hi" } }], maxTokens: 10 });
    } finally {
      await run.close();
    }
  });
});

describe("resources (server-everything)", () => {
  const run = open({ ev: everything() });
  after(run.close);
  const { adapter } = run;
  adapter.start(); // server notices (resource updates) are watched from start-up on
  const execute = (params) => adapter.execute(params, `r-${Math.random()}`);

  test("read by URI (server found from the listing), a template by URI with args and as a tool", async () => {
    await adapter.list("ev");
    const doc = await execute({ read: "demo://resource/static/document/features.md" });
    assert.equal(doc.isError, false, text(doc));
    assert.equal(doc.details.server, "ev");
    assert.match(text(doc), /# /);
    const templated = await execute({ read: "demo://resource/dynamic/text/{resourceId}", server: "ev", args: { resourceId: 7 } });
    assert.equal(templated.details.uri, "demo://resource/dynamic/text/7");
    assert.match(text(templated), /7/);
    const missing = await execute({ read: "demo://resource/dynamic/text/{resourceId}", server: "ev" });
    assert.equal(missing.details.error, "invalid_args");
    assert.match(text(missing), /needs `resourceId` in `args`/);
    const tool = await adapter.call("ev_get_dynamic_text_resource", { resourceId: 3 });
    assert.match(text(tool), /3/);
    const search = await adapter.search("dynamic text resource", { limit: 3 });
    assert.match(text(search), /ev_get_dynamic_text_resource/);
  });

  test("a binary resource is saved to a private file the model is told about", async () => {
    const blob = await execute({ read: "demo://resource/dynamic/blob/2", server: "ev" });
    const path = text(blob).match(/saved to (\S+)\]$/)?.[1];
    assert.ok(path, text(blob));
    assert.equal(statSync(path).mode & 0o777, 0o600);
    assert.ok(statSync(path).size > 0);
  });

  test("resource links say how to read them", async () => {
    const links = await adapter.call("ev_get-resource-links", { count: 1 });
    assert.match(text(links), /Read it: mcp\(\{ read: "demo:\/\/resource\/dynamic\/\w+\/1", server: "ev" \}\)/);
  });

  test("a read resource is subscribed to; its updates arrive as events", async () => {
    const updates = [];
    adapter.onEvent((e) => e.type === "resource-updated" && updates.push(e));
    const uri = "demo://resource/static/document/features.md";
    await execute({ read: uri, server: "ev" });
    await adapter.call("ev_toggle-subscriber-updates", {});
    // Every resource read so far is subscribed to; the server updates them in any order.
    try {
      await waitFor(() => updates.some((u) => u.uri === uri), 12_000, "a resource-updated event");
    } finally {
      await adapter.call("ev_toggle-subscriber-updates", {});
    }
    assert.equal(updates.find((u) => u.uri === uri).text, `MCP server "ev" updated ${uri}`);
  });
});

describe("prompts (server-everything)", () => {
  const run = open({ ev: everything() });
  after(run.close);
  const { adapter } = run;

  test("each prompt is a command; arguments by position or name; a missing one gets the usage", async () => {
    assert.match(text(await adapter.prompts("ev")), /^ev: 4 prompts\n- \/mcp__ev__simple-prompt: /);
    const commands = adapter.promptCommands().map((c) => c.name);
    assert.deepEqual(commands, ["mcp__ev__simple-prompt", "mcp__ev__args-prompt", "mcp__ev__completable-prompt", "mcp__ev__resource-prompt"]);
    assert.equal(text(await adapter.runPrompt("mcp__ev__args-prompt", '"New York" NY')), "What's weather in New York, NY?");
    assert.equal(text(await adapter.runPrompt("mcp__ev__args-prompt", "state=CA Fresno")), "What's weather in Fresno, CA?");
    const missing = await adapter.runPrompt("mcp__ev__args-prompt", "");
    assert.equal(missing.details.error, "invalid_args");
    assert.equal(text(missing), "Missing required argument(s): city.\nUsage: /mcp__ev__args-prompt <city> [state]");
    const embedded = await adapter.runPrompt("mcp__ev__resource-prompt", "Text 3");
    assert.match(text(embedded), /\[Resource: demo:\/\/resource\/dynamic\/text\/3\]/);
    const gone = await adapter.runPrompt("mcp__ev__no-such-prompt", "");
    assert.match(text(gone), /its server no longer offers this prompt/);
  });

  test("argument names, and values where the server completes them", async () => {
    const names = await adapter.completePrompt("mcp__ev__args-prompt", "");
    assert.deepEqual(names.map((c) => c.value), ["city=", "state="]);
    const values = await adapter.completePrompt("mcp__ev__completable-prompt", "Eng");
    assert.ok(values.some((c) => c.value === "Engineering"), JSON.stringify(values));
    const second = await adapter.completePrompt("mcp__ev__completable-prompt", "Engineering ");
    assert.ok(second.length > 0 && second.every((c) => c.value.startsWith("Engineering ")), JSON.stringify(second));
  });

  test("pi-mcp prompts and pi-mcp prompt", async () => {
    const cli = join(root, "bin", "pi-mcp.mjs");
    const agent = tempAgent({ mcpServers: { ev: everything() } });
    try {
      const pimcp = (...args) =>
        new Promise((resolve) => {
          const child = spawn(process.execPath, [cli, ...args], { cwd: agent.cwd, env: agent.env, stdio: ["ignore", "pipe", "pipe"] });
          let out = "";
          child.stdout.on("data", (d) => (out += d));
          child.on("close", (code) => resolve({ code, out }));
        });
      const listed = await pimcp("prompts", "ev");
      assert.match(listed.out, /- \/mcp__ev__args-prompt: A prompt with two arguments, one required and one optional — \/mcp__ev__args-prompt <city> \[state\]/);
      const got = await pimcp("prompt", "ev", "args-prompt", '{"city":"Oslo"}');
      assert.equal(got.out, "What's weather in Oslo?\n");
      assert.equal(got.code, 0);
    } finally {
      agent.cleanup();
    }
  });
});

test("the Python SDK server (a second implementation): a form, the model, roots, a log line, a template, prompts (one added later)", async () => {
  const run = open({ py: python({ samplingAutoApprove: true }) });
  run.adapter.start(); // what servers announce (a changed list) is followed from start-up on
  try {
    const { seen, ui } = scriptedUi({
      pick: (title, options) => (options.includes("Answer") ? "Answer" : title.startsWith("Vegan") ? "Yes" : "(leave empty)"),
      type: (title) => (title.startsWith("Date") ? "2026-12-24" : ""),
    });
    const asked = [];
    const ctx = {
      hasUI: false,
      model: { id: "pi-model", provider: "fake" },
      modelRegistry: { complete: async (_m, context) => (asked.push(context), { role: "assistant", content: [{ type: "text", text: "short" }], model: "pi-model", stopReason: "stop" }) },
    };
    run.adapter.setFrontEnd(frontEnd(run.adapter, { ui: () => ui, runModel: piModel(() => ctx) }));
    assert.equal(text(await run.adapter.call("py_book", {})), "booked 2 on 2026-12-24, vegan: True");
    assert.ok(seen.some((s) => s.select === 'MCP server "py" asks:\n\nBook a table'), JSON.stringify(seen));
    assert.equal(text(await run.adapter.call("py_summarize", { text: "a long story" })), "pi-model says: short");
    assert.equal(asked[0].systemPrompt, "Be brief.");
    assert.equal(text(await run.adapter.call("py_roots", {})), `file://${run.agent.cwd}`);
    assert.equal(text(await run.adapter.call("py_warn", { message: "disk almost full" })), "logged");
    const log = join(run.agent.agentDir, "mcp.log");
    await waitFor(() => existsSync(log) && readFileSync(log, "utf8").includes("disk almost full"), 5000, "the log line");
    assert.match(readFileSync(log, "utf8"), /^\S+Z \[py\] warning py: disk almost full$/m);
    const read = await run.adapter.execute({ read: "test://greeting/{name}", server: "py", args: { name: "Ada" } }, "py-read");
    assert.match(text(read), /hello, Ada/);
    assert.equal(text(await run.adapter.runPrompt("mcp__py__greet", "Ada")), "Say hello to Ada.");
    // A prompt the server adds later (prompts/list_changed) becomes a command too.
    assert.equal(text(await run.adapter.call("py_add_prompt", {})), "added");
    const names = () => run.adapter.promptCommands().map((c) => c.name);
    await waitFor(() => names().includes("mcp__py__farewell"), 5000, "the new prompt's command");
    assert.equal(text(await run.adapter.runPrompt("mcp__py__farewell", "Ada")), "Say goodbye to Ada.");
  } finally {
    await run.close();
  }
});

test("tool hints: every one for people (/mcp tools, pi-mcp describe, doctor), one word for the model", async () => {
  const run = open({ ev: everything() });
  try {
    await run.adapter.list("ev");
    const model = text(await run.adapter.execute({ describe: "ev_echo" }, "hint-1"));
    assert.match(model, /^ev_echo \(server "ev", MCP name "echo"\) \[read-only\]\n/);
    const person = text(await run.adapter.describe("ev_echo", undefined, true));
    assert.match(person, /\nHints: read-only, idempotent\.\n/);
    assert.doesNotMatch(person, /\[read-only\]/);
    assert.match(text(await run.adapter.tools()), /\n- ev_echo \(read-only, idempotent\)\n/);
    assert.match(text(await run.adapter.doctor()), /✓ ev: \d+ ms, \d+ tools\n {6}tools: \d+ read-only, /);
  } finally {
    await run.close();
  }
});

test("2026-07-28 with the Python SDK server: a read resource's updates come through subscriptions/listen", async () => {
  const run = open({ py: python({ protocolVersion: "2026-07-28" }) });
  run.adapter.start();
  try {
    const updates = [];
    run.adapter.onEvent((e) => e.type === "resource-updated" && updates.push(e));
    const read = await run.adapter.execute({ read: "test://hello", server: "py" }, "listen-1");
    assert.equal(text(read), "hello from a resource");
    assert.equal(text(await run.adapter.call("py_touch", {})), "touched");
    await waitFor(() => updates.length > 0, 5000, "a resource-updated event");
    const note = 'MCP server "py" updated test://hello, which was read earlier in this session: what was read may be out of date. Read it again for its current contents: mcp({ read: "test://hello", server: "py" })';
    assert.deepEqual(updates[0], { type: "resource-updated", server: "py", uri: "test://hello", text: 'MCP server "py" updated test://hello', note });
  } finally {
    await run.close();
  }
});

test("in Pi, an updated resource is shown and told to the model once until the model runs again", () => {
  const handlers = {};
  const sent = [];
  const shown = [];
  const pi = { on: (event, handler) => (handlers[event] = handler), sendMessage: (message, options) => sent.push({ message, options }) };
  let ui = { notify: (text, level) => shown.push([text, level]) };
  const announce = resourceUpdates(pi, () => ui);
  const update = (uri) => ({ type: "resource-updated", server: "ev", uri, text: `updated ${uri}`, note: `note on ${uri}` });
  announce(update("a://1"));
  announce(update("a://1")); // the server's next update: nothing new for anyone
  announce(update("a://2"));
  assert.deepEqual(shown, [["updated a://1", "info"], ["updated a://2", "info"]]);
  assert.deepEqual(sent[0], { message: { customType: "mcp-resource-updated", content: "note on a://1", display: true }, options: { triggerTurn: false } });
  handlers.agent_start();
  ui = undefined; // json and print modes: nobody to show it to, the model is still told
  announce(update("a://1"));
  assert.equal(shown.length, 2);
  assert.deepEqual(sent.map((s) => s.message.content), ["note on a://1", "note on a://2", "note on a://1"]);
});

test("logLevel: sent as logging/setLevel on 2025-11-25, in each request's _meta on 2026-07-28 (where servers log nothing without it)", async () => {
  // Both Python SDK servers send what is asked; on 2025-11-25 this one sends every level and we filter.
  const run = open({ old: python({ logLevel: "warning" }), new: python({ protocolVersion: "2026-07-28", logLevel: "warning" }) });
  try {
    assert.equal(text(await run.adapter.call("old_log_setup", {})), "setLevel: warning; this call's logLevel: none");
    assert.equal(text(await run.adapter.call("new_log_setup", {})), "setLevel: none; this call's logLevel: warning");
    for (const server of ["old", "new"]) {
      assert.equal(text(await run.adapter.call(`${server}_warn`, { message: `${server} below the level`, level: "info" })), "logged");
      assert.equal(text(await run.adapter.call(`${server}_warn`, { message: `${server} at the level`, level: "warning" })), "logged");
    }
    const log = join(run.agent.agentDir, "mcp.log");
    const lines = () => (existsSync(log) ? readFileSync(log, "utf8").split("\n").filter((l) => l.includes("the level")) : []);
    await waitFor(() => lines().length === 2, 5000, "both servers' warnings in mcp.log");
    assert.deepEqual(lines().map((l) => l.replace(/^\S+Z /, "")).sort(), ["[new] warning py: new at the level", "[old] warning py: old at the level"]);
  } finally {
    await run.close();
  }
});

test("prompts are kept in the metadata cache beside the tools: the next session has their commands at once", async () => {
  const run = open({ ev: everything() });
  try {
    await run.adapter.list("ev");
    await run.adapter.shutdown();
    const cache = JSON.parse(readFileSync(join(run.agent.agentDir, "mcp-cache.json"), "utf8"));
    const entry = JSON.stringify(cache);
    assert.match(entry, /"prompts":\[\{[^\]]*"name":"simple-prompt"/);
    const next = McpAdapter.open({ cwd: run.agent.cwd, agentDir: run.agent.agentDir, env: run.agent.env });
    try {
      assert.ok(next.promptCommands().some((c) => c.name === "mcp__ev__args-prompt"), "from the cache, no server started");
    } finally {
      await next.shutdown();
    }
  } finally {
    run.agent.cleanup();
  }
});
