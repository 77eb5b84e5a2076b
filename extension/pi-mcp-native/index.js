// @ts-check
// The Pi extension: registers the `mcp` tool, the MCP tools Pi gets as its own (pi-tools.js) and
// the `/mcp` command (mcp-command.js, panel.js), and wires Pi's session events to the native core.
// Texts the model or the user reads come from the core; the panel draws what the core reports.
import { createRequire } from "node:module";
import { frontEnd, piModel } from "./front-end.js";
import { appsInPi } from "./apps.js";
import { createMcpCommand } from "./mcp-command.js";
import { addSubcommands } from "./mcp-subcommands.js";
import { addSetup } from "./setup.js";
import { createFamily, familyLabel } from "./family.js";
import { createPiTools } from "./pi-tools.js";
import { resourceUpdates } from "./updates.js";

const require = createRequire(import.meta.url);
/** @type {typeof import("../../index.js")} */
const { McpAdapter } = require("../../index.js");

/**
 * `--<name> <value>` / `--<name>=<value>` from Pi's command line (flags are not readable at
 * load): the value, `true` for a flag without one, or undefined. A `name` with its own dash is
 * a short flag (`-t`).
 */
function argvOption(argv, name, { takesValue }) {
  const flag = name.startsWith("-") ? name : `--${name}`;
  for (let i = 0; i < argv.length; i++) {
    const arg = argv[i];
    if (arg === "--") break;
    if (arg === flag) return takesValue ? argv[i + 1] : true;
    if (takesValue && arg.startsWith(`${flag}=`)) return arg.slice(flag.length + 1);
  }
  return undefined;
}

/** The comma-separated list after any of `flags` (`--tools a,b`, `-t=a,b`), or undefined. */
function argvList(argv, flags) {
  for (const flag of flags) {
    const value = argvOption(argv, flag, { takesValue: true });
    if (value !== undefined) return value.split(",").map((s) => s.trim()).filter(Boolean);
  }
  return undefined;
}

/**
 * Pi's `--tools` / `--exclude-tools` as they bound MCP tools, which the gateway then calls only
 * within: `--tools` is an allowlist for them only when an entry names MCP tools (`mcp__…`), as
 * in Pi; a list of only `+name`/`-name` entries changes Pi's defaults, and its `-mcp__…` entries
 * exclude those tools.
 */
function runTools(argv) {
  const tools = argvList(argv, ["tools", "-t"]) ?? [];
  const changes = tools.length > 0 && tools.every((t) => t.startsWith("+") || t.startsWith("-"));
  const allow = !changes && tools.some((t) => t.startsWith("mcp__")) ? tools : undefined;
  const removed = changes ? tools.filter((t) => t.startsWith("-")).map((t) => t.slice(1)) : [];
  return { toolsAllowed: allow, toolsExcluded: [...(argvList(argv, ["exclude-tools", "-xt"]) ?? []), ...removed] };
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

/** @typedef {import("../../index.js").Outcome} Outcome */

/** @param {Outcome} outcome  its text blocks' text, a line each */
const textOf = (outcome) => outcome.content.map((c) => (c.type === "text" ? c.text : "")).join("\n");

/** @param {import("@earendil-works/pi-coding-agent").ExtensionAPI} pi */
export default function piMcpNative(pi) {
  // Pi ≥ 0.99 has `--no-mcp` for its own MCP support; older Pis learn it here. Either way it
  // turns pi-mcp-native off for the run: no tool, no command, no server.
  if (typeof pi.registerMcpServer !== "function") {
    pi.registerFlag?.("no-mcp", { description: "Turn MCP (pi-mcp-native) off for this run", type: "boolean" });
  }
  if (argvOption(process.argv, "no-mcp", { takesValue: false })) return;
  const configPath = argvOption(process.argv, "mcp-config", { takesValue: true });
  // projectTrusted undefined: the decision Pi saved in <agentDir>/trust.json, else trusted.
  const bounds = runTools(process.argv);
  const label = familyLabel(process.argv, oneShotRun(undefined, process.argv));
  // Servers' questions go to the session's dialogs and model (none in print and json modes).
  const sessionUi = () => (footerCtx?.hasUI ? footerCtx.ui : undefined);
  // Approvals granted for the session are kept as its entries (names and a hash), so that they
  // follow it through /reload, resume and branch changes.
  /** @param {import("../../index.js").SessionEntry} entry */
  const remember = ({ customType, data }) => pi.appendEntry(customType, data);
  const open = (cwd, projectTrusted, registered = []) => {
    const core = McpAdapter.open({ cwd, configPath, projectTrusted, registered, familyLabel: label, ...bounds });
    core.setFrontEnd(frontEnd(core, { ui: sessionUi, runModel: piModel(() => footerCtx), remember }));
    return core;
  };
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
  // Pi's first request of a session waits for the servers whose tools it declares (once).
  let declaredWaited = false;
  const progressSinks = new Map();

  // No servers: no footer. Pi 1.5's footer throws on a null status text (undefined clears it).
  const showFooter = () => footerCtx?.ui?.setStatus?.("mcp", adapter.footer() ?? undefined);
  // A sign-in waiting in its browser step: its URL is shown, and a prompt takes a pasted redirect;
  // Esc there (an empty answer too) ends the sign-in. The prompt closes when the browser finished it.
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
    const core = adapter;
    pastePrompts.set(event.server, abort);
    Promise.resolve(ctx.ui.input(event.prompt, "", { signal: abort.signal }))
      .then((text) => {
        if (abort.signal.aborted) return;
        if (text?.trim()) core.paste(event.server, text);
        else core.cancelSignIn(event.server);
      })
      .catch(() => {})
      .finally(() => pastePrompts.get(event.server) === abort && pastePrompts.delete(event.server));
  };
  const announceUpdate = resourceUpdates(pi, sessionUi);
  const apps = appsInPi(pi, { ui: sessionUi, target: (name) => piTools.target(name) });
  /** @param {import("../../index.js").LifecycleEvent} event */
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
    if ("uri" in event) {
      announceUpdate(event);
      return;
    }
    if (event.type === "family-off") {
      warn(event.text);
      return;
    }
    if (event.type === "app") {
      apps.onEvent(event);
      return;
    }
    syncDirectTools();
    syncPromptCommands();
    showFooter();
  };

  pi.registerFlag?.("mcp-config", { description: "MCP config file to use instead of ~/.pi/agent/mcp.json", type: "string" });

  /**
   * Runs `params` as an `mcp` call through `exec` (the `mcp` tool's by default), wiring Pi's abort
   * signal (it cancels the call) and progress updates.
   * @param {any} params  the model's arguments, checked by the core
   * @param {string | undefined} toolCallId
   * @param {AbortSignal | undefined} signal
   * @param {((update: any) => void) | undefined} onUpdate
   * @param {(params: any, callId: string) => Promise<Outcome>} [exec]
   * @returns {Promise<import("@earendil-works/pi-coding-agent").AgentToolResult<unknown>>}
   */
  async function run(params, toolCallId, signal, onUpdate, exec = (p, id) => adapter.execute(p, id)) {
    const callId = String(toolCallId ?? `${Date.now()}-${Math.random()}`);
    const abort = () => adapter.cancel(callId);
    if (onUpdate) progressSinks.set(callId, onUpdate);
    signal?.addEventListener("abort", abort, { once: true });
    try {
      if (signal?.aborted) abort();
      // structuredContent is JSON (index.d.ts says Record<string, unknown>, Pi JsonValue).
      return /** @type {import("@earendil-works/pi-coding-agent").AgentToolResult<unknown>} */ (await exec(params ?? {}, callId));
    } finally {
      progressSinks.delete(callId);
      signal?.removeEventListener("abort", abort);
    }
  }

  // `settings.disableProxyTool` leaves `mcp` out where Pi tools of ours reach the servers
  // (decided when Pi loads the extension: Pi cannot take a tool back).
  const declared = adapter.directTools();
  if (declared.proxy) {
    pi.registerTool({
      ...adapter.toolDefinition(),
      execute: (toolCallId, params, signal, onUpdate) => run(params, toolCallId, signal, onUpdate),
    });
  }

  const warned = new Set();
  const warn = (text) => {
    if (warned.has(text)) return;
    warned.add(text);
    if (footerCtx?.hasUI) footerCtx.ui.notify(text, "warning");
    else console.warn(text);
  };
  const piTools = createPiTools({ pi, adapter: () => adapter, run, warn });
  const syncDirectTools = () => piTools.sync();
  piTools.sync(declared);

  const family = createFamily({ adapter: () => adapter, owns: piTools.owns });
  pi.on("tool_call", (event) => {
    family.beforeTool(event.toolName);
    return piTools.beforeReaching(event.toolName, event.input);
  });
  pi.on("user_bash", () => {
    family.beforeBash();
  });

  // Servers' prompts as commands `/mcp__<server>__<prompt> [args]`, from the cache at load and
  // as servers list new ones. Pi cannot unregister a command: a withdrawn prompt's says so.
  const promptCommands = new Set();
  const syncPromptCommands = () => {
    for (const command of adapter.promptCommands()) {
      if (promptCommands.has(command.name)) continue;
      promptCommands.add(command.name);
      pi.registerCommand(command.name, {
        description: command.description,
        getArgumentCompletions: async (prefix) => {
          const items = await adapter.completePrompt(command.name, prefix);
          return items.length ? items : null;
        },
        async handler(args, ctx) {
          const outcome = await adapter.runPrompt(command.name, String(args ?? ""));
          if (outcome.isError) {
            const text = textOf(outcome);
            if (ctx.hasUI) ctx.ui.notify(text, "warning");
            else process.stderr.write(`${text}\n`);
            return;
          }
          pi.sendUserMessage(outcome.content, ctx.isIdle?.() === false ? { deliverAs: "followUp" } : undefined);
        },
      });
    }
  };
  syncPromptCommands();

  // Pi up to 0.86 ignores `isError` on a returned result; flag failed MCP calls here too.
  pi.on("tool_result", (event) => {
    const ours = event.toolName === "mcp" || piTools.owns(event.toolName);
    const details = /** @type {import("../../index.js").OutcomeDetails | undefined} */ (event.details);
    if (ours && details?.error && !event.isError) return { isError: true };
  });

  const mcp = createMcpCommand({
    async bare(ctx, out) {
      if (ctx.mode === "tui" && ctx.ui?.custom) {
        const model = panelModel(ctx);
        await model.refresh();
        // The panel's code loads when it first opens (a terminal session's /mcp).
        const { showPanel } = await import("./panel.js");
        await showPanel(ctx, model);
      }
      else out.info(textOf(await adapter.status()));
    },
    after: () => showFooter(),
  });
  addSubcommands(mcp, {
    core: () => adapter,
    textOf,
    setEnabled: (ctx, server, enabled, inProject) => setEnabled(ctx ?? panelCtx, server, enabled, inProject),
    inProject: (server) => adapter.projectTrusted() && !(server.source ?? "").startsWith(`${openedFor}/`),
    reopen: (ctx) => reopen(ctx),
  });
  addSetup(mcp, { core: () => adapter, textOf, reopen: (ctx) => reopen(ctx) });
  mcp.add("apps", apps.subcommand(() => adapter));
  mcp.add("prompts", {
    summary: "every server's (or one's) prompts, each as its command",
    usage: "[server]",
    complete: (prefix) => adapter.servers().filter((s) => s.startsWith(prefix)),
    run: async ([server], _c, out) => out.info(textOf(await adapter.prompts(server))),
  });
  let panelCtx;
  // Pi ≥ 0.99 reads `exposure`/`toolExposure` itself: the panel saves those keys there, and
  // pi-mcp-adapter's `directTools`/`excludeTools` on older Pis.
  const piReadsExposure = typeof pi.registerMcpServer === "function";
  const panelModel = (ctx) => {
    panelCtx = ctx;
    /** @type {import("../../index.js").StatusServer[]} status's `details.servers` */
    let servers = [];
    return {
      servers: () => servers,
      refresh: async () => {
        servers = (await adapter.status()).details.servers ?? [];
      },
      actions: mcp.actions,
      async list(server) {
        const listed = await adapter.execute({ server });
        return listed.details?.error ? textOf(listed) : undefined;
      },
      exposure: (changes) => adapter.exposure(changes, piReadsExposure),
      async saveExposure(changes) {
        const saved = adapter.saveExposure(changes, piReadsExposure);
        reopen(panelCtx);
        const files = [...new Set(saved.filter((s) => s.changed).map((s) => s.file))];
        return files.length ? `Exposure saved to ${files.join(", ")}.` : "The files say so already.";
      },
    };
  };

  /** Saves a server's on/off in its config file, then opens the core again with it. */
  function setEnabled(ctx, server, enabled, inProject) {
    let saved;
    try {
      saved = adapter.setEnabled(server, enabled, inProject);
    } catch (e) {
      return { error: `Could not turn "${server}" ${enabled ? "on" : "off"}: ${e.message}` };
    }
    reopen(ctx);
    const where = saved.changed ? `saved to ${saved.file}` : `${saved.file} already says so`;
    return { text: `Server "${server}" turned ${enabled ? "on" : "off"}: ${where}.` };
  }

  pi.registerCommand("mcp", mcp.definition);

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
      const text = textOf(result);
      if (ctx.hasUI) ctx.ui.notify(text, result.isError ? "warning" : "info");
      else process.stderr.write(`${text}\n`);
      showFooter();
    },
  });

  // The session's model registry: the credentials of `auth: {"provider": …}` servers, asked at
  // each connect so that Pi's refreshes apply.
  let modelRegistry;
  // Whether someone can be asked (a sign-in shown in Pi's UI).
  let interactive = false;
  /** The custom entries of the session's current branch (approval grants among them). */
  const branchEntries = (ctx) => {
    try {
      return (ctx?.sessionManager?.getBranch?.() ?? []).filter((e) => e.type === "custom").map(({ customType, data }) => ({ customType, data }));
    } catch {
      return []; // a context that went stale with its session
    }
  };
  /** Connects a freshly opened core to this session's events, credentials, UI and grants. */
  const attach = (core) => {
    core.restoreGrants(branchEntries(footerCtx));
    core.setInteractive(interactive);
    apps.enable(core, footerCtx);
    core.onEvent(onEvent);
    core.onCredential(async (provider) => (await modelRegistry?.getApiKeyForProvider?.(provider)) ?? undefined);
  };

  /** Whether Pi trusts the project (Pi ≥ 0.86 says so); project configs start programs. */
  const trustOf = (ctx) => (typeof ctx?.isProjectTrusted === "function" ? Boolean(ctx.isProjectTrusted()) : undefined);

  /** Opens the core again (config changed, other registrations): its servers stop, the new one starts lazily. */
  function reopen(ctx, registered = registrations()) {
    const previous = adapter;
    adapter = open(openedFor, trustOf(ctx), registered);
    openedWith = JSON.stringify(registered);
    attach(adapter);
    previous.shutdown();
    syncDirectTools();
    piTools.activate();
    showFooter();
    listDeclared();
    // Eager and keep-alive servers come back at once; the others on their next use.
    startBackground();
  }

  pi.on("session_start", (_event, ctx) => {
    const cwd = ctx?.cwd ?? process.cwd();
    const trusted = trustOf(ctx);
    // A session after a shutdown (reload, /new, /resume), in another cwd, with another trust
    // decision or other registrations gets a fresh core.
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
    modelRegistry = ctx?.modelRegistry;
    oneShot = oneShotRun(ctx, process.argv);
    interactive = Boolean(ctx?.hasUI);
    syncDirectTools();
    piTools.activate();
    attach(adapter);
    declaredWaited = false;
    listDeclared();
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

  // Servers whose tools Pi declares to the model and that the cache lacks are listed from the
  // session's start (the core's queue, under its bound); Pi's first request waits for them, at
  // most 10 s (settings.startupWaitMs), as Pi's built-in MCP support does, so that it declares
  // their tools. One listed later is declared then (onEvent), or in the next run from the cache.
  function listDeclared() {
    adapter.listDeclared(false).catch(() => {});
  }
  pi.on("before_agent_start", async () => {
    if (declaredWaited) return;
    declaredWaited = true;
    const { notice } = await adapter.listDeclared(true);
    syncDirectTools();
    if (!notice) return;
    if (footerCtx?.hasUI) footerCtx.ui.notify(notice, "info");
    else process.stderr.write(`${notice}\n`);
  });

  // Another branch of the session: the grants are that branch's.
  pi.on("session_tree", (_event, ctx) => adapter.restoreGrants(branchEntries(ctx)));

  // The servers the model reaches through `mcp`, a line each, in the system prompt's
  // `mcp_servers` section (Pi ≥ 0.87 diffs sections, so an unchanged one keeps the prompt
  // cache); older Pis get it appended to the prompt.
  pi.on("before_agent_start", (event) => {
    const section = adapter.serversSection();
    const sections = event.systemPromptOptions?.sections;
    if (!sections) return section ? { systemPrompt: `${event.systemPrompt}\n\n<mcp_servers>\n${section}\n</mcp_servers>` } : undefined;
    if (section) sections.mcp_servers = section;
    else delete sections.mcp_servers;
  });

  // Registrations after the session started: the core is opened again with them (Pi then also
  // knows that an extension connects registered servers).
  pi.on("mcp_servers_change", (_event, ctx) => {
    const registered = registrations();
    if (!stale && JSON.stringify(registered) !== openedWith) reopen(ctx, registered);
  });

  pi.on("session_shutdown", async () => {
    clearTimeout(startTimer);
    footerCtx = undefined;
    stale = true;
    await adapter.shutdown();
  });
}
