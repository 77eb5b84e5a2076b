// @ts-check
// The exposure changes picked in the `/mcp` panel and not saved yet: per server, a choice for
// all its tools and choices for single tools. The core previews them (each tool's state once
// saved, the direct tools' tokens) and saves them (`exposure`, `saveExposure`).

/** What the next press picks: behind `mcp` → direct → hidden → behind `mcp`. */
export function nextChoice(state) {
  if (state === "direct") return "hidden";
  if (state === "hidden") return "mcp";
  return "direct";
}

export class ExposureEdits {
  constructor() {
    /** @type {{ server: string, tool?: string, choice: string }[]} */
    this.list = [];
  }

  /** Picks `choice` for `tool` of `server`, or without `tool` for all its tools (its single picks go). */
  pick(server, tool, choice) {
    this.list = this.list.filter((c) => c.server !== server || (tool !== undefined && c.tool !== tool));
    this.list.push(tool === undefined ? { server, choice } : { server, tool, choice });
  }

  /** Keeps only the picks of `servers` (names), e.g. after a server was turned off. */
  keep(servers) {
    this.list = this.list.filter((c) => servers.includes(c.server));
  }

  clear() {
    this.list = [];
  }
}
