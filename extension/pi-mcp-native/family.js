// @ts-check
// A session's family: the processes its tools start (Pi's subagent example, `pi -p` through bash,
// another extension's tool) inherit PI_MCP_NATIVE_FAMILY and use this session's servers. The
// variable, and the core's listener for them, appear the first time a tool that may start
// processes is about to run (Pi's `tool_call` and `user_bash`, before the tool): a session that
// only reads, edits, searches or calls MCP tools binds nothing.

/** Pi's tools (and ours) that start no process. */
const STARTS_NO_PROCESS = new Set([
  "read",
  "edit",
  "write",
  "grep",
  "find",
  "ls",
  "mcp",
  "codemode",
  "tool_search",
  "list_mcp_resources",
  "list_mcp_resource_templates",
  "read_mcp_resource",
]);

/**
 * Who this process is when its servers' questions are asked in its family's UI: `subagent
 * "<name>"` for a subagent of Pi's example (its agent's prompt file is `prompt-<name>.md`),
 * `pi -p` for another one-shot run (`oneShot`), else `pi`. The core adds the pid.
 */
export function familyLabel(argv, oneShot) {
  const at = argv.indexOf("--append-system-prompt");
  const agent = at >= 0 ? /prompt-([^/\\]+)\.md$/.exec(argv[at + 1] ?? "")?.[1] : undefined;
  if (agent) return `subagent "${agent}"`;
  return oneShot ? "pi -p" : "pi";
}

/**
 * `beforeTool(name)` and `beforeBash()` put the family's variable in `process.env` (which Pi's
 * tools spawn with) before a tool that may start processes; `owns(name)` says which tools are ours.
 */
/**
 * @param {object} parts
 * @param {() => import("../../index.js").McpAdapter} parts.adapter
 * @param {(name: string) => boolean} parts.owns
 */
export function createFamily({ adapter, owns }) {
  const ensure = () => {
    const variable = adapter().familyEnv();
    if (variable && process.env[variable.name] !== variable.value) process.env[variable.name] = variable.value;
  };
  return {
    beforeTool(name) {
      if (!STARTS_NO_PROCESS.has(name) && !owns(name)) ensure();
    },
    beforeBash: ensure,
  };
}
