// @ts-check
// The subcommands of `/mcp` and the panel's actions for a server that come with the gateway:
// status, tools, reconnect, doctor, sign-in and -out, turning a server on or off, adding one.

/**
 * Adds them to `mcp` (see mcp-command.js). `core()` is the session's core; `setEnabled(ctx,
 * server, enabled, inProject)` saves the change and opens the core again ({ text } or { error });
 * `inProject(server)` says whether "in this project" applies to a server (a status entry);
 * `reopen(ctx)` opens the core again after a change to the config.
 */
/**
 * @param {ReturnType<typeof import("./mcp-command.js").createMcpCommand>} mcp
 * @param {object} parts
 * @param {() => import("../../index.js").McpAdapter} parts.core
 * @param {(outcome: import("../../index.js").Outcome) => string} parts.textOf
 * @param {(ctx: any, server: string, enabled: boolean, inProject: boolean) => { text?: string; error?: string }} parts.setEnabled
 * @param {(server: any) => boolean} parts.inProject
 * @param {(ctx: any) => void} parts.reopen
 */
export function addSubcommands(mcp, { core, textOf, setEnabled, inProject, reopen }) {
  const serverNames = (prefix) => core().servers().filter((s) => s.startsWith(prefix));
  mcp.add("status", { summary: "every server's state and tools", run: async (_a, _c, out) => out.info(textOf(await core().status())) });
  mcp.add("tools", { summary: "every server's tools", run: async (_a, _c, out) => out.info(textOf(await core().tools())) });
  mcp.add("reconnect", {
    summary: "connect a server (or all) again and list its tools",
    usage: "[server]",
    complete: serverNames,
    async run([server], _ctx, out) {
      const results = await Promise.all((server ? [server] : core().servers()).map((s) => core().connect(s)));
      const text = results.map(textOf).join("\n\n");
      results.some((r) => r.isError) ? out.error(text) : out.info(text);
    },
  });
  mcp.add("doctor", {
    summary: "config files, problems, and a timed connection to each server",
    async run(_args, _ctx, out) {
      const outcome = await core().doctor();
      outcome.isError ? out.warning(textOf(outcome)) : out.info(textOf(outcome));
    },
  });
  for (const [name, signIn] of [["login", true], ["logout", false]]) {
    mcp.add(name, {
      summary: signIn ? "sign in to a server (OAuth)" : "sign out of a server: its stored tokens are deleted",
      usage: "<server>",
      complete: serverNames,
      async run([server], _ctx, out) {
        if (!server) return out.warning(textOf(core().authHelp("")));
        const outcome = await (signIn ? core().login(server) : core().logout(server));
        // A sign-in the user cancelled (Esc at the paste prompt) is no failure to flag.
        outcome.isError && outcome.details?.error !== "aborted" ? out.error(textOf(outcome)) : out.info(textOf(outcome));
      },
    });
  }
  for (const [name, enabled] of /** @type {[string, boolean][]} */ ([["enable", true], ["disable", false]])) {
    mcp.add(name, {
      summary: `turn a server ${enabled ? "on" : "off"} in the config file it comes from (--project: in this project's .pi/mcp.json)`,
      usage: "<server> [--project]",
      complete: (prefix) => core().servers(true).filter((s) => s.startsWith(prefix)),
      run([server, flag], ctx, out) {
        if (!server) return out.warning(`Usage: /mcp ${name} <server> [--project]`);
        const saved = setEnabled(ctx, server, enabled, flag === "--project");
        saved.error ? out.error(saved.error) : out.info(saved.text);
      },
    });
  }
  mcp.add("add", {
    summary: "add a server as `pi mcp add` does, saved only once it connected (and signed in)",
    usage: "<name> [-l] [options] --url <url> | -- <command> [args…]",
    async run(_args, ctx, out, line) {
      const outcome = await core().addServer(line);
      if (outcome.isError) return out.error(textOf(outcome));
      reopen(ctx);
      out.info(textOf(outcome));
    },
  });
  // The panel's actions for every server; other parts add theirs (sign-in, …) with addActions.
  mcp.addActions((server) => {
    const on = server.state !== "disabled";
    const actions = [];
    if (on) {
      actions.push({ label: "Tools", hint: `${server.tools} known`, screen: "tools" });
      actions.push({
        label: "Reconnect",
        run: async () => textOf(await core().connect(server.name)).split("\n")[0],
      });
    }
    if (server.state === "needs-auth") {
      actions.push({ label: "Sign in", hint: "opens the browser", run: async () => textOf(await core().login(server.name)).split("\n")[0] });
    } else if (on && server.transport) {
      actions.push({ label: "Sign out", hint: "deletes its stored tokens", run: async () => textOf(await core().logout(server.name)).split("\n")[0] });
    }
    const toggle = (projectOnly) => ({
      label: `${on ? "Disable" : "Enable"}${projectOnly ? " in this project" : ""}`,
      hint: projectOnly ? "saved to .pi/mcp.json" : `saved to ${server.registeredBy || server.imported ? "your Pi mcp.json" : "its config file"}`,
      run: async () => {
        const saved = setEnabled(undefined, server.name, !on, projectOnly);
        return saved.error ?? saved.text;
      },
    });
    actions.push(toggle(false));
    if (inProject(server)) actions.push(toggle(true));
    return actions;
  });
}
