// The Pi extension: registers the `mcp` tool and the `/mcp` command, and wires Pi's session
// events to the native core. Every text shown comes from the core.
import { createRequire } from "node:module";

const require = createRequire(import.meta.url);
const { McpAdapter } = require("../../index.js");

/**
 * `--<name> <value>` / `--<name>=<value>` from Pi's command line (flags are not readable at
 * load): the value, `true` for a flag without one, or undefined.
 */
function argvOption(argv, name, { takesValue }) {
  const flag = `--${name}`;
  for (let i = 0; i < argv.length; i++) {
    const arg = argv[i];
    if (arg === "--") break;
    if (arg === flag) return takesValue ? argv[i + 1] : true;
    if (takesValue && arg.startsWith(`${flag}=`)) return arg.slice(flag.length + 1);
  }
  return undefined;
}

/** Longest wait for Pi's first request before background start-up begins anyway. */
const START_DELAY_MS = 1000;

/**
 * Whether Pi runs one prompt and exits (`-p`, `--mode json`): such a run mostly ends before a
 * cache fill could finish, so the fill waits for the model's first use of `mcp`. Pi ≥ 0.87 says
 * so in `ctx.mode`; older ones only on their command line.
 */
function oneShotRun(ctx, argv) {
  if (typeof ctx?.mode === "string") return ctx.mode === "print" || ctx.mode === "json";
  const at = argv.indexOf("--mode");
  return argv.includes("-p") || argv.includes("--print") || ["print", "json"].includes(argv[at + 1]) || argv.some((a) => a === "--mode=json" || a === "--mode=print");
}

export default function piMcpNative(pi) {
  // Pi ≥ 0.99 has `--no-mcp` for its own MCP support; older Pis learn it here. Either way it
  // turns pi-mcp-native off for the run: no tool, no command, no server.
  if (typeof pi.registerMcpServer !== "function") {
    pi.registerFlag?.("no-mcp", { description: "Turn MCP (pi-mcp-native) off for this run", type: "boolean" });
  }
  if (argvOption(process.argv, "no-mcp", { takesValue: false })) return;
  const configPath = argvOption(process.argv, "mcp-config", { takesValue: true });
  // projectTrusted undefined: the decision Pi saved in <agentDir>/trust.json, else trusted.
  const open = (cwd, projectTrusted, registered = []) => McpAdapter.open({ cwd, configPath, projectTrusted, registered });
  let adapter = open(process.cwd());
  let openedFor = process.cwd();
  // Servers other extensions registered with pi.registerMcpServer() (Pi ≥ 0.99), as the core was
  // opened with them; a config file's entry of the same name wins over one.
  let openedWith = "[]";
  const registrations = () =>
    (pi.getMcpServers?.() ?? []).map(({ name, config, extensionPath }) => ({ name, config, extensionPath }));
  let stale = false;
  let footerCtx;
  let startTimer;
  let oneShot = false;
  const progressSinks = new Map();

  // No servers: no footer. Pi 1.5's footer throws on a null status text (undefined clears it).
  const showFooter = () => footerCtx?.ui?.setStatus?.("mcp", adapter.footer() ?? undefined);
  // A sign-in waiting in its browser step: its URL is shown, and a prompt takes a pasted redirect.
  const pastePrompts = new Map();
  const showSignIn = (event) => {
    const ctx = footerCtx;
    if (!ctx?.hasUI) {
      process.stderr.write(`${event.text}\n`);
      return;
    }
    ctx.ui.notify(event.text, "info");
    if (pastePrompts.has(event.server)) return;
    const abort = new AbortController();
    pastePrompts.set(event.server, abort);
    Promise.resolve(ctx.ui.input(event.prompt, "", { signal: abort.signal }))
      .then((text) => text?.trim() && adapter.paste(event.server, text))
      .catch(() => {})
      .finally(() => pastePrompts.get(event.server) === abort && pastePrompts.delete(event.server));
  };
  /** @param {import("../index.js").LifecycleEvent} event */
  const onEvent = (event) => {
    // Only progress carries a call id: it goes to that call (if it still runs). Any other event
    // may change the footer, and the catalog the direct tools come from (re-registered only if
    // their definitions changed).
    if ("callId" in event) {
      progressSinks.get(event.callId)?.({ content: [{ type: "text", text: event.text }], details: event });
      return;
    }
    // A sign-in waits for its browser step (its event asks for a pasted redirect), or ended.
    if ("prompt" in event) {
      showSignIn(event);
      return;
    }
    if ("signedIn" in event) {
      pastePrompts.get(event.server)?.abort();
      pastePrompts.delete(event.server);
    }
    syncDirectTools();
    showFooter();
  };

  pi.registerFlag?.("mcp-config", { description: "MCP config file to use instead of ~/.pi/agent/mcp.json", type: "string" });

  /** Runs `params` as an `mcp` call, wiring Pi's abort signal and progress updates. */
  async function run(params, toolCallId, signal, onUpdate) {
    const callId = String(toolCallId ?? `${Date.now()}-${Math.random()}`);
    const abort = () => adapter.cancel(callId);
    if (onUpdate) progressSinks.set(callId, onUpdate);
    signal?.addEventListener("abort", abort, { once: true });
    try {
      if (signal?.aborted) abort();
      return await adapter.execute(params ?? {}, callId);
    } finally {
      progressSinks.delete(callId);
      signal?.removeEventListener("abort", abort);
    }
  }

  pi.registerTool({
    ...adapter.toolDefinition(),
    execute: (toolCallId, params, signal, onUpdate) => run(params, toolCallId, signal, onUpdate),
  });

  // Direct tools: registered again only when their definition changed (each registration
  // rebuilds Pi's system prompt); ones that disappeared are deactivated.
  const direct = new Map();
  const warned = new Set();
  const warn = (text) => {
    if (warned.has(text)) return;
    warned.add(text);
    if (footerCtx?.hasUI) footerCtx.ui.notify(text, "warning");
    else console.warn(text);
  };
  const syncDirectTools = () => {
    const { tools, warnings } = adapter.directTools();
    warnings.forEach(warn);
    let others;
    try {
      others = new Set(pi.getAllTools().map((t) => t.name));
    } catch {
      // Not callable while extensions load; collisions with built-ins are checked in the core.
    }
    for (const def of tools) {
      const fingerprint = JSON.stringify(def);
      if (direct.get(def.name) === fingerprint) continue;
      if (!direct.has(def.name) && others?.has(def.name)) {
        warn(`MCP: direct tool "${def.name}" of server "${def.server}" is skipped: another extension has a tool of that name.`);
        continue;
      }
      direct.set(def.name, fingerprint);
      const { server, tool: _mcpName, ...definition } = def;
      pi.registerTool({
        ...definition,
        execute: (toolCallId, args, signal, onUpdate) => run({ tool: def.name, server, args }, toolCallId, signal, onUpdate),
      });
    }
    const gone = [...direct.keys()].filter((name) => !tools.some((t) => t.name === name));
    if (gone.length) {
      gone.forEach((name) => direct.delete(name));
      try {
        pi.setActiveTools(pi.getActiveTools().filter((name) => !gone.includes(name)));
      } catch {
        // Before a session starts there is nothing active to change.
      }
    }
  };
  syncDirectTools();

  // Pi up to 0.86 ignores `isError` on a returned result; flag failed MCP calls here too.
  pi.on("tool_result", (event) => {
    const ours = event.toolName === "mcp" || direct.has(event.toolName);
    if (ours && event.details?.error && !event.isError) return { isError: true };
  });

  pi.registerCommand("mcp", {
    description: "MCP servers: /mcp [status] | tools | reconnect [server] | login <server> | logout <server> | doctor",
    getArgumentCompletions(prefix) {
      const perServer = ["reconnect", "login", "logout"].flatMap((sub) => adapter.servers().map((s) => `${sub} ${s}`));
      const words = ["status", "tools", "reconnect", "login", "logout", "doctor", ...perServer];
      const items = words.filter((w) => w.startsWith(prefix)).map((w) => ({ value: w, label: w }));
      return items.length ? items : null;
    },
    async handler(args, ctx) {
      const [sub = "status", server] = String(args ?? "").trim().split(/\s+/).filter(Boolean);
      const report = (text, level = "info") => {
        if (ctx.hasUI) ctx.ui.notify(text, level);
        else process.stderr.write(`${text}\n`);
      };
      const texts = async (results) => (await Promise.all(results)).map((r) => r.content.map((c) => c.text ?? "").join("\n"));
      if (sub === "status") {
        report((await texts([adapter.status()]))[0]);
      } else if (sub === "tools") {
        report((await texts([adapter.tools()]))[0]);
      } else if (sub === "reconnect") {
        const targets = server ? [server] : adapter.servers();
        const results = await Promise.all(targets.map((s) => adapter.connect(s)));
        const failed = results.some((r) => r.isError);
        report((await texts(results)).join("\n\n"), failed ? "error" : "info");
      } else if (sub === "login" || sub === "logout") {
        if (!server) {
          report(adapter.authHelp("").content.map((c) => c.text ?? "").join("\n"), "warning");
        } else {
          const outcome = await (sub === "login" ? adapter.login(server) : adapter.logout(server));
          report((await texts([outcome]))[0], outcome.isError ? "error" : "info");
        }
      } else if (sub === "doctor") {
        const outcome = await adapter.doctor();
        report((await texts([outcome]))[0], outcome.isError ? "warning" : "info");
      } else {
        report(`Unknown subcommand "${sub}". Use /mcp status, /mcp tools, /mcp reconnect [server], /mcp login <server>, /mcp logout <server> or /mcp doctor.`, "warning");
      }
      showFooter();
    },
  });

  pi.registerCommand("mcp-auth", {
    description: "Sign in to an MCP server (OAuth), or see how to give it credentials: /mcp-auth <server>",
    getArgumentCompletions(prefix) {
      const items = adapter.servers().filter((s) => s.startsWith(prefix)).map((s) => ({ value: s, label: s }));
      return items.length ? items : null;
    },
    async handler(args, ctx) {
      const server = String(args ?? "").trim();
      const help = adapter.authHelp(server);
      // OAuth servers sign in; for the others (and without a server) the help says what to do.
      const result = help.details?.oauth ? await adapter.login(server) : help;
      const text = result.content.map((c) => c.text ?? "").join("\n");
      if (ctx.hasUI) ctx.ui.notify(text, result.isError ? "warning" : "info");
      else process.stderr.write(`${text}\n`);
      showFooter();
    },
  });

  pi.on("session_start", (_event, ctx) => {
    const cwd = ctx?.cwd ?? process.cwd();
    // Pi ≥ 0.86 says whether the project is trusted; project configs start programs.
    const trusted = typeof ctx?.isProjectTrusted === "function" ? Boolean(ctx.isProjectTrusted()) : undefined;
    // A session after a shutdown (reload, /new, /resume), in another cwd, or with another trust
    // decision gets a fresh core.
    const registered = registrations();
    const changed = JSON.stringify(registered) !== openedWith;
    if (stale || changed || cwd !== openedFor || (trusted !== undefined && trusted !== adapter.projectTrusted())) {
      if (!stale) adapter.shutdown(); // opened at load, nothing started yet
      adapter = open(cwd, trusted, registered);
      openedFor = cwd;
      openedWith = JSON.stringify(registered);
      stale = false;
    }
    footerCtx = ctx;
    oneShot = oneShotRun(ctx, process.argv);
    adapter.setInteractive(Boolean(ctx?.hasUI));
    syncDirectTools();
    adapter.onEvent(onEvent);
    clearTimeout(startTimer);
    startTimer = setTimeout(startBackground, START_DELAY_MS);
    startTimer.unref?.();
    showFooter();
  });

  // Background start-up (first-run cache fill, eager servers) waits until Pi is about to send its
  // first request, or START_DELAY_MS in an idle session: no server can be used before the model
  // answers, and a server booting beside Pi's own start-up delays Pi's first request.
  function startBackground() {
    clearTimeout(startTimer);
    adapter.start({ deferFill: oneShot });
  }
  pi.on("before_provider_request", () => {
    startBackground();
  });

  // Registrations after the session started: the core is opened again with them (Pi then also
  // knows that an extension connects registered servers).
  pi.on("mcp_servers_change", async (_event, ctx) => {
    const registered = registrations();
    if (stale || JSON.stringify(registered) === openedWith) return;
    const trusted = typeof ctx?.isProjectTrusted === "function" ? Boolean(ctx.isProjectTrusted()) : undefined;
    const previous = adapter;
    adapter = open(openedFor, trusted, registered);
    openedWith = JSON.stringify(registered);
    adapter.onEvent(onEvent);
    await previous.shutdown();
    syncDirectTools();
    showFooter();
  });

  pi.on("session_shutdown", async () => {
    clearTimeout(startTimer);
    footerCtx = undefined;
    stale = true;
    await adapter.shutdown();
  });
}
