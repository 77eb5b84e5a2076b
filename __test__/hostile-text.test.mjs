// Server text reaching people (issue 26, item 6; rows F6 of the reliability matrix): what a server
// or an authorization server writes is cleaned by one rule before anyone sees it, whatever path it
// takes: `pi-mcp` output, the native API's answers, events and questions, the browser, saved file
// names, mcp.log, and Pi's dialogs, notifications, footer and tool results. Hostile servers: the
// fault server's `hostile` scenario (every text it supplies carries HOSTILE), server-everything's
// URL question, the OAuth fixture refusing a sign-in with escape sequences in `error_description`.
import assert from "node:assert/strict";
import { existsSync, readFileSync } from "node:fs";
import { createRequire } from "node:module";
import { basename, join } from "node:path";
import { describe } from "node:test";
import { frontEnd } from "../extension/pi-mcp-native/front-end.js";
import { startOAuthServer } from "./fixtures/oauth-server.mjs";
import { recordingBrowser } from "./helpers/browser.mjs";
import { row } from "./helpers/matrix.mjs";
import { assertRan, PI_VERSIONS, runPiRpc } from "./helpers/pi.mjs";
import { everything, faulty, pimcp, root, tempAgent, waitFor } from "./helpers/servers.mjs";

const { McpAdapter } = createRequire(import.meta.url)("../index.js");
const here = import.meta.url;
const text = (outcome) => outcome.content.map((c) => c.text ?? "").join("\n");

/** The set the fault server's `hostile` scenario puts in every text (kept in step with it). */
const HOSTILE = "\x1b]0;pwned\x07\x1b[2J\x1b]52;c;cHduZWQ=\x07\u202eevil\u202c\x9b31m\x00\x7f\r\u2066x\u2069\x1bP+q\x1b\\\n✓ forged: line";
/** What must never reach a person raw: C0 controls but newline and tab, DEL, C1, bidi controls. */
const RAW = /[\x00-\x08\x0b-\x1f\x7f-\x9f\u202a-\u202e\u2066-\u2069]/u;
/** A look-alike host: the first letter is Cyrillic. */
const LOOK_ALIKE = "https://\u0430pple.com/login";
const LOOK_ALIKE_ASCII = "xn--pple-43d.com";

/** Fails if any string in `value` (walked through arrays and objects) holds a RAW character. */
function assertClean(where, value) {
  if (typeof value === "string") {
    const m = RAW.exec(value);
    const around = m && JSON.stringify(value.slice(Math.max(0, m.index - 40), m.index + 40));
    assert.ok(!m, `${where}: raw U+${m?.[0].codePointAt(0).toString(16).padStart(4, "0")} in ${around}`);
  } else if (Array.isArray(value)) value.forEach((v, i) => assertClean(`${where}[${i}]`, v));
  else if (value && typeof value === "object") for (const [k, v] of Object.entries(value)) assertClean(`${where}.${k}`, v);
}

/** An adapter over `servers` in a throwaway agent dir, `env` added to its environment. */
function open(servers, env = {}) {
  const agent = tempAgent({ mcpServers: servers });
  const adapter = McpAdapter.open({ cwd: agent.cwd, agentDir: agent.agentDir, env: { ...agent.env, ...env } });
  return { agent, adapter, close: async () => (await adapter.shutdown(), agent.cleanup()) };
}

/** Dialogs that record what they show and answer with `pick(title, options)` (undefined: Esc). */
function recordingUi(pick = () => undefined) {
  const seen = [];
  const ui = {
    select: async (title, options) => (seen.push({ title, options }), pick(title, options)),
    input: async (title, placeholder) => (seen.push({ title, placeholder }), undefined),
    notify: (message) => seen.push({ message }),
  };
  return { seen, ui };
}

const urlQuestion = (url, message = "Approve the payment") => ({
  method: "elicitation/create",
  params: { mode: "url", message, url, elicitationId: "e1" },
});

describe("server text reaching people", () => {
  row("F6", "pi-mcp auth: an authorization server's error_description is shown without its escape sequences", here, async ({ note }) => {
    const browserScript = join(root, "__test__", "helpers", "browser.mjs");
    for (const at of ["register", "authorize", "token"]) {
      const as = await startOAuthServer({ refuse: { at, description: `go away ${HOSTILE}` } });
      const agent = tempAgent({ mcpServers: { srv: { url: as.url, auth: "oauth" } } });
      try {
        const r = await pimcp(agent, ["auth", "srv"], { env: { BROWSER: `${process.execPath} ${browserScript}` } });
        assert.equal(r.code, 1, r.stdout + r.stderr);
        assertClean(`pi-mcp auth refused at ${at}`, r.stdout + r.stderr);
        assert.match(r.stdout, /go away/, "the description is still shown");
        assert.match(r.stdout, /✓ forged: line/, "what it says is kept, on one line");
        assert.doesNotMatch(r.stdout, /^✓ forged/m, "a one-line field cannot start a line of its own");
      } finally {
        agent.cleanup();
        await as.close();
      }
    }
    // A sign-in URL with control characters is refused: no browser is started.
    const as = await startOAuthServer({ metadata: (base) => ({ authorization_endpoint: `${base}/authorize\x1b]0;pwned\x07` }) });
    const browser = recordingBrowser();
    const agent = tempAgent({ mcpServers: { srv: { url: as.url, auth: "oauth" } } });
    try {
      const r = await pimcp(agent, ["auth", "srv"], { env: { BROWSER: browser.path } });
      assertClean("pi-mcp auth with a hostile sign-in URL", r.stdout + r.stderr);
      assert.match(r.stdout, /authorization_endpoint.*control character/, r.stdout);
      assert.deepEqual(browser.opened(), []);
    } finally {
      agent.cleanup();
      browser.cleanup();
      await as.close();
    }
    note("error_description at registration, authorization and token: shown cleaned; a sign-in URL with control characters refused, no browser started");
  });

  row("F6", "URL question: control characters refused, the message cleaned, a look-alike host shown beside its ASCII form", here, async ({ note }) => {
    const browser = recordingBrowser();
    const run = open({ f: faulty(["asks"]), ev: everything() }, { BROWSER: browser.path });
    try {
      const { seen, ui } = recordingUi((_title, options) => options[0]);
      run.adapter.setFrontEnd(frontEnd(run.adapter, { ui: () => ui }));
      // A URL with control characters (an escape, a newline, a bidi override) is refused unshown.
      for (const url of ["https://example.com/\x1b]0;pwned\x07", "https://example.com/a\nOpen it?", "https://example.com/\u202eevil", "https://exa\u200bmple.com/"]) {
        const answer = text(await run.adapter.call("f_ask", urlQuestion(url)));
        assert.match(answer, /^error -32602: elicitation refused: .*url.*(control|invisible) character/, answer);
        assertClean("the refusal", answer);
      }
      assert.equal(seen.length, 0, "no dialog was shown");
      // The message is cleaned; a look-alike host is shown with its ASCII form; the browser gets that.
      const outcome = await run.adapter.call("ev_trigger-url-elicitation", { url: LOOK_ALIKE, message: `Approve ${HOSTILE}` });
      assert.match(text(outcome), /User completed the URL elicitation flow/);
      const [dialog] = seen;
      assertClean("the URL dialog", dialog);
      assert.ok(dialog.title.includes(LOOK_ALIKE) && dialog.title.includes(LOOK_ALIKE_ASCII), dialog.title);
      await waitFor(() => browser.opened().length, 3000, "the browser was started");
      assert.deepEqual(browser.opened(), [`https://${LOOK_ALIKE_ASCII}/login`]);
      assert.match(run.adapter.openUrl("https://example.com/\x1b[2J") ?? "", /control character/, "openUrl refuses it too");
      assert.equal(browser.opened().length, 1);
    } finally {
      await run.close();
    }
    // The command line's terminal dialog says the same.
    const agent = tempAgent({ mcpServers: { ev: everything() } });
    try {
      const args = JSON.stringify({ url: LOOK_ALIKE, message: `Approve ${HOSTILE}` });
      const r = await pimcp(agent, ["call", "trigger-url-elicitation", args, "--server", "ev"], { tty: true, input: "2\n", env: { BROWSER: browser.path } });
      for (const attack of ["\x1b]0;", "\x1b]52;", "\x1b[2J", "\x9b", "\u202e", "\x1bP", "\x00", "\x7f"]) {
        assert.ok(!r.stdout.includes(attack), `the terminal got ${JSON.stringify(attack)}: ${JSON.stringify(r.stdout)}`);
      }
      assert.ok(r.stdout.includes(LOOK_ALIKE_ASCII), r.stdout);
      assert.match(r.stdout, /declined/i);
    } finally {
      agent.cleanup();
      browser.cleanup();
    }
    note("4 URLs with control or invisible characters refused unshown; look-alike host shown with xn--pple-43d.com, opened as such (API and a terminal)");
  });

  row("F6", "pi-mcp connect and a failed pi-mcp call: the server's stderr without its escape sequences", here, async ({ note }) => {
    const agent = tempAgent({ mcpServers: { bad: faulty(["exit-at-start", "hostile"]), h: faulty(["hostile"]) } });
    try {
      const connect = await pimcp(agent, ["connect", "bad"]);
      assert.equal(connect.code, 1);
      assertClean("pi-mcp connect", connect.stdout + connect.stderr);
      assert.match(connect.stdout, /missing API key FAULT_TOKEN/);
      const call = await pimcp(agent, ["call", "crash", "--server", "h"]);
      assert.equal(call.code, 1);
      assertClean("pi-mcp call", call.stdout + call.stderr);
      assert.match(call.stdout, /segfault in handler/);
      for (const args of [["status"], ["doctor"]]) {
        const r = await pimcp(agent, args);
        assertClean(`pi-mcp ${args[0]}`, r.stdout + r.stderr);
      }
    } finally {
      agent.cleanup();
    }
    note("connect, call, status, doctor: stderr quoted cleaned");
  });

  row("F6", "a saved binary resource: no control character of its URI in the file's name", here, async ({ note }) => {
    const agent = tempAgent({ mcpServers: { h: faulty(["hostile"]) } });
    try {
      const r = await pimcp(agent, ["read", "res://hostile/data.\x1b[2J\x07", "--server", "h"]);
      assert.equal(r.code, 0, r.stdout + r.stderr);
      assertClean("pi-mcp read", r.stdout);
      const path = /saved to (\S+)\]/.exec(r.stdout)?.[1];
      assert.ok(path && existsSync(path), r.stdout);
      assert.match(basename(path), /^[A-Za-z0-9_-]+-\d+\.bin$/, "the extension comes from the MIME type");
      assert.equal(readFileSync(path, "latin1"), "binary\x00data");
      note(`saved as ${basename(path)}`);
    } finally {
      agent.cleanup();
    }
  });

  row("F6", "sweep: every text of a hostile server through the native API, the command line and mcp.log", here, async ({ note }) => {
    const run = open({ h: faulty(["hostile", "asks"]), bad: faulty(["exit-at-start", "hostile"]) });
    const checked = [];
    // An answer's data for programs (a tool's input schema, structured results) stays exact.
    const shown = (value) => (value?.details ? { ...value, structured: undefined, details: { ...value.details, inputSchema: undefined } } : value);
    const check = (where, value) => (assertClean(where, shown(value)), checked.push(where));
    try {
      const events = [];
      run.adapter.onEvent((e) => events.push(e));
      const questions = recordingUi((_title, options) => options[0]);
      const sampling = [];
      const ends = frontEnd(run.adapter, { ui: () => questions.ui, runModel: async (request) => (sampling.push(request), { refused: "declined" }) });
      run.adapter.setFrontEnd(ends);
      const { adapter } = run;
      check("list", await adapter.list("h"));
      assert.doesNotMatch(text(await adapter.list("h")), /^✓ forged/m, "a tool's name or summary cannot forge a line");
      check("status", await adapter.status());
      assert.doesNotMatch(text(await adapter.status()), /^✓ forged/m);
      check("footer", adapter.footer());
      check("search", await adapter.search("echo evil named"));
      const panel = adapter.exposure().servers.find((s) => s.server === "h");
      assert.ok(panel?.tools.length, "the panel lists the hostile server's tools");
      for (const tool of panel.tools) {
        check(`panel ${tool.name}`, { name: tool.name, description: tool.description, locked: tool.locked ?? "" }); // `tool.tool`: the MCP name, for programs
        check(`describe ${tool.name}`, await adapter.describe(tool.tool, "h", true));
        check(`describe for the model ${tool.name}`, await adapter.describe(tool.tool, "h"));
      }
      check("instructions", await adapter.instructions("h"));
      check("tools", await adapter.tools());
      check("directTools", adapter.directTools());
      check("prompts", await adapter.prompts());
      check("promptCommands", adapter.promptCommands());
      check("prompt", await adapter.getPrompt("h", "greet", { who: HOSTILE }));
      check("prompt command", await adapter.runPrompt("mcp__h__greet", "someone"));
      check("read text", await adapter.execute({ read: "res://hostile/notes", server: "h" }));
      check("call evil", await adapter.call("evil", {}, { server: "h" }));
      check("call fail", await adapter.call("fail", {}, { server: "h" }));
      check("call slow (progress)", await adapter.call("slow", { steps: 2, delayMs: 20 }, { server: "h", callId: "slow-1" }));
      check("call echo", await adapter.call("echo", { text: HOSTILE }, { server: "h" }));
      const form = { type: "object", properties: { name: { type: "string", title: HOSTILE, description: HOSTILE, default: HOSTILE }, pick: { type: "string", oneOf: [{ const: "a", title: HOSTILE }] } } };
      check("form question", await adapter.call("ask", { method: "elicitation/create", params: { message: HOSTILE, requestedSchema: form } }, { server: "h" }));
      check("URL question", await adapter.call("ask", urlQuestion(LOOK_ALIKE, HOSTILE), { server: "h" }));
      const messages = [{ role: "user", content: { type: "text", text: HOSTILE } }];
      check("sampling", await adapter.call("ask", { method: "sampling/createMessage", params: { maxTokens: 5, systemPrompt: HOSTILE, messages } }, { server: "h" }));
      check("connect failed", await adapter.connect("bad"));
      check("status with a failed server", await adapter.status());
      check("doctor", await adapter.doctor(true));
      check("events", events);
      check("dialogs", questions.seen);
      check("sampling approval", sampling.map(({ title, preview }) => ({ title, preview })));
      assert.ok(questions.seen.length >= 3 && sampling.length === 1, JSON.stringify(questions.seen));
      assert.ok(events.some((e) => e.callId === "slow-1"), "progress was reported");
      const log = readFileSync(join(run.agent.agentDir, "mcp.log"), "utf8");
      check("mcp.log", log);
      assert.match(log, /\[h\] error db/);
    } finally {
      await run.close();
    }
    // The command line prints what the core renders; its --json too.
    const agent = tempAgent({ mcpServers: { h: faulty(["hostile"]) } });
    try {
      for (const args of [["list", "h"], ["search", "evil"], ["describe", "evil", "--server", "h"], ["call", "evil", "--server", "h"], ["call", "evil", "--server", "h", "--json"], ["prompts"], ["prompt", "h", "greet"]]) {
        const r = await pimcp(agent, args);
        check(`pi-mcp ${args.join(" ")}`, r.stdout + r.stderr);
      }
    } finally {
      agent.cleanup();
    }
    note(`${checked.length} outputs checked clean`);
  });
});

// Pi shows what the extension gives it: dialogs, notifications, the footer, tool results and their
// progress, a prompt command's message. Nothing raw reaches any of them.
for (const pi of PI_VERSIONS) {
  row("F6", `Pi ${pi}: a hostile server's questions, results, progress, notifications and footer over RPC`, here, async ({ note }) => {
    const mcp = (tool, args = {}) => ({ tool_calls: [{ name: "mcp", arguments: { tool, args } }] });
    const form = { type: "object", properties: { name: { type: "string", title: HOSTILE, description: HOSTILE } } };
    const steps = [
      mcp("h_ask", { method: "elicitation/create", params: { message: HOSTILE, requestedSchema: form } }),
      mcp("h_ask", urlQuestion(LOOK_ALIKE, HOSTILE)),
      mcp("h_ask", { method: "sampling/createMessage", params: { maxTokens: 5, messages: [{ role: "user", content: { type: "text", text: HOSTILE } }] } }),
      mcp("h_slow", { steps: 2, delayMs: 20 }),
      mcp("h_evil"),
      mcp("h_fail"),
      { tool_calls: [{ name: "mcp", arguments: {} }] },
      { text: "done" },
      { text: "ok" },
    ];
    const answer = (request) => {
      if (request.method === "confirm") return { confirmed: false };
      if (request.options?.includes("Answer")) return { value: "Answer" };
      if (request.options?.includes("Decline")) return { value: "Decline" };
      return { cancelled: true };
    };
    const config = { mcpServers: { h: faulty(["hostile", "asks"]), bad: faulty(["exit-at-start", "hostile"]) } };
    const r = await runPiRpc({ pi, extensionDir: root, mcpConfig: config, script: { steps }, commands: ["go", "/mcp", "/mcp__h__greet someone"], answer });
    assertRan(r);
    const shown = r.events.filter(
      (e) =>
        e.type === "extension_ui_request" ||
        e.type === "tool_execution_update" ||
        e.type === "tool_execution_end" ||
        (e.type === "message_end" && ["user", "toolResult"].includes(e.message?.role)),
    );
    assertClean(`Pi ${pi}`, shown);
    const url = r.dialogs.find((d) => d.title?.includes(LOOK_ALIKE_ASCII));
    assert.ok(url, `the URL question shows the host's ASCII form: ${JSON.stringify(r.dialogs.map((d) => d.title))}`);
    assert.ok(r.dialogs.some((d) => d.method === "confirm"), "the sampling approval was asked");
    assert.ok(r.statuses.some((s) => s.key === "mcp"), "the footer was set");
    assert.ok(r.notifications.length > 0, "/mcp notified");
    note(`${shown.length} messages from Pi checked clean`);
  });
}
