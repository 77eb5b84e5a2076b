// @ts-check
// The MCP tools Pi gets as tools of its own, besides `mcp`: `directTools` ones under our names,
// and those the config's `exposure`/`toolExposure` asks for under Pi's names (`direct` ones
// declared to the model; on Pi ≥ 0.99 `codemode`/`deferred` ones for its codemode scripts and
// tool_search, which are activated as Pi's built-in MCP support activates them), and on Pi ≥ 0.99
// Pi's three resource tools (list_mcp_resources, …) with the exposure its rule gives them. The core says
// which, from the catalog it knows (the metadata cache): no server starts before a call. A tool
// is registered again only when its definition changed (each registration rebuilds Pi's system
// prompt); one that is gone is withdrawn.

/** `o` without its null and undefined fields (napi's empty options). */
const defined = (o) => Object.fromEntries(Object.entries(o).filter(([, v]) => v !== undefined && v !== null));

/**
 * `run(params, toolCallId, signal, onUpdate)` calls through the core; `warn(text)` tells the
 * user once. Returns `sync()` (after any catalog change), `activate(ctx)` (at session start) and
 * `owns(name)`.
 */
/**
 * @param {object} parts
 * @param {import("@earendil-works/pi-coding-agent").ExtensionAPI} parts.pi
 * @param {() => import("../../index.js").McpAdapter} parts.adapter
 * @param {(params: any, toolCallId: string, signal: AbortSignal | undefined, onUpdate: any, exec?: (params: any, callId: string) => Promise<import("../../index.js").Outcome>) => Promise<any>} parts.run
 * @param {(text: string) => void} parts.warn
 */
export function createPiTools({ pi, adapter, run, warn }) {
  // Pi ≥ 0.99 knows tool exposure (and has its own MCP support, hence registerMcpServer).
  const exposures = typeof pi.registerMcpServer === "function";
  const registered = new Map(); // name → the definition registered, as JSON
  const withdrawn = new Map(); // name → the definition, for re-registering it hidden
  const targets = new Map(); // name → the MCP tool it calls: { tool, server }
  /** @type {Pick<import("../../index.js").DirectTools, "reach" | "autoEnableCodemode" | "unlisted">} */
  let needs = { reach: { codemode: false, toolSearch: false }, autoEnableCodemode: true, unlisted: [] };
  let warnedUnreachable = false;

  /**
   * Registers what the core's `directTools()` says (`known`: its answer, already asked for).
   * @param {import("../../index.js").DirectTools} [known]
   */
  function sync(known) {
    const { tools, resourceTools, warnings, reach, autoEnableCodemode, unlisted } = known ?? adapter().directTools();
    needs = { reach, autoEnableCodemode, unlisted };
    warnings.forEach(warn);
    let others;
    try {
      others = new Set(pi.getAllTools().map((t) => t.name));
    } catch {
      // Not callable while extensions load; collisions with built-ins are checked in the core.
    }
    const wanted = [...tools.filter((def) => !def.exposure || def.exposure === "direct" || exposures), ...(exposures ? resourceTools : [])];
    const resourceTool = new Set(resourceTools.map((def) => def.name));
    for (const def of wanted) {
      const fingerprint = JSON.stringify(def);
      if (registered.get(def.name) === fingerprint) continue;
      if (!registered.has(def.name) && !withdrawn.has(def.name) && others?.has(def.name)) {
        const whose = def.server ? ` of server "${def.server}"` : "";
        warn(`MCP: tool "${def.name}"${whose} is skipped: another extension has a tool of that name.`);
        continue;
      }
      const { server, tool, exposure, namespace, annotations, outputSchema, ...definition } = def;
      targets.set(def.name, { tool, server });
      const piFields = exposures
        ? defined({ exposure: exposure && (exposure === "direct" ? "direct" : "deferred"), namespace: namespace && defined(namespace) })
        : {};
      const full = {
        ...definition,
        ...(annotations && { annotations: defined(annotations) }),
        ...(outputSchema && { outputSchema }),
        ...piFields,
        execute: resourceTool.has(def.name)
          ? (toolCallId, args, signal, onUpdate) => run(args, toolCallId, signal, onUpdate, (p, id) => adapter().piResourceTool(def.name, p, id))
          : (toolCallId, args, signal, onUpdate) => run({ tool, server, args }, toolCallId, signal, onUpdate),
      };
      pi.registerTool(full);
      registered.set(def.name, fingerprint);
      withdrawn.set(def.name, full);
    }
    const gone = [...registered.keys()].filter((name) => !wanted.some((t) => t.name === name));
    if (!gone.length) return;
    gone.forEach((name) => registered.delete(name));
    if (exposures) {
      // Tools cannot be unregistered: a hidden one is unreachable.
      for (const name of gone) pi.registerTool({ ...withdrawn.get(name), exposure: "hidden" });
      return;
    }
    try {
      pi.setActiveTools(pi.getActiveTools().filter((name) => !gone.includes(name)));
    } catch {
      // Before a session starts there is nothing active to change.
    }
  }

  /** Activates Pi's codemode / tool_search for the tools that need them (Pi ≥ 0.99). */
  function activate() {
    const { reach, autoEnableCodemode } = needs;
    if (!exposures || (!reach.codemode && !reach.toolSearch)) return;
    // Only a tool that says which tools it reaches (reachesTools) reaches MCP tools.
    const all = pi.getAllTools();
    const reaching = (name) => all.some((t) => t.name === name && t.reachesTools);
    const active = pi.getActiveTools();
    const add = [];
    if (reach.codemode && autoEnableCodemode && reaching("codemode") && !active.includes("codemode")) add.push("codemode");
    if (reach.toolSearch && reaching("tool_search") && !active.includes("tool_search")) add.push("tool_search");
    if (add.length) pi.setActiveTools([...active, ...add]);
    const on = [...active, ...add];
    if ((on.includes("codemode") && reaching("codemode")) || (on.includes("tool_search") && reaching("tool_search"))) return;
    if (warnedUnreachable) return;
    warnedUnreachable = true;
    const why = reach.codemode && !autoEnableCodemode ? " (autoEnableCodemode is false)" : "";
    warn(`MCP: tools exposed as codemode or deferred are reached through Pi's codemode or tool_search tool, but neither is active${why}; they stay callable through the mcp tool.`);
  }

  /**
   * Before a call of a tool that reaches other tools (Pi's codemode, tool_search: it declares
   * `reachesTools`), the servers it may reach whose tools are not known yet (a first run, no
   * cache) are listed through the core's listing queue (under its bound and wait), so that their
   * tools are registered when it runs.
   */
  async function beforeReaching(toolName, input) {
    if (!needs.unlisted.length) return;
    const tool = pi.getAllTools().find((t) => t.name === toolName);
    const reach = tool?.reachesTools?.(input);
    if (reach === undefined) return;
    const namespace = (server) => `mcp__${server.replace(/-/g, "_")}`;
    const wanted = needs.unlisted.filter((s) => reach === "all" || reach.some((word) => word.includes(namespace(s))));
    if (!wanted.length) return;
    await adapter().listServers(wanted);
    sync();
  }

  return { sync, activate, beforeReaching, owns: (name) => registered.has(name), target: (name) => (registered.has(name) ? targets.get(name) : undefined) };
}
