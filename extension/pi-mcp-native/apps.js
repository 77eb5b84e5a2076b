// @ts-check
// MCP Apps in Pi. In a session with a UI (Pi's terminal, or RPC with a client UI) the core is
// given the host page's script and shows a tool's app in the browser when the tool is called;
// headless runs (print, json, RPC without UI) never turn apps on, so nothing opens and nothing
// listens. What an app sends to the conversation, once the user allowed it, reaches Pi as a
// message of its own, marked as the app's: never as the user's words. `/mcp apps` lists the
// open apps with their addresses.
import { readFileSync } from "node:fs";

const SCRIPT = new URL("./app-host.js", import.meta.url);
/** How often Pi's theme is looked at while an app is open (Pi tells extensions of no change). */
const THEME_POLL_MS = 1000;
let script;

/** The app's theme: Pi's (its appearance, else its name: "dark" by default), else light. */
function themeOf(ui) {
  let theme;
  try {
    theme = ui?.theme;
    if (theme?.appearance === "light" || theme?.appearance === "dark") return theme.appearance;
    if (typeof theme?.name === "string") return /light/i.test(theme.name) ? "light" : "dark";
  } catch {} // a UI without themes (RPC)
  return "light";
}

/** What the app is, for a person and the model. */
const appName = (event) => `the MCP app of ${event.tool} (server "${event.server}")`;

/** The MCP tool a call of Pi's tool `call` is of, with its arguments so far: `mcp`'s `tool`, or a tool of ours (`target`). */
function mcpCallOf(call, target) {
  const args = call.arguments ?? {};
  if (call.name === "mcp") return typeof args.tool === "string" && args.args && typeof args.args === "object" ? { tool: args.tool, server: args.server, args: args.args } : undefined;
  const direct = target(call.name);
  return direct?.tool ? { ...direct, args } : undefined;
}

/**
 * @param {import("@earendil-works/pi-coding-agent").ExtensionAPI} pi
 * @param {object} parts
 * @param {() => import("./questions.js").Dialogs | undefined} parts.ui
 * @param {(name: string) => { tool: string; server: string } | undefined} parts.target
 */
export function appsInPi(pi, { ui, target }) {
  // The core apps are on for, the theme it was last given, and the look at Pi's theme while an app is open.
  /** @type {import("../../index.js").McpAdapter | undefined} */
  let current;
  let theme;
  let watching;
  const unwatch = () => {
    clearInterval(watching);
    watching = undefined;
  };
  const watchTheme = () => {
    if (watching) return;
    watching = setInterval(() => {
      const now = themeOf(ui());
      if (now === theme) return;
      theme = now;
      current?.setAppsContext({ theme });
    }, THEME_POLL_MS);
    watching.unref?.();
  };
  // While an app is open, a call the model is still writing gives it the arguments so far (the
  // core sends them only to the called tool's open app).
  pi.on("message_update", (event) => {
    const streamed = event?.assistantMessageEvent;
    if (!watching || streamed?.type !== "toolcall_delta") return;
    const message = /** @type {{ content?: any[] } | undefined} */ (event.message); // the assistant's
    const call = message?.content?.[streamed.contentIndex];
    const partial = call?.type === "toolCall" ? mcpCallOf(call, target) : undefined;
    if (partial) current?.appInputPartial(partial.tool, partial.args, typeof partial.server === "string" ? partial.server : undefined);
  });
  return {
    /**
     * Turns apps on for `core` when the session has a UI.
     * @param {import("../../index.js").McpAdapter} core
     * @param {any} ctx  Pi's session context, if a session started
     */
    enable(core, ctx) {
      unwatch();
      if (!ctx?.hasUI) return;
      script ??= readFileSync(SCRIPT);
      const locale = Intl.DateTimeFormat().resolvedOptions();
      current = core;
      theme = themeOf(ctx.ui);
      core.enableApps(script, { theme, locale: locale.locale, timeZone: locale.timeZone, platform: "desktop", userAgent: "pi-mcp-native" });
    },

    /**
     * An `app` event of the core.
     * @param {Extract<import("../../index.js").LifecycleEvent, { type: "app" }>} event
     */
    onEvent(event) {
      switch (event.kind) {
        case "opened":
          watchTheme();
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
          if (!current?.openApps().length) unwatch();
          if (event.text) ui()?.notify(event.text, "warning");
          break;
      }
    },

    /** `/mcp apps` (the open apps and the "always" given), `/mcp apps revoke [server]`. */
    /** @param {() => import("../../index.js").McpAdapter} core */
    subcommand: (core) => ({
      summary: "the MCP apps open in your browser, with their addresses, and the \"always\" given to them; `revoke [server]` takes it back",
      usage: "[revoke [server]]",
      complete: (prefix) => ["revoke"].filter((w) => w.startsWith(prefix)),
      run: ([action, server], _ctx, out) => {
        if (action === "revoke") {
          let taken;
          try {
            taken = core().revokeAppGrants(server);
          } catch (e) {
            return out.error(`Nothing was taken back: ${e.message}`);
          }
          const whose = server ? `the apps of "${server}"` : "every server's apps";
          return out.info(taken ? `Taken back: ${whose} will ask again before writing to the conversation or calling tools.` : `No "always" was given to ${whose}.`);
        }
        if (action) return out.error(`Unknown: /mcp apps ${action}. Use /mcp apps, or /mcp apps revoke [server].`);
        const open = core().openApps();
        const lines = open.length
          ? [`MCP apps open (${open.length}):`, ...open.map((a) => `  ${a.tool} (server "${a.server}"), since ${new Date(a.sinceMs).toLocaleTimeString()}: ${a.url}`)]
          : ["No MCP app is open. A tool with an app opens it in your browser when it is called (settings: ui)."];
        const always = core().appGrants();
        const of = (what) => always.filter((g) => g.what === what).map((g) => `"${g.server}"`).join(", ");
        if (of("conversation")) lines.push(`May always write to the conversation: the apps of ${of("conversation")}.`);
        if (of("tools")) lines.push(`May always call their server's tools: the apps of ${of("tools")}.`);
        if (always.length) lines.push("(/mcp apps revoke [server] takes that back.)");
        out.info(lines.join("\n"));
      },
    }),
  };
}
