// Timed calls of server-everything's echo tool through an McpAdapter (native-api.mjs, compare-probe.mjs).
import { mkdirSync, mkdtempSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";

/** Milliseconds `fn` takes. */
export const time = async (fn) => {
  const t = performance.now();
  await fn();
  return performance.now() - t;
};

export async function echo(adapter, message) {
  const r = await adapter.call("everything_echo", { message });
  if (r.isError) throw new Error(JSON.stringify(r.content));
}

/** `count` calls with `inflight` at a time → { latencies, totalMs }. */
export async function burst(adapter, count, inflight) {
  const latencies = [];
  let next = 0;
  const worker = async () => {
    while (next < count) {
      const i = next++;
      latencies.push(await time(() => echo(adapter, `burst ${i}`)));
    }
  };
  const totalMs = await time(() => Promise.all(Array.from({ length: inflight }, worker)));
  return { latencies, totalMs };
}

/** A fresh home whose agent dir's mcp.json has server-everything as `everything` → { home, agentDir }. */
export function everythingHome(serverCommand) {
  const home = mkdtempSync(join(tmpdir(), "pi-mcp-native-bench-"));
  const agentDir = join(home, "agent");
  mkdirSync(agentDir);
  const [command, ...args] = serverCommand;
  writeFileSync(join(agentDir, "mcp.json"), JSON.stringify({ mcpServers: { everything: { command, args } } }));
  return { home, agentDir };
}
