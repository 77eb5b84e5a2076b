// Scores of the task-shaped search eval: a task is split into needs, each met by any of the tools
// labelled for it; a need is covered when one of them is in the answer's first five lines.
import { bootstrap, mean, wilson } from "./stats.mjs";

/** Scripts told apart, as Unicode names them. Han, Hiragana and Katakana are one (Chinese and
 * Japanese share Han) whose every character counts as a word; the others count runs of letters. */
const SCRIPTS = ["Latin", "Han", "Hiragana", "Katakana", "Hangul", "Cyrillic", "Greek", "Arabic", "Hebrew", "Devanagari", "Thai"];
const BY_CHARACTER = new Set(["Han", "Hiragana", "Katakana"]);
const WORD = new RegExp(SCRIPTS.map((s) => `(\\p{sc=${s}}${BY_CHARACTER.has(s) ? "" : "+"})`).join("|"), "gu");

/** The script most of the words of `texts` are in (`null` without letters). */
export function scriptOf(...texts) {
  const counts = new Map();
  for (const text of texts) {
    for (const match of text.matchAll(WORD)) {
      const script = SCRIPTS[match.slice(1).findIndex(Boolean)];
      const folded = BY_CHARACTER.has(script) ? "Han/kana" : script;
      counts.set(folded, (counts.get(folded) ?? 0) + 1);
    }
  }
  return [...counts].sort((a, b) => b[1] - a[1])[0]?.[0] ?? null;
}

/**
 * Each catalog's script (that of its tools' descriptions) and the script most catalogs are in;
 * a server is described in another script when its script is not that one.
 */
export function catalogScripts(catalogs) {
  const byServer = new Map(catalogs.map(({ server, tools }) => [server, scriptOf(...tools.map((t) => t.description ?? ""))]));
  const tally = new Map();
  for (const script of byServer.values()) tally.set(script, (tally.get(script) ?? 0) + 1);
  const main = [...tally].sort((a, b) => b[1] - a[1])[0]?.[0] ?? null;
  return { byServer, main, other: new Set([...byServer].filter(([, s]) => s !== main).map(([server]) => server)) };
}

/** The needs that count: those labelled with at least one tool. */
export const countedNeeds = (task) => task.needs.filter((n) => n.tools.length);

/**
 * Whether `task` needs a tool described in another script: one of its needs lists a tool of a
 * server in `other` (`serverOf` gives a tool's server), as tasks.json's split counts them.
 */
export function needsOtherScript(task, other, serverOf) {
  return countedNeeds(task).some((n) => n.tools.some((t) => other.has(serverOf(t))));
}

/**
 * A task's needs covered by `lines` (the answer's lines best first, each the names of the tools
 * it stands for: one, or the same tool on several servers): `{ needs, covered }`.
 */
export function coverage(task, lines, depth = 5) {
  const shown = new Set(lines.slice(0, depth).flat());
  const needs = countedNeeds(task);
  return { needs: needs.length, covered: needs.filter((n) => n.tools.some((t) => shown.has(t))).length };
}

/**
 * Task recall@5 (the share of a task's needs covered, averaged over tasks; `recallNeeds`: over
 * all needs) and hit@5 (a task with any need covered) of rows `{ needs, covered, tokens }`.
 */
export function taskSummary(rows) {
  const n = rows.length;
  const recalls = rows.map((r) => r.covered / r.needs);
  const hits = rows.filter((r) => r.covered > 0).length;
  const sum = (key) => rows.reduce((s, r) => s + r[key], 0);
  return {
    tasks: n,
    recallAt5: n ? mean(recalls) : NaN,
    recallInterval: bootstrap(recalls),
    recallNeeds: n ? sum("covered") / sum("needs") : NaN,
    hitAt5: n ? hits / n : NaN,
    hitInterval: wilson(hits, n),
    avgTokens: n ? sum("tokens") / n : NaN,
  };
}

/** The difference of two groups' task recall@5 (`a` − `b`) with its 95 % bootstrap interval. */
export function recallDifference(a, b) {
  const recalls = (rows) => rows.map((r) => r.covered / r.needs);
  const [ra, rb] = [recalls(a), recalls(b)];
  return { difference: mean(ra) - mean(rb), interval: bootstrap(ra, rb) };
}

/**
 * How well "No strong match" tells answers apart, over rows `{ weak, hit }` (`hit`: a needed
 * tool in the first five): of the answers with none, the share flagged weak; of those flagged
 * weak, the share with none.
 */
export function calibration(rows) {
  const missed = rows.filter((r) => !r.hit);
  const flagged = rows.filter((r) => r.weak);
  return {
    missed: missed.length,
    flagged: flagged.length,
    flaggedOfMissed: missed.length ? missed.filter((r) => r.weak).length / missed.length : NaN,
    missedOfFlagged: flagged.length ? flagged.filter((r) => !r.hit).length / flagged.length : NaN,
  };
}
