// The hand-written parts of the contract to JavaScript checked against what the core says:
// `McpParams` (types/header.d.ts) is the `mcp` tool's parameter schema, key for key and type for type.
import { test } from "node:test";
import assert from "node:assert/strict";
import { readFileSync } from "node:fs";
import { join } from "node:path";
import ts from "typescript";
import { McpAdapter } from "../index.js";
import { root, tempAgent } from "./helpers/servers.mjs";

/** The members of interface `name` in `file`: `{ key: "the type as written" }`. */
function members(file, name) {
  const source = ts.createSourceFile(file, readFileSync(file, "utf8"), ts.ScriptTarget.Latest);
  const found = source.statements.find((s) => ts.isInterfaceDeclaration(s) && s.name.text === name);
  assert.ok(found, `${name} in ${file}`);
  return Object.fromEntries(found.members.map((m) => [m.name.getText(source), m.type.getText(source)]));
}

/** The string literals of type alias `name` in `file` (a union of them). */
function literals(file, name) {
  const source = ts.createSourceFile(file, readFileSync(file, "utf8"), ts.ScriptTarget.Latest);
  const found = source.statements.find((s) => ts.isTypeAliasDeclaration(s) && s.name.text === name);
  assert.ok(found, `${name} in ${file}`);
  const types = ts.isUnionTypeNode(found.type) ? found.type.types : [found.type];
  return types.map((t) => {
    assert.ok(ts.isLiteralTypeNode(t) && ts.isStringLiteral(t.literal), `${name}: ${t.getText(source)} is a string literal`);
    return t.literal.text;
  });
}

/** A JSON Schema property as TypeScript writes it. */
function tsType(schema) {
  if (schema.anyOf) return schema.anyOf.map(tsType).join(" | ");
  const types = [schema.type].flat();
  if (types.length > 1) return types.map((type) => tsType({ ...schema, type })).join(" | ");
  return { string: "string", boolean: "boolean", integer: "number", number: "number", object: "Record<string, unknown>" }[types[0]];
}

test("McpParams is the mcp tool's parameter schema", () => {
  const agent = tempAgent({ mcpServers: {} });
  try {
    const adapter = McpAdapter.open({ cwd: agent.cwd, agentDir: agent.agentDir, env: agent.env });
    const schema = adapter.toolDefinition().parameters;
    const declared = members(join(root, "types", "header.d.ts"), "McpParams");
    const expected = Object.fromEntries(Object.entries(schema.properties).map(([key, property]) => [key, tsType(property)]));
    assert.deepEqual(declared, expected);
    assert.deepEqual(schema.required ?? [], [], "every parameter is optional, as McpParams has it");
  } finally {
    agent.cleanup();
  }
});

test("details are one flat object of what the mode set; status's and doctor's entries keep their keys", async () => {
  const agent = tempAgent({ mcpServers: { quiet: { command: "never-started", colour: "red" } } });
  const adapter = McpAdapter.open({ cwd: agent.cwd, agentDir: agent.agentDir, env: agent.env });
  try {
    const status = (await adapter.status()).details;
    assert.deepEqual(Object.keys(status).sort(), ["mode", "problems", "servers", "totalTools"], "no family to speak of: left out");
    // Every key of a status entry, null where nothing is set (as when it was JSON).
    assert.deepEqual(status.servers, [
      { name: "quiet", state: "not-connected", tools: 0, leftOut: 0, source: join(agent.agentDir, "mcp.json"), transport: null, description: null, exposure: null, imported: null, registeredBy: null, package: null, problem: null, signIn: null, shared: null },
    ]);
    const doctor = (await adapter.doctor(false)).details;
    assert.deepEqual(Object.keys(doctor).sort(), ["configured", "diagnostics", "mode", "sources", "trust"]);
    assert.deepEqual(doctor.trust, { trusted: true, basis: "default" }, "no saved decision: no file or folder");
    const [server] = doctor.configured;
    assert.deepEqual(server, { name: "quiet", source: join(agent.agentDir, "mcp.json"), files: [join(agent.agentDir, "mcp.json")], lifecycle: "lazy", disabled: false, transport: "stdio", command: "never-started", args: [] });
    const note = doctor.diagnostics.find((d) => d.field === "colour");
    assert.deepEqual(Object.keys(note).sort(), ["field", "file", "level", "line", "message", "server", "text"]);
    const missing = doctor.sources.find((s) => s.state === "missing");
    assert.deepEqual(Object.keys(missing).sort(), ["path", "role", "state"], "no servers of a missing file");
  } finally {
    await adapter.shutdown();
    agent.cleanup();
  }
});

test("the names inside details are unions of the values their readers expect", async () => {
  // As the README, the panel, `pi-mcp --json` and its readers have them, byte for byte.
  const expected = {
    ServerState: ["connected", "connecting", "cached", "not-connected", "failed", "needs-auth", "disabled"],
    RemoteTransport: ["streamable-http", "sse"],
    Exposure: ["codemode", "deferred", "direct", "hidden"],
    ImportKind: ["cursor", "claude-code", "claude-desktop", "vscode", "windsurf", "codex", "opencode"],
    SharingScope: ["user", "family"],
    FamilyRoleName: ["host", "member", "off", "alone"],
    TrustBasis: ["given", "default", "saved"],
    SourceRole: ["shared", "pi-global", "explicit", "project", "import", "package"],
    SourceState: ["missing", "blank", "invalid", "loaded", "untrusted"],
    Lifecycle: ["lazy", "eager", "keep-alive", "lazy-keep-alive"],
    ServerTransport: ["stdio", "http", "socket"],
    DiagnosticLevel: ["error", "warning", "note"],
  };
  const declared = join(root, "index.d.ts");
  for (const [name, values] of Object.entries(expected)) assert.deepEqual(literals(declared, name), values, name);
  // And what the core sets is one of them.
  const agent = tempAgent({ mcpServers: { quiet: { command: "never-started", lifecycle: "keep-alive", exposure: "direct", colour: "red" }, off: { command: "x", disabled: true } } });
  const adapter = McpAdapter.open({ cwd: agent.cwd, agentDir: agent.agentDir, env: agent.env });
  try {
    const status = (await adapter.status()).details;
    assert.deepEqual(status.servers.map((s) => [s.name, s.state, s.exposure]), [["quiet", "not-connected", "direct"], ["off", "disabled", null]]);
    const doctor = (await adapter.doctor(false)).details;
    assert.deepEqual(doctor.configured.map((s) => [s.name, s.lifecycle, s.transport]), [["quiet", "keep-alive", "stdio"], ["off", "lazy", "stdio"]]);
    assert.equal(doctor.trust.basis, "default");
    for (const source of doctor.sources) {
      assert.ok(expected.SourceRole.includes(source.role), source.role);
      assert.ok(expected.SourceState.includes(source.state), source.state);
    }
    assert.deepEqual([...new Set(doctor.diagnostics.map((d) => d.level))], ["note"]);
  } finally {
    await adapter.shutdown();
    agent.cleanup();
  }
});
