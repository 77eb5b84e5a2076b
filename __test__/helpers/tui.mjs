// The real Pi's terminal UI under tmux (a private server socket per run, never the user's), for
// what only the TUI shows: the startup list, the `/mcp` panel. Same sandbox as pi.mjs (HOME, agent
// dir, fake LLM provider); every process is stopped by PID at the end.
import { execFileSync } from "node:child_process";
import { existsSync } from "node:fs";
import { join } from "node:path";
import { NODE22, piSandbox } from "./pi.mjs";

const sleep = (ms) => new Promise((r) => setTimeout(r, ms));

export const TMUX_SKIP = (() => {
  try {
    execFileSync("tmux", ["-V"], { stdio: "ignore" });
    return false;
  } catch {
    return "tmux is not installed";
  }
})();

/**
 * Starts `pi` (interactive) in a detached tmux session of `cols`×`rows`, with the sandbox options
 * of runPi (mcpConfig, projectFiles, extensionDir, extraArgs, env, pi). `run(tui)` drives it:
 * tui.screen() is the visible text, tui.keys(...) sends tmux key names or text, tui.waitFor(re)
 * polls the screen; tui.llm is the fake LLM (its `requests`). Everything is killed when `run`
 * settles.
 */
export async function withPiTui(options, run) {
  const { cols = 140, rows = 45, timeoutMs = 60_000 } = options;
  return piSandbox({ ...options, timeoutMs }, async ({ box, llm, args, env }) => {
    const socket = join(box.root, "tmux.sock");
    const tmux = (...a) => execFileSync("tmux", ["-S", socket, ...a], { encoding: "utf8" });
    const command = [NODE22, ...args].map(shellQuote).join(" ");
    const envArgs = Object.entries(env).flatMap(([k, v]) => ["-e", `${k}=${v}`]);
    tmux("new-session", "-d", "-x", String(cols), "-y", String(rows), "-c", box.cwd, ...envArgs, command);
    const panePid = Number(tmux("list-panes", "-F", "#{pane_pid}").trim());
    const deadline = Date.now() + timeoutMs;
    const tui = {
      box,
      llm,
      screen: () => tmux("capture-pane", "-p", "-J"),
      keys: (...keys) => tmux("send-keys", ...keys),
      /** Types `text` literally (no key names). */
      type: (text) => tmux("send-keys", "-l", text),
      /**
       * Types `text`, submits it and waits for `pattern`. While `text` stays in the editor, Enter
       * is pressed again (at most every 2 s), as a user would: Pi 1.5 keeps what is submitted while
       * its startup still runs ("Startup is still in progress"), and the first Enter may only take
       * a completion (`/mcp login <server>`). Typed before Pi reads its terminal, the text is
       * echoed and its Enter becomes a new line in the editor (Pi 0.87.1).
       */
      async submit(text, pattern, what = String(pattern), ms = 20_000) {
        tui.type(text);
        const kept = new RegExp(`─\\n${text.replace(/[.*+?^${}()|[\]\\/]/g, "\\$&")} *\\n( *\\n)*─`);
        const until = Math.min(Date.now() + ms, deadline);
        let pressed = 0;
        for (;;) {
          if (Date.now() - pressed >= 2000) {
            tui.keys("Enter");
            pressed = Date.now();
          }
          const screen = await tui.waitFor(
            (s) => pattern.test(s) || kept.test(s),
            what,
            Math.max(until - Date.now(), 0),
          );
          if (pattern.test(screen)) return screen;
          await sleep(100);
        }
      },
      /**
       * Waits until Pi's startup has finished: our footer is set in session_start, which Pi
       * (0.87.1 and 1.5.2) runs after it starts taking the editor's input (before, a submit only
       * says "Startup is still in progress"). For sessions with at least one server.
       */
      started: () => tui.waitFor(/^MCP \d+\/\d+ connected/m, "Pi's startup (the MCP footer)", 40_000),
      /** Polls the screen until `pattern` (a RegExp, or a test of the screen's text) holds. */
      async waitFor(pattern, what = String(pattern), ms = 20_000) {
        const until = Math.min(Date.now() + ms, deadline);
        const holds = typeof pattern === "function" ? pattern : (text) => pattern.test(text);
        for (;;) {
          const text = tui.screen();
          if (holds(text)) return text;
          if (Date.now() > until) throw new Error(`timed out waiting for ${what}; the screen:\n${text}`);
          await sleep(100);
        }
      },
    };
    try {
      return await run(tui);
    } finally {
      try {
        process.kill(-panePid, "SIGKILL"); // Pi and everything it started (its own process group)
      } catch {}
      try {
        tmux("kill-server");
      } catch {}
      if (existsSync(socket)) await sleep(50);
    }
  });
}

const shellQuote = (s) => `'${String(s).replace(/'/g, `'\\''`)}'`;
