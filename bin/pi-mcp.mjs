#!/usr/bin/env node
// @ts-check
// `pi-mcp`: your MCP servers from a terminal, through the same native core and the same config
// discovery as the Pi extension. It prints what the core renders (or, with --json, the core's
// outcome object); this file only parses arguments, shows a spinner on a TTY and sets the exit code.
import { createRequire } from "node:module";
import { createInterface } from "node:readline";
import { parseArgs } from "node:util";
import { frontEnd } from "../extension/pi-mcp-native/front-end.js";
import { terminalUi } from "./terminal-ui.mjs";

/** @type {typeof import("../index.js")} */
const { McpAdapter } = createRequire(import.meta.url)("../index.js");
/**
 * @typedef {import("../index.js").McpAdapter} McpAdapter
 * @typedef {import("../index.js").Outcome} Outcome
 */

const USAGE = `Usage: pi-mcp [options] <command> [arguments]

Commands:
  status                          every server: state and tool count (default)
  list <server>                   a server's tools
  search <query> [--regex] [--server <s>] [--limit <n>]
                                  ranked search over every server's tools
  describe <tool> [--server <s>]  a tool's description, parameters, hints and icon
  call <tool> [json-args] [--server <s>] [--timeout <ms>]
                                  call a tool; json-args is a JSON object ('-' reads stdin)
  read <uri> [json-args] [--server <s>]
                                  read a resource; json-args fill a URI template's variables
  prompts [server]                every server's (or one's) prompts, each as its Pi command
  prompt <server> <name> [json-args]
                                  the messages of a prompt, its arguments as a JSON object
  connect <server>                (re)connect a server and refresh its cached tools
  auth <server>                   sign in to an OAuth server (a browser opens; over SSH, paste
                                  the address it ends on), then connect it
  logout <server>                 sign out: revoke the tokens where the server offers it, delete them
  doctor [--offline]              every config source, the merged servers and where each came
                                  from, every problem, and a timed connection to each server
  broker status|stop              the shared-server broker: its servers and sessions; stop it
                                  (and its servers)
  setup [--import <tools>] [--copy <tools>] [--add <servers>] [--project] [--dry-run] [--yes]
                                  without choices: the MCP configs of your other tools (Cursor,
                                  Claude Code, Claude Desktop, VS Code, Windsurf, Codex, OpenCode)
                                  and what each would add, and well-known servers; with them: the
                                  change to ~/.pi/agent/mcp.json (--project: .pi/mcp.json), shown,
                                  then written once confirmed (--yes without a terminal)
  add <name> [options] --url <url>
  add <name> [options] -- <command> [args...]
                                  add a server with \`pi mcp add\`'s options (-l/--local: the
                                  project's .pi/mcp.json); it is connected and listed (and signed
                                  in to, when it asks) first, and saved only if that works
                                  (--dry-run: only tried)

Options:
  --config <path>   use this file instead of ~/.pi/agent/mcp.json (like pi --mcp-config)
  --approve         use the project's configs (.mcp.json, .pi/mcp.json, ...) even if Pi does
                    not trust this project
  --no-approve      leave the project's configs out (default: Pi's saved decision, else used)
  --auth            sign in by itself when a server asks for it, then retry (settings.autoAuth)
  --yes             run what approveTools asks about without asking (refused inside a Pi
                    session, unless settings.allowYesInsidePi in your own config allows it)
  --json            print the result as JSON: { content, details, isError }
  -h, --help        this text

Exit codes: 0 success; 1 the command failed (unknown tool or server, failed connection, the
tool reported an error; doctor: a server failed or a config has an error); 2 bad usage.`;

const ARGS = {
  broker: ["status|stop"],
  list: ["server"],
  search: ["query"],
  describe: ["tool"],
  call: ["tool"],
  read: ["uri"],
  prompts: [],
  prompt: ["server", "name"],
  connect: ["server"],
  auth: ["server"],
  logout: ["server"],
};
/** Arguments a command takes beyond the ones it needs. */
const OPTIONAL = { call: 1, read: 1, prompts: 1, prompt: 1 };

class UsageError extends Error {}

/** Options of pi-mcp itself that take a value (before a command). */
const VALUED = new Set(["--config", "--mcp-config", "--server", "--limit", "--timeout"]);
/** Commands whose words after them are theirs, in `pi mcp add`'s syntax: given to the core as they are. */
const RAW = new Set(["add"]);

/** Splits off a command that takes its own options: the words before it, and its own words. */
function rawCommand(argv) {
  for (let i = 0; i < argv.length; i++) {
    if (VALUED.has(argv[i])) i++;
    else if (!argv[i].startsWith("-")) return RAW.has(argv[i]) ? { before: argv.slice(0, i), command: argv[i], own: argv.slice(i + 1) } : undefined;
  }
  return undefined;
}

function parse(argv) {
  const raw = rawCommand(argv);
  if (raw) {
    // --dry-run and --json are pi-mcp's, wherever they stand before `--`.
    const end = raw.own.includes("--") ? raw.own.indexOf("--") : raw.own.length;
    const ours = raw.own.slice(0, end).filter((w) => w === "--dry-run" || w === "--json");
    const own = [...raw.own.slice(0, end).filter((w) => !ours.includes(w)), ...raw.own.slice(end)];
    const { values } = parse(raw.before);
    return { command: raw.command, rest: own, values: { ...values, json: values.json || ours.includes("--json"), "dry-run": ours.includes("--dry-run") } };
  }
  const { values, positionals } = parseArgs({
    args: argv,
    allowPositionals: true,
    options: {
      config: { type: "string" },
      "mcp-config": { type: "string" },
      approve: { type: "boolean" },
      "no-approve": { type: "boolean" },
      json: { type: "boolean" },
      auth: { type: "boolean" },
      yes: { type: "boolean" },
      help: { type: "boolean", short: "h" },
      regex: { type: "boolean" },
      server: { type: "string" },
      limit: { type: "string" },
      timeout: { type: "string" },
      offline: { type: "boolean" },
      project: { type: "boolean" },
      import: { type: "string" },
      copy: { type: "string" },
      add: { type: "string" },
      "dry-run": { type: "boolean" },
    },
  });
  const [command = "status", ...rest] = positionals;
  if (!(command in ARGS) && !["status", "doctor", "help", "setup"].includes(command)) {
    throw new UsageError(`unknown command "${command}"`);
  }
  const needed = ARGS[command] ?? [];
  if (rest.length < needed.length) throw new UsageError(`${command}: missing <${needed[rest.length]}>`);
  const allowed = command === "search" ? Infinity : needed.length + (OPTIONAL[command] ?? 0);
  if (rest.length > allowed) throw new UsageError(`${command}: unexpected argument "${rest[allowed]}"`);
  if (command === "broker" && !["status", "stop"].includes(rest[0])) throw new UsageError(`broker: "${rest[0]}" is neither status nor stop`);
  return { command, rest, values };
}

function count(option, text) {
  if (text === undefined) return undefined;
  const n = Number(text);
  if (!Number.isInteger(n) || n < 1) throw new UsageError(`--${option} must be a whole number above 0, got "${text}"`);
  return n;
}

async function callArgs(text) {
  if (text === undefined) return {};
  if (text === "-") {
    const chunks = [];
    for await (const chunk of process.stdin) chunks.push(chunk);
    text = Buffer.concat(chunks).toString("utf8");
  }
  let args;
  try {
    args = JSON.parse(text);
  } catch (e) {
    throw new UsageError(`json-args is not valid JSON (${e.message}); pass an object like '{"a": 1}'`);
  }
  if (args === null || typeof args !== "object" || Array.isArray(args)) {
    throw new UsageError(`json-args must be a JSON object like '{"a": 1}', got ${Array.isArray(args) ? "an array" : typeof args}`);
  }
  return args;
}

/** A spinner on stderr, only when stderr is a terminal; paused while a question is asked. */
function spinner(label) {
  if (!label || !process.stderr.isTTY) return { set() {}, stop() {}, pause() {}, resume() {} };
  const frames = "⠋⠙⠹⠸⠼⠴⠦⠧⠇⠏";
  let i = 0;
  let timer;
  let stopped = false;
  const draw = () => process.stderr.write(`\r\x1b[K${frames[i++ % frames.length]} ${label}`);
  const resume = () => {
    if (stopped) return;
    draw();
    timer = setInterval(draw, 80);
  };
  const pause = () => {
    clearInterval(timer);
    process.stderr.write("\r\x1b[K");
  };
  resume();
  return {
    set(text) {
      label = text;
    },
    stop() {
      stopped = true;
      pause();
    },
    pause,
    resume,
  };
}

/**
 * @param {McpAdapter} adapter
 * @param {{ command: string; rest: string[]; values: Record<string, any> }} parsed
 * @param {ReturnType<typeof spinner>} spin
 * @param {string} callId
 * @returns {Promise<Outcome>}
 */
async function run(adapter, { command, rest, values }, spin, callId) {
  switch (command) {
    case "status":
      return adapter.status();
    case "list":
      return adapter.list(rest[0]);
    case "search":
      return adapter.search(rest.join(" "), { regex: values.regex, server: values.server, limit: count("limit", values.limit) });
    case "describe":
      return adapter.describe(rest[0], values.server, true);
    case "call": {
      const args = await callArgs(rest[1]);
      return adapter.call(rest[0], args, { server: values.server, callId, timeoutMs: count("timeout", values.timeout) });
    }
    case "read":
      return adapter.execute({ read: rest[0], server: values.server, args: await callArgs(rest[1]) }, callId);
    case "prompts":
      return adapter.prompts(rest[0]);
    case "prompt":
      return adapter.getPrompt(rest[0], rest[1], await callArgs(rest[2]));
    case "connect":
      return adapter.connect(rest[0]);
    case "auth":
      return adapter.login(rest[0]);
    case "logout":
      return adapter.logout(rest[0]);
    case "doctor":
      return adapter.doctor(!values.offline);
    case "broker":
      return rest[0] === "stop" ? adapter.brokerStop() : adapter.brokerStatus();
    case "add":
      return adapter.addServer(rest, values["dry-run"]);
    case "setup":
      return setup(adapter, values, spin);
    default:
      throw new UsageError(`unknown command "${command}"`); // parse() lets none through
  }
}

/** Words of a comma-separated option. */
const list = (text) => (text ?? "").split(",").map((s) => s.trim()).filter(Boolean);

/**
 * `pi-mcp setup`: the plan without choices; with them the change, written only once confirmed
 * (`--yes`, or a "y" on a terminal).
 */
/**
 * @param {McpAdapter} adapter
 * @param {Record<string, any>} values
 * @param {ReturnType<typeof spinner>} spin
 * @returns {Promise<Outcome>}
 */
async function setup(adapter, values, spin) {
  const choice = { imports: list(values.import), copy: list(values.copy), add: list(values.add), project: values.project };
  if (!choice.imports.length && !choice.copy.length && !choice.add.length) return adapter.setupPlan(values.project);
  const preview = adapter.setupApply({ ...choice, dryRun: true });
  if (preview.isError || values["dry-run"] || !preview.details.preview) return preview;
  if (!values.yes) {
    spin.stop();
    const { text: change } = /** @type {{ text: string }} */ (preview.content[0]);
    if (!(process.stdin.isTTY && process.stderr.isTTY)) {
      const text = `${change}
Nothing was written: run again with --yes to write it.`;
      return { ...preview, content: [{ type: "text", text }], isError: true };
    }
    process.stderr.write(`${change}
`);
    const lines = createInterface({ input: process.stdin, output: process.stderr });
    const answer = await new Promise((resolve) => lines.question("Write it? [y/N] ", resolve));
    lines.close();
    if (!/^y(es)?$/i.test(answer.trim())) return { ...preview, content: [{ type: "text", text: "Nothing was written." }] };
  }
  return adapter.setupApply(choice);
}

const LABELS = {
  search: "searching",
  describe: "looking up",
  call: "calling",
  read: "reading",
  prompts: "listing prompts",
  prompt: "getting the prompt",
  connect: "connecting",
  doctor: "checking servers",
  list: "listing",
  logout: "signing out",
  add: "connecting",
};

/** Progress of the call on the spinner; a sign-in's browser step on stderr, with lines typed on a
 * terminal pasted into it. */
/**
 * @param {McpAdapter} adapter
 * @param {ReturnType<typeof spinner>} spin
 * @param {string} callId
 */
function showEvents(adapter, spin, callId) {
  let lines;
  adapter.onEvent((event) => {
    if ("callId" in event && event.callId === callId) {
      spin.set(event.text); // progress of this call
    } else if ("prompt" in event) {
      // A sign-in waits for its browser step.
      spin.stop();
      process.stderr.write(`${event.text}\n`);
      if (process.stdin.isTTY && !lines) {
        lines = createInterface({ input: process.stdin, output: process.stderr });
        lines.setPrompt(`${event.prompt}: `);
        lines.prompt();
        lines.on("line", (text) => text.trim() && adapter.paste(event.server, text));
      }
    } else if ("signedIn" in event) {
      lines?.close();
      lines = undefined;
    }
  });
  return () => lines?.close();
}

/**
 * Characters JSON leaves as they are that a terminal acts on or that reorder or hide text (C1
 * controls, DEL, bidi and invisible format characters, line separators, tags): `--json` writes
 * them as `\u` escapes, so the JSON stays exact and nothing in it reaches the terminal raw.
 */
const UNSAFE_IN_JSON = /[\u007f-\u009f\u00ad\u061c\u200b-\u200f\u2028-\u202e\u2060-\u206f\ufeff\ufff9-\ufffb]|\udb40[\udc00-\udc7f]/g;
const escapeUnit = (unit) => `\\u${unit.charCodeAt(0).toString(16).padStart(4, "0")}`;

/**
 * @param {Outcome} outcome
 * @param {boolean} json
 */
function print(outcome, json) {
  if (json) {
    const text = JSON.stringify(outcome, null, 2).replace(UNSAFE_IN_JSON, (m) => m.split("").map(escapeUnit).join(""));
    process.stdout.write(`${text}\n`);
    return;
  }
  const blocks = outcome.content.map((c) => (c.type === "text" ? c.text : `[${c.type} ${c.mimeType ?? ""}, ${Buffer.byteLength(c.data ?? "", "base64")} bytes]`));
  process.stdout.write(`${blocks.join("\n")}\n`);
}

async function main() {
  let parsed;
  try {
    parsed = parse(process.argv.slice(2));
  } catch (e) {
    process.stderr.write(`pi-mcp: ${e.message}\n\n${USAGE}\n`);
    return 2;
  }
  if (parsed.values.help || parsed.command === "help") {
    process.stdout.write(`${USAGE}\n`);
    return 0;
  }
  const { values } = parsed;
  if (values.approve && values["no-approve"]) {
    process.stderr.write("pi-mcp: --approve and --no-approve contradict each other\n");
    return 2;
  }
  const adapter = McpAdapter.open({
    cwd: process.cwd(),
    configPath: values.config ?? values["mcp-config"],
    projectTrusted: values.approve ? true : values["no-approve"] ? false : undefined,
    cli: true,
    autoAuth: values.auth ? true : undefined,
    assumeYes: values.yes ?? false,
  });
  const callId = `pi-mcp-${process.pid}`;
  const spin = spinner(LABELS[parsed.command] && `${LABELS[parsed.command]}…`);
  const stopSignIns = showEvents(adapter, spin, callId);
  // Servers may ask questions on a terminal; without one the `elicitation` setting answers, and
  // a tool approveTools asks about does not run. There is no model here: sampling requests are
  // refused.
  const tty = process.stdin.isTTY && process.stderr.isTTY;
  adapter.setFrontEnd(frontEnd(adapter, { ui: () => (tty ? terminalUi(spin) : undefined) }));
  const interrupt = () => {
    adapter.cancel(callId);
    spin.stop();
    adapter.shutdown().finally(() => process.exit(130));
  };
  process.once("SIGINT", interrupt);
  try {
    const outcome = await run(adapter, parsed, spin, callId);
    spin.stop();
    print(outcome, values.json);
    // Words that do not fit a command's syntax (add, setup) are bad usage, as for pi-mcp's own.
    return outcome.details?.error === "bad_usage" ? 2 : outcome.isError ? 1 : 0;
  } catch (e) {
    spin.stop();
    if (!(e instanceof UsageError)) throw e;
    process.stderr.write(`pi-mcp: ${e.message}\n`);
    return 2;
  } finally {
    process.off("SIGINT", interrupt);
    stopSignIns();
    await adapter.shutdown();
  }
}

process.exitCode = await main();
