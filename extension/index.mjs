// The Pi extension: registers the `mcp` tool and the `/mcp` command, and wires Pi's session
// events to the native core. Every text shown comes from the core.
import { createRequire } from "node:module";

const require = createRequire(import.meta.url);
const { McpAdapter } = require("../index.js");

/** `--mcp-config <path>` / `--mcp-config=<path>` from Pi's command line (flags are not readable at load). */
function configPathFromArgv(argv) {
  for (let i = 0; i < argv.length; i++) {
    const arg = argv[i];
    if (arg === "--") break;
    if (arg === "--mcp-config") return argv[i + 1];
    if (arg.startsWith("--mcp-config=")) return arg.slice("--mcp-config=".length);
  }
  return undefined;
}

export default function piMcpNative(pi) {
  const configPath = configPathFromArgv(process.argv);
  const open = (cwd) => McpAdapter.open({ cwd, configPath });
  let adapter = open(process.cwd());
  let openedFor = process.cwd();
  let stale = false;
  let footerCtx;
  const progressSinks = new Map();

  const showFooter = () => footerCtx?.ui?.setStatus?.("mcp", adapter.footer());
  const onEvent = (event) => {
    if (event.type === "progress") {
      progressSinks.get(event.callId)?.({ content: [{ type: "text", text: event.text }], details: event });
    } else {
      showFooter();
    }
  };

  pi.registerFlag?.("mcp-config", { description: "MCP config file to use instead of ~/.pi/agent/mcp.json", type: "string" });

  pi.registerTool({
    ...adapter.toolDefinition(),
    async execute(toolCallId, params, signal, onUpdate) {
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
    },
  });

  // Pi up to 0.86 ignores `isError` on a returned result; flag failed MCP calls here too.
  pi.on("tool_result", (event) => {
    if (event.toolName === "mcp" && event.details?.error && !event.isError) return { isError: true };
  });

  pi.registerCommand("mcp", {
    description: "MCP servers: /mcp [status] | tools | reconnect [server]",
    getArgumentCompletions(prefix) {
      const words = ["status", "tools", "reconnect", ...adapter.servers().map((s) => `reconnect ${s}`)];
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
      } else {
        report(`Unknown subcommand "${sub}". Use /mcp status, /mcp tools or /mcp reconnect [server].`, "warning");
      }
      showFooter();
    },
  });

  pi.on("session_start", (_event, ctx) => {
    const cwd = ctx?.cwd ?? process.cwd();
    // A session after a shutdown (reload, /new, /resume), or in another cwd, gets a fresh core.
    if (stale || cwd !== openedFor) {
      adapter = open(cwd);
      openedFor = cwd;
      stale = false;
    }
    footerCtx = ctx;
    adapter.onEvent(onEvent);
    adapter.start();
    showFooter();
  });

  pi.on("session_shutdown", async () => {
    footerCtx = undefined;
    stale = true;
    await adapter.shutdown();
  });
}
