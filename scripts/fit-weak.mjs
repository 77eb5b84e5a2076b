#!/usr/bin/env node
// Fits the model that says a task's search answer is a weak match ("No strong match";
// crates/core/src/search/weak.rs): a logistic regression of "no needed tool in the first five hits" on the
// four signals the search reports in `details.signals`, over the task eval's tuning split only,
// and the chance of a miss from which an answer is flagged: of those that flag at least 70 % of
// the tuning split's misses, the one whose flagged answers miss most often. Prints the model as
// weak.rs holds it and its figures on the tuning split; `node bench/search-eval.mjs` checks it
// on the held-out split. Deterministic: plain gradient descent on standardized signals.
// Usage: node scripts/fit-weak.mjs (with a build of the current ranking)
import { evaluateTasks, loadTasks } from "../bench/search-eval.mjs";

const ROUNDS = 5000;
const STEP = 0.1;
const RIDGE = 0.01;
const FLAGGED_OF_MISSED = 0.7;
/** weak.rs's TASK_TERMS: the model judges tasks of at least this many terms (every tuning task). */
const TASK_TERMS = 6;

/** The model's features of an answer's signals, in weak.rs's order. */
const features = (s) => [s.strength, s.firstShare, Math.log1p(s.firstScore), s.fifthOfFirst];

/** Weights and bias of a logistic regression of `y` (0/1) on `x`, in `x`'s own units. */
function fit(x, y) {
  const k = x[0].length;
  const mean = Array.from({ length: k }, (_, j) => x.reduce((s, r) => s + r[j], 0) / x.length);
  const sd = mean.map((m, j) => Math.sqrt(x.reduce((s, r) => s + (r[j] - m) ** 2, 0) / x.length) || 1);
  const z = x.map((r) => r.map((v, j) => (v - mean[j]) / sd[j]));
  let w = new Array(k).fill(0);
  let b = 0;
  for (let round = 0; round < ROUNDS; round++) {
    const grad = new Array(k).fill(0);
    let gradB = 0;
    z.forEach((r, i) => {
      const error = 1 / (1 + Math.exp(-(b + r.reduce((s, v, j) => s + v * w[j], 0)))) - y[i];
      r.forEach((v, j) => (grad[j] += error * v));
      gradB += error;
    });
    w = w.map((wj, j) => wj - STEP * (grad[j] / z.length + RIDGE * wj));
    b -= (STEP * gradB) / z.length;
  }
  const weights = w.map((wj, j) => wj / sd[j]);
  return { weights, bias: b - weights.reduce((s, wj, j) => s + wj * mean[j], 0) };
}

const chance = ({ weights, bias }, x) => 1 / (1 + Math.exp(-(bias + x.reduce((s, v, j) => s + v * weights[j], 0))));

/** Of the rows missing, the share flagged; of the flagged, the share missing. */
function calibration(rows, flagged) {
  const missed = rows.filter((r) => !r.hit);
  const flags = rows.filter(flagged);
  return { flaggedOfMissed: missed.filter(flagged).length / missed.length, missedOfFlagged: flags.filter((r) => !r.hit).length / flags.length, flagged: flags.length, missed: missed.length };
}

const report = await evaluateTasks(loadTasks());
const tuning = report.rows.filter((r) => r.set === "tuning" && r.signals.terms >= TASK_TERMS);
const model = fit(tuning.map((r) => features(r.signals)), tuning.map((r) => (r.hit ? 0 : 1)));
const chances = new Map(tuning.map((r) => [r, chance(model, features(r.signals))]));
let best = null;
for (const flagAt of [...new Set(chances.values())].sort((a, b) => a - b)) {
  const c = calibration(tuning, (r) => chances.get(r) >= flagAt);
  if (c.flaggedOfMissed >= FLAGGED_OF_MISSED && (!best || c.missedOfFlagged > best.c.missedOfFlagged)) best = { flagAt, c };
}
const f = (x) => x.toFixed(3);
console.log(`const TASK: Model = Model {
    bias: ${f(model.bias)},
    weights: [${model.weights.map(f).join(", ")}],
    flag_at: ${f(best.flagAt)},
};`);
const now = calibration(tuning, (r) => r.weak);
console.log(
  `\ntuning split (${tuning.length} tasks, ${best.c.missed} missed): flagged of missed ${f(best.c.flaggedOfMissed)}, missed of flagged ${f(best.c.missedOfFlagged)} (${best.c.flagged} flagged); the build's rule: ${f(now.flaggedOfMissed)}, ${f(now.missedOfFlagged)} (${now.flagged})`,
);
