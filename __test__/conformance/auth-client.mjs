// The client under test for the conformance suite's auth scenarios, as a user runs it: the
// scenario's server goes into a config file (with the pre-registered client of the scenario
// context, or our client metadata document for auth/basic-cimd), then `pi-mcp auth`, `pi-mcp
// --auth connect`, `list` and a call of every tool, with $BROWSER set to a headless browser that
// follows the authorization redirect to pi-mcp's loopback listener.
import { spawnSync } from "node:child_process";
import { mkdtempSync, mkdirSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { dirname, join } from "node:path";
import { fileURLToPath } from "node:url";

const here = dirname(fileURLToPath(import.meta.url));
const piMcp = join(here, "..", "..", "bin", "pi-mcp.mjs");
const browser = join(here, "..", "helpers", "browser.mjs");
/** The document auth/basic-cimd expects as the client id. */
const CIMD_URL = "https://conformance-test.local/client-metadata.json";

const url = process.argv.at(-1);
const scenario = process.env.MCP_CONFORMANCE_SCENARIO ?? "";
const context = JSON.parse(process.env.MCP_CONFORMANCE_CONTEXT || "{}");

const oauth = {};
if (context.client_id) {
  oauth.clientId = context.client_id;
  if (context.client_secret) oauth.clientSecret = context.client_secret;
  // The suite's authorization server takes any loopback redirect: use a free port.
  oauth.callbackUrl = "http://127.0.0.1/callback";
}
if (scenario === "auth/client-credentials-basic") oauth.grantType = "client_credentials";
if (scenario === "auth/basic-cimd") oauth.clientMetadataUrl = CIMD_URL;
const server = { url, ...(Object.keys(oauth).length ? { oauth } : {}) };
if (process.env.MCP_CONFORMANCE_PROTOCOL_VERSION === "2026-07-28") server.protocolVersion = "2026-07-28";

const home = mkdtempSync(join(tmpdir(), "pi-mcp-conformance-auth-"));
const agentDir = join(home, "agent");
mkdirSync(agentDir);
writeFileSync(join(agentDir, "mcp.json"), JSON.stringify({ settings: { toolPrefix: "none" }, mcpServers: { conf: server } }));
const env = {
  PATH: process.env.PATH ?? "",
  HOME: home,
  PI_CODING_AGENT_DIR: agentDir,
  BROWSER: `${process.execPath} ${browser}`,
};

function piMcpRun(...args) {
  const run = spawnSync(process.execPath, [piMcp, ...args], { env, encoding: "utf8", timeout: 60_000 });
  process.stdout.write(`$ pi-mcp ${args.join(" ")} (exit ${run.status})\n${run.stdout}`);
  process.stderr.write(run.stderr);
  if (run.status !== 0) throw new Error(`pi-mcp ${args[0]} failed`);
  return run.stdout;
}

let code = 0;
try {
  piMcpRun("auth", "conf");
  const listed = JSON.parse(piMcpRun("--auth", "--json", "list", "conf"));
  const tools = listed.content[0].text.split("\n").filter((l) => l.startsWith("- ")).map((l) => l.slice(2).split(":")[0]);
  for (const tool of tools) piMcpRun("--auth", "call", tool, "{}", "--server", "conf");
} catch (error) {
  process.stderr.write(`${error.message}\n`);
  code = 1;
} finally {
  rmSync(home, { recursive: true, force: true });
}
process.exit(code);
