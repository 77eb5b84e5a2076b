// @ts-check
// The `/mcp` command: a table of subcommands, and the actions the panel offers for a server.
// `/mcp` alone runs `bare` (the panel in Pi's terminal UI, the status elsewhere); `/mcp <name>
// [args…]` runs a subcommand. Each part of the extension adds its own with `add` (`status`,
// `reconnect`, sign-in, prompts, …) and its panel actions with `addActions`; this file only
// dispatches, completes arguments and reports.

/**
 * @typedef {object} Subcommand
 * @property {string} summary   one line for `/mcp help`
 * @property {string} [usage]   its arguments, e.g. "<server>"
 * @property {(prefix: string) => string[]} [complete]  completions of its first argument
 * @property {(args: string[], ctx: object, out: Reporter, line: string) => unknown} run
 *   `line` is the text after the subcommand's name, as typed
 */

/**
 * @typedef {object} Reporter
 * @property {(text: string) => void} info
 * @property {(text: string) => void} warning
 * @property {(text: string) => void} error
 */

/** Shows text in Pi: a notification where there is a UI, else on stderr (print and JSON modes). */
export function reporter(ctx) {
  const say = (level) => (text) => {
    if (ctx?.hasUI) ctx.ui.notify(text, level);
    else process.stderr.write(`${text}\n`);
  };
  return { info: say("info"), warning: say("warning"), error: say("error") };
}

/**
 * @typedef {object} PanelAction
 * @property {string} label
 * @property {string} [hint]
 * @property {"tools"} [screen]  opens that screen instead of running
 * @property {() => Promise<string | undefined>} [run]  returns the message to show
 */

/**
 * The `/mcp` command. `bare(ctx, out)` runs for `/mcp` alone; `after(ctx)` after every run (e.g.
 * to refresh the footer). Returns `add(name, subcommand)`, `addActions(provider)` where
 * `provider(server)` gives the panel's actions for a server (a status entry), `actions(server)`,
 * and the `definition` to register.
 */
/**
 * @param {object} hooks
 * @param {(ctx: any, out: Reporter) => Promise<void>} hooks.bare
 * @param {(ctx: any) => void} [hooks.after]
 */
export function createMcpCommand({ bare, after = () => {} }) {
  /** @type {Map<string, Subcommand>} */
  const subcommands = new Map();
  /** @type {((server: object) => PanelAction[])[]} */
  const providers = [];

  function add(name, subcommand) {
    if (subcommands.has(name)) throw new Error(`/mcp ${name} is added twice`);
    subcommands.set(name, subcommand);
  }
  const addActions = (provider) => providers.push(provider);
  const actions = (server) => providers.flatMap((provider) => provider(server));

  const help = () =>
    [
      "/mcp — the MCP panel (in the terminal UI) or the servers' status",
      ...[...subcommands].map(([name, s]) => `/mcp ${name}${s.usage ? ` ${s.usage}` : ""} — ${s.summary}`),
    ].join("\n");

  add("help", { summary: "this list", run: (_args, _ctx, out) => out.info(help()) });

  const definition = {
    description: "MCP servers: /mcp opens the panel (status outside the terminal UI); /mcp help lists the subcommands",
    getArgumentCompletions(prefix) {
      const [name, ...rest] = String(prefix ?? "").trimStart().split(/\s+/);
      /** @type {{ value: string; label: string; description?: string }[] | undefined} */
      let items;
      const complete = subcommands.get(name)?.complete;
      if (rest.length === 0) {
        items = [...subcommands].filter(([n]) => n.startsWith(name)).map(([n, s]) => ({ value: n, label: n, description: s.summary }));
      } else if (rest.length === 1 && complete) {
        items = complete(rest[0])
          .filter((word) => word.startsWith(rest[0]))
          .map((word) => ({ value: `${name} ${word}`, label: word }));
      }
      return items?.length ? items : null;
    },
    async handler(args, ctx) {
      const typed = String(args ?? "").trim();
      const [name, ...rest] = typed.split(/\s+/).filter(Boolean);
      const out = reporter(ctx);
      try {
        const subcommand = name === undefined ? undefined : subcommands.get(name);
        if (name === undefined) await bare(ctx, out);
        else if (subcommand) await subcommand.run(rest, ctx, out, typed.slice(name.length).trim());
        else out.warning(`Unknown subcommand "${name}".\n${help()}`);
      } finally {
        after(ctx);
      }
    },
  };
  return { add, addActions, actions, definition };
}
