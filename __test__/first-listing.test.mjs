// Issue 26 (outside checks), rows F2 and F3: the first listing of servers the cache does not know.
// F2: a first search over a few dozen and several hundred uncached servers, under the fill's bound.
import { describe } from "node:test";
import assert from "node:assert/strict";
import { cpus } from "node:os";
import { row, timed } from "./helpers/matrix.mjs";
import { FAST, processesIn, sampleProcesses, testServer, text, waitFor, withAdapter } from "./helpers/servers.mjs";

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
          return answer.details.total > first.details.total && answer;
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
          assert.equal(all.details.total, size);
          await waitFor(() => processesIn(agent.cwd).length === 1, 5000, "only the server the model called to stay");
          note(`first search after ${firstMs} ms: ${first.details.total} servers' tools, ${pending} still being listed (named in text and details); describe of an unknown name after ${unknownMs} ms; at most ${peak} alive at once (bound ${bound}); list of ${last} at once (${listedMs} ms); all listed ${allMs} ms later, then only the called server alive`);
        } else {
          note(`first search after ${firstMs} ms: ${first.details.total} servers' tools, ${pending} still being listed (named in text and details); describe of an unknown name after ${unknownMs} ms; ${laterMs} ms later ${later.details.total}; at most ${peak} alive at once (bound ${bound}); list of ${last} at once (${listedMs} ms), not behind the queue`);
        }
      }, { timing: { ...FAST, listWaitMs: LIST_WAIT_MS, healthIntervalMs: 60_000 } });
    });
  }
});
