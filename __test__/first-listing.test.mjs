// Issue 26 (outside checks), rows F2 and F3: the first listing of servers the cache does not know.
// F2: a first search over a few dozen and several hundred uncached servers, under the fill's bound.
// F3: one-shot runs of the real Pi with servers whose tools it must declare and no cache entry;
// and an interactive session (RPC) that declares them once they are listed.
import { describe } from "node:test";
import assert from "node:assert/strict";
import { existsSync, mkdtempSync, readFileSync, rmSync } from "node:fs";
import { cpus, tmpdir } from "node:os";
import { join } from "node:path";
import { row, timed } from "./helpers/matrix.mjs";
import { assertRan, PI_VERSIONS, piTest, runPi, runPiRpc, toolResultsOf } from "./helpers/pi.mjs";
import { everything, FAST, faulty, processesIn, root, sampleProcesses, testServer, text, waitFor, withAdapter } from "./helpers/servers.mjs";

const here = import.meta.url;
/** The first search's wait for servers being listed, lowered from its default for the test. */
const LIST_WAIT_MS = 300;
/** Lists at once: min(4, cores), as the first-run fill. */
const bound = Math.min(4, cpus().length);

/** `size` uncached test servers `s0`…, each answering `initialize` after 100 ms. */
const uncached = (size) => ({ cwd }) => Object.fromEntries(Array.from({ length: size }, (_, i) => [`s${i}`, testServer(["slow-init=100"], { cwd })]));

/** The search's answer while servers are still being listed: what the model reads of it. */
function stillListing(outcome, size) {
  const listing = outcome.details.listing;
  assert.ok(listing?.pending > 0 && listing.pending <= size, `${JSON.stringify(outcome.details)}\n${text(outcome)}`);
  assert.ok(listing.servers.length >= 1 && listing.servers.length <= 3, JSON.stringify(listing));
  const more = listing.pending - listing.servers.length;
  const names = listing.servers.join(", ") + (more > 0 ? ` and ${more} more` : "");
  assert.ok(text(outcome).includes(`${listing.pending} MCP servers are still being listed (${names})`), text(outcome));
  return listing.pending;
}

/** The servers a search's answer covers: each hit's and its twins' (the same tool on several servers is one hit). */
const serversIn = (answer) => new Set(answer.details.matches.flatMap((m) => [m.server, ...(m.also ?? []).map((a) => a.server)])).size;

/** Searches until nothing is being listed any more; the last answer. */
async function searchUntilListed(adapter) {
  return waitFor(async () => {
    const answer = await adapter.execute({ search: "echo" });
    return answer.details.listing ? undefined : answer;
  }, 30_000, "every server listed");
}

describe("reliability matrix: the first listing of uncached servers", () => {
  for (const size of [24, 300]) {
    row(`F2-${size}`, `first search over ${size} uncached servers`, here, async ({ note }) => {
      await withAdapter(uncached(size), async ({ adapter, agent }) => {
        const most = sampleProcesses(agent.cwd);
        const [first, firstMs] = await timed(() => adapter.execute({ search: "echo" }));
        assert.ok(firstMs < LIST_WAIT_MS + 2000, `the first search answered after ${firstMs} ms`);
        const pending = stillListing(first, size);
        const [unknown, unknownMs] = await timed(() => adapter.execute({ describe: "nonesuch" }));
        assert.equal(unknown.details.error, "tool_not_found", text(unknown));
        assert.ok(unknownMs < LIST_WAIT_MS + 2000, `describe of an unknown name answered after ${unknownMs} ms`);
        assert.match(text(unknown), /MCP servers are still being listed/);
        const [later, laterMs] = await timed(() => waitFor(async () => {
          const answer = await adapter.execute({ search: "echo" });
          return serversIn(answer) > serversIn(first) && answer;
        }, 10_000, "a later search to see more"));
        const peak = await most();
        assert.ok(peak <= bound, `${peak} servers alive at once (bound ${bound})`);
        // A server the model names is listed at once, not behind the queue; a call keeps its server.
        const last = `s${size - 1}`;
        const [listed, listedMs] = await timed(() => adapter.execute({ server: last }));
        assert.match(text(listed), new RegExp(`^${last}: 8 tools`), text(listed));
        assert.ok(listedMs < 3000, `list of ${last} answered after ${listedMs} ms`);
        const called = await adapter.execute({ tool: "s0_echo", args: { text: "kept" } });
        assert.equal(text(called), "echo: kept");
        if (size < 100) {
          const [all, allMs] = await timed(() => searchUntilListed(adapter));
          assert.equal(serversIn(all), size);
          await waitFor(() => processesIn(agent.cwd).length === 1, 5000, "only the server the model called to stay");
          note(`first search after ${firstMs} ms: ${serversIn(first)} servers' tools, ${pending} still being listed (named in text and details); describe of an unknown name after ${unknownMs} ms; at most ${peak} alive at once (bound ${bound}); list of ${last} at once (${listedMs} ms); all listed ${allMs} ms later, then only the called server alive`);
        } else {
          note(`first search after ${firstMs} ms: ${serversIn(first)} servers' tools, ${pending} still being listed (named in text and details); describe of an unknown name after ${unknownMs} ms; ${laterMs} ms later ${serversIn(later)}; at most ${peak} alive at once (bound ${bound}); list of ${last} at once (${listedMs} ms), not behind the queue`);
        }
      }, { timing: { ...FAST, listWaitMs: LIST_WAIT_MS, healthIntervalMs: 60_000 } });
    });
  }
});

describe("reliability matrix: the other paths that start uncached servers", () => {
  // Doctor reconnects every server for its timings: at most min(4, cores) at once, and a lazy
  // server it started is stopped once checked, unless the model called it.
  for (const size of [8, 60]) {
    row(`F2-doctor-${size}`, `doctor's connection check over ${size} uncached servers`, here, async ({ note }) => {
      await withAdapter(uncached(size), async ({ adapter, agent }) => {
        const called = await adapter.execute({ tool: "s0_echo", args: { text: "wanted" } });
        assert.equal(text(called), "echo: wanted");
        const most = sampleProcesses(agent.cwd);
        const [report, reportMs] = await timed(() => adapter.doctor(true));
        const peak = await most();
        assert.equal(report.details.configured.filter((s) => s.connect?.ok).length, size, text(report));
        // s0, which the model called, keeps running beside the ones being checked.
        assert.ok(peak <= bound + 1, `${peak} servers alive at once (bound ${bound}, +1 the model called)`);
        await waitFor(() => processesIn(agent.cwd).length === 1, 5000, "only the server the model called to stay");
        const kept = await adapter.execute({ tool: "s0_echo", args: { text: "still" } });
        assert.equal(text(kept), "echo: still");
        note(`doctor checked ${size} servers in ${reportMs} ms, at most ${peak} alive at once (bound ${bound} + the called one); then only the called server alive`);
      }, { timing: { ...FAST, healthIntervalMs: 60_000 } });
    });
  }

  // With toolPrefix "none" a tool's name does not say its server: the call lists the unknown
  // servers through the queue, and the server it finds there must not be stopped and started again.
  row("F2-unprefixed-call", "a call by an unprefixed tool name (toolPrefix none) over uncached servers", here, async ({ note }) => {
    const dir = mkdtempSync(join(tmpdir(), "pi-mcp-native-unprefixed-"));
    const starts = () => readFileSync(join(dir, "starts"), "utf8").split("\n").filter(Boolean).length;
    try {
      const servers = ({ cwd }) => ({
        ...Object.fromEntries(Array.from({ length: 6 }, (_, i) => [`o${i}`, faulty(["many-tools=2"], { cwd })])),
        target: faulty([], { cwd, env: { FAULT_STARTS: join(dir, "starts") } }),
      });
      await withAdapter(servers, async ({ adapter, agent }) => {
        const called = await adapter.execute({ tool: "echo", args: { text: "once" } });
        assert.equal(text(called), "echo: once", text(called));
        const again = await adapter.execute({ tool: "echo", args: { text: "twice" } });
        assert.equal(text(again), "echo: twice");
        assert.equal(starts(), 1, "the server the call found was started again");
        await waitFor(() => processesIn(agent.cwd).length === 1, 5000, "only the called server to stay");
        note("echo found on 1 of 7 uncached servers through the queue: called on the process its listing started (1 start), the others stopped");
      }, { settings: { toolPrefix: "none" }, timing: { ...FAST, healthIntervalMs: 60_000 } });
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  });
});

/** A private HOME for Pi runs that share an agent dir (its metadata cache); removed by `done()`. */
function piHome() {
  const home = mkdtempSync(join(tmpdir(), "pi-mcp-native-declare-"));
  const cachePath = join(home, ".pi", "agent", "mcp-cache.json");
  return {
    home,
    cachePath,
    cached: () => (existsSync(cachePath) ? JSON.parse(readFileSync(cachePath, "utf8")).servers : {}),
    starts: (name) => (existsSync(join(home, name)) ? readFileSync(join(home, name), "utf8").split("\n").filter(Boolean).length : 0),
    done: () => rmSync(home, { recursive: true, force: true }),
  };
}

/** The tools Pi declared in request `i` to the fake LLM. */
const declared = (r, i = 0) => (r.requests[i]?.body.tools ?? []).map((t) => t.function.name);

/** How long Pi's first request waits for declared servers, lowered in the slow cases (10 s by default). */
const STARTUP_WAIT_MS = 200;

describe("reliability matrix: tools Pi must declare, without a cache", () => {
  for (const pi of PI_VERSIONS) {
    row(`F3-${pi}`, `one-shot runs of the real Pi ${pi} (--mode json): servers whose exposure is direct, no cache entry`, here, async ({ note }) => {
      const fast = piHome();
      const slow = piHome();
      try {
        // A real server, listed within the 10 s wait: declared in the first request, called, cached.
        const evConfig = { mcpServers: { ev: everything({ cwd: fast.home, exposure: "direct" }) } };
        const call = { tool_calls: [{ name: "mcp__ev__echo", arguments: { message: "declared" } }] };
        const first = await runPi({ pi, home: fast.home, extensionDir: root, mcpConfig: evConfig, script: { steps: [call, { text: "done" }] } });
        assertRan(first);
        assert.ok(declared(first).includes("mcp__ev__echo"), `Pi ${pi}'s first request declared ${JSON.stringify(declared(first))}`);
        const [echo] = toolResultsOf(first.events);
        assert.equal(echo?.text, "Echo: declared", JSON.stringify(first.toolResults));
        assert.equal(echo.isError, false);
        const cachedAt = fast.cached().ev?.cachedAt;
        assert.ok(cachedAt, "the run wrote the cache");
        const second = await runPi({ pi, home: fast.home, extensionDir: root, mcpConfig: evConfig, script: { steps: [{ text: "no tools needed" }] } });
        assertRan(second);
        assert.ok(declared(second).includes("mcp__ev__echo"), "declared from the cache in the next run");
        assert.equal(fast.cached().ev.cachedAt, cachedAt, "not listed again");
        assert.equal(second.leftover, false);

        // A server slower than the (lowered) wait: not in this run's first request, declared in the next
        // run from the cache this run wrote; a server whose tools are not declared starts nothing.
        const slowConfig = {
          settings: { startupWaitMs: STARTUP_WAIT_MS },
          mcpServers: {
            slow: faulty(["slow-init=1000"], { cwd: slow.home, exposure: "direct", env: { FAULT_STARTS: join(slow.home, "slow") } }),
            other: faulty([], { cwd: slow.home, env: { FAULT_STARTS: join(slow.home, "other") } }),
          },
        };
        const late = await runPi({ pi, home: slow.home, extensionDir: root, mcpConfig: slowConfig, script: { steps: [{ text: "no tools needed" }] } });
        assertRan(late);
        assert.ok(!declared(late).includes("mcp__slow__echo"), "listed after the wait, yet declared");
        assert.ok(late.timing.firstRequestMs < 10_000, `the first request went after ${late.timing.firstRequestMs} ms`);
        assert.match(late.stderr, /1 MCP server is still being listed \(slow\)/);
        assert.equal(slow.starts("other"), 0, "a server whose tools are not declared started in a run without MCP");
        assert.ok(slow.cached().slow, "the slow server's listing finished at exit and was cached");
        const next = await runPi({ pi, home: slow.home, extensionDir: root, mcpConfig: slowConfig, script: { steps: [{ tool_calls: [{ name: "mcp__slow__echo", arguments: { text: "next run" } }] }, { text: "done" }] } });
        assertRan(next);
        assert.ok(declared(next).includes("mcp__slow__echo"), "declared in the next run");
        assert.equal(toolResultsOf(next.events)[0]?.text, "echo: next run");
        note(`server-everything (exposure direct, no cache): declared in the first request (after ${first.timing.firstRequestMs} ms), called, cached; next run declared it from the cache without listing it. A server slower than the wait (${STARTUP_WAIT_MS} ms here, 10 s by default): first request after ${late.timing.firstRequestMs} ms without it, said on stderr, cached at exit, declared and called in the next run; the non-declared server started 0 times`);
      } finally {
        fast.done();
        slow.done();
      }
    });
  }

  piTest("an interactive session (RPC): declared servers listed within the wait are in the first request, a slower one in the next", { timeout: 60_000 }, async (pi) => {
    const box = piHome();
    try {
      const config = {
        settings: { startupWaitMs: 1000 },
        mcpServers: {
          quick: testServer([], { cwd: box.home, exposure: "direct" }),
          slow: faulty(["slow-init=2000"], { cwd: box.home, exposure: "direct" }),
        },
      };
      const listed = () => waitFor(() => box.cached().slow, 10_000, "the slow server to be listed");
      const r = await runPiRpc({ pi, home: box.home, extensionDir: root, mcpConfig: config, commands: ["first", listed, "second"] });
      assertRan(r);
      assert.ok(declared(r, 0).includes("mcp__quick__echo"), `the first request declared ${JSON.stringify(declared(r, 0))}`);
      assert.ok(!declared(r, 0).includes("mcp__slow__echo"), "listed after the wait, yet declared in the first request");
      assert.ok(declared(r, 1).includes("mcp__slow__echo"), `the next request declared ${JSON.stringify(declared(r, 1))}`);
      assert.ok(r.notifications.some((n) => /1 MCP server is still being listed \(slow\)/.test(n.message)), JSON.stringify(r.notifications));
    } finally {
      box.done();
    }
  });
});
