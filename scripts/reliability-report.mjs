#!/usr/bin/env node
// Renders docs/reliability.md from the matrix rows the last `npm test` recorded in
// target/reliability/ (one JSON file per case: row, case, result, ms, figures, suite).
// Usage: npm test && node scripts/reliability-report.mjs
import { existsSync, readdirSync, readFileSync, writeFileSync } from "node:fs";
import { dirname, join } from "node:path";
import { fileURLToPath } from "node:url";

const root = join(dirname(fileURLToPath(import.meta.url)), "..");
const resultsDir = join(root, "target", "reliability");
const output = join(root, "docs", "reliability.md");

/** The matrix of issue 7: what each row demands. */
const MATRIX = [
  ["1", "server exits during a call: the in-flight call fails within 1 s, stderr tail in the message"],
  ["2", "server hangs on a call (timeout → `notifications/cancelled`; restarted on next use if it stays unresponsive) and during initialize (connect timeout)"],
  ["3", "server prints non-JSON garbage and oversize lines on stdout"],
  ["4", "server writes 50 MB to stderr: no deadlock, bounded memory"],
  ["5", "server returns a 10 MB result (bounded memory, prompt answer) and a 40 MB one (fails promptly with \"result too large\")"],
  ["6", "server exits at startup / command not found / permission denied"],
  ["7", "tools/list with malformed entries, duplicate names, a repeating cursor, 5,000 tools"],
  ["8", "500 calls with 50 in flight on one server and across 5 servers: 0 lost or mixed-up responses"],
  ["9", "abort mid-call from Pi's signal: returns promptly as aborted, the server is told"],
  ["10", "corrupt, truncated or unreadable cache file: warned, ignored, rewritten; another `version` is backed up first"],
  ["11", "two processes each doing 200 cache updates at once: valid JSON, 0 lost entries"],
  ["12", "config with bad JSON, wrong types, missing command and url (errors), unknown values (warnings)"],
  ["13", "Pi killed with SIGKILL while servers run: 0 processes left"],
  ["14", "HTTP server returning 500s, slow responses, a dropped SSE stream, an expired session"],
  ["S1", "servers are spawned without a shell; arguments are passed as given"],
  ["S2", "secrets never appear in the cache file, status/list texts, error messages or logs"],
  ["S3", "files we create are written atomically, mode 0600 (directories 0700)"],
  ["S4", "regex search cannot be made slow by the pattern (ReDoS against 5,000 tools)"],
  ["S5", "project-level config can launch commands: status shows which file each server came from"],
  // Issue 15 (independent attacks): row H<n> is the item n.
  ["H1", "a config, cache, env or token file that is a FIFO, a link to /dev/zero, a directory or oversize: `open` returns at once with bounded memory, a diagnostic names the file, the rest works; Pi does not freeze"],
  ["H2", "five parallel connects of one server, four times, and the start-up fill racing a connect: no connect fails, one new process per burst, none outlives shutdown, no false `failed` event"],
  ["H3", "a server listing more than the bounds (5,000 tools, 16 MiB per server; lowered in the test): what fits is kept and cached, the cut is said, `list` pages, other servers unaffected"],
  ["H4", "huge metadata (a 2 MB schema, 1 MB description and instructions): every mode's answer within the output guard, the whole text in a private file"],
  ["H5", "answers nested deeper than serde_json reads (a 62-level tool schema, a 100,000-level result) over stdio and Streamable HTTP: a listing drops only the offending entry and says so, a call fails at once, the server serves on"],
  ["H6", "a call after `shutdown()` (Pi's /new or /reload racing a tool call): fails at once, starts nothing"],
  ["H7", "server names that are paths (`../../../outside`, `/abs/dir`): nothing outside `<agentDir>/mcp-oauth` is read, no token is sent"],
  ["H8", "a server's child that left its process group (`detached: true`): stopped with the server on a normal stop, after the server crashed, and when Pi is SIGKILLed (0 processes left)"],
  ["H9", "first-run cache fill of 40 servers: at most min(4, cores) at once, each stopped once listed"],
  ["H10", "one-shot runs (`pi -p`, `--mode json`) with stdio servers and no cache: no server started until the model uses `mcp` (but those whose tools Pi declares, row F3); a fill that started pays off"],
  // Issue 26 (outside checks): row F<n> is the item n.
  ["F2", "a first search over a few dozen and several hundred uncached servers: at most min(4, cores) listed at once, an answer within its wait (5 s; lowered in the test) from what is listed by then, naming how many are still being listed; later searches see more; only a server the model called stays running; doctor's connection check keeps to the same bound and leaves running only what was wanted (F2-doctor); a call by a tool name without a server's prefix starts the server it finds once (F2-unprefixed-call)"],
  ["F3", "one-shot runs of the real Pi (`--mode json`) with servers whose exposure is `direct` and no cache entry: declared in the first request (Pi waits at most 10 s; lowered in the test), the call works, the cache is written and the next run declares from it; a server slower than the wait is declared in the next run; other servers start nothing"],
  ["F4", "hostile server text in the system prompt's server lines (escape sequences, bidi overrides, a megabyte on one line, long words, base64, CJK, emoji) and 300 servers: each line cleaned and ≤ 20 o200k tokens, at most 30 servers named, then \"+N more\""],
  ["F6", "a server or authorization server writing terminal escapes (title, clear, clipboard), C0/C1 controls and bidi overrides in every text it supplies: nothing raw reaches `pi-mcp`'s output, the native API's answers, events and questions, Pi's dialogs, notifications, footer and tool results, mcp.log or a saved file's name; a URL with control characters is refused, a look-alike host shown beside its ASCII form"],
  ["F7", "a call stopped by `callTimeoutMs` while its server's question is open (no call id; inside a 2026-07-28 `input_required` result): the dialog closes, the server gets `notifications/cancelled` and the form `cancel`, the next question is answered"],
  ["F8", "a flood of questions (8 and 1,000 at once from one server, 100 as tasks, 100 from a shared one) and oversized ones (2 MB, 10,000 fields; 60 KB and 50 fields): one dialog at a time, 8 open or waiting per server, the rest and the oversized refused unseen with `-32005`; other servers go on"],
  ["F9", "a prompt with 50,000 arguments (and one with 2) as a slash command: description ≤ 300 characters, usage error ≤ 1,000, 50 completions; the small prompt's whole"],
  ["F10", "`list_mcp_resources` over 3,000 resources (and 3, and every server): pages of ≤ 100 entries, each whole JSON within the output guard, a cursor to the next; a broken or foreign cursor refused"],
  ["F11", "a same-user client flooding the broker (a message just past 16 MiB and 1 GiB without a newline; 2,560 and 256,000 calls that never end; 80 MiB and 1 GiB of answers left unread): dropped at its bound with a note naming its pid and the bound, another session served meanwhile, the broker's peak bounded and its RSS back within 4 MiB once the client left"],
  ["F12", "shared servers with `debug: true` writing 6 MB and 60 MB to stderr: the broker's log rotated while it runs, each part ≤ 5 MB, the newest lines kept"],
  ["F13", "`mcp.log` under load: eight threads of one process, two processes through three rotations, three servers sending 3,000 log messages each at once: each server's lines in the order sent, times never going back, a rotation keeping the newest"],
  ["F14", "`mcp.log`, its lock and the broker's log planted as links to files outside, as a FIFO and a directory: nothing written or created through them, no wait, the refusal naming the file; a broker whose log is a link does not start and the session says why"],
  ["A1", "an MCP App's `_meta.ui.csp` naming the user's machine or network (`http://127.0.0.1:*`, `localhost`, private and link-local addresses, `http://2130706433`): left out of the document's header and said in the server's log"],
  ["A2", "requests to an MCP App's two loopback listeners without the app session's token, with a wrong or cut one, on the other origin, with another `Host` (DNS rebinding), with a used-up launch code: nothing of the session; the address the opener (`$BROWSER`) is given holds no token"],
  ["A3", "an MCP App flooding the user with asks (20 calls at once; 20 that the approval gate asks about): one dialog lists at most 8, the rest wait for the next; after a no, the app's further calls are refused without asking"],
  // Issue 28 (what pi-mcp-adapter users have): row P<n> is the item n.
  ["P1", "a subagent's gated call where its family's UI cannot answer (a stale or forged token, the parent killed while its dialog is open, the subagent killed while its question is shown: the dialog closes) and a rogue member's question (escape sequences, 40 lines of arguments, a grant hash of its own; asked without joining): fails closed at once with `approval_required` saying why, never a hang; the dialog cleaned and bounded; a grant only for what the dialog names; an unjoined asker refused"],
  // Issue 27 (a session's family): its bad cases in the real Pi.
  ["K1", "a member with a stale or forged family token, or a file where the family's socket would be: its own servers after one short connect attempt, one warning, status says why"],
  ["K2", "a subagent SIGKILLed mid-call: the parent and the family's servers carry on, nothing left"],
  ["K3", "the family's host SIGKILLed while a member that outlives it is mid-call: that call fails at once saying why, the member carries on with its own servers, never hangs; nothing left"],
];
/** What building the matrix found, and what was done about it (kept with the generator, not the run). */
const FINDINGS = [
  "Row 5: a result over 16 MiB hung its call until the timeout (rmcp drops the line and keeps waiting). A guard between the server's stdout and rmcp now answers for the dropped line at once: `result_too_large`.",
  "Row 2: a server that stopped answering altogether was kept, so every later call timed out too. After a timeout, the next use now pings it and restarts it when the ping goes unanswered.",
  "S3: the cache, its lock and backups and the npx memo were created 0644 and new directories 0755 (the umask). They are now 0600 and 0700.",
  "S2: a mistyped `env`, `headers` or `args` (a string where an object or array belongs) was quoted in the diagnostic, secret included. Diagnostics now name only the type.",
  "S5: status did not say where a server came from. It now lists each config file with its servers and flags project files, which can launch commands.",
  "H1: a project `.mcp.json` linked to /dev/zero grew the host without bound (2 GB after 3.8 s, still growing) and a FIFO there or at `<agentDir>/mcp.json` blocked `open` forever, so Pi froze on start in such a repo. Files we look for are now opened without blocking, must be regular files and are read up to a cap (config 8 MiB, cache 64 MiB, env and token files 1 MiB); `open` takes ~1 ms with +6 MB peak RSS in that repo.",
  "H2: five parallel `connect`s of one server, four times: each connect closed the connection the others were listing (\"listing its tools failed: connection lost\") and an attempt whose place in the table had been taken installed its process anyway, outside the table, so processes piled up and outlived `shutdown()`. Reconnects of one server now share one new connection, an attempt given up while it ran stops what it opened, and a listing lost to a replaced connection is taken from the new one (no false `failed` event).",
  "H3: every tool a server listed was kept, cached and shown by `list`, however many. A listing now stops at 5,000 tools or 16 MiB per server (what fits is kept and cached; `list` says what was cut) and `list` pages its answer (`limit`, `offset`; 100 tools by default).",
  "H4: `describe` of a tool with a 2 MB schema handed 2.4 MB to the model, and `instructions` all of a server's. Every mode's answer now goes through the output guard (its limits, even where it is off for call results), the whole text in a private file; an oversize schema stays out of `details`.",
  "H5: an answer nested past serde_json's 128 levels (a 62-level tool schema was enough) was dropped by rmcp without notice: the listing timed out after 60 s over stdio, and over Streamable HTTP the session was lost. A byte scan now measures every message before rmcp parses it: a listing loses only the too-deep entries (named in the listing and counted in status), any other answer becomes `result_too_deep` at once. serde_json's limit stays (no `unbounded_depth`).",
  "H6: a call after `shutdown()` started a server that lived until the adapter was garbage-collected. It now fails at once (`shut_down`); a closed pool refuses new connections and stops what an attempt under way opens.",
  "H7: a server named `../../../outside` or `/abs/dir` with `auth: \"oauth\"` read `tokens.json` outside `<agentDir>/mcp-oauth` and sent its token to the configured URL. A name that is not `[A-Za-z0-9_-]+` is now never a path: it becomes `sha256-<hex>`, pi-mcp-adapter's directory for such names.",
  "H8: a server's child started with `detached: true` (its own session, as browser automation servers do) survived `shutdown()`, the server's crash and a SIGKILLed Pi: a signal to the process group misses it. On Linux each stdio server now starts through the helper `pi-mcp-native-helper supervise`, a child subreaper that stops everything below it; each case leaves 0 processes, the real Pi SIGKILLed too (README: what holds on macOS and Windows).",
  "H9: the first-run fill started 10 servers at once and kept each for the 10-minute idle limit. It now starts min(4, cores) at a time and stops each server as soon as it is listed, unless the model wanted it meanwhile.",
  "H10: three one-turn runs of the real Pi (`--mode json`) with three stdio servers and no cache started 3, 2 and 2 servers (the issue saw 3 every run): the fill started at once and Pi exited before most listings were written. In print and JSON mode the fill now waits for the model's first use of `mcp` (the lazy path lists what the model needs), and a fill that started gets up to 2 s at shutdown to finish and be written.",
  // Issue 26 (outside checks): row F<n> is the item n.
  "F2: a first search over uncached servers started every server (10 at a time) and kept them all until the idle stop: 24 servers left 24 running, 300 took 19.6 s and all 300 stayed up. Every listing of servers the model did not name (the fill, search, describe of an unknown name, resource and prompt listings) now goes through one queue at min(4, cores), each server once, each lazy one stopped once listed unless the model called it; a search waits at most 5 s and says how many servers are still being listed, naming three; a server the model names is listed at once beside the queue. Later found on the other paths: doctor's connection check connected 10 servers at a time and left every one running (now under the queue's bound, each lazy one stopped once checked unless the model called it), and with toolPrefix \"none\" a call found its tool through the queue, which stopped the server once listed, so the call started it again (now a call's sought tool keeps its server running).",
  "F3: a one-shot run with a server whose exposure is `direct` and no cache entry declared only `mcp`; the model's call failed (\"Tool mcp__ev__echo not found\") and, as the fill waited for a use of `mcp`, no cache was ever written, so every later run was the same. Servers whose tools Pi declares and the cache lacks are now listed from the session's start (through the listing queue) and Pi's first request waits for them at most 10 s, as Pi's built-in does; one listed later is declared once it is (interactive) or in the next run, from the cache entry written at exit.",
  "F4: the servers reached only through `mcp` were not named in the system prompt, where Pi's own MCP support names its codemode and deferred servers. The prompt's `mcp_servers` section now names them from the config and the metadata cache, each with the first line of its description (else of its instructions), escape sequences, control characters and bidi controls removed, cut to at most 20 o200k tokens by a bound the tokenizer never exceeds (the hostile cases measure 4–18 tokens with gpt-tokenizer), never inside a character shown as `\\u{…}`; 30 servers at most, then \"+N more\"; the same bytes for the same config and cache.",
  "F6: what servers and authorization servers wrote reached people raw: `pi-mcp auth` printed an `error_description`'s escape sequences (retitle, clear, clipboard), `pi-mcp connect` and a failed call a server's stderr, a URL question's control characters reached the dialog and `$BROWSER`, a saved resource kept them in its extension, and tool names, descriptions, instructions, prompts, log lines, progress and questions carried them into status, list, describe, Pi's dialogs and mcp.log. One rule (`src/clean.rs`) now cleans every such text on its way out: escape sequences removed whole, other control characters and bidi overrides shown visibly, newlines kept only where a field may have them; URLs with hidden characters are refused and a look-alike host is shown beside its ASCII form. A sweep of a server that puts them in every text finds none raw through the API, `pi-mcp`, mcp.log or Pi's RPC output.",
  "F7: a call without a call id stopped by `callTimeoutMs` left its form or sampling approval open until shutdown and the server waiting, because only requests with a caller held questions; a question inside an `input_required` result kept its call past the limit. Every call and read now owns its questions, the call's limit bounds the answering of `input_required` too, and a question dropped unanswered is void: the dialog closes at once and the server gets `notifications/cancelled` and `cancel`.",
  "F8: 1,000 questions from one server were 1,000 dialogs at once, and a 10 MB message or a 100,000-field form was shown whole. A session now shows one dialog at a time (the rest wait in order), a server may have 8 questions open or waiting (through the broker too), and an elicitation over 64 KiB or 50 fields, or a sampling request over 4 MiB (system prompt and tools counted), is refused before anyone sees it; refusals are JSON-RPC `-32005` with a message naming the bound.",
  "F9: a 50,000-argument prompt's command had a description of 538,934 characters and a usage error of 1,027,824, and completion offered 50,000 names. The usage names 10 arguments and counts the rest; a description is at most 300 characters (131 here), an error 1,000 (213 here), completions 50.",
  "F10: `list_mcp_resources` answered 3,000 resources at once, and the output guard cut the JSON at 50 KB (its `cursor` was refused). It now pages: at most 100 entries within the guard's bytes, an opaque `nextCursor` and a note; 30 pages of at most 13 KB, each whole JSON, also paged through from a codemode script in Pi 1.5.2 and 1.6.0.",
  "F11: the broker had no bound per connection: 256,000 calls that never end, answers unread, took it from 24 MiB past 2 GiB (stopped there) and 2,164 MiB stayed after the client left; 1 GiB of unread answers peaked at 1,097 MiB; a 1 GiB line was read to 64 MiB (87 MiB peak). Each connection now takes messages of 16 MiB, 256 requests in flight and 64 MiB of answers unread; past one it is dropped (the note names the pid, session, server and bound, a session that reads is told why), and the broker's memory comes back (a fixed mmap threshold and `malloc_trim` after each connection: without them 78–101 MiB stayed). Peaks now 40, 27–28 and 90 MiB, 24–28 MiB after (`bench/broker-flood.mjs`). A session keeps to 128 requests in flight per connection and refuses a request over 16 MiB itself, so 300 parallel calls of one session all run.",
  "F12: the broker's log was rotated only when a broker started, so a shared server with `debug: true` grew it without bound. The detached broker's output now goes through a pipe to a thread that appends whole lines with `mcp.log`'s rule (`.log.1` past 5 MB): 60 MB of stderr leave 2.5 MB and 5 MB.",
  "F13: rmcp handed each log notification to a task of its own, so a burst of 3,000 from one server had 649 lines written before an earlier one, and each line was stamped before waiting for the lock, so times went back and a rotation could drop newer lines than it kept. Log messages are now taken off the transport in the order they come, queued (5 MB at most, the excess counted in a note) and written by one thread at a time under the lock every process takes, stamped as written.",
  "F14: `mcp.log` and the broker's log followed a planted link and appended to its target, and a lock linked to a missing file created it. Lock and log files are now opened with `O_NOFOLLOW` and `O_NONBLOCK` and must be regular files; the refusal names the file and says to remove it (`pi-mcp doctor` shows it for `mcp.log`), and a broker that cannot keep its log does not start.",
  "A1: an MCP App's declared CSP went into its document's header as declared, so a remote server's app could name `http://127.0.0.1:*` or a private address and reach, from the user's browser, the services of the user's machine and network that its server could not. Such sources (in any form a browser reads, `http://2130706433` too) are now left out and said in the server's log; a DNS name that resolves to such an address is not caught by the header (README: MCP Apps, security).",
  "A2: the address given to the opener held the app session's token, so it sat on `$BROWSER`'s command line, and on a browser's it started for as long as that browser ran, where the machine's other users can read it (`/proc/<pid>/cmdline`). The opener now gets a one-time code that opens the page once (a GET) and is then used up; the tab then shows the address with the token, which a reload uses.",
  "K2 (found making it): rmcp hands each notification to the handler in a task of its own, so a call's progress reached its caller shuffled (`[2, 1, 3]`) and a session's count of the sessions on a shared server could end on an older count; these are now taken off the transport in the order sent, as log messages were.",
];
const records = existsSync(resultsDir)
  ? readdirSync(resultsDir)
      .filter((f) => f.endsWith(".json"))
      .map((f) => JSON.parse(readFileSync(join(resultsDir, f), "utf8")))
  : [];
if (records.length === 0) {
  console.error(`No results in ${resultsDir}: run \`npm test\` first.`);
  process.exit(1);
}
const rowOf = (id) => String(id).match(/^[A-Z]?\d+/)[0];
const seconds = (ms) => (ms < 1000 ? `${ms} ms` : `${(ms / 1000).toFixed(1)} s`);
const cell = (s) => String(s).replaceAll("|", "\\|").replaceAll("\n", " ");

const lines = [
  "# Reliability and security matrix",
  "",
  "Generated by `node scripts/reliability-report.mjs` from the results the last `npm test` recorded",
  "(`__test__/reliability.test.mjs`, `__test__/security.test.mjs`, `__test__/hardening.test.mjs`,",
  "`__test__/core-hardening.test.mjs`, `__test__/first-listing.test.mjs`, the real-Pi abort row of",
  "`__test__/pi-e2e.test.mjs`, the SIGKILL row of `__test__/lifecycle.test.mjs`, and the Rust test of",
  "row 11). Do not edit by hand.",
  "Times are wall clock on the machine that ran the tests (a shared 2-core box, debug build): they show",
  "that each fault ends promptly, they are not benchmarks.",
  "",
  `Run: ${new Date().toISOString().slice(0, 16).replace("T", " ")} UTC, ${process.platform}-${process.arch}, Node ${process.version}.`,
  "",
  "| Row | Demand | Case | Result | Time | Figures |",
  "|---|---|---|---|---|---|",
];
let failed = 0;
for (const [id, demand] of MATRIX) {
  const cases = records.filter((r) => rowOf(r.row) === id).sort((a, b) => String(a.row).localeCompare(String(b.row)));
  if (cases.length === 0) {
    lines.push(`| ${id} | ${cell(demand)} | — | not run | — | — |`);
    continue;
  }
  cases.forEach((c, i) => {
    if (c.result !== "pass") failed += 1;
    const result = c.result === "pass" ? "✅ pass" : "❌ FAIL";
    const first = i === 0 ? `${id} | ${cell(demand)}` : ` | `;
    lines.push(`| ${first} | ${cell(c.case)} (${c.row}) | ${result} | ${seconds(c.ms)} | ${cell(c.figures || "")} |`);
  });
}
lines.push("", "## What the matrix found", "", ...FINDINGS.map((f) => `- ${f}`), "");
writeFileSync(output, lines.join("\n"));
console.log(`Wrote ${output}: ${records.length} cases, ${failed} failed.`);
process.exit(failed ? 1 : 0);
