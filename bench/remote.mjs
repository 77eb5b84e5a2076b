#!/usr/bin/env node
// Figures for remote servers (server-everything in streamableHttp and sse modes on loopback):
// cold connect + call with the default handshake and with protocolVersion "auto", the legacy SSE
// fallback (probe) against a reconnect that remembers the transport, and warm calls. Prints
// medians; not a test. Usage: node bench/remote.mjs [--reps 10] [--warm 100]
import { createRequire } from "node:module";
import { join } from "node:path";
import { everythingHttp, freePort, root, tempAgent } from "../__test__/helpers/servers.mjs";

const { McpAdapter } = createRequire(import.meta.url)(join(root, "index.js"));
const arg = (name, fallback) => {
  const i = process.argv.indexOf(`--${name}`);
  return i > 0 ? Number(process.argv[i + 1]) : fallback;
};
const reps = arg("reps", 10);
const warmCalls = arg("warm", 100);

const stats = (xs) => {
  const s = [...xs].sort((a, b) => a - b);
  const q = (p) => s[Math.min(s.length - 1, Math.floor(p * s.length))];
  return `median ${q(0.5).toFixed(1)} ms (min ${s[0].toFixed(1)}, p90 ${q(0.9).toFixed(1)}, n=${s.length})`;
};
const time = async (fn) => {
  const t = performance.now();
  await fn();
  return performance.now() - t;
};
const must = async (promise) => {
  const r = await promise;
  if (r.isError) throw new Error(JSON.stringify(r.content));
};

const [http, sse] = await Promise.all([everythingHttp("streamableHttp", await freePort()), everythingHttp("sse", await freePort())]);
const agent = tempAgent({
  mcpServers: {
    http: { url: `http://127.0.0.1:${http.port}/mcp` },
    auto: { url: `http://127.0.0.1:${http.port}/mcp`, protocolVersion: "auto" },
    sse: { url: `http://127.0.0.1:${sse.port}/sse` },
  },
});
const open = () => McpAdapter.open({ cwd: agent.cwd, agentDir: agent.agentDir, env: agent.env });
try {
  const cold = { http: [], auto: [], sse: [], sseRemembered: [] };
  for (let i = 0; i < reps; i++) {
    for (const server of ["http", "auto", "sse"]) {
      const adapter = open();
      cold[server].push(await time(() => must(adapter.call(`${server}_echo`, { message: "cold" }))));
      if (server === "sse") cold.sseRemembered.push(await time(() => must(adapter.connect("sse"))));
      await adapter.shutdown();
    }
  }
  const adapter = open();
  const warm = { http: [], sse: [] };
  for (const server of Object.keys(warm)) {
    await must(adapter.call(`${server}_echo`, { message: "warm-up" }));
    for (let i = 0; i < warmCalls; i++) warm[server].push(await time(() => must(adapter.call(`${server}_echo`, { message: `warm ${i}` }))));
  }
  await adapter.shutdown();
  console.log(`cold connect + call, Streamable HTTP (initialize):       ${stats(cold.http)}`);
  console.log(`cold connect + call, Streamable HTTP, protocolVersion auto: ${stats(cold.auto)}`);
  console.log(`cold connect + call, legacy SSE (after the HTTP probe):  ${stats(cold.sse)}`);
  console.log(`reconnect + list, legacy SSE remembered (no probe):      ${stats(cold.sseRemembered)}`);
  console.log(`warm call, Streamable HTTP:                              ${stats(warm.http)}`);
  console.log(`warm call, legacy SSE:                                   ${stats(warm.sse)}`);
} finally {
  agent.cleanup();
  await Promise.all([http.stop(), sse.stop()]);
}
