// The client under test for the conformance suite's auth scenarios, as a user runs it: the
// scenario's server goes into a config file (with the pre-registered client of the scenario
// context, or our client metadata document for auth/basic-cimd), with $BROWSER set to a headless
// browser that follows the authorization redirect to pi-mcp's loopback listener.
// First session: `pi-mcp auth` signs in, connects and lists (the token store and the metadata
// cache now hold the server). Second session, new processes on that agent dir: `list` (from the
// cache) and a call of every tool, which goes before any listing with the stored token; `--auth`
// as a user with autoAuth, so that a server demanding more scope at a call gets a new sign-in.
// Where the first session stops (a conformant client refuses the flow), the second is a
// `connect` without `--auth`: it must not find a token to send. The last line says how many
// sign-ins the second session started.
import { spawnSync } from "node:child_process";
import { existsSync, mkdtempSync, mkdirSync, readFileSync, rmSync, writeFileSync } from "node:fs";
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
const browserLog = join(home, "browser.log");
const env = {
  PATH: process.env.PATH ?? "",
  HOME: home,
  PI_CODING_AGENT_DIR: agentDir,
  BROWSER: `${process.execPath} ${browser}`,
  BROWSER_LOG: browserLog,
};
const signIns = () => (existsSync(browserLog) ? readFileSync(browserLog, "utf8").split("\n").filter(Boolean).length : 0);

function piMcpRun(...args) {
  const run = spawnSync(process.execPath, [piMcp, ...args], { env, encoding: "utf8", timeout: 60_000 });
  process.stdout.write(`$ pi-mcp ${args.join(" ")} (exit ${run.status})\n${run.stdout}`);
  process.stderr.write(run.stderr);
  if (run.status !== 0) throw new Error(`pi-mcp ${args[0]} failed`);
  return run.stdout;
}

/** Runs the steps of one session; false (the error on stderr) if one failed. */
function session(steps) {
  try {
    steps();
    return true;
  } catch (error) {
    process.stderr.write(`${error.message}\n`);
    return false;
  }
}

let code = 1;
try {
  const signedIn = session(() => piMcpRun("auth", "conf"));
  const firstSignIns = signIns();
  const second = signedIn
    ? session(() => {
        const listed = JSON.parse(piMcpRun("--auth", "--json", "list", "conf"));
        const tools = listed.content[0].text.split("\n").filter((l) => l.startsWith("- ")).map((l) => l.slice(2).split(":")[0]);
        for (const tool of tools) piMcpRun("--auth", "call", tool, "{}", "--server", "conf");
      })
    : session(() => piMcpRun("connect", "conf"));
  if (signedIn && second) code = 0;
  process.stdout.write(`sign-ins in the second session: ${signIns() - firstSignIns}\n`);
} finally {
  rmSync(home, { recursive: true, force: true });
}
process.exit(code);
