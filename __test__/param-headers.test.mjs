// x-mcp-header parameters (SEP-2243) in a user's normal state: a first session connects (the
// metadata cache now holds the tools), a second one calls from the cache before any listing. The
// server is the Python SDK's on 2026-07-28 Streamable HTTP, which refuses a call that lacks (or
// mismatches) an annotated parameter's `Mcp-Param-*` header with -32020; a proxy in front of it
// records every request's headers, in order.
import assert from "node:assert/strict";
import { readFileSync, writeFileSync } from "node:fs";
import { createRequire } from "node:module";
import { after, before, test } from "node:test";
import { freePort, pythonHttp, recordingProxy, tempAgent, text } from "./helpers/servers.mjs";

const { McpAdapter } = createRequire(import.meta.url)("../index.js");
const open = (agent) => McpAdapter.open({ cwd: agent.cwd, agentDir: agent.agentDir, env: agent.env });

/** The tools/call and tools/list requests the proxy saw since `from`, in order. */
const calls = (proxy, from = 0) =>
  proxy.requests.slice(from).filter((r) => ["tools/call", "tools/list"].includes(r.headers["mcp-method"]));

/** Servers by the header deploy's `region` goes as (`-`: not annotated), started once for all. */
const servers = {};
before(async () => {
  await Promise.all(
    ["Region", "Zone", "-"].map(async (header) => {
      servers[header] = await pythonHttp(await freePort(), { PY_DEPLOY_HEADER: header });
    }),
  );
});
after(() => Promise.all(Object.values(servers).map((server) => server.stop())));

/**
 * A proxy to the server whose deploy says `cached`, and an agent dir whose cache a first session
 * (`connect`, as `pi-mcp connect`) filled from it; the proxy then moves to the server that says `live`, as when
 * the server changed since the cache was written.
 */
async function warmCache(cached, live = cached) {
  const proxy = await recordingProxy(servers[cached].port);
  const agent = tempAgent({ mcpServers: { py: { url: `${proxy.url}/mcp`, protocolVersion: "2026-07-28" } } });
  const first = open(agent);
  const connected = await first.connect("py");
  await first.shutdown();
  assert.equal(connected.isError, false, text(connected));
  proxy.targetPort = servers[live].port;
  const cleanup = async () => {
    await proxy.close();
    agent.cleanup();
  };
  return { proxy, agent, cleanup, from: proxy.requests.length };
}

const cachedDeploy = (agent) => JSON.parse(readFileSync(agent.cachePath, "utf8")).servers.py.tools.find((t) => t.name === "deploy");

test("a second session's call from the cache sends the Mcp-Param-* headers, before any listing", async () => {
  const { proxy, agent, cleanup, from } = await warmCache("Region");
  const second = open(agent);
  try {
    const plain = await second.call("py_deploy", { region: "eu-west-1", replicas: 2 });
    assert.equal(plain.isError, false, text(plain));
    assert.equal(text(plain), "deployed 2 to eu-west-1");
    // Not ASCII: the value goes Base64-wrapped, and the server decodes it to the body's.
    const wrapped = await second.call("py_deploy", { region: "Zürich" });
    assert.equal(wrapped.isError, false, text(wrapped));
    const sent = calls(proxy, from);
    const [first, next] = sent.filter((r) => r.headers["mcp-method"] === "tools/call");
    assert.equal(sent[0], first, "the call went before any listing");
    assert.equal(first.headers["mcp-param-region"], "eu-west-1");
    assert.equal(next.headers["mcp-param-region"], `=?base64?${Buffer.from("Zürich").toString("base64")}?=`);
    assert.equal(first.headers["mcp-param-replicas"], undefined, "an unannotated parameter is not mirrored");
  } finally {
    await second.shutdown();
    await cleanup();
  }
});

// The server changed its annotation since the cache was written: the call from the cache carries
// the old headers and is refused (-32020, the server did not run it); it is listed again and the
// call goes once more as the server describes the tool now.
for (const [cached, live] of [
  ["Region", "Zone"],
  ["-", "Region"],
]) {
  test(`cached as ${cached}, the server now says ${live}: the call is retried with the fresh definition`, async () => {
    const { proxy, agent, cleanup, from } = await warmCache(cached, live);
    const second = open(agent);
    try {
      const called = await second.call("py_deploy", { region: "us-east-2" });
      assert.equal(called.isError, false, text(called));
      const seen = calls(proxy, from).map((r) => `${r.headers["mcp-method"]} ${r.headers[`mcp-param-${live.toLowerCase()}`] ?? "-"}`);
      assert.deepEqual(seen.slice(0, 3), ["tools/call -", "tools/list -", "tools/call us-east-2"]);
      await second.shutdown();
      assert.equal(cachedDeploy(agent).inputSchema.properties.region["x-mcp-header"], live);
    } finally {
      await second.shutdown();
      await cleanup();
    }
  });
}

// A cache written elsewhere (another client sharing the file, an older version) may hold a tool
// whose annotation is invalid: such a tool must not be called (SEP-2243). Nothing goes to the
// server with it; the server is listed, and its valid definition is called.
test("a cached tool with an invalid x-mcp-header is not sent; the live definition is called", async () => {
  const { proxy, agent, cleanup, from } = await warmCache("Region");
  const cache = JSON.parse(readFileSync(agent.cachePath, "utf8"));
  cache.servers.py.tools.find((t) => t.name === "deploy").inputSchema.properties.region["x-mcp-header"] = "My Region";
  writeFileSync(agent.cachePath, JSON.stringify(cache));
  const second = open(agent);
  try {
    const called = await second.call("py_deploy", { region: "ap-south-1" });
    assert.equal(called.isError, false, text(called));
    const seen = calls(proxy, from).map((r) => `${r.headers["mcp-method"]} ${r.headers["mcp-param-region"] ?? "-"}`);
    assert.deepEqual(seen.slice(0, 2), ["tools/list -", "tools/call ap-south-1"]);
  } finally {
    await second.shutdown();
    await cleanup();
  }
});
