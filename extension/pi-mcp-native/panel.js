// The `/mcp` panel in Pi's terminal UI (`ctx.ui.custom`): every server with its state, tool
// count, exposure and where it comes from, those that need attention first; a server's details
// and actions (tools, reconnect, on/off, and what other parts add, such as sign-in); a server's
// tools with their exposure and hints. ↑/↓ move, Enter selects, Esc goes back and closes.
// Drawn as plain lines (no import of Pi's TUI library), so it works on every Pi with custom().

/** Which servers come first: those that need the user. */
const ATTENTION = { "needs-auth": 0, failed: 1, connecting: 2, "not-connected": 3, cached: 3, connected: 4, disabled: 5 };
const STATE = { "needs-auth": "needs sign-in", failed: "failed", connecting: "connecting…", "not-connected": "not started", cached: "cached", connected: "connected", disabled: "disabled" };

/**
 * Opens the panel. `model` gives what it shows and does:
 *  - `servers()` → the status details' servers (name, state, tools, exposure, source, problem…),
 *    as of the last `refresh()` (async; the panel calls it after every action and on events)
 *  - `tools(name)` → the server's tools (name, tool, exposure, annotations, description)
 *  - `actions(server)` → [{ label, hint?, run(): Promise<string|undefined> }] for one server
 * Resolves when the panel closes.
 */
export function showPanel(ctx, model) {
  return ctx.ui.custom((tui, theme, keybindings, done) => new Panel({ tui, theme, keybindings, done, model }));
}

class Panel {
  constructor({ tui, theme, keybindings, done, model }) {
    Object.assign(this, { tui, theme, keybindings, done, model });
    // Screens stacked: the servers, a server, its tools.
    this.stack = [{ kind: "servers", selected: 0 }];
    this.message = undefined;
    this.busy = false;
  }

  get screen() {
    return this.stack[this.stack.length - 1];
  }

  key(data, id, raw) {
    return this.keybindings?.matches ? this.keybindings.matches(data, id) : raw.includes(data);
  }

  handleInput(data) {
    if (this.busy) return;
    const items = this.items();
    if (this.key(data, "tui.select.up", ["\x1b[A", "k"])) {
      this.screen.selected = Math.max(0, this.screen.selected - 1);
    } else if (this.key(data, "tui.select.down", ["\x1b[B", "j"])) {
      this.screen.selected = Math.min(Math.max(items.length - 1, 0), this.screen.selected + 1);
    } else if (this.key(data, "tui.select.confirm", ["\r", "\n"])) {
      this.select(items[this.screen.selected]);
    } else if (this.key(data, "tui.select.cancel", ["\x1b"])) {
      this.message = undefined;
      if (this.stack.length === 1) return this.done(undefined);
      this.stack.pop();
    } else {
      return;
    }
    this.tui.requestRender();
  }

  servers() {
    return [...this.model.servers()].sort((a, b) => (ATTENTION[a.state] ?? 3) - (ATTENTION[b.state] ?? 3) || a.name.localeCompare(b.name));
  }

  /** What the current screen lists: [{ label, detail, onSelect }]. */
  items() {
    const screen = this.screen;
    if (screen.kind === "servers") {
      return this.servers().map((s) => ({
        label: s.name,
        detail: [STATE[s.state] ?? s.state, toolCount(s.tools), s.exposure ?? "mcp tool", origin(s), s.shared?.text].filter(Boolean).join(" · "),
        onSelect: () => this.stack.push({ kind: "server", name: s.name, selected: 0 }),
      }));
    }
    if (screen.kind === "server") {
      const server = this.model.servers().find((s) => s.name === screen.name);
      if (!server) return [];
      return this.model.actions(server).map((action) => ({
        label: action.label,
        detail: action.hint ?? "",
        onSelect: () => this.run(action),
      }));
    }
    return this.model.tools(screen.name).map((t) => ({
      label: t.name,
      detail: [t.exposure ?? "mcp tool", hints(t.annotations), t.description].filter(Boolean).join(" · "),
      onSelect: () => {},
    }));
  }

  select(item) {
    this.message = undefined;
    item?.onSelect();
  }

  async run(action) {
    if (action.screen === "tools") {
      this.stack.push({ kind: "tools", name: this.screen.name, selected: 0 });
      return;
    }
    this.busy = true;
    this.message = `${action.label}…`;
    this.tui.requestRender();
    try {
      const said = (await action.run()) ?? `${action.label}: done`;
      // Shown with the state it left, when keys work again (Pi may draw the panel meanwhile).
      await this.model.refresh();
      this.message = said;
    } catch (e) {
      this.message = `${action.label} failed: ${e?.message ?? e}`;
    } finally {
      this.busy = false;
      this.tui.requestRender();
    }
  }

  render(width) {
    const t = this.theme;
    const fit = (text) => clip(text, Math.max(width - 2, 10));
    const lines = [t.fg("accent", "─".repeat(Math.max(width, 1)))];
    const screen = this.screen;
    if (screen.kind === "servers") lines.push(` ${t.fg("accent", t.bold("MCP servers"))}`);
    if (screen.kind === "server") {
      const s = this.model.servers().find((x) => x.name === screen.name);
      lines.push(` ${t.fg("accent", t.bold(`MCP server ${screen.name}`))}`);
      if (s) {
        const summary = [STATE[s.state] ?? s.state, toolCount(s.tools), `exposure ${s.exposure ?? "mcp tool"}`, s.signIn];
        lines.push(` ${t.fg("muted", fit(summary.filter(Boolean).join(" · ")))}`);
        lines.push(` ${t.fg("muted", fit(`from ${origin(s)}`))}`);
        if (s.shared) lines.push(` ${t.fg("muted", fit(s.shared.text))}`);
        if (s.description) lines.push(` ${t.fg("muted", fit(s.description))}`);
        if (s.problem) lines.push(` ${t.fg("error", fit(s.problem.split("\n")[0]))}`);
      }
    }
    if (screen.kind === "tools") lines.push(` ${t.fg("accent", t.bold(`Tools of ${screen.name}`))}`);
    lines.push("");
    const items = this.items();
    if (!items.length) {
      lines.push(` ${t.fg("muted", screen.kind === "servers" ? "No MCP servers are configured: /mcp setup takes those of your other tools and offers well-known ones; /mcp add adds one." : screen.kind === "tools" ? "No tools known yet: reconnect the server to list them." : "This server is no longer configured.")}`);
    }
    const selected = Math.min(screen.selected, Math.max(items.length - 1, 0));
    const start = Math.max(0, Math.min(selected - 5, items.length - 12));
    items.slice(start, start + 12).forEach((item, i) => {
      const at = start + i === selected;
      const text = fit(`${at ? "› " : "  "}${item.label}${item.detail ? `  ${item.detail}` : ""}`);
      lines.push(` ${at ? t.fg("accent", text) : text}`);
    });
    if (this.message) lines.push("", ` ${t.fg("warning", fit(this.message))}`);
    const back = this.stack.length === 1 ? "close" : "back";
    lines.push("", ` ${t.fg("dim", fit(`↑↓ move · enter select · esc ${back}`))}`);
    lines.push(t.fg("accent", "─".repeat(Math.max(width, 1))));
    return lines;
  }

  invalidate() {}
}

const toolCount = (n) => `${n} tool${n === 1 ? "" : "s"}`;

/** Where a server comes from, shortly. */
function origin(server) {
  if (server.registeredBy) return `registered by ${shortPath(server.registeredBy)}`;
  if (server.imported) return `imported from ${server.imported}`;
  if (server.package) return `Pi package ${server.package.name}`;
  return shortPath(server.source ?? "");
}

function shortPath(path) {
  const home = process.env.HOME;
  return home && path.startsWith(`${home}/`) ? `~${path.slice(home.length)}` : path;
}

/** MCP hints as short words. */
function hints(annotations) {
  if (!annotations) return "";
  const words = [];
  if (annotations.readOnlyHint) words.push("read-only");
  if (annotations.destructiveHint) words.push("destructive");
  if (annotations.idempotentHint) words.push("idempotent");
  if (annotations.openWorldHint) words.push("open world");
  return words.join(", ");
}

/** `text` cut to `max` characters. */
function clip(text, max) {
  const chars = [...text];
  return chars.length <= max ? text : `${chars.slice(0, max - 1).join("")}…`;
}
