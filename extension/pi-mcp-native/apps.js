// MCP Apps in Pi. In a session with a UI (Pi's terminal, or RPC with a client UI) the core is
// given the host page's script and shows a tool's app in the browser when the tool is called;
// headless runs (print, json, RPC without UI) never turn apps on, so nothing opens and nothing
// listens. What an app sends to the conversation, once the user allowed it, reaches Pi as a
// message of its own, marked as the app's: never as the user's words. `/mcp apps` lists the
// open apps with their addresses.
import { readFileSync } from "node:fs";

const SCRIPT = new URL("./app-host.js", import.meta.url);
let script;

/** What the app is, for a person and the model. */
const appName = (event) => `the MCP app of ${event.tool} (server "${event.server}")`;

export function appsInPi(pi, { ui }) {
  return {
    /** Turns apps on for `core` when the session has a UI. */
    enable(core, ctx) {
      if (!ctx?.hasUI) return;
      script ??= readFileSync(SCRIPT);
      const locale = Intl.DateTimeFormat().resolvedOptions();
      core.enableApps(script, { theme: "light", locale: locale.locale, timeZone: locale.timeZone, platform: "desktop", userAgent: "pi-mcp-native" });
    },

    /** An `app` event of the core. */
    onEvent(event) {
      switch (event.kind) {
        case "opened":
          ui()?.notify(event.text, "info");
          break;
        case "message":
          pi.sendMessage(
            {
              customType: "mcp-app-message",
              content: `[A message from ${appName(event)}, sent from its window in the browser; not written by the user]\n${event.text}`,
              display: true,
              details: { server: event.server, tool: event.tool },
            },
            { triggerTurn: true, deliverAs: "followUp" },
          );
          break;
        case "context":
          pi.sendMessage(
            {
              customType: "mcp-app-context",
              content: `[The current state of ${appName(event)}, for context; not written by the user]\n${event.text}`,
              display: false,
              details: { server: event.server, tool: event.tool },
            },
            { deliverAs: "nextTurn" },
          );
          break;
        case "ended":
          if (event.text) ui()?.notify(event.text, "warning");
          break;
      }
    },

    /** `/mcp apps`. */
    subcommand: (core) => ({
      summary: "the MCP apps open in your browser, with their addresses",
      run: (_args, _ctx, out) => {
        const open = core().openApps();
        if (!open.length) return out.info("No MCP app is open. A tool with an app opens it in your browser when it is called (settings: ui).");
        const lines = open.map((a) => `${a.tool} (server "${a.server}"), since ${new Date(a.sinceMs).toLocaleTimeString()}: ${a.url}`);
        out.info([`MCP apps open (${open.length}):`, ...lines].join("\n"));
      },
    }),
  };
}
