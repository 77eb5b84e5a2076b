// @ts-check
// Dialogs on a terminal, for the questions servers ask while a `pi-mcp` command runs: the text on
// stderr, the answer from stdin. Empty input in a choice, Ctrl-D or Ctrl-C cancels.
import { createInterface } from "node:readline/promises";

/**
 * `{ select, input, notify }` as Pi's `ctx.ui` has them; `spinner` pauses while one is open.
 * @param {{ pause(): void; resume(): void }} spinner
 * @returns {import("../extension/pi-mcp-native/questions.js").Dialogs}
 */
export function terminalUi(spinner) {
  /** @type {(prompt: string, signal?: AbortSignal) => Promise<string | undefined>} */
  const line = async (prompt, signal) => {
    spinner.pause();
    const rl = createInterface({ input: process.stdin, output: process.stderr, terminal: true });
    // Ctrl-C: cancel the question, then interrupt the command as it would without one.
    rl.on("SIGINT", () => {
      rl.close();
      process.kill(process.pid, "SIGINT");
    });
    try {
      return await rl.question(prompt, { signal });
    } catch {
      return undefined; // closed (Ctrl-D, Ctrl-C) or withdrawn
    } finally {
      rl.close();
      spinner.resume();
    }
  };
  return {
    /** @type {(title: string, options: string[], opts?: { signal?: AbortSignal }) => Promise<string | undefined>} */
    async select(title, options, { signal } = {}) {
      process.stderr.write(`\n${title}\n${options.map((o, i) => `  ${i + 1}) ${o}`).join("\n")}\n`);
      for (;;) {
        const answer = (await line(`Choose 1-${options.length} (empty: cancel): `, signal))?.trim();
        if (!answer) return undefined;
        const n = Number(answer);
        if (Number.isInteger(n) && n >= 1 && n <= options.length) return options[n - 1];
        const named = options.find((o) => o.toLowerCase() === answer.toLowerCase());
        if (named) return named;
      }
    },
    /** @type {(title: string, placeholder?: string, opts?: { signal?: AbortSignal }) => Promise<string | undefined>} */
    async input(title, placeholder, { signal } = {}) {
      process.stderr.write(`\n${title}\n`);
      return line(placeholder ? `[${placeholder}] > ` : "> ", signal);
    },
    notify(text) {
      process.stderr.write(`${text}\n`);
    },
  };
}
