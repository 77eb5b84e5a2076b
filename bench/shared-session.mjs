// One session of bench/shared.mjs, in a process of its own as a Pi session would be: opens the
// adapter with the options it is given, then times what the parent asks over IPC.
//   { call: tool, args }            → { ms }              one call
//   { burst: tool, count, inflight } → { ms }             `count` calls, `inflight` at a time
//   { pair: [toolA, toolB], n }      → { a: [ms], b: [ms] } interleaved calls of two tools
//   { shutdown: true }               → {}                  then exits
import { createRequire } from "node:module";
import { join } from "node:path";
import { ROOT } from "./lib/setup.mjs";

const { McpAdapter } = createRequire(import.meta.url)(join(ROOT, "index.js"));
const adapter = McpAdapter.open(JSON.parse(process.argv[2]));
setTimeout(() => process.exit(3), 600_000).unref(); // bounded whatever happens

async function timed(tool, args) {
  const t = performance.now();
  const r = await adapter.call(tool, args);
  const ms = performance.now() - t;
  if (r.isError) throw new Error(`${tool}: ${JSON.stringify(r.content)}`);
  return ms;
}

async function burst(tool, count, inflight) {
  let next = 0;
  const worker = async () => {
    while (next < count) await timed(tool, { message: `burst ${next++}` });
  };
  const t = performance.now();
  await Promise.all(Array.from({ length: inflight }, worker));
  return performance.now() - t;
}

process.on("message", async (m) => {
  try {
    if (m.call) process.send({ ms: await timed(m.call, m.args ?? {}) });
    else if (m.burst) process.send({ ms: await burst(m.burst, m.count, m.inflight) });
    else if (m.pair) {
      const out = { a: [], b: [] };
      for (let i = 0; i < m.n; i++) {
        out.a.push(await timed(m.pair[0], { message: `a ${i}` }));
        out.b.push(await timed(m.pair[1], { message: `b ${i}` }));
      }
      process.send(out);
    } else if (m.shutdown) {
      await adapter.shutdown();
      process.send({});
      process.exit(0);
    }
  } catch (e) {
    process.send({ error: e.message });
  }
});
process.send({ ready: true });
