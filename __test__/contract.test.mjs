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
