// The same files read by Pi's own MCP support (1.5.2 and 1.6.0) (`pi mcp list --json`, the shell command that
// always uses the built-in) and by pi-mcp-native (`pi-mcp doctor --offline --json`): a table of
// configs where both must resolve the same servers, on or off, with the same exposure and the same
// program or URL. (Where Pi's rule for a project entry differs from our field-by-field merge,
// `doctor` says so: the last rows.)
import { test } from "node:test";
import assert from "node:assert/strict";
import { spawnSync } from "node:child_process";
import { mkdirSync, mkdtempSync, realpathSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { NODE22, PI_BUILTIN_MCP, piCli } from "./helpers/pi.mjs";
import { root } from "./helpers/servers.mjs";

// Servers that fail at once, so that `pi mcp list` (which connects each) is quick.
const missing = (name) => ({ command: `/nonexistent/${name}`, args: ["--flag", "v"] });
const refused = "http://127.0.0.1:1/mcp";

const TABLE = [
  {
    title: "stdio and remote servers; enabled: false",
    user: { mcpServers: { a: missing("a"), b: { url: refused }, c: { ...missing("c"), enabled: false } } },
  },
  {
    title: "exposure and toolExposure; type",
    user: { mcpServers: { a: { ...missing("a"), exposure: "direct" }, b: { type: "http", url: refused, exposure: "hidden", toolExposure: { x: "direct" } }, c: { type: "stdio", ...missing("c"), exposure: "codemode-deferred" } } },
  },
  {
    title: "a project entry without a transport turns a user server off (Pi's override)",
    user: { mcpServers: { a: missing("a"), b: { url: refused } } },
    project: { mcpServers: { a: { enabled: false }, b: { exposure: "deferred" } } },
  },
  {
    title: "a project entry with a transport replaces the user's (same fields: both rules agree)",
    user: { mcpServers: { a: missing("a") } },
    project: { mcpServers: { a: missing("a2"), p: { url: refused } } },
  },
  {
    title: "description, timeout, a relative cwd, !command env and header values, auth.provider, autoEnableCodemode",
    user: {
      autoEnableCodemode: false,
      mcpServers: {
        a: { ...missing("a"), cwd: "sub", timeout: 5, description: "What a offers", env: { TOKEN: "!echo t" } },
        b: { url: refused, headers: { Authorization: "!echo Bearer t" }, timeout: 0.5 },
        c: { url: "https://127.0.0.1:1/mcp", auth: { provider: "github" } },
      },
    },
  },
  {
    title: "~/ in command and args",
    user: { mcpServers: { a: { command: "~/bin/server", args: ["~/data", "--x=~/y"] } } },
  },
];

/** A home with `user` as ~/.pi/agent/mcp.json, a project with `project` as .pi/mcp.json that Pi trusts. */
function sandbox({ user, project }) {
  const base = realpathSync(mkdtempSync(join(tmpdir(), "pi-mcp-table-")));
  const home = join(base, "home");
  const agent = join(home, ".pi", "agent");
  const cwd = join(base, "project");
  mkdirSync(agent, { recursive: true });
  mkdirSync(join(cwd, ".pi"), { recursive: true });
  writeFileSync(join(agent, "mcp.json"), JSON.stringify(user));
  if (project) writeFileSync(join(cwd, ".pi", "mcp.json"), JSON.stringify(project));
  writeFileSync(join(agent, "trust.json"), JSON.stringify({ [cwd]: true }));
  const env = { PATH: process.env.PATH, HOME: home, TMPDIR: join(base, "tmp"), PI_CODING_AGENT_DIR: agent, PI_OFFLINE: "1", PI_TELEMETRY: "0", PI_SKIP_VERSION_CHECK: "1" };
  mkdirSync(env.TMPDIR);
  return { base, home, cwd, env };
}

function run(command, args, box) {
  const r = spawnSync(command, args, { cwd: box.cwd, env: box.env, encoding: "utf8", timeout: 60_000 });
  try {
    return JSON.parse(r.stdout);
  } catch {
    throw new Error(`${command} ${args.join(" ")}: exit ${r.status}\n${r.stdout}\n${r.stderr}`);
  }
}

/** A server as both sides can say it: the file a change to it is saved to, on or off, exposure (Pi's default "codemode" when unset), program or URL. */
const piView = (home) => (s) => ({
  name: s.name,
  source: s.override ?? s.source,
  enabled: s.enabled,
  exposure: s.exposure,
  transport: s.transport.replace(/(^| )~\//g, `$1${home}/`),
});
const ourView = (s) => ({
  name: s.name,
  source: s.source,
  enabled: !s.disabled,
  exposure: s.exposure ?? "codemode",
  transport: s.transport === "stdio" ? [s.command, ...s.args].join(" ") : s.url,
});

for (const row of TABLE.flatMap((r) => PI_BUILTIN_MCP.map((pi) => ({ ...r, pi })))) {
  test(`Pi ${row.pi}'s pi mcp list and pi-mcp resolve the same servers: ${row.title}`, { timeout: 90_000 }, () => {
    const box = sandbox(row);
    try {
      const pi = run(NODE22, [piCli(row.pi), "mcp", "list", "--json"], box);
      assert.deepEqual(pi.errors, [], JSON.stringify(pi));
      const ours = run(process.execPath, [join(root, "bin", "pi-mcp.mjs"), "doctor", "--offline", "--json"], box);
      const byName = (a, b) => a.name.localeCompare(b.name);
      assert.deepEqual(ours.details.configured.map(ourView).sort(byName), pi.servers.map(piView(box.home)).sort(byName));
    } finally {
      rmSync(box.base, { recursive: true, force: true });
    }
  });
}

test("where Pi's rule for a project entry gives another result, pi-mcp doctor says so", () => {
  const box = sandbox({
    user: { mcpServers: { gh: { url: refused, headers: { "X-Team": "core" } }, off: missing("off") } },
    project: { mcpServers: { gh: { url: refused }, off: { enabled: false, timeout: 5 } } },
  });
  try {
    const r = spawnSync(process.execPath, [join(root, "bin", "pi-mcp.mjs"), "doctor", "--offline"], { cwd: box.cwd, env: box.env, encoding: "utf8" });
    assert.match(r.stdout, /Pi's own MCP support[^]*gh: Pi uses the project's entry alone; here it is merged field by field with ~\/\.pi\/agent\/mcp\.json's, which differs in `headers`/);
    assert.match(r.stdout, /off: Pi rejects the project's entry: without `command`\/`url` it may set only `enabled`, `exposure`, `toolExposure`, not `timeout`/);
    assert.match(r.stdout, /add "-builtin:mcp" to "extensions" in ~\/\.pi\/agent\/settings\.json/);
    writeFileSync(join(box.home, ".pi", "agent", "settings.json"), JSON.stringify({ extensions: ["-builtin:mcp"] }));
    const silenced = spawnSync(process.execPath, [join(root, "bin", "pi-mcp.mjs"), "doctor", "--offline"], { cwd: box.cwd, env: box.env, encoding: "utf8" });
    assert.doesNotMatch(silenced.stdout, /-builtin:mcp/);
  } finally {
    rmSync(box.base, { recursive: true, force: true });
  }
});
