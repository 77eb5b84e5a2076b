#!/usr/bin/env node
// The shared-server broker's memory under a same-user client's flood (issue 26, item 11): for
// each flood of __test__/helpers/rogue.mjs, in a broker of its own serving server-everything and
// the fault server, the broker's RSS before, its peak (VmHWM) and its RSS once the client left,
// whether and how soon it dropped the client. The client is stopped when the broker has grown
// by --guard MiB (default 2048); --only TEXT runs the floods whose name has TEXT. Uses the
// helper next to the addon, as sessions do: run it on a build before a change and after it.
// Not a test. Usage: node bench/broker-flood.mjs [--guard MIB] [--only TEXT] [--json]
import { createRequire } from "node:module";
import { join } from "node:path";
import { FLOODS, floodConfig, measureFlood } from "../__test__/helpers/rogue.mjs";
import { processesIn, sleep, tempAgent, waitFor } from "../__test__/helpers/servers.mjs";
import { ROOT } from "./lib/setup.mjs";

const { McpAdapter } = createRequire(import.meta.url)(join(ROOT, "index.js"));
const arg = (name) => {
  const at = process.argv.indexOf(`--${name}`);
  return at > 0 ? process.argv[at + 1] : undefined;
};
const guardMiB = Number(arg("guard") ?? 2048);
const only = arg("only") ?? "";

const rows = [];
for (const flood of FLOODS.filter((f) => f.what.includes(only))) {
  const agent = tempAgent(floodConfig);
  const session = McpAdapter.open({ cwd: agent.cwd, agentDir: agent.agentDir, env: agent.env });
  await session.call("f_echo", { text: "started" });
  const broker = (await session.brokerStatus()).details.broker.pid;
  try {
    const m = await measureFlood(session, flood, { guardMiB, dropWait: 10000 });
    rows.push({ flood: flood.what, ...m, dropped: m.dropped?.replace(/^\S+ /, "") ?? null });
    console.error(`${flood.what}: ${m.before.toFixed(0)} → peak ${m.peak.toFixed(0)} → ${m.after.toFixed(0)} MiB`);
  } finally {
    // A broker still busy with the flood may take long to stop: after 30 s it is killed (its
    // watchdog stops its servers).
    await Promise.race([session.brokerStop(), sleep(30000)]);
    await session.shutdown();
    const stopped = await waitFor(() => processesIn(agent.cwd).length === 0, 30000, "").then(() => true, () => false);
    if (!stopped) process.kill(broker, "SIGKILL");
    await waitFor(() => processesIn(agent.cwd).length === 0, 10000, "the servers to stop");
    agent.cleanup();
  }
}

if (process.argv.includes("--json")) {
  console.log(JSON.stringify(rows, null, 1));
} else {
  console.log("| flood | RSS before | peak | after the client left | dropped |");
  console.log("|---|---|---|---|---|");
  for (const r of rows) {
    const dropped = r.dropped ? `after ${r.ms} ms: ${r.dropped.replace(/^.*?: /, "")}` : r.grew ? `no; stopped at +${guardMiB} MiB` : "no";
    console.log(`| ${r.flood} | ${r.before.toFixed(0)} MiB | ${r.peak.toFixed(0)} MiB | ${r.after.toFixed(0)} MiB | ${dropped} |`);
  }
}
