// A synthetic catalog of many tools (100 per server, realistic names, descriptions and parameters),
// deterministic, and the config and metadata cache that hold it: search-speed.mjs searches it,
// compare-probe.mjs opens it.
import { mkdirSync, writeFileSync } from "node:fs";
import { join } from "node:path";

export const VERBS = ["get", "list", "create", "update", "delete", "search", "read", "write", "run", "send", "fetch", "sync", "move", "copy", "start", "stop"];
export const NOUNS = ["file", "issue", "user", "page", "record", "event", "message", "branch", "commit", "table", "row", "image", "note", "task", "ticket", "invoice", "deployment", "secret", "metric", "alert"];
const QUALIFIERS = ["", "_by_id", "_batch", "_details", "_history", "_status", "_summary", "_v2"];
const PER_SERVER = 100;

/** A deterministic pseudo-random catalog of `count` tools: { server name: tools }. */
export function catalog(count) {
  let seed = 42;
  const pick = (list) => list[(seed = (seed * 1103515245 + 12345) % 2 ** 31) % list.length];
  const servers = {};
  for (let s = 0; s * PER_SERVER < count; s++) {
    const tools = [];
    for (let t = 0; t < PER_SERVER && s * PER_SERVER + t < count; t++) {
      const [verb, noun, other] = [pick(VERBS), pick(NOUNS), pick(NOUNS)];
      tools.push({
        name: `${verb}_${noun}${pick(QUALIFIERS)}_${t}`,
        description: `${verb[0].toUpperCase()}${verb.slice(1)} a ${noun} in the service, optionally linked to a ${other}. Returns the ${noun} as JSON with its id, owner and timestamps.`,
        inputSchema: {
          type: "object",
          properties: { [`${noun}Id`]: { type: "string" }, [`${other}Filter`]: { type: "string" }, limit: { type: "number" } },
          required: [`${noun}Id`],
        },
      });
    }
    servers[`service${String(s).padStart(3, "0")}`] = tools;
  }
  return servers;
}

/**
 * Writes the config (servers never started) and metadata cache of a `count`-tool catalog into
 * `home`, hashed with the addon's own `configHash`; returns { agentDir, servers }.
 */
export function writeCatalog(home, count, configHash) {
  const agentDir = join(home, "agent");
  mkdirSync(agentDir, { recursive: true });
  const mcpServers = {};
  const servers = {};
  for (const [name, tools] of Object.entries(catalog(count))) {
    mcpServers[name] = { command: `never-started-${name}`, description: `The ${name} API: its records, files and messages.` };
    servers[name] = { configHash: configHash(mcpServers[name], {}), tools, resources: [], cachedAt: Date.now() };
  }
  writeFileSync(join(agentDir, "mcp.json"), JSON.stringify({ mcpServers }));
  writeFileSync(join(agentDir, "mcp-cache.json"), JSON.stringify({ version: 1, servers }));
  return { agentDir, servers: Object.keys(servers).length };
}
