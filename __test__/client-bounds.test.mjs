// Bounds on what servers put before a person or the model, through the native API: questions
// (elicitation, sampling) ended with the call that asked them, a flood of questions, oversized
// questions, prompts with huge argument lists as commands, and thousands of resources listed for
// Pi's resource tools (paged through from a codemode script in the real Pi ≥ 0.99 too). Rows F7
// to F10 of the reliability matrix (issue 26's items 7 to 10).
import { describe } from "node:test";
import assert from "node:assert/strict";
import { existsSync, mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { frontEnd, piModel } from "../extension/pi-mcp-native/front-end.js";
import { row, timed } from "./helpers/matrix.mjs";
import { PI_BUILTIN_MCP, piTest, runPiRpc, toolResultsOf } from "./helpers/pi.mjs";
import { everything, faulty, filledCache, processesIn, root, tapped, text, waitFor, wireOf, withAdapter } from "./helpers/servers.mjs";

const here = import.meta.url;

/** Dialogs that stay open until their signal aborts; `open` and `closed` count them. */
function heldDialogs() {
  const counts = { open: 0, closed: 0 };
  const hold = (_title, _options, { signal }) =>
    new Promise((resolve) => {
      counts.open += 1;
      signal.addEventListener("abort", () => ((counts.closed += 1), resolve(undefined)));
    });
  return { counts, ui: { select: hold, input: hold, confirm: hold, notify: () => {} } };
}

describe("questions end with their call", () => {
  row("F7", "a call stopped by callTimeoutMs while its question is open (no call id): the dialog closes, the server is told", here, async ({ note }) => {
    await withAdapter(
      ({ cwd, home }) => ({ ev: tapped(everything({ cwd, callTimeoutMs: 800 }), join(home, "wire.log")) }),
      async ({ adapter, agent }) => {
        const wire = join(agent.home, "wire.log");
        const held = heldDialogs();
        const model = { hasUI: true, ui: held.ui, model: { id: "m", provider: "p" }, modelRegistry: { getAvailable: () => [], complete: async () => ({}) } };
        adapter.setFrontEnd(frontEnd(adapter, { ui: () => held.ui, runModel: piModel(() => model) }));
        const figures = [];
        for (const [tool, args, kind] of [["ev_trigger-elicitation-request", {}, "form"], ["ev_trigger-sampling-request", { prompt: "x" }, "sampling approval"]]) {
          const opened = held.counts.open + 1;
          const [outcome, ms] = await timed(() => adapter.call(tool, args));
          assert.equal(outcome.details.error, "timeout", text(outcome));
          assert.match(text(outcome), /ran longer than its limit of 0\.8 s \(callTimeoutMs\) and was stopped/);
          assert.equal(held.counts.open, opened, `the ${kind} was shown`);
          const [, closing] = await timed(() => waitFor(() => held.counts.closed === opened, 3000, `the ${kind} to close`));
          figures.push(`${kind}: call stopped after ${ms} ms, its dialog closed ${closing} ms later`);
        }
        // What the server was told: each call cancelled, the form answered cancel, the sampling
        // request an error.
        const answers = (lines) => lines.filter((m) => m.result?.action || m.error);
        const sent = await waitFor(() => {
          const lines = wireOf(wire);
          return lines.filter((m) => m.method === "notifications/cancelled").length === 2 && answers(lines).length === 2 && lines;
        }, 3000, "the server to be told");
        const calls = sent.filter((m) => m.method === "tools/call").map((m) => m.id);
        assert.deepEqual(sent.filter((m) => m.method === "notifications/cancelled").map((m) => m.params.requestId), calls);
        const [form, sampling] = answers(sent);
        assert.equal(form.result?.action, "cancel", JSON.stringify(sent));
        assert.deepEqual(sampling.error, { code: -1, message: "the sampling request was cancelled" });
        // The same server answers the next question.
        adapter.setFrontEnd(frontEnd(adapter, { ui: () => ({ select: async () => "Decline", input: async () => undefined, notify: () => {} }) }));
        assert.match(text(await adapter.call("ev_trigger-elicitation-request", {})), /User declined/);
        assert.equal(wireOf(wire).filter((m) => m.method === "initialize").length, 1);
        note(`${figures.join("; ")}; the server got notifications/cancelled for both calls, the form answered cancel and the sampling request an error; the next question was answered`);
      },
    );
  });
});

/**
 * A front end whose form dialogs stay open until `release()`, then decline; it records how many
 * were open at most at once, how many were shown, and the largest question it was given (bytes
 * of its JSON).
 */
function countingFrontEnd(adapter) {
  const seen = { open: 0, most: 0, shown: 0, largest: 0 };
  let released;
  const releasing = new Promise((resolve) => (released = resolve));
  const ui = {
    select: async () => {
      seen.open += 1;
      seen.shown += 1;
      seen.most = Math.max(seen.most, seen.open);
      await releasing;
      seen.open -= 1;
      return "Decline";
    },
    input: async () => undefined,
    notify: () => {},
  };
  const inner = frontEnd(adapter, { ui: () => ui });
  adapter.setFrontEnd({
    ...inner,
    elicit: (question) => ((seen.largest = Math.max(seen.largest, JSON.stringify(question).length)), inner.elicit(question)),
  });
  return { seen, release: () => released() };
}

const form = { message: "Name?", requestedSchema: { type: "object", properties: { name: { type: "string" } } } };
const declined = 'answer: {"action":"decline"}';
const tooMany = "error -32005: elicitation refused: too many questions: this server has 8 questions open or waiting for an answer already, the most one server may have; nobody was asked. Ask again once one is answered";
/** Our answers on the wire that refused a question with `code`. */
const refusals = (wire, code) => (existsSync(wire) ? wireOf(wire).filter((m) => m.error?.code === code).length : 0);

describe("a flood of questions", () => {
  row("F8", "one server asks 8, then 1,000 questions at once: one dialog at a time, 8 waiting, the rest refused; another server goes on", here, async ({ note }) => {
    await withAdapter(
      ({ cwd, home }) => ({ f: tapped(faulty(["asks"], { cwd }), join(home, "wire.log")), other: faulty(["asks"], { cwd }) }),
      async ({ adapter, agent }) => {
        const wire = join(agent.home, "wire.log");
        const figures = [];
        for (const count of [8, 1000]) {
          const { seen, release } = countingFrontEnd(adapter);
          const before = refusals(wire, -32005);
          const [flood, ms] = await timed(async () => {
            const flooding = adapter.call("f_ask", { method: "elicitation/create", params: form, count });
            await waitFor(() => seen.shown === 1 && refusals(wire, -32005) - before === count - 8, 10_000, `${count - 8} questions refused`);
            // The others wait their turn, and the other server answers meanwhile.
            assert.equal(text(await adapter.call("other_echo", { text: "still here" })), "echo: still here");
            assert.equal(seen.shown, 1, "one dialog open, the rest waiting");
            release();
            return flooding;
          });
          const tally = JSON.parse(text(flood));
          const expected = count > 8 ? { [declined]: 8, [tooMany]: count - 8 } : { [declined]: 8 };
          assert.deepEqual(tally, expected);
          assert.deepEqual([seen.most, seen.shown], [1, 8], JSON.stringify(seen));
          figures.push(`${count} asked: ${seen.shown} shown, at most ${seen.most} at once, ${count - seen.shown} refused (-32005), answered in ${ms} ms`);
        }
        // The other server's question is asked as usual afterwards.
        const { release } = countingFrontEnd(adapter);
        release();
        assert.equal(text(await adapter.call("other_ask", { method: "elicitation/create", params: form })), declined);
        note(`${figures.join("; ")}; the other server answered during the flood`);
      },
    );
  });

  row("F8", "one server asks 100 questions as tasks at once: 8 tasks, the rest refused before any task is made", here, async ({ note }) => {
    await withAdapter(({ cwd }) => ({ f: faulty(["asks"], { cwd }) }), async ({ adapter }) => {
      const { seen, release } = countingFrontEnd(adapter);
      // The questions belong to the calls in flight on the server: one stays while they are asked.
      const holding = adapter.call("f_echo", { text: "held", delayMs: 1500 });
      const tally = JSON.parse(text(await adapter.call("f_ask", { method: "elicitation/create", params: { ...form, task: { ttl: 60_000 } }, count: 100 })));
      const tasks = Object.keys(tally).filter((line) => line.startsWith('answer: {"task":'));
      assert.equal(tasks.length, 8, JSON.stringify(tally));
      assert.equal(tally[tooMany], 92);
      await waitFor(() => seen.shown === 1, 5000, "the first task's dialog");
      release();
      await waitFor(() => seen.shown === 8 && seen.open === 0, 5000, "the tasks' dialogs, one at a time");
      assert.equal(seen.most, 1);
      assert.equal(text(await holding), "echo: held");
      note(`100 asked as tasks: 8 tasks made, 92 refused (-32005) at once; their ${seen.shown} dialogs shown one at a time`);
    });
  });

  row("F8", "a shared server asks 100 questions at once: the broker holds 8, the session shows one at a time", here, async ({ note }) => {
    await withAdapter(
      ({ cwd, home }) => ({ f: tapped(faulty(["asks"], { cwd, shared: true }), join(home, "wire.log")) }),
      async ({ adapter, agent }) => {
        const wire = join(agent.home, "wire.log");
        adapter.setInteractive(true);
        try {
          const { seen, release } = countingFrontEnd(adapter);
          const flooding = adapter.call("f_ask", { method: "elicitation/create", params: form, count: 100 });
          await waitFor(() => seen.shown === 1 && refusals(wire, -32005) === 92, 10_000, "92 questions refused by the broker");
          assert.equal(seen.shown, 1, "one dialog open, the rest waiting");
          release();
          assert.deepEqual(JSON.parse(text(await flooding)), { [declined]: 8, [tooMany]: 92 });
          assert.deepEqual([seen.most, seen.shown], [1, 8], JSON.stringify(seen));
          note(`100 asked through the broker: 92 refused there (-32005), ${seen.shown} shown in the session, at most ${seen.most} at once`);
        } finally {
          await adapter.brokerStop();
        }
      },
    );
  });

  // (A 10 MB message and a 100,000-field form are refused the same way; they take 2.5 and 5.5 s
  // in a debug build, mostly rmcp reading them, so the test sends smaller ones far past the bounds.)
  row("F8", "oversized questions: a 2 MB message and a 10,000-field form are refused unseen, a 60 KB one and a 50-field form are shown whole", here, async ({ note }) => {
    await withAdapter(({ cwd }) => ({ f: faulty(["asks"], { cwd }) }), async ({ adapter }) => {
      const { seen, release } = countingFrontEnd(adapter);
      release();
      const ask = async (extra) => text(await adapter.call("f_ask", { method: "elicitation/create", params: form, ...extra }));
      assert.equal(await ask({ padMB: 2 }), "error -32005: elicitation refused: question too large: it weighs 2.0 MiB, over the 64 KiB limit of a question; nobody was asked. Ask with a shorter message or form");
      assert.equal(await ask({ padFields: 10_000 }), "error -32005: elicitation refused: question too large: its form has 10001 fields, over the limit of 50; nobody was asked. Ask for fewer at a time");
      assert.equal(seen.shown, 0, "nobody was asked");
      assert.equal(await ask({ padMB: 60 / 1024 }), declined);
      assert.equal(await ask({ padFields: 49 }), declined);
      assert.equal(seen.shown, 2);
      assert.ok(seen.largest > 60 * 1024 && seen.largest < 66 * 1024, `the largest question shown: ${seen.largest} bytes`);
      note(`refused unseen: a 2 MB message, 10,001 fields; shown whole: a 60 KB message, 50 fields; the largest question the front end got: ${(seen.largest / 1024).toFixed(1)} KiB`);
    });
  });
});

describe("prompts as commands", () => {
  row("F9", "a prompt with 50,000 arguments: its command's description, usage error and completions are capped; a modest prompt's are whole", here, async ({ note }) => {
    await withAdapter(({ cwd }) => ({ f: faulty(["wide-prompt=50000"], { cwd }) }), async ({ adapter }) => {
      const [listed, ms] = await timed(() => adapter.prompts("f"));
      const commands = Object.fromEntries(adapter.promptCommands().map((c) => [c.prompt, c.description]));
      assert.equal(commands.narrow, "MCP prompt of f — /mcp__f__narrow <city> [state]");
      const few = Array.from({ length: 10 }, (_, i) => `<arg${i}>`).join(" ");
      assert.equal(commands.wide, `A prompt with many arguments — /mcp__f__wide ${few} … and 49990 more`);
      assert.ok(text(listed).length < 1000, `the listing: ${text(listed).length} characters`);

      const modest = await adapter.runPrompt("mcp__f__narrow", "");
      assert.equal(text(modest), "Missing required argument(s): city.\nUsage: /mcp__f__narrow <city> [state]");
      assert.equal(text(await adapter.runPrompt("mcp__f__narrow", "Oslo")), 'narrow: {"city":"Oslo"}');
      const wide = text(await adapter.runPrompt("mcp__f__wide", "first"));
      const missing = Array.from({ length: 10 }, (_, i) => `arg${i + 1}`).join(", ");
      assert.equal(wide, `Missing required argument(s): ${missing} and 49989 more.\nUsage: /mcp__f__wide ${few} … and 49990 more`);
      const named = await adapter.completePrompt("mcp__f__wide", "");
      assert.equal(named.length, 50);
      assert.deepEqual(named.slice(0, 2).map((c) => c.label), ["arg0=", "arg1="]);
      note(`listed in ${ms} ms; description ${commands.wide.length} characters (was 538,934), usage error ${wide.length} characters (was 1,027,824), 50 name completions (were 50,000); the 2-argument prompt's are whole`);
    });
  });
});

describe("Pi's resource tools", () => {
  /** Every page of `tool` from `params` on, following nextCursor: [pages, the texts' lengths]. */
  async function allPages(adapter, tool, params) {
    const pages = [];
    let cursor;
    do {
      const outcome = await adapter.piResourceTool(tool, { ...params, ...(cursor && { cursor }) });
      assert.equal(outcome.isError, false, text(outcome));
      assert.ok(text(outcome).length <= 50 * 1024, `a page of ${text(outcome).length} bytes`);
      const page = JSON.parse(text(outcome)); // never cut mid-JSON
      pages.push(page);
      cursor = page.nextCursor;
      assert.ok(pages.length <= 100, "the pages end");
    } while (cursor);
    return pages;
  }

  row("F10", "list_mcp_resources over 3,000 resources and 3: pages of at most 100, each whole JSON, a cursor to the next; bad cursors refused", here, async ({ note }) => {
    await withAdapter(({ cwd }) => ({ big: faulty(["resources=3000"], { cwd }), small: faulty(["resources=3"], { cwd }) }), async ({ adapter }) => {
      const [pages, ms] = await timed(() => allPages(adapter, "list_mcp_resources", { server: "big" }));
      const uris = pages.flatMap((p) => p.resources.map((r) => r.uri));
      assert.deepEqual(uris, Array.from({ length: 3000 }, (_, i) => `test://r/${i}`), "each resource once, in order");
      assert.ok(pages.every((p) => p.resources.length <= 100 && p.server === "big"));
      assert.equal(pages.length, 30);
      assert.match(pages[0].note, /^Resources 1 to 100 of 3000\. For the next page, call list_mcp_resources with "cursor": the nextCursor above \(and the same "server"\)\.$/);
      assert.equal(pages.at(-1).note, undefined);

      const [few] = await allPages(adapter, "list_mcp_resources", { server: "small" });
      assert.deepEqual(few.resources.map((r) => r.name), ["resource 0", "resource 1", "resource 2"]);
      assert.equal(few.nextCursor, undefined);

      // Every server: the pages run on from one server to the next.
      const every = (await allPages(adapter, "list_mcp_resources", {})).flatMap((p) => p.resources);
      assert.equal(every.length, 3003);
      assert.deepEqual(every.slice(2999, 3001).map((r) => `${r.server} ${r.uri}`), ["big test://r/2999", "small test://r/0"]);

      const bad = await adapter.piResourceTool("list_mcp_resources", { server: "big", cursor: "not-a-cursor" });
      assert.equal(bad.details.error, "invalid_args");
      assert.equal(text(bad), 'list_mcp_resources: the cursor "not-a-cursor" is not one this tool gave; call it without `cursor` for the first page.');
      const elsewhere = await adapter.piResourceTool("list_mcp_resource_templates", { cursor: pages[0].nextCursor });
      assert.match(text(elsewhere), /^list_mcp_resource_templates: this cursor continues list_mcp_resources of server "big"; call that tool with it/);
      note(`3,000 resources in ${pages.length} pages of at most 100 (the largest ${Math.max(...pages.map((p) => JSON.stringify(p).length))} bytes), listed in ${ms} ms; 3 in one page; all servers: 3,003 across pages; a foreign or broken cursor is refused`);
    });
  });
});

// (The prompt's command is the same on Pi 0.87.1: the extension registers what the core gives.)
piTest("a codemode script pages list_mcp_resources through 3,000 resources with its cursor; a 50,000-argument prompt's command is short", { timeout: 120_000, pis: PI_BUILTIN_MCP }, async (pi) => {
  const dir = mkdtempSync(join(tmpdir(), "pi-mcp-native-pages-"));
  try {
    const config = { mcpServers: { big: faulty(["resources=3000", "wide-prompt=50000"], { cwd: dir, exposure: "codemode" }) } };
    const cacheJson = await filledCache(config);
    const script = [
      "let cursor, pages = 0, count = 0;",
      "do {",
      "  const page = await tools.list_mcp_resources({ server: 'big', ...(cursor ? { cursor } : {}) });",
      "  pages += 1; count += page.resources.length; cursor = page.nextCursor;",
      "} while (cursor && pages < 100);",
      "return JSON.stringify({ pages, count });",
    ].join("\n");
    const steps = [{ tool_calls: [{ name: "codemode", arguments: { code: script } }] }, { text: "done" }];
    const r = await runPiRpc({
      pi,
      extensionDir: [root, join(root, "__test__", "fixtures", "pi-registry-extension", "index.mjs"), "builtin:codemode"],
      mcpConfig: config,
      cacheJson,
      script: { steps },
      commands: [{ type: "get_commands" }, "/mcp__big__wide first", "go"],
    });
    assert.equal(r.code, 0, r.stderr);
    const wide = r.perCommand[0].response.data.commands.find((c) => c.name === "mcp__big__wide");
    const few = Array.from({ length: 10 }, (_, i) => `<arg${i}>`).join(" ");
    assert.equal(wide?.description, `A prompt with many arguments — /mcp__big__wide ${few} … and 49990 more`);
    const usage = r.perCommand[1].notifications.map((n) => n.message).join("\n");
    assert.match(usage, /^Missing required argument\(s\): arg1, arg2, .*, arg10 and 49989 more\.\nUsage: \/mcp__big__wide <arg0> .* … and 49990 more$/);
    assert.ok(usage.length <= 1000, `${usage.length} characters`);
    const codemode = toolResultsOf(r.events).find((t) => t.toolName === "codemode");
    assert.equal(codemode.isError, false, codemode.text);
    assert.deepEqual(JSON.parse(codemode.text.match(/\{.*\}/s)[0]), { pages: 30, count: 3000 });
    await waitFor(() => processesIn(dir).length === 0, 5000, "servers to be gone after Pi exits");
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
});
