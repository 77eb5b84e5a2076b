// @ts-check
// The `/mcp` panel in Pi's terminal UI (`ctx.ui.custom`): every server with its state, tool
// count, exposure and where it comes from, those that need attention first; a server's details
// and actions (tools, reconnect, on/off, and what other parts add, such as sign-in); a server's
// tools with their hints, where Space or Enter picks how the model reaches each (or all of them):
// behind `mcp`, direct or hidden, the direct tools' cost in tokens shown before ctrl+s saves.
// ↑/↓ move; typing filters a long list; Esc clears the filter, goes back and closes, asking
// first when changes are not saved. Drawn as plain lines (no import of Pi's TUI library), so it
// works on every Pi with custom().
import { ExposureEdits, nextChoice } from "./exposure-edits.js";

/** Which servers come first: those that need the user. */
/** @type {Record<import("../../index.js").ServerState, number>} */
const ATTENTION = { "needs-auth": 0, failed: 1, connecting: 2, "not-connected": 3, cached: 3, connected: 4, disabled: 5 };
/** @type {Record<import("../../index.js").ServerState, string>} */
const STATE = { "needs-auth": "needs sign-in", failed: "failed", connecting: "connecting…", "not-connected": "not started", cached: "cached", connected: "connected", disabled: "disabled" };
const KEYS = { exposure: "exposure/toolExposure", directTools: "directTools/excludeTools" };
/** The answers when the panel closes with changes not saved. */
const ANSWERS = ["Save", "Discard", "Keep editing"];
const CTRL_S = "\x13";
const BACKSPACE = ["\x7f", "\b"];
const VISIBLE = 12;

/**
 * Opens the panel. `model` gives what it shows and does:
 *  - `servers()` → the status details' servers (name, state, tools, exposure, source, problem…),
 *    as of the last `refresh()` (async; the panel calls it after every action)
 *  - `actions(server)` → [{ label, hint?, run(): Promise<string|undefined> }] for one server
 *  - `exposure(changes)` → the core's preview: each enabled server's tools with their state now
 *    (`saved`) and once `changes` are saved (`state`), their tokens as direct tools, the file
 *  - `saveExposure(changes)` → Promise of the message to show (the gateway is opened again)
 *  - `list(server)` → Promise of a failure to show, or undefined: lists a server not listed yet
 * Resolves when the panel closes.
 */
/**
 * @typedef {import("../../index.js").ExposureChange} ExposureChange
 * @typedef {object} PanelModel
 * @property {() => import("../../index.js").StatusServer[]} servers
 * @property {() => Promise<void>} refresh
 * @property {(server: object) => import("./mcp-command.js").PanelAction[]} actions
 * @property {(changes: ExposureChange[]) => import("../../index.js").ExposurePreview} exposure
 * @property {(changes: ExposureChange[]) => Promise<string>} saveExposure
 * @property {(server: string) => Promise<string | undefined>} list
 */

/**
 * A screen of the panel: the servers, a server (`name`) or its tools (`name`); a list has a filter.
 * @typedef {{ kind: "servers" | "server" | "tools"; selected: number; name?: any; filter?: string }} Screen
 */

/**
 * @param {import("@earendil-works/pi-coding-agent").ExtensionCommandContext} ctx
 * @param {PanelModel} model
 * @returns {Promise<void>}
 */
export function showPanel(ctx, model) {
  return ctx.ui.custom((tui, theme, keybindings, done) => new Panel({ tui, theme, keybindings, done, model }));
}

class Panel {
  /**
   * @param {object} parts
   * @param {{ requestRender(): void }} parts.tui
   * @param {any} parts.theme  Pi's theme (what it offers differs between versions)
   * @param {{ matches?(data: string, id: string): boolean } | undefined} parts.keybindings
   * @param {(result: undefined) => void} parts.done
   * @param {PanelModel} parts.model
   */
  constructor({ tui, theme, keybindings, done, model }) {
    this.tui = tui;
    this.theme = theme;
    this.keybindings = keybindings;
    this.done = done;
    this.model = model;
    // Screens stacked: the servers, a server, its tools. A list screen has a filter.
    /** @type {Screen[]} */
    this.stack = [{ kind: "servers", selected: 0, filter: "" }];
    this.edits = new ExposureEdits();
    this.message = undefined;
    this.busy = false;
    /** While the panel asks whether to save: the answer picked (index into ANSWERS). */
    this.asking = undefined;
    /** @type {import("../../index.js").ExposurePreview} set by updatePreview */
    this.preview;
    this.updatePreview();
  }

  get screen() {
    return this.stack[this.stack.length - 1];
  }

  key(data, id, raw) {
    return this.keybindings?.matches ? this.keybindings.matches(data, id) : raw.includes(data);
  }

  /** The core's preview of the changes picked (changes to servers no longer on are dropped). */
  updatePreview() {
    this.edits.keep(this.model.servers().filter((s) => s.state !== "disabled").map((s) => s.name));
    try {
      this.preview = this.model.exposure(this.edits.list);
    } catch (e) {
      this.edits.clear();
      this.preview = this.model.exposure([]);
      this.message = `Exposure changes dropped: ${e?.message ?? e}`;
    }
  }

  get unsaved() {
    return this.preview.servers.some((s) => s.changed);
  }

  handleInput(data) {
    if (this.busy) return;
    if (this.asking !== undefined) return this.answer(data);
    const screen = this.screen;
    const items = this.items();
    if (this.key(data, "tui.select.up", ["\x1b[A"])) {
      screen.selected = Math.max(0, screen.selected - 1);
    } else if (this.key(data, "tui.select.down", ["\x1b[B"])) {
      screen.selected = Math.min(Math.max(items.length - 1, 0), screen.selected + 1);
    } else if (this.key(data, "tui.select.confirm", ["\r", "\n"]) || (data === " " && screen.kind === "tools")) {
      this.message = undefined;
      items[Math.min(screen.selected, items.length - 1)]?.onSelect();
    } else if (this.key(data, "tui.select.cancel", ["\x1b"])) {
      this.message = undefined;
      if (screen.filter) this.setFilter("");
      else if (this.stack.length > 1) this.stack.pop();
      else if (this.unsaved) this.asking = 0;
      else return this.done(undefined);
    } else if (data === CTRL_S) {
      return void this.save(false);
    } else if (screen.filter !== undefined && BACKSPACE.includes(data)) {
      this.setFilter(screen.filter.slice(0, -1));
    } else if (screen.filter !== undefined && /^[^\x00-\x20\x7f]+$/u.test(data)) {
      this.setFilter(screen.filter + data);
    } else {
      return;
    }
    this.tui.requestRender();
  }

  setFilter(filter) {
    this.screen.filter = filter;
    this.screen.selected = 0;
  }

  /** A key while the panel asks whether to save the changes before it closes. */
  answer(data) {
    const move = (by) => (this.asking = (this.asking + by + ANSWERS.length) % ANSWERS.length);
    if (this.key(data, "tui.select.up", ["\x1b[A"]) || data === "\x1b[D") move(-1);
    else if (this.key(data, "tui.select.down", ["\x1b[B"]) || data === "\x1b[C" || data === "\t") move(1);
    else if (this.key(data, "tui.select.cancel", ["\x1b"])) this.asking = undefined;
    else if (this.key(data, "tui.select.confirm", ["\r", "\n"])) {
      const answer = ANSWERS[this.asking];
      this.asking = undefined;
      if (answer === "Save") return void this.save(true);
      if (answer === "Discard") return this.done(undefined);
    } else return;
    this.tui.requestRender();
  }

  servers() {
    return [...this.model.servers()].sort((a, b) => ATTENTION[a.state] - ATTENTION[b.state] || a.name.localeCompare(b.name));
  }

  exposureOf(name) {
    return this.preview.servers.find((s) => s.server === name);
  }

  /** What the current screen lists, filtered: [{ label, detail, onSelect }]. */
  items() {
    const screen = this.screen;
    const all = this.allItems();
    if (!screen.filter) return all;
    const words = screen.filter.toLowerCase().split(/\s+/);
    return all.filter((item) => !item.all && words.every((w) => `${item.label} ${item.text ?? ""}`.toLowerCase().includes(w)));
  }

  /** @returns {{ label: string; text?: string | null; detail: string; all?: boolean; onSelect: () => unknown }[]} */
  allItems() {
    const screen = this.screen;
    if (screen.kind === "servers") {
      return this.servers().map((s) => ({
        label: s.name,
        text: s.description,
        detail: [STATE[s.state], toolCount(s.tools), exposureSummary(this.exposureOf(s.name)) ?? s.exposure ?? "mcp tool", origin(s), s.shared?.text].filter(Boolean).join(" · "),
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
    const exposure = this.exposureOf(screen.name);
    if (!exposure) return [];
    const pick = (tool, state) => {
      this.edits.pick(screen.name, tool, nextChoice(state));
      this.updatePreview();
    };
    const all = {
      all: true,
      label: "All tools",
      detail: `${stateLabel(exposure.state)}${exposure.tools.length ? "" : " · none known yet"}`,
      onSelect: () => pick(undefined, exposure.state),
    };
    return [
      all,
      ...exposure.tools.map((t) => ({
        label: t.name,
        text: t.description,
        detail: [toolState(t), `≈ ${count(t.tokens)} tokens`, hints(t.annotations), t.description].filter(Boolean).join(" · "),
        onSelect: () => (t.locked ? (this.message = `${t.name} is ${t.locked}: change it in ${shortPath(exposure.file)}`) : pick(t.tool, t.state)),
      })),
    ];
  }

  async run(action) {
    if (action.screen === "tools") {
      const name = this.screen.name;
      // A server not listed yet (a cold cache, a fill under way) is listed first: its tools are
      // what this screen picks from.
      if (!this.exposureOf(name)?.tools.length) await this.listFirst(name);
      this.stack.push({ kind: "tools", name, selected: 0, filter: "" });
      this.tui.requestRender();
      return;
    }
    this.busy = true;
    this.message = `${action.label}…`;
    this.tui.requestRender();
    try {
      const said = (await action.run()) ?? `${action.label}: done`;
      // Shown with the state it left, when keys work again (Pi may draw the panel meanwhile).
      await this.model.refresh();
      this.updatePreview();
      this.message = said;
    } catch (e) {
      this.message = `${action.label} failed: ${e?.message ?? e}`;
    } finally {
      this.busy = false;
      this.tui.requestRender();
    }
  }

  /** Lists `name` through the core, saying so meanwhile; a failure is the message shown. */
  async listFirst(name) {
    this.busy = true;
    this.message = `Listing ${name}…`;
    this.tui.requestRender();
    try {
      this.message = await this.model.list(name);
      await this.model.refresh();
      this.updatePreview();
    } catch (e) {
      this.message = `Listing ${name} failed: ${e?.message ?? e}`;
    } finally {
      this.busy = false;
    }
  }

  /** Saves the exposure changes (then, with `close`, closes the panel). */
  async save(close) {
    if (!this.unsaved) {
      this.message = "No exposure changes to save.";
      if (close) return this.done(undefined);
      return this.tui.requestRender();
    }
    this.busy = true;
    this.message = "Saving…";
    this.tui.requestRender();
    try {
      const said = await this.model.saveExposure(this.edits.list);
      this.edits.clear();
      await this.model.refresh();
      this.updatePreview();
      this.message = said;
      if (close) return this.done(undefined);
    } catch (e) {
      this.message = `Saving failed: ${e?.message ?? e}`;
    } finally {
      this.busy = false;
      this.tui.requestRender();
    }
  }

  render(width) {
    const t = this.theme;
    const fit = (text) => clip(text, Math.max(width - 2, 10));
    const muted = (text) => ` ${t.fg("muted", fit(text))}`;
    const lines = [t.fg("accent", "─".repeat(Math.max(width, 1)))];
    const screen = this.screen;
    if (screen.kind === "servers") lines.push(` ${t.fg("accent", t.bold("MCP servers"))}`);
    if (screen.kind === "server") {
      const s = this.model.servers().find((x) => x.name === screen.name);
      lines.push(` ${t.fg("accent", t.bold(`MCP server ${screen.name}`))}`);
      if (s) {
        const summary = [STATE[s.state], toolCount(s.tools), `exposure ${exposureSummary(this.exposureOf(s.name)) ?? s.exposure ?? "mcp tool"}`, s.signIn];
        lines.push(muted(summary.filter(Boolean).join(" · ")));
        lines.push(muted(`from ${origin(s)}`));
        if (s.shared) lines.push(muted(s.shared.text));
        if (s.description) lines.push(muted(s.description));
        if (s.problem) lines.push(` ${t.fg("error", fit(s.problem.split("\n")[0]))}`);
      }
    }
    const exposure = screen.kind === "tools" ? this.exposureOf(screen.name) : undefined;
    if (screen.kind === "tools") {
      lines.push(` ${t.fg("accent", t.bold(`Tools of ${screen.name}`))}`);
      if (exposure) {
        lines.push(muted(`saved to ${shortPath(exposure.file)} as ${KEYS[exposure.keys] ?? exposure.keys}`));
        for (const note of exposure.notes) lines.push(muted(note));
      }
    }
    const items = this.items();
    if (screen.filter) lines.push(` ${t.fg("warning", fit(`filter: ${screen.filter}  (${items.length} of ${this.allItems().length})`))}`);
    lines.push("");
    if (!items.length) {
      const empty = screen.filter
        ? `Nothing matches "${screen.filter}": backspace or esc clears the filter.`
        : screen.kind === "servers"
          ? "No MCP servers are configured: /mcp setup takes those of your other tools and offers well-known ones; /mcp add adds one."
          : screen.kind === "tools"
            ? "This server is off, or no longer configured."
            : "This server is no longer configured.";
      lines.push(muted(empty));
    }
    const selected = Math.min(screen.selected, Math.max(items.length - 1, 0));
    const start = Math.max(0, Math.min(selected - 5, items.length - VISIBLE));
    items.slice(start, start + VISIBLE).forEach((item, i) => {
      const at = start + i === selected;
      const text = fit(`${at ? "› " : "  "}${item.label}${item.detail ? `  ${item.detail}` : ""}`);
      lines.push(` ${at ? t.fg("accent", text) : text}`);
    });
    if (items.length > VISIBLE) lines.push(muted(`${selected + 1} of ${items.length}`));
    const cost = screen.kind === "tools" ? costLine(exposure, exposure?.changed) : costLine(this.preview, this.unsaved);
    if (cost && screen.kind !== "server") lines.push("", muted(cost));
    if (this.message) lines.push("", ` ${t.fg("warning", fit(this.message))}`);
    lines.push("");
    if (this.asking !== undefined) {
      const answers = ANSWERS.map((a, i) => (i === this.asking ? `› ${a}` : `  ${a}`)).join("   ");
      lines.push(` ${t.fg("warning", fit(`Exposure changes are not saved:   ${answers}`))}`);
    } else {
      const back = this.stack.length === 1 ? "close" : "back";
      const keys = {
        servers: ["↑↓ move", "enter select", "type to filter"],
        server: ["↑↓ move", "enter select"],
        tools: ["↑↓ move", "space: mcp tool → direct → hidden", "type to filter"],
      }[screen.kind];
      if (this.unsaved || screen.kind === "tools") keys.push("ctrl+s save");
      lines.push(` ${t.fg("dim", fit([...keys, `esc ${screen.filter ? "clear filter" : back}`].join(" · ")))}`);
    }
    lines.push(t.fg("accent", "─".repeat(Math.max(width, 1))));
    return lines;
  }

  invalidate() {}
}

const toolCount = (n) => `${n} tool${n === 1 ? "" : "s"}`;
const count = (n) => n.toLocaleString("en-US");
const stateLabel = (state) => (state === "mcp" ? "mcp tool" : state);

/** A tool's state, with the saved one where a change is picked and why it cannot change. */
function toolState(tool) {
  const state = stateLabel(tool.state);
  if (tool.locked) return `${state} (${tool.locked})`;
  return tool.state === tool.saved ? state : `${state} (was ${stateLabel(tool.saved)})`;
}

/** A server's exposure in a few words: its state, its direct tools' cost, unsaved. */
function exposureSummary(exposure) {
  if (!exposure) return undefined;
  const direct = exposure.direct.tools && exposure.state !== "direct" ? `, ${exposure.direct.tools} direct` : "";
  const tokens = exposure.direct.tools ? ` ≈ ${count(exposure.direct.tokens)} tokens` : "";
  return `${stateLabel(exposure.state)}${direct}${tokens}${exposure.changed ? " (unsaved)" : ""}`;
}

/** The direct tools' cost once saved, and now where a change is picked. */
function costLine(exposure, unsaved) {
  if (!exposure) return undefined;
  const { direct, saved } = exposure;
  if (!direct.tools && !saved.tools && !unsaved) return undefined;
  const now = `Direct tools: ${direct.tools}, ≈ ${count(direct.tokens)} tokens declared to the model`;
  if (direct.tools === saved.tools && direct.tokens === saved.tokens) return unsaved ? `${now} · unsaved: ctrl+s saves` : now;
  return `${now} (saved: ${saved.tools}, ≈ ${count(saved.tokens)}) · unsaved: ctrl+s saves`;
}

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
