// The client under test for the official MCP conformance suite: the runner starts a mock server
// per scenario and runs `node client.mjs <server-url>`. Everything goes through the native core
// (config → connect → list → call), as in Pi; the exit code says whether the flow completed.
import { createRequire } from "node:module";
import { mkdtempSync, mkdirSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";

const require = createRequire(import.meta.url);
const { McpAdapter } = require("../../index.js");

const url = process.argv.at(-1);
const scenario = process.env.MCP_CONFORMANCE_SCENARIO ?? "";
const version = process.env.MCP_CONFORMANCE_PROTOCOL_VERSION;

const home = mkdtempSync(join(tmpdir(), "pi-mcp-conformance-"));
const agentDir = join(home, "agent");
mkdirSync(agentDir);
const server = { url, ...(version === "2026-07-28" ? { protocolVersion: "2026-07-28" } : {}) };
writeFileSync(join(agentDir, "mcp.json"), JSON.stringify({ settings: { toolPrefix: "none" }, mcpServers: { conf: server } }));

const adapter = McpAdapter.open({ cwd: home, agentDir, env: { PATH: process.env.PATH ?? "", HOME: home } });
const must = (outcome, what) => {
  const text = outcome.content.map((c) => c.text ?? "").join("\n");
  if (outcome.isError) throw new Error(`${what}: ${text}`);
  console.log(`${what}: ${text.split("\n")[0]}`);
  return outcome;
};

async function flow() {
  must(await adapter.connect("conf"), "connect");
  if (scenario === "initialize") return;
  if (scenario === "tools_call") {
    must(await adapter.call("add_numbers", { a: 5, b: 3 }, { server: "conf" }), "call add_numbers");
    return;
  }
  if (scenario === "json-schema-2020-12-preservation") {
    const described = must(await adapter.describe("json_schema_2020_12_tool", "conf"), "describe");
    must(await adapter.call("json_schema_echo", { schema: described.details.inputSchema }, { server: "conf" }), "echo the schema");
    return;
  }
  // Any other scenario: call every tool (and read every resource) the server lists.
  const listed = must(await adapter.list("conf"), "list");
  const names = listed.content[0].text.split("\n").filter((l) => l.startsWith("- ")).map((l) => l.slice(2).split(":")[0]);
  for (const name of names) must(await adapter.call(name, {}, { server: "conf" }), `call ${name}`);
}

let code = 0;
try {
  await flow();
} catch (error) {
  console.error(String(error?.message ?? error));
  code = 1;
} finally {
  await adapter.shutdown();
  rmSync(home, { recursive: true, force: true });
}
process.exit(code);
