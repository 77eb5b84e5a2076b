// MCP Apps in a real browser: Debian's chromium over the DevTools protocol (helpers/chromium.mjs)
// against the native API with apps turned on, the cargo test server's clock app (no CSP of its own)
// and the official example server-basic-vanillajs. Screenshots go to __test__/screenshots/ (not
// committed).
import { after, before, test } from "node:test";
import assert from "node:assert/strict";
import { createServer, request } from "node:http";
import { mkdirSync, readFileSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { createRequire } from "node:module";
import { chromium } from "./helpers/chromium.mjs";
import { recordingBrowser } from "./helpers/browser.mjs";
import { assertRan, PI_16, piTest, runPi, runPiRpc } from "./helpers/pi.mjs";
import { TMUX_SKIP, withPiTui } from "./helpers/tui.mjs";
import { FAST, processesIn, root, tempAgent, testServer, text, waitFor, withAdapter } from "./helpers/servers.mjs";
import { bundle, OUTPUT } from "../scripts/build-apps.mjs";

const { McpAdapter } = createRequire(import.meta.url)("../index.js");
const SCRIPT = readFileSync(OUTPUT);
const SHOTS = join(root, "__test__", "screenshots");
const CONTEXT = { theme: "light", locale: "en-US", timeZone: "UTC", platform: "desktop" };
const basicServer = { command: process.execPath, args: [join(root, "node_modules", "@modelcontextprotocol", "server-basic-vanillajs", "dist", "index.js"), "--stdio"] };
let browser;
let recorder;

before(async () => {
  browser = await chromium();
  recorder = recordingBrowser();
  process.env.BROWSER = recorder.path; // the core's opener runs it; the test drives chromium itself
  mkdirSync(SHOTS, { recursive: true });
});
after(async () => {
  await browser?.close();
  recorder?.cleanup();
  if (browser) assert.throws(() => process.kill(browser.pid, 0), "the browser is gone");
});

/** A front end that allows what it is asked (for this app session where it may; else once), and keeps the questions. */
function allowing(answer = "session") {
  const asked = [];
  return { asked, frontEnd: { elicit: async () => null, sample: async () => null, withdraw() {}, approve: async (q) => (asked.push(q), { choice: (q.options.find((o) => o.value === answer) ?? q.options[0]).value }) } };
}

/** The status of a GET of `url` that names `host` in its Host header (DNS rebinding's request). */
function statusWithHost(url, host) {
  const { port, pathname, search } = new URL(url);
  return new Promise((resolve, reject) => {
    const req = request({ host: "127.0.0.1", port, path: pathname + search, headers: { Host: host } }, (res) => {
      res.resume();
      resolve(res.statusCode);
    });
    req.on("error", reject);
    req.end();
  });
}

/** The origin of the app's document, once the host page framed it. */
async function documentOrigin(tab) {
  let origin;
  await waitFor(async () => {
    origin = await tab.evaluate(`document.getElementById("app")?.src && new URL(document.getElementById("app").src).origin`).catch(() => undefined);
    return Boolean(origin);
  }, 20_000, "the host page to frame the app");
  return origin;
}

/** Waits for `expression` (in the frame at `origin`) to be truthy; its value. */
async function until(tab, origin, expression, what) {
  let value;
  await waitFor(async () => {
    value = await tab.app(origin, expression).catch(() => undefined);
    return Boolean(value);
  }, 20_000, what);
  return value;
}

test("the host script rebuilds to the same bytes", async () => {
  assert.ok(Buffer.from(await bundle()).equals(SCRIPT), "npm run build:apps changes extension/pi-mcp-native/app-host.js");
});

test("an app opens in the browser, calls its own server, reaches the conversation after consent, and is held to its policy", { timeout: 90_000 }, async () => {
  let reached = 0;
  const elsewhere = createServer((_, res) => (reached++, res.end("x")));
  await new Promise((r) => elsewhere.listen(0, "127.0.0.1", r));
  const elsewhereUrl = `http://127.0.0.1:${elsewhere.address().port}/data`;
  const servers = { clock: testServer(["apps"]), other: testServer([]) };
  try {
    await withAdapter(servers, async ({ adapter, events }) => {
      const { asked, frontEnd } = allowing();
      adapter.setFrontEnd(frontEnd);
      adapter.enableApps(SCRIPT, CONTEXT);
      const called = await adapter.call("clock_clock", { text: elsewhereUrl });
      assert.equal(text(called), "clock called; ticks 0", "the model gets the result as always");
      const opened = await waitFor(() => events.find((e) => e.type === "app" && e.kind === "opened"), 10_000, "the app to open");
      assert.match(opened.text, /opened in your browser/);
      const launched = recorder.opened();
      assert.equal(launched.length, 1, "through the core's opener ($BROWSER)");
      // The opener's command line (and a browser it starts keeps it) can be read by the machine's other users.
      assert.ok(!launched[0].includes(new URL(opened.url).searchParams.get("t")), `no token of the session on the opener's command line: ${launched[0]}`);
      const url = new URL(opened.url);
      assert.equal(url.hostname, "127.0.0.1");

      // The browser opens what the opener was given: once; the tab then shows the address a reload uses.
      const tab = await browser.open(launched[0]);
      await waitFor(async () => (await tab.evaluate("location.href")) === opened.url, 10_000, "the tab's address");
      assert.equal((await fetch(launched[0])).status, 404, "the opener's address is used up");
      const appOrigin = await documentOrigin(tab);
      assert.notEqual(appOrigin, url.origin, "the document has an origin of its own");
      assert.equal(await until(tab, appOrigin, `document.getElementById("state").textContent.startsWith("ready") && document.getElementById("state").textContent`, "the app to initialize"), "ready theme light");
      assert.equal(await tab.app(appOrigin, "self.origin"), "null", "sandboxed: an opaque origin");
      await until(tab, appOrigin, `document.getElementById("result").textContent.includes("ticks 0")`, "the tool result in the app");
      writeFileSync(join(SHOTS, "clock-opened.png"), await tab.screenshot());

      // The frame as the resource's _meta.ui asks: the clipboard it asked for (no camera, …), a border.
      assert.deepEqual(await tab.evaluate(`[document.getElementById("app").getAttribute("allow"), document.getElementById("app").className]`), ["clipboard-write", "border"]);
      assert.equal(await tab.app(appOrigin, `document.getElementById("features").textContent`), "clipboard-write");

      // Pi's theme changes: the open app is told.
      adapter.setAppsContext({ theme: "dark" });
      assert.equal(await until(tab, appOrigin, `document.getElementById("theme").textContent`, "the context change"), "theme now dark");

      // A click calls its own server's tool (the server counts it) and sends a message at once: one dialog asks for both.
      await tab.app(appOrigin, `document.getElementById("together").click()`);
      assert.match(await until(tab, appOrigin, `document.getElementById("ticked").textContent`, "the tick"), /clock_tick called/);
      assert.equal(text(await adapter.call("clock_clock", { text: elsewhereUrl })), "clock called; ticks 1", "seen on the server");
      await waitFor(() => events.some((e) => e.type === "app" && e.kind === "shown"), 10_000, "the second call to reuse the tab");
      assert.equal(recorder.opened().length, 1, "one tab per app session");

      // A call stopped by the user (Pi's Esc) or timed out: the open app gets its input at the start, then why no result came.
      const stopped = adapter.call("clock_clock", { text: "stopped", delayMs: 20_000 }, { callId: "stop-me" });
      await until(tab, appOrigin, `document.getElementById("input").textContent.includes("stopped")`, "the input at the call's start");
      adapter.cancel("stop-me");
      assert.equal((await stopped).isError, true);
      assert.equal(await until(tab, appOrigin, `document.getElementById("cancelled").textContent`, "the cancelling"), "cancelled the user stopped the call");
      const late = await adapter.call("clock_clock", { text: "late", delayMs: 20_000 }, { timeoutMs: 300 });
      assert.equal(late.isError, true);
      assert.match(await until(tab, appOrigin, `(t => t.includes("failed") && t)(document.getElementById("cancelled").textContent)`, "the time-out"), /^cancelled the call failed: no answer within 0\.3 s/);
      assert.equal(recorder.opened().length, 1, "still the one tab");

      // Another server's tool, and one for the model alone: refused.
      await tab.app(appOrigin, `document.getElementById("other").click(); document.getElementById("reset").click()`);
      assert.match(await until(tab, appOrigin, `document.getElementById("other-said").textContent`, "the refusal"), /own server's tools only/);
      assert.match(await until(tab, appOrigin, `document.getElementById("reset-said").textContent`, "the refusal"), /for the model alone/);

      // The header's CSP blocks a request to another origin.
      await tab.app(appOrigin, `document.getElementById("fetch").click()`);
      assert.match(await until(tab, appOrigin, `document.getElementById("fetched").textContent`, "the fetch"), /^blocked/);
      assert.match(await tab.app(appOrigin, `document.getElementById("violations").textContent`), /connect-src/);
      assert.equal(reached, 0, "nothing reached the other origin");

      // The message sent with the tick reached the conversation after the user's consent, marked as the app's.
      const message = await waitFor(() => events.find((e) => e.type === "app" && e.kind === "message"), 10_000, "the message");
      assert.deepEqual([message.server, message.tool, message.text], ["clock", "clock", "the clock says hi"]);
      assert.equal(await until(tab, appOrigin, `document.getElementById("said").textContent`, "the message's answer"), "{}");
      const about = (what) => asked.filter((q) => q.title.includes(what));
      assert.equal(about("- to call tools of its server (now clock_tick;").length, 1, "asked once for the app session's calls");
      assert.equal(about("- to write to this conversation").length, 1, "in the same dialog");
      assert.match(about("- to write to this conversation")[0].title, /^The app of clock \(MCP server "clock"\) asks:\n[^]*\nOne answer for all 2\.$/);
      writeFileSync(join(SHOTS, "clock-used.png"), await tab.screenshot());

      // A link is opened once the user says so, through the same opener; a size change resizes the frame.
      await tab.app(appOrigin, `document.getElementById("link").click()`);
      await until(tab, appOrigin, `document.getElementById("linked").textContent`, "the link");
      assert.equal(recorder.opened().at(-1), "https://clock.example/about?from=app");
      assert.match(asked.at(-1).title, /- to open https:\/\/clock\.example\/about\?from=app in your browser/);
      await tab.app(appOrigin, `document.getElementById("grow").click()`);
      await waitFor(async () => (await tab.evaluate(`document.getElementById("app").style.height`)) === "777px", 10_000, "the frame to grow");

      // Without the token, or under another name: nothing.
      const bare = await fetch(`${url.origin}${url.pathname}`);
      assert.equal(bare.status, 404);
      for (const name of [`localhost:${url.port}`, `attacker.example:${url.port}`]) {
        assert.equal(await statusWithHost(opened.url, name), 421, `Host: ${name}`);
      }
      assert.equal(await statusWithHost(opened.url, url.host), 200);
      assert.equal(adapter.openApps().length, 1);

      // Closing the tab ends the bridge.
      await tab.close();
      await waitFor(() => events.some((e) => e.type === "app" && e.kind === "ended"), 10_000, "the app session to end");
      assert.deepEqual(adapter.openApps(), []);
      assert.equal((await fetch(opened.url)).status, 404);
    }, { settings: { approveTools: false } });
  } finally {
    elsewhere.close();
  }
});

test("when the session ends, the open tab tears its app down", { timeout: 60_000 }, async () => {
  let tab;
  let appOrigin;
  await withAdapter({ clock: testServer(["apps"]) }, async ({ adapter, events }) => {
    adapter.setFrontEnd(allowing().frontEnd);
    adapter.enableApps(SCRIPT, CONTEXT);
    await adapter.call("clock_clock", {});
    const opened = await waitFor(() => events.find((e) => e.type === "app" && e.kind === "opened"), 10_000, "the app to open");
    tab = await browser.open(opened.url);
    appOrigin = await documentOrigin(tab);
    // The result came through the page's stream: it listens.
    await until(tab, appOrigin, `document.getElementById("result").textContent.includes("ticks 0")`, "the app to get its result");
  });
  // withAdapter shut the session down: the page's stream ended, the bridge tore the app down.
  await waitFor(async () => (await tab.evaluate(`document.getElementById("status")?.textContent ?? ""`)).includes("Pi ended it"), 10_000, "the page to say so");
  assert.equal(await tab.evaluate(`document.getElementById("app")`), null, "the frame is gone");
  await tab.close();
});

test("a second session opens the app from a warm cache: the tool's _meta.ui from the cache, its ui:// resource read when called", { timeout: 60_000 }, async () => {
  const agent = tempAgent({ mcpServers: { clock: testServer(["apps"]) } });
  const open = () => McpAdapter.open({ cwd: agent.cwd, agentDir: agent.agentDir, env: agent.env, ...FAST });
  try {
    const first = open();
    assert.equal((await first.connect("clock")).isError, false);
    await first.shutdown();
    const cached = JSON.parse(readFileSync(agent.cachePath, "utf8")).servers.clock.tools.find((t) => t.name === "clock");
    assert.equal(cached._meta.ui.resourceUri, "ui://clock/app.html", "the cache keeps the tool's _meta.ui");

    const second = open();
    const events = [];
    second.onEvent((e) => events.push(e));
    second.setFrontEnd(allowing().frontEnd);
    second.enableApps(SCRIPT, CONTEXT);
    try {
      assert.equal(text(await second.call("clock_clock", {})), "clock called; ticks 0");
      const opened = await waitFor(() => events.find((e) => e.type === "app" && e.kind === "opened"), 10_000, "the app to open");
      const tab = await browser.open(opened.url);
      const appOrigin = await documentOrigin(tab);
      await until(tab, appOrigin, `document.getElementById("result").textContent.includes("ticks 0")`, "the app with its result");
      await tab.close();
      const methods = text(await second.call("clock_seen", {})).replace("methods: ", "").split(", ");
      const [call, read] = [methods.indexOf("tools/call"), methods.indexOf("resources/read")];
      assert.ok(call >= 0 && read > call, `the call from the cache, then the resource: ${methods}`);
      const listed = methods.indexOf("tools/list");
      assert.ok(listed === -1 || listed > call, `no listing before the call: ${methods}`);
    } finally {
      await second.shutdown();
    }
    await waitFor(() => processesIn(agent.cwd).length === 0, 5000, "servers to stop");
  } finally {
    agent.cleanup();
  }
});

test("the official example app (server-basic-vanillajs) runs in the browser", { timeout: 90_000 }, async () => {
  await withAdapter({ basic: basicServer }, async ({ adapter, events }) => {
    adapter.setFrontEnd(allowing().frontEnd);
    adapter.enableApps(SCRIPT, CONTEXT);
    const called = await adapter.call("basic_get-time", {});
    assert.match(text(called), /\d{4}-\d\d-\d\dT/);
    const opened = await waitFor(() => events.find((e) => e.type === "app" && e.kind === "opened"), 20_000, "the app to open");
    const tab = await browser.open(opened.url);
    const appOrigin = await documentOrigin(tab);
    await until(tab, appOrigin, `document.getElementById("get-time-btn")`, "the app to render");
    const before = await tab.app(appOrigin, `document.getElementById("server-time").textContent`);
    await tab.app(appOrigin, `document.getElementById("get-time-btn").click()`);
    const after = await until(tab, appOrigin, `(t => t !== ${JSON.stringify(before)} && /\\d{4}-/.test(t) && t)(document.getElementById("server-time").textContent)`, "the server's time");
    assert.match(after, /\d{4}-\d\d-\d\d/);
    writeFileSync(join(SHOTS, "basic-vanillajs.png"), await tab.screenshot());
    await tab.close();
  });
});

piTest("over RPC: the app opens in the browser, and its message and call sent together are one dialog; the message reaches Pi marked as the app's once the user allows it", { timeout: 120_000 }, async (pi) => {
  // The app's message starts a turn whose answer calls the clock again: the open app sees the call's arguments as the model writes them.
  const again = { tool_calls: [{ name: "mcp", arguments: { tool: "clock_clock", args: { text: "written by the model" } } }] };
  const steps = [{ tool_calls: [{ name: "mcp", arguments: { tool: "clock_clock", args: {} } }] }, { text: "The clock is open." }, again, { text: "Hello, clock." }];
  let url;
  let tab;
  let partial;
  const r = await runPiRpc({
    pi,
    extensionDir: root,
    mcpConfig: { mcpServers: { clock: testServer(["apps"]) } },
    env: { BROWSER: recorder.path },
    script: { steps },
    commands: [
      "show me the clock",
      async ({ notifications, events }) => {
        const opened = await waitFor(() => notifications.find((n) => /opened in your browser/.test(n.message)), 20_000, "the notice");
        url = opened.message.match(/http:\/\/127\.0\.0\.1:\d+\/app\/\S+/)[0];
        tab = await browser.open(url);
        const appOrigin = await documentOrigin(tab);
        await until(tab, appOrigin, `document.getElementById("state").textContent.startsWith("ready")`, "the app to initialize");
        // A tick and a message at once: one dialog asks for both.
        await tab.app(appOrigin, `document.getElementById("together").click()`);
        await until(tab, appOrigin, `document.getElementById("ticked").textContent.includes("clock_tick called")`, "the app's call");
        await waitFor(() => events.filter((e) => e.type === "agent_end").length >= 2, 30_000, "the turn the app's message started");
        partial = await until(tab, appOrigin, `document.getElementById("partial").textContent`, "the arguments as the model wrote them");
        await until(tab, appOrigin, `document.getElementById("input").textContent.includes("written by the model")`, "the call's input");
        writeFileSync(join(SHOTS, `clock-pi-${pi}.png`), await tab.screenshot());
      },
      "/mcp apps",
      async () => {
        await tab.close();
      },
    ],
    answer: (request) => (request.method === "select" ? { value: "Allow for this app session" } : { cancelled: true }),
  });
  assertRan(r);
  const consent = r.dialogs.filter((d) => d.method === "select");
  assert.equal(consent.length, 1, JSON.stringify(consent));
  assert.match(consent[0].title, /^The app of clock \(MCP server "clock"\) asks:\n/);
  assert.match(consent[0].title, /\n- to write to this conversation \(its messages reach the model, marked as the app's\): "the clock says hi"\n/);
  assert.match(consent[0].title, /\n- to call tools of its server \(now clock_tick; only those the server lets apps call\)\n  Arguments: none\n/);
  assert.match(consent[0].title, /\nOne answer for all 2\.$/);
  assert.deepEqual(consent[0].options, ["Allow once", "Allow for this app session", 'Always allow the apps of "clock" (until /mcp apps revoke)', "Deny"]);
  const listed = r.perCommand.find((c) => c.command === "/mcp apps").notifications.map((n) => n.message).join("\n");
  assert.ok(listed.startsWith("MCP apps open (1):\n  clock (server \"clock\"), since "), listed);
  assert.ok(listed.includes(url), listed);
  assert.equal(r.requests.length, 4, "the app's message started a turn");
  assert.match(partial, /partial \{"text":"written by the model"\}; $/, "the last arguments streamed before the call");
  const said = JSON.stringify(r.requests[2].body.messages.at(-1));
  assert.match(said, /A message from the MCP app of clock \(server \\"clock\\"\), sent from its window in the browser; not written by the user/);
  assert.match(said, /the clock says hi/);
  assert.doesNotMatch(JSON.stringify(r.requests[2].body.messages.filter((m) => m.role === "user").map((m) => m.content)), /^the clock says hi$/);
  const launched = new URL(recorder.opened().at(-1));
  assert.equal(launched.origin + launched.pathname, url.split("?")[0], "opened through the core's opener");
  assert.ok(launched.searchParams.get("o") && !launched.searchParams.has("t"), "with a one-time code, not the token");
  await assert.rejects(fetch(url), "nothing listens once Pi has exited");
});

piTest("in json mode (no UI) a tool with an app gives its result and opens nothing", { timeout: 120_000, pis: [PI_16] }, async (pi) => {
  const before = recorder.opened().length;
  const steps = [{ tool_calls: [{ name: "mcp", arguments: { tool: "clock_clock", args: {} } }] }, { text: "done" }];
  const r = await runPi({ pi, extensionDir: root, mcpConfig: { mcpServers: { clock: testServer(["apps"]) } }, env: { BROWSER: recorder.path }, script: { steps } });
  assertRan(r);
  assert.equal(r.toolResults[0].text, "clock called; ticks 0");
  assert.equal(recorder.opened().length, before, "no browser");
  assert.doesNotMatch(r.stderr, /127\.0\.0\.1/);
});

piTest("in Pi's terminal the notice gives the app's address, /mcp apps lists it, and the app follows Pi's theme", { timeout: 120_000, pis: [PI_16], skip: TMUX_SKIP }, async (pi) => {
  const before = recorder.opened().length;
  const steps = [{ tool_calls: [{ name: "mcp", arguments: { tool: "clock_clock", args: {} } }] }, { text: "The clock is open." }];
  const extensionDir = [root, join(root, "__test__", "fixtures", "theme-extension")];
  await withPiTui({ pi, extensionDir, mcpConfig: { mcpServers: { clock: testServer(["apps"]) } }, env: { BROWSER: recorder.path }, script: { steps }, cols: 200 }, async (tui) => {
    await tui.started();
    await tui.submit("show me the clock", /The app of clock \(MCP server "clock"\) opened in your browser: http:\/\/127\.0\.0\.1:\d+\/app\//, "the notice");
    await tui.waitFor(/The clock is open\./, "the model's answer");
    assert.equal(recorder.opened().length, before + 1);
    await tui.submit("/mcp apps", /MCP apps open \(1\):\s+clock \(server "clock"\), since [^:]+:\d\d(:\d\d)?[^h]*http:\/\/127\.0\.0\.1:\d+\/app\//, "the list");

    // Pi's theme changes (as /settings would change it): the open app is told.
    const tab = await browser.open(recorder.opened().at(-1));
    try {
      const appOrigin = await documentOrigin(tab);
      const first = (await until(tab, appOrigin, `(t => t.startsWith("ready") && t)(document.getElementById("state").textContent)`, "the app to initialize")).replace("ready theme ", "");
      const other = first === "dark" ? "light" : "dark";
      await tui.submit(`/theme ${other}`, new RegExp(`theme set: ${other}`), "the theme");
      assert.equal(await until(tab, appOrigin, `document.getElementById("theme").textContent`, "the change to reach the app"), `theme now ${other}`);
    } finally {
      await tab.close();
    }
  });
});
