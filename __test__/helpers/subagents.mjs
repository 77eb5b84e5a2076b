// Pi's own subagent example (`examples/extensions/subagent` in Pi's package) in a sandbox set up
// as a user's would be: our extension installed as a package in the agent dir (which the
// subagents, `pi --mode json -p` processes without `-e`, load), the fake model the default, a
// `worker` agent whose tools are `mcp`, and `pi` on the PATH Pi's bash tool gives commands
// (`<agentDir>/bin`). For the family's end-to-end tests and its benchmark.
import { mkdirSync, readFileSync, writeFileSync } from "node:fs";
import { dirname, join } from "node:path";
import { NODE22, piCli } from "./pi.mjs";
import { processesIn, root, waitFor } from "./servers.mjs";

/** The example's entry in Pi `pi`'s package (for `-e`; Pi 0.87 does not load its directory). */
export const subagentExample = (pi) => join(dirname(piCli(pi)), "..", "..", "examples", "extensions", "subagent", "index.ts");

/** A `prepare(box)` for the harness's runs that installs the above in the sandbox. */
export function installed(pi) {
  return (box) => {
    writeFileSync(join(box.agentDir, "settings.json"), JSON.stringify({ packages: [root], defaultProvider: "fake", defaultModel: "fake-model" }));
    mkdirSync(join(box.agentDir, "agents"), { recursive: true });
    writeFileSync(join(box.agentDir, "agents", "worker.md"), "---\nname: worker\ndescription: Does one task with MCP tools\ntools: mcp\n---\nYou are a worker.\n");
    mkdirSync(join(box.agentDir, "bin"), { recursive: true });
    writeFileSync(join(box.agentDir, "bin", "pi"), `#!/bin/sh\nexec "${NODE22}" "${piCli(pi)}" "$@"\n`, { mode: 0o755 });
  };
}

/** An `mcp` tool call step of the fake LLM's script. */
export const mcp = (tool, args = {}) => ({ tool_calls: [{ name: "mcp", arguments: { tool, args } }] });

/** The tool results the last request of a conversation (fake-llm.mjs) to the fake LLM holds. */
export const toolTextsOf = (r, key) =>
  (r.requests.filter((q) => q.conversation === key).at(-1)?.body.messages ?? [])
    .filter((m) => m.role === "tool")
    .map((m) => (typeof m.content === "string" ? m.content : m.content.map((c) => c.text).join("")));

/** The family's abstract sockets alive on this machine (Linux). */
export const familySockets = () => readFileSync("/proc/net/unix", "utf8").split("\n").filter((l) => l.includes("@pi-mcp-native/family/"));

/** Every server process that ran in `cwd` until `stop()`: their pids. */
export function serverPids(cwd) {
  const seen = new Set();
  const timer = setInterval(() => processesIn(cwd).forEach((pid) => seen.add(pid)), 20);
  return () => {
    clearInterval(timer);
    return seen;
  };
}

/** Waits until no server runs in `dirs` and no family socket is left (5 s each at most). */
export async function nothingLeft(...dirs) {
  await waitFor(() => dirs.every((dir) => processesIn(dir).length === 0), 5000, "every server to stop");
  await waitFor(() => familySockets().length === 0, 5000, "the family's socket to go");
}
