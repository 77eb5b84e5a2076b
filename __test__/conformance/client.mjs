// The client under test for the official MCP conformance suite, driven as a user drives it: the
// runner starts a mock server per scenario and runs `node client.mjs <server-url>`; this script
// writes a config naming that server and runs `pi-mcp` commands against it, each a process of its
// own with stdin not a terminal (so nobody can be asked, and `elicitation: "defaults"` answers).
// A scenario's flow is in FLOWS; any other scenario lists the server's tools and calls each (its
// resources are tools too, read when called), then gets each prompt it offers.
// With `--second-session` (before the URL), a first process connects and lists the server (`pi-mcp
// connect`: the metadata cache now holds its tools), and the flow then runs in new processes from
// that cache, as a user's next session does: its calls go before any listing.
// Exit 0 when every command of the flow succeeded.
import { spawnSync } from "node:child_process";
import { mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { dirname, join } from "node:path";
import { fileURLToPath } from "node:url";

const bin = join(dirname(fileURLToPath(import.meta.url)), "..", "..", "bin", "pi-mcp.mjs");
const url = process.argv.at(-1);
const secondSession = process.argv.includes("--second-session");
const scenario = process.env.MCP_CONFORMANCE_SCENARIO ?? "";
const version = process.env.MCP_CONFORMANCE_PROTOCOL_VERSION;
const context = JSON.parse(process.env.MCP_CONFORMANCE_CONTEXT ?? "{}");

const home = mkdtempSync(join(tmpdir(), "pi-mcp-conformance-"));
const config = join(home, "mcp.json");
const server = { url, elicitation: "defaults", ...(version === "2026-07-28" ? { protocolVersion: "2026-07-28" } : {}) };
writeFileSync(config, JSON.stringify({ settings: { toolPrefix: "none" }, mcpServers: { conf: server } }));

/** Runs `pi-mcp --config <file> --json <args>`; returns its outcome, throws if it failed. */
function piMcp(...args) {
  const env = { PATH: process.env.PATH ?? "", HOME: home, PI_CODING_AGENT_DIR: join(home, "agent") };
  const run = spawnSync(process.execPath, [bin, "--config", config, "--json", ...args], { env, input: "", encoding: "utf8", timeout: 60_000 });
  const what = `pi-mcp ${args.join(" ")}`;
  let outcome;
  try {
    outcome = JSON.parse(run.stdout);
  } catch {
    throw new Error(`${what}: exit ${run.status}\n${run.stdout}${run.stderr}`);
  }
  const text = outcome.content.map((c) => c.text ?? "").join("\n");
  if (run.status !== 0 || outcome.isError) throw new Error(`${what}: ${text}`);
  console.log(`${what}: ${text.split("\n")[0]}`);
  return outcome;
}

const call = (tool, args = {}) => piMcp("call", tool, JSON.stringify(args), "--server", "conf");

/** Every tool the server lists (the CLI's `list` output: `- name: description`). */
function toolNames() {
  const text = piMcp("list", "conf").content[0].text;
  return text.split("\n").filter((l) => l.startsWith("- ")).map((l) => l.slice(2).split(":")[0]);
}

const SAMPLES = { string: "x", number: 1, integer: 1, boolean: true };

/** Calls a tool as its description asks: a sample value for each required parameter. */
function callDescribed(tool) {
  const schema = piMcp("describe", tool, "--server", "conf").details.inputSchema ?? {};
  const args = Object.fromEntries((schema.required ?? []).map((name) => [name, SAMPLES[schema.properties?.[name]?.type] ?? "x"]));
  call(tool, args);
}

/** Every tool called as described, then each prompt the server offers got. */
function everything() {
  toolNames().forEach(callDescribed);
  for (const { prompt } of piMcp("prompts", "conf").details.prompts) piMcp("prompt", "conf", prompt);
}

const FLOWS = {
  initialize: () => piMcp("connect", "conf"),
  tools_call: () => call("add_numbers", { a: 5, b: 3 }),
  // The mock only lists (its tool's schema has a network $ref, never to be fetched).
  "json-schema-ref-no-deref": () => toolNames().forEach((tool) => piMcp("describe", tool, "--server", "conf")),
  "http-custom-headers": () => context.toolCalls.forEach((c) => call(c.name, c.arguments)),
  "json-schema-2020-12-preservation": () => {
    const described = piMcp("describe", "json_schema_2020_12_tool", "--server", "conf");
    call("json_schema_echo", { schema: described.details.inputSchema });
  },
};

let code = 0;
try {
  const flow = FLOWS[scenario] ?? everything;
  if (secondSession) piMcp("connect", "conf");
  flow();
} catch (error) {
  console.error(String(error?.message ?? error));
  code = 1;
} finally {
  rmSync(home, { recursive: true, force: true });
}
process.exit(code);
