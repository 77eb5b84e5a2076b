// pi-mcp-adapter's keys with their meaning (issue 28, item 6), through the native API and
// `pi-mcp`: a server on a Unix socket (`socket`, rmcp-mux's endpoint), the protocol trace
// (`trace`: metadata only, bounded, 0600), `requestHeadersCommand` signing every request to a
// gateway that checks it, `bearerToken` as a `!command` and its `!!` escape, `searchKeywords`,
// the warning past 75 declared tools, `disableProxyTool`, and what doctor says of the keys that
// are not read.
import assert from "node:assert/strict";
import { spawn } from "node:child_process";
import { createHash } from "node:crypto";
import { mkdtempSync, readFileSync, rmSync, statSync } from "node:fs";
import { createServer, request as httpRequest } from "node:http";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { after, before, describe, test } from "node:test";
import { everything, everythingHttp, freePort, pimcp, recordingProxy, root, tempAgent, testServer, text, waitFor, withAdapter } from "./helpers/servers.mjs";

const fixture = (name) => join(root, "__test__", "fixtures", name);
const everythingStdio = everything();

/** A relay (fixtures/socket-relay.mjs) serving server-everything on a Unix socket in `dir`. */
async function socketServer(dir) {
  const path = join(dir, "ev.sock");
  const relay = spawn(process.execPath, [fixture("socket-relay.mjs"), path, everythingStdio.command, ...everythingStdio.args], { stdio: ["ignore", "pipe", "ignore"] });
  await new Promise((resolve, reject) => {
    relay.stdout.on("data", (d) => String(d).includes("ready") && resolve());
    relay.once("exit", () => reject(new Error("the relay exited")));
  });
  const stop = () => new Promise((resolve) => (relay.exitCode !== null ? resolve() : (relay.once("exit", resolve), relay.kill("SIGTERM"))));
  return { path, pid: relay.pid, stop };
}

describe("socket and trace", () => {
  let dir;
  let relay;
  before(async () => {
    dir = mkdtempSync(join(tmpdir(), "pi-mcp-native-socket-"));
    relay = await socketServer(dir);
  });
  after(async () => {
    await relay.stop();
    rmSync(dir, { recursive: true, force: true });
  });

  test("a server on a Unix socket is listed and called; each message is traced as metadata, 0600, bounded", async () => {
    const settings = { trace: { enabled: true, file: "traces/t.jsonl", maxEvents: 100 } };
    await withAdapter({ mux: { socket: relay.path } }, async ({ adapter, agent }) => {
      const listed = await adapter.list("mux");
      assert.equal(listed.isError, false, text(listed));
      const called = await adapter.call("mux_echo", { message: "sk-argument-secret" });
      assert.equal(text(called), "Echo: sk-argument-secret");
      const status = await adapter.status();
      assert.match(text(status), /mux/);
      const path = join(agent.cwd, "traces", "t.jsonl");
      await waitFor(() => statSync(path, { throwIfNoEntry: false }), 5000, "the trace");
      const events = readFileSync(path, "utf8").trim().split("\n").map((l) => JSON.parse(l));
      assert.ok(events.length <= 100, `${events.length} events, over maxEvents`);
      assert.deepEqual(events[0], { ...events[0], version: 1, direction: "outbound", server: "mux", transport: "unix-socket", kind: "request", status: "sent", method: "initialize", id: 0 });
      const call = events.find((e) => e.method === "tools/call");
      assert.ok(call && call.bytes > 0, JSON.stringify(events));
      assert.ok(events.some((e) => e.direction === "inbound" && e.kind === "response" && e.id === call.id));
      assert.doesNotMatch(readFileSync(path, "utf8"), /sk-argument-secret|echo/);
      assert.equal(statSync(path).mode & 0o777, 0o600);
      assert.equal(statSync(join(agent.cwd, "traces")).mode & 0o777, 0o700);
    }, { settings });
  });

  test("a socket nobody listens on fails with the path and why", async () => {
    await withAdapter({ gone: { socket: join(dir, "nobody.sock") } }, async ({ adapter }) => {
      const r = await adapter.list("gone");
      assert.equal(r.details.error, "server_unavailable");
      assert.match(text(r), /the Unix socket .*nobody\.sock: cannot connect: /);
    });
  });
});

/** A gateway in front of server-everything (Streamable HTTP) that answers 401 to any request whose X-Signature is not the SHA-256 of "<method> <url>\n<body>". */
async function signingGateway(targetPort) {
  const seen = [];
  const server = createServer((req, res) => {
    const chunks = [];
    req.on("data", (c) => chunks.push(c));
    req.on("end", () => {
      const body = Buffer.concat(chunks);
      const url = `http://${req.headers.host}${req.url}`;
      const expected = createHash("sha256").update(`${req.method} ${url}\n`).update(body).digest("hex");
      const signed = req.headers["x-signature"] === expected;
      seen.push({ method: req.method, signed, keyId: req.headers["x-key-id"] });
      if (!signed) {
        res.writeHead(401, { "Content-Type": "text/plain" });
        return res.end("bad signature");
      }
      const upstream = httpRequest({ host: "127.0.0.1", port: targetPort, method: req.method, path: req.url, headers: req.headers }, (answer) => {
        res.writeHead(answer.statusCode, answer.headers);
        answer.pipe(res);
      });
      upstream.on("error", () => res.destroy());
      upstream.end(body);
    });
  });
  await new Promise((resolve) => server.listen(0, "127.0.0.1", resolve));
  return { url: `http://127.0.0.1:${server.address().port}/mcp`, seen, close: () => new Promise((r) => (server.closeAllConnections(), server.close(r))) };
}

describe("remote credentials", () => {
  let upstream;
  before(async () => {
    upstream = await everythingHttp("streamableHttp", await freePort());
  });
  after(() => upstream.stop());

  test("requestHeadersCommand signs every request; a failing one says so without its output", async () => {
    const gateway = await signingGateway(upstream.port);
    try {
      const signer = { command: process.execPath, args: [fixture("sign-request.mjs")], env: { KEY_ID: "${KEY_OF_TEST}" } };
      const entry = (extra = {}) => ({ url: gateway.url, auth: false, requestHeadersCommand: { ...signer, ...extra } });
      process.env.KEY_OF_TEST = "k-7"; // read through `${KEY_OF_TEST}` in its env
      try {
        await withAdapter({ gw: entry() }, async ({ adapter }) => {
          const r = await adapter.call("gw_echo", { message: "signed" });
          assert.equal(text(r), "Echo: signed");
        });
      } finally {
        delete process.env.KEY_OF_TEST;
      }
      assert.ok(gateway.seen.length >= 3, JSON.stringify(gateway.seen));
      assert.ok(gateway.seen.every((s) => s.signed && s.keyId === "k-7"), JSON.stringify(gateway.seen));
      assert.ok(gateway.seen.some((s) => s.method === "POST"));
      await withAdapter({ gw: entry({ env: { SIGN_FAIL: "1" } }) }, async ({ adapter }) => {
        const r = await adapter.list("gw");
        assert.equal(r.details.error, "server_unavailable");
        assert.match(text(r), /`requestHeadersCommand` exited with code 3; its output is not shown/);
        assert.doesNotMatch(text(r), /sk-signing-secret/);
      });
    } finally {
      await gateway.close();
    }
  });

  test("bearerToken as a !command, and !! for a token that starts with !", async () => {
    for (const [bearerToken, sent] of [["!printf t0k-from-command", "Bearer t0k-from-command"], ["!!bang", "Bearer !bang"]]) {
      const proxy = await recordingProxy(upstream.port, { authorization: sent });
      try {
        await withAdapter({ gw: { url: `${proxy.url}/mcp`, bearerToken } }, async ({ adapter }) => {
          const r = await adapter.call("gw_echo", { message: "with a token" });
          assert.equal(text(r), "Echo: with a token", bearerToken);
        });
      } finally {
        await proxy.close();
      }
    }
  });
});

test("searchKeywords: more words a server's tools are found by", async () => {
  await withAdapter({ ev: everything({ searchKeywords: { echo: ["frobnicate"], "get-*": ["quuxify"] } }) }, async ({ adapter }) => {
    await adapter.list("ev");
    const r = await adapter.search("frobnicate");
    assert.match(text(r).split("\n").find((l) => l.startsWith("ev_")) ?? "", /^ev_echo\b/, text(r));
    const q = await adapter.search("quuxify");
    assert.ok(q.details.matches?.every((m) => m.tool.startsWith("ev_get-")), JSON.stringify(q.details.matches));
  });
});

test("75 or more declared tools warn unless warnOnLargeDirectTools is false; disableProxyTool leaves mcp out once they are known", async () => {
  const many = testServer(["many-tools=80"], { directTools: true });
  await withAdapter({ big: many }, async ({ adapter }) => {
    let declared = adapter.directTools();
    assert.equal(declared.proxy, true, "not listed yet: the mcp tool stays");
    assert.match(declared.warnings.join("\n"), /the tools of big are not known yet: the mcp tool stays/);
    await adapter.list("big");
    declared = adapter.directTools();
    assert.equal(declared.tools.length, 80);
    assert.match(declared.warnings.join("\n"), /80 MCP tools are declared to the model as tools of their own/);
    assert.equal(declared.proxy, false);
  }, { settings: { disableProxyTool: true } });
  await withAdapter({ big: many }, async ({ adapter }) => {
    await adapter.list("big");
    const declared = adapter.directTools();
    assert.deepEqual(declared.warnings, []);
    assert.equal(declared.proxy, true);
  }, { settings: { warnOnLargeDirectTools: false } });
});

test("pi-mcp doctor says what to use instead of the keys that are not read", async () => {
  const agent = tempAgent({
    settings: { hostConfigDiscovery: "on", outputGuard: { detailsMaxBytes: 5 }, mcpFooterStatus: "off" },
    mcpServers: { ev: everything({ bearerTokenStore: true, httpTransport: "sse" }) },
  });
  try {
    const r = await pimcp(agent, ["doctor", "--offline"]);
    for (const said of [
      /`settings\.hostConfigDiscovery`: a pi-mcp-adapter option that pi-mcp-native does not use: other tools' configs are read when listed: add `"imports": \["cursor", …\]`, or run `\/mcp setup`/,
      /`settings\.outputGuard\.detailsMaxBytes`: accepted, and not needed/,
      /`bearerTokenStore`: .*use `bearerTokenEnv`/,
      /`httpTransport`: .*found by itself/,
      /`settings\.mcpFooterStatus`: .*ignored/,
    ]) {
      assert.match(r.stdout, said);
    }
  } finally {
    agent.cleanup();
  }
});
