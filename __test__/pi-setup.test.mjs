// Guided setup, add by URL or command, and servers of installed Pi packages (issue 28, items 2,
// 3 and 5): `pi-mcp setup` / `pi-mcp add` as subprocesses, then the same inside the real Pi over
// RPC (the test answers Pi's dialogs), a package's server called by the model.
import { after, before, test } from "node:test";
import assert from "node:assert/strict";
import { spawnSync } from "node:child_process";
import { mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { assertRan, piTest, runPiRpc, toolResultsOf } from "./helpers/pi.mjs";
import { everything, processesIn, root, waitFor } from "./helpers/servers.mjs";

const CLI = join(root, "bin", "pi-mcp.mjs");
let base;
before(() => {
  base = mkdtempSync(join(tmpdir(), "pi-mcp-setup-"));
});
after(() => rmSync(base, { recursive: true, force: true }));

/** A home with a Pi agent dir and a project in it. */
function home(name) {
  const dir = join(base, name);
  mkdirSync(join(dir, ".pi", "agent"), { recursive: true });
  mkdirSync(join(dir, "project"), { recursive: true });
  return { dir, agent: join(dir, ".pi", "agent"), project: join(dir, "project") };
}

function piMcp(h, args, input) {
  const r = spawnSync(process.execPath, [CLI, ...args], {
    cwd: h.project,
    env: { ...process.env, HOME: h.dir, PI_CODING_AGENT_DIR: h.agent, PI_CODING_AGENT: undefined },
    encoding: "utf8",
    input,
    timeout: 60_000,
  });
  return { code: r.status, out: r.stdout, err: r.stderr };
}

/** A Pi package at `dir` whose manifest declares one server, server-everything, as `echo`. */
function installPackage(dir) {
  mkdirSync(dir, { recursive: true });
  writeFileSync(join(dir, "package.json"), JSON.stringify({ name: "demo-pkg", keywords: ["pi-package"], pi: { mcp: "./mcp.json" } }));
  writeFileSync(join(dir, "mcp.json"), JSON.stringify({ mcpServers: { echo: everything() } }));
}

const USER_FILE = '{\n  // my servers, kept\n  "mcpServers": {\n    "old-one": { "command": "true", "enabled": false }\n  }\n}\n';

test("pi-mcp add: connects and lists first, writes what pi mcp add writes with the file's comments kept; a failure or a taken name saves nothing", () => {
  const h = home("add");
  const file = join(h.agent, "mcp.json");
  writeFileSync(file, USER_FILE);
  const { command, args } = everything();
  const added = piMcp(h, ["add", "ev", "--description", "Test server", "--env", "A=1", "--", command, ...args]);
  assert.equal(added.code, 0, added.err);
  assert.match(added.out, /^Added "ev" to \S+mcp\.json: connected, \d+ tools: ev_echo, /);
  const text = readFileSync(file, "utf8");
  assert.ok(text.startsWith('{\n  // my servers, kept\n  "mcpServers": {\n    "old-one": { "command": "true", "enabled": false },\n    "ev": {\n'), text);
  assert.deepEqual(JSON.parse(text.replace("// my servers, kept", ""))?.mcpServers.ev, { command, args, env: { A: "1" }, description: "Test server" });
  // The same name again, one Pi counts as the same, a URL that is not https, a server that does not start, a dry run.
  for (const [words, code, said] of [
    [["add", "ev", "--", command, ...args], 1, /A server named "ev" is configured already/],
    [["add", "old_one", "--url", "https://127.0.0.1:9/mcp"], 1, /as "old-one": Pi counts `-` and `_` as the same/],
    [["add", "web", "--url", "http://example.com/mcp"], 2, /url must use https/],
    [["add", "broken", "--", "/nonexistent/server"], 1, /"broken" was not added: nothing was saved\. .*cannot start/],
    [["add", "dry", "--dry-run", "--", command, ...args], 0, /^Would add "dry" .*Nothing was saved \(--dry-run\)/],
    [["add", "x", "--bogus"], 2, /Unknown option --bogus/],
  ]) {
    const r = piMcp(h, words);
    assert.equal(r.code, code, `${words.join(" ")}: ${r.out}${r.err}`);
    assert.match(r.out + r.err, said, words.join(" "));
  }
  assert.equal(readFileSync(file, "utf8"), text, "nothing else was written");
  // -l in a project that is not trusted: refused.
  const local = piMcp(h, ["--no-approve", "add", "-l", "p", "--", command, ...args]);
  assert.equal(local.code, 1);
  assert.match(local.out, /This project is not trusted, so \S+\.pi\/mcp\.json is not read; nothing was saved/);
});

test("pi-mcp setup: the plan, the change shown, written only with --yes; the status of an empty config points to it", () => {
  const h = home("setup");
  const empty = piMcp(h, ["status"]);
  assert.match(empty.out, /No MCP servers are configured\..*\/mcp setup.*pi-mcp setup/);
  mkdirSync(join(h.dir, ".cursor"));
  writeFileSync(join(h.dir, ".cursor", "mcp.json"), JSON.stringify({ mcpServers: { cur: everything() } }));
  const plan = piMcp(h, ["setup", "--json"]);
  const details = JSON.parse(plan.out).details;
  assert.deepEqual(details.found.map((f) => [f.tool, f.new]), [["cursor", ["cur"]]]);
  assert.ok(details.wellKnown.some((w) => w.id === "deepwiki" && w.entry.url === "https://mcp.deepwiki.com/mcp"));
  const file = join(h.agent, "mcp.json");
  const dry = piMcp(h, ["setup", "--import", "cursor", "--add", "deepwiki", "--dry-run"]);
  assert.match(dry.out, /not written yet[^]*\+ {5}"deepwiki": \{[^]*\+ {3}"imports": \["cursor"\]/);
  const refused = piMcp(h, ["setup", "--import", "cursor"], "");
  assert.equal(refused.code, 1);
  assert.match(refused.out, /Nothing was written: run again with --yes/);
  assert.throws(() => readFileSync(file), "no file yet");
  const unknown = piMcp(h, ["setup", "--add", "nope"]);
  assert.match(unknown.out, /"nope" is not a well-known server; they are: deepwiki, /);
  const wrote = piMcp(h, ["setup", "--import", "cursor", "--add", "deepwiki", "--yes"]);
  assert.equal(wrote.code, 0, wrote.err);
  const config = JSON.parse(readFileSync(file, "utf8"));
  assert.deepEqual(config.imports, ["cursor"]);
  assert.equal(config.mcpServers.deepwiki.url, "https://mcp.deepwiki.com/mcp");
  const status = piMcp(h, ["status"]);
  assert.match(status.out, /cur/);
});

test("servers of installed Pi packages: named <package>__<server>, their provenance in status and doctor", () => {
  const h = home("packages");
  writeFileSync(join(h.agent, "settings.json"), JSON.stringify({ packages: ["./pkgs/demo"] }));
  installPackage(join(h.agent, "pkgs", "demo"));
  const status = JSON.parse(piMcp(h, ["status", "--json"]).out);
  const server = status.details.servers.find((s) => s.name === "demo-pkg__echo");
  assert.equal(server?.package?.name, "demo-pkg", JSON.stringify(status.details.servers));
  assert.match(status.content[0].text, /the Pi package demo-pkg \(~\/\.pi\/agent\/pkgs\/demo\/mcp\.json\): demo-pkg__echo/);
  const doctor = piMcp(h, ["doctor", "--offline"]);
  assert.match(doctor.out, /✓ ~\/\.pi\/agent\/pkgs\/demo\/mcp\.json \[Pi package demo-pkg, listed in ~\/\.pi\/agent\/settings\.json\]: demo-pkg__echo/);
  assert.match(doctor.out, /from the Pi package demo-pkg \(~\/\.pi\/agent\/pkgs\/demo\), listed in `packages` of ~\/\.pi\/agent\/settings\.json/);
  const call = piMcp(h, ["call", "demo-pkg__echo_echo", '{"message": "from a package"}']);
  assert.equal(call.out.trim(), "Echo: from a package", call.err);
});

piTest("/mcp setup and /mcp add over RPC, and a package's server called by the model", { timeout: 120_000 }, async (pi) => {
  const { command, args } = everything();
  const picks = ["· Import cursor", "Continue"];
  const answer = (request) => {
    if (request.method === "confirm") return { confirmed: true };
    if (request.method !== "select") return { cancelled: true };
    const want = picks.shift();
    return { value: request.options.find((o) => o.startsWith(want)) };
  };
  const steps = [
    { tool_calls: [{ name: "mcp", arguments: { tool: "ev_echo", args: { message: "added" } } }] },
    { tool_calls: [{ name: "mcp", arguments: { tool: "cur_echo", args: { message: "imported" } } }] },
    { tool_calls: [{ name: "mcp", arguments: { tool: "demo-pkg__echo_echo", args: { message: "packaged" } } }] },
    { text: "done" },
  ];
  let cwd;
  let written;
  const r = await runPiRpc({
    pi,
    extensionDir: root,
    script: { steps },
    prepare: (box) => {
      cwd = box.cwd;
      writeFileSync(join(box.agentDir, "mcp.json"), USER_FILE);
      writeFileSync(join(box.agentDir, "settings.json"), JSON.stringify({ packages: ["./pkgs/demo"] }));
      installPackage(join(box.agentDir, "pkgs", "demo"));
      mkdirSync(join(box.home, ".cursor"), { recursive: true });
      writeFileSync(join(box.home, ".cursor", "mcp.json"), JSON.stringify({ mcpServers: { cur: everything() } }));
    },
    commands: [
      "/mcp setup",
      `/mcp add ev -- "${command}" "${args[0]}" ${args[1]}`,
      "/mcp add ev -- true",
      "go",
      async () => {
        written = readFileSync(join(cwd, "..", "home", ".pi", "agent", "mcp.json"), "utf8");
      },
    ],
    answer,
  });
  assertRan(r);
  const [setup, add, again] = r.perCommand.map((c) => c.notifications.map((n) => n.message).join("\n"));
  const selects = r.dialogs.filter((d) => d.method === "select");
  assert.ok(selects[0].options.some((o) => o.startsWith("· Copy cursor's servers (cur)")), selects[0].options.join("\n"));
  assert.ok(selects[0].options.some((o) => o.includes("(deepwiki)")));
  const confirm = r.dialogs.find((d) => d.method === "confirm");
  assert.match(confirm.message, /\+ {3}"imports": \["cursor"\]/);
  assert.match(setup, /^Wrote \S+mcp\.json:[^]*It is in use now\.$/);
  assert.match(add, /^Added "ev" to \S+mcp\.json: connected, \d+ tools: ev_echo, [^]*It is in use now\.$/);
  assert.match(again, /A server named "ev" is configured already/);
  const text = written;
  assert.ok(text.includes("// my servers, kept") && text.includes('"imports": ["cursor"]') && text.includes('    "ev": {\n      "command": '), text);
  const results = toolResultsOf(r.events).map((t) => t.text);
  assert.deepEqual(results, ["Echo: added", "Echo: imported", "Echo: packaged"]);
  await waitFor(() => processesIn(cwd).length === 0, 5000, "servers to be gone after Pi exits");
});
