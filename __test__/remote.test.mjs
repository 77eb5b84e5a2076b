// Remote (url) servers through the native API: server-everything in its Streamable HTTP and
// legacy SSE modes, the Python SDK server on legacy SSE and on Streamable HTTP with the
// 2026-07-28 protocol, credentials seen on the wire through a recording loopback proxy, needs-auth
// states, a restarted server, an unreachable URL.
import { after, before, describe, test } from "node:test";
import assert from "node:assert/strict";
import { createRequire } from "node:module";
import { mkdirSync, readFileSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { row, timed } from "./helpers/matrix.mjs";
import { everything, everythingHttp, freePort, python, pythonHttp, pythonSse, recordingProxy, tempAgent } from "./helpers/servers.mjs";

const { McpAdapter } = createRequire(import.meta.url)("../index.js");
const text = (outcome) => outcome.content.map((c) => c.text ?? "").join("\n");
const open = (agent) => McpAdapter.open({ cwd: agent.cwd, agentDir: agent.agentDir, env: agent.env });
const stateOf = async (adapter, name) => (await adapter.status()).details.servers.find((s) => s.name === name);

describe("every mode over Streamable HTTP and legacy SSE", () => {
  const servers = [];
  let agent;
  let adapter;
  before(async () => {
    const [http, sse, py, pyModern] = await Promise.all([freePort(), freePort(), freePort(), freePort()]);
    servers.push(await everythingHttp("streamableHttp", http), await everythingHttp("sse", sse), await pythonSse(py), await pythonHttp(pyModern));
    agent = tempAgent({
      mcpServers: {
        evhttp: { url: `http://127.0.0.1:${http}/mcp` },
        evsse: { url: `http://127.0.0.1:${sse}/sse` },
        pysse: { url: `http://127.0.0.1:${py}/sse` },
        pymodern: { url: `http://127.0.0.1:${pyModern}/mcp`, protocolVersion: "2026-07-28" },
        pyauto: { url: `http://127.0.0.1:${pyModern}/mcp`, protocolVersion: "auto" },
        evauto: { url: `http://127.0.0.1:${http}/mcp`, protocolVersion: "auto" },
        evshort: { url: `http://127.0.0.1:${sse}/sse`, requestTimeoutMs: 500 },
        // protocolVersion applies to stdio servers too.
        pystdio: python({ protocolVersion: "2026-07-28" }),
        evstdio: everything({ protocolVersion: "auto" }),
      },
    });
    adapter = open(agent);
  });
  after(async () => {
    await adapter?.shutdown();
    await Promise.all(servers.map((s) => s.stop()));
    agent?.cleanup();
  });

  for (const [server, transport] of [["evhttp", "streamable-http"], ["evsse", "sse"]]) {
    test(`server-everything, ${transport}: status, list, search, describe, call`, async () => {
      const listed = await adapter.list(server);
      assert.equal(listed.isError, false, text(listed));
      assert.match(text(listed), new RegExp(`^- ${server}_echo`, "m"));
      const found = await adapter.search("echo", { server });
      assert.match(text(found), new RegExp(`^${server}_echo`, "m"));
      assert.match(text(await adapter.describe(`${server}_echo`)), /message/);
      const called = await adapter.call(`${server}_echo`, { message: "over the wire" });
      assert.deepEqual(called.content, [{ type: "text", text: "Echo: over the wire" }]);
      const progress = await adapter.call(`${server}_trigger-long-running-operation`, { duration: 1, steps: 2 });
      assert.equal(progress.isError, false, text(progress));
      const state = await stateOf(adapter, server);
      assert.equal(state.state, "connected");
      assert.equal(state.transport, transport);
      assert.ok(state.tools >= 10, JSON.stringify(state));
    });
  }

  test("the Python SDK server on legacy SSE", async () => {
    const called = await adapter.call("pysse_add", { a: 2, b: 3 });
    assert.equal(called.isError, false, text(called));
    assert.match(text(called), /\b5\b/);
    assert.equal((await stateOf(adapter, "pysse")).transport, "sse");
  });

  test("requestTimeoutMs bounds each request, not the long-lived stream", async () => {
    const slow = await adapter.call("evshort_trigger-long-running-operation", { duration: 3, steps: 1 });
    assert.equal(slow.isError, true);
    assert.equal(slow.details.error, "timeout", JSON.stringify(slow));
    assert.match(text(slow), /no answer within 0\.5 s/);
    // The connection (its event stream open all along) still serves the next request.
    const called = await adapter.call("evshort_echo", { message: "still here" });
    assert.deepEqual(called.content, [{ type: "text", text: "Echo: still here" }]);
  });

  test("protocolVersion 2026-07-28 and auto", async () => {
    for (const server of ["pymodern", "pyauto", "pystdio"]) {
      const called = await adapter.call(`${server}_add`, { a: 20, b: 22 });
      assert.equal(called.isError, false, `${server}: ${text(called)}`);
      assert.match(text(called), /\b42\b/);
    }
    // A 2025-11-25-only server with "auto" falls back to `initialize`.
    const started = Date.now();
    const called = await adapter.call("evauto_echo", { message: "auto" });
    assert.deepEqual(called.content, [{ type: "text", text: "Echo: auto" }]);
    console.log(`# auto against a legacy Streamable HTTP server: connect + call in ${Date.now() - started} ms`);
    const stdio = await adapter.call("evstdio_echo", { message: "auto on stdio" });
    assert.deepEqual(stdio.content, [{ type: "text", text: "Echo: auto on stdio" }]);
  });
});

describe("credentials on the wire", () => {
  let backend;
  let bearer;
  let oauth;
  let agent;
  let adapter;
  before(async () => {
    backend = await everythingHttp("streamableHttp", await freePort());
    bearer = await recordingProxy(backend.port, { authorization: "Bearer tok-123", "x-team": "blue" });
    oauth = await recordingProxy(backend.port, { authorization: "Bearer oauth-abc" });
    agent = tempAgent({
      mcpServers: {
        good: { url: `${bearer.url}/mcp`, auth: "bearer", bearerTokenEnv: "TEST_MCP_TOKEN", headers: { "X-Team": "${TEAM}" } },
        wrong: { url: `${bearer.url}/mcp`, auth: "bearer", bearerToken: "nope-999", headers: { "X-Team": "blue" } },
        stored: { url: `${oauth.url}/mcp`, auth: "oauth" },
        expired: { url: `${oauth.url}/mcp`, auth: "oauth" },
      },
    });
    agent.env.TEST_MCP_TOKEN = "tok-123";
    agent.env.TEAM = "blue";
    const store = (server, tokens) => {
      mkdirSync(join(agent.agentDir, "mcp-oauth", server), { recursive: true });
      writeFileSync(join(agent.agentDir, "mcp-oauth", server, "tokens.json"), JSON.stringify(tokens));
    };
    store("stored", { access_token: "oauth-abc", token_type: "bearer", expires_at: Date.now() + 3600_000 });
    store("expired", { access_token: "oauth-abc", expires_at: Date.now() - 1000 });
    adapter = open(agent);
  });
  after(async () => {
    await adapter?.shutdown();
    await bearer?.close();
    await oauth?.close();
    await backend?.stop();
    agent?.cleanup();
  });

  test("bearer token and custom headers arrive on every request; DELETE on shutdown", async () => {
    const called = await adapter.call("good_echo", { message: "authorized" });
    assert.deepEqual(called.content, [{ type: "text", text: "Echo: authorized" }]);
    assert.ok(bearer.requests.length >= 3, JSON.stringify(bearer.requests));
    for (const r of bearer.requests) {
      assert.equal(r.headers.authorization, "Bearer tok-123", `${r.method} ${r.path}`);
      assert.equal(r.headers["x-team"], "blue");
    }
    const session = bearer.requests.find((r) => r.headers["mcp-session-id"])?.headers["mcp-session-id"];
    assert.ok(session, "the server gave a session");
    await adapter.shutdown();
    const deleted = bearer.requests.find((r) => r.method === "DELETE");
    assert.ok(deleted, "the session is closed with a DELETE");
    assert.equal(deleted.headers["mcp-session-id"], session);
    adapter = open(agent);
  });

  test("a refused token: needs auth in status, the fix in the message, the token nowhere", async () => {
    const connected = await adapter.connect("wrong");
    assert.equal(connected.isError, true);
    assert.equal(connected.details.error, "auth_required");
    assert.match(text(connected), /401/);
    assert.match(text(connected), /\/mcp-auth wrong/);
    const status = await adapter.status();
    assert.equal(status.details.servers.find((s) => s.name === "wrong").state, "needs-auth");
    assert.match(text(status), /🔒 wrong: needs auth/);
    assert.match(adapter.footer(), /1 needs auth/);
    const help = adapter.authHelp("wrong");
    assert.equal(help.details.needsAuth, true);
    assert.match(text(help), /bearerToken/);
    for (const shown of [text(connected), text(status), text(help), JSON.stringify(connected.details)]) {
      assert.doesNotMatch(shown, /nope-999|tok-123/);
    }
  });

  test("auth: oauth sends the stored token (pi-mcp-adapter's file); an expired one is not sent and asks for a sign-in", async () => {
    const called = await adapter.call("stored_echo", { message: "oauth" });
    assert.deepEqual(called.content, [{ type: "text", text: "Echo: oauth" }]);
    const before = oauth.requests.length;
    const connected = await adapter.connect("expired");
    assert.equal(connected.details.error, "auth_required");
    assert.match(text(connected), /needs sign-in: .*the server answered HTTP 401 Unauthorized\. Sign in with `\/mcp login expired`/);
    const sent = oauth.requests.slice(before).map((r) => r.headers.authorization);
    assert.deepEqual(sent.filter(Boolean), [], "no request with an expired token");
    const help = adapter.authHelp("expired");
    assert.match(text(help), /\/mcp login expired[^]*mcp-auth\.json/);
    assert.match(text(adapter.authHelp("")), /Usage: \/mcp-auth <server>[\s\S]*- expired: needs auth/);
  });
});

describe("across sessions, and failures", () => {
  test("the transport that worked is kept in the cache: the next session skips the probe", async () => {
    const server = await everythingHttp("sse", await freePort());
    const proxy = await recordingProxy(server.port);
    const agent = tempAgent({ mcpServers: { legacy: { url: `${proxy.url}/sse` } } });
    try {
      const first = open(agent);
      assert.equal((await first.list("legacy")).isError, false);
      await first.shutdown();
      assert.ok(proxy.requests.some((r) => r.method === "POST" && r.path === "/sse"), "the first connect probes Streamable HTTP");
      assert.equal(JSON.parse(readFileSync(agent.cachePath, "utf8")).servers.legacy.transport, "sse");
      proxy.requests.length = 0;
      const second = open(agent);
      const connected = await second.connect("legacy");
      await second.shutdown();
      assert.equal(connected.isError, false, text(connected));
      assert.deepEqual(proxy.requests.filter((r) => r.path === "/sse").map((r) => r.method), ["GET"]);
    } finally {
      await proxy.close();
      await server.stop();
      agent.cleanup();
    }
  });

  // server-everything answers a forgotten session with 400, the Python SDK with the spec's 404.
  for (const [name, start] of [["server-everything", (port) => everythingHttp("streamableHttp", port)], ["the Python SDK", pythonHttp]]) {
    test(`a restarted server (${name}): the next call goes through on a new session`, async () => {
      const port = await freePort();
      let server = await start(port);
      const agent = tempAgent({ mcpServers: { ev: { url: `http://127.0.0.1:${port}/mcp` } } });
      const adapter = open(agent);
      try {
        const first = await adapter.call("ev_echo", { message: "one" });
        assert.equal(first.isError, false, text(first));
        await server.stop();
        server = await start(port);
        const again = await adapter.call("ev_echo", { message: "two" });
        assert.equal(again.isError, false, text(again));
        assert.match(text(again), /two/);
        assert.equal((await stateOf(adapter, "ev")).state, "connected");
      } finally {
        await adapter.shutdown();
        await server.stop();
        agent.cleanup();
      }
    });
  }

  test("an unreachable URL fails at once, clearly", async () => {
    const port = await freePort();
    const agent = tempAgent({ mcpServers: { gone: { url: `http://127.0.0.1:${port}/mcp?key=secret-key` } } });
    const adapter = open(agent);
    try {
      const started = Date.now();
      const listed = await adapter.list("gone");
      assert.ok(Date.now() - started < 10_000, `took ${Date.now() - started} ms`);
      assert.equal(listed.isError, true);
      assert.match(text(listed), /cannot connect/);
      assert.match(text(listed), new RegExp(`127\\.0\\.0\\.1:${port}/mcp\\?…`));
      assert.doesNotMatch(text(listed), /secret-key/);
      assert.equal((await stateOf(adapter, "gone")).state, "failed");
    } finally {
      await adapter.shutdown();
      agent.cleanup();
    }
  });
});

describe("reliability matrix: remote servers", () => {
  row("14", "HTTP server returning 500s, slow responses, a dropped SSE stream, an expired session", import.meta.url, async ({ note }) => {
    const [httpPort, ssePort] = await Promise.all([freePort(), freePort()]);
    let http = await everythingHttp("streamableHttp", httpPort);
    let sse = await everythingHttp("sse", ssePort);
    const proxy = await recordingProxy(httpPort);
    const agent = tempAgent({
      mcpServers: {
        flaky: { url: `${proxy.url}/mcp` },
        slow: { url: `http://127.0.0.1:${httpPort}/mcp`, requestTimeoutMs: 400 },
        stream: { url: `http://127.0.0.1:${ssePort}/sse` },
        session: { url: `http://127.0.0.1:${httpPort}/mcp` },
      },
    });
    const adapter = open(agent);
    const echo = async (server, message) => {
      const r = await adapter.call(`${server}_echo`, { message });
      assert.equal(text(r), `Echo: ${message}`, `${server}: ${text(r)}`);
    };
    try {
      await echo("flaky", "before");
      proxy.failPosts = 500;
      const [failed, failMs] = await timed(() => adapter.call("flaky_echo", { message: "during" }));
      assert.equal(failed.isError, true);
      assert.match(text(failed), /500/);
      proxy.failPosts = null;
      await echo("flaky", "after");

      const [slow, slowMs] = await timed(() => adapter.call("slow_trigger-long-running-operation", { duration: 3, steps: 1 }));
      assert.equal(slow.details.error, "timeout", text(slow));
      await echo("slow", "still serving");

      await echo("stream", "before the drop");
      await echo("session", "before the restart");
      await Promise.all([sse.stop(), http.stop()]);
      [sse, http] = await Promise.all([everythingHttp("sse", ssePort), everythingHttp("streamableHttp", httpPort)]);
      const [, resumeMs] = await timed(() => echo("stream", "after the drop"));
      await echo("session", "after the restart");
      note(`HTTP 500 on a call: an error in ${failMs} ms naming the status, the next call works; a slow call: timed out at requestTimeoutMs 400 (${slowMs} ms), the connection serves on; a dropped SSE stream: reconnected and re-initialized, call answered ${resumeMs} ms after the restart; an expired session (server restarted): re-initialized and retried, the call went through`);
    } finally {
      await adapter.shutdown();
      await proxy.close();
      await Promise.all([http.stop(), sse.stop()]);
      agent.cleanup();
    }
  });
});
