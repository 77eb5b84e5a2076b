// Medians and spread of benchmark samples.

export function quantile(samples, p) {
  const s = samples.filter((x) => Number.isFinite(x)).sort((a, b) => a - b);
  if (!s.length) return NaN;
  const i = (s.length - 1) * p;
  const lo = Math.floor(i);
  return s[lo] + (s[Math.min(lo + 1, s.length - 1)] - s[lo]) * (i - lo);
}

export const median = (samples) => quantile(samples, 0.5);

/** { median, p25, p75, p99, min, max, n } of the finite samples. */
export function summary(samples) {
  const s = samples.filter((x) => Number.isFinite(x));
  return {
    median: median(s),
    p25: quantile(s, 0.25),
    p75: quantile(s, 0.75),
    p99: quantile(s, 0.99),
    min: Math.min(...s),
    max: Math.max(...s),
    n: s.length,
  };
}

/** Pairwise differences a[i] − b[i] of two series measured in the same repetitions. */
export const paired = (a, b) => a.map((x, i) => x - b[i]);

const fmt = (x, digits) => (Number.isFinite(x) ? x.toFixed(digits) : "–");

/** "12.3 (10.1–14.0)": median and interquartile range. */
export const medianIqr = (samples, digits = 1) => {
  const s = summary(samples);
  if (!s.n) return "–";
  return `${fmt(s.median, digits)} (${fmt(s.p25, digits)}–${fmt(s.p75, digits)})`;
};

export { fmt };

/** Wilson's 95 % interval of a share of `k` in `n`: [low, high]. */
export function wilson(k, n, z = 1.96) {
  if (!n) return [NaN, NaN];
  const p = k / n;
  const centre = (p + (z * z) / (2 * n)) / (1 + (z * z) / n);
  const half = ((z / (1 + (z * z) / n)) * Math.sqrt((p * (1 - p)) / n + (z * z) / (4 * n * n)));
  return [Math.max(0, centre - half), Math.min(1, centre + half)];
}

/** A seeded pseudo-random source in [0, 1) (mulberry32), so that intervals are reproducible. */
function random(seed) {
  let a = seed >>> 0;
  return () => {
    a = (a + 0x6d2b79f5) >>> 0;
    let t = Math.imul(a ^ (a >>> 15), 1 | a);
    t = (t + Math.imul(t ^ (t >>> 7), 61 | t)) ^ t;
    return ((t ^ (t >>> 14)) >>> 0) / 2 ** 32;
  };
}

export const mean = (values) => values.reduce((s, v) => s + v, 0) / values.length;

/**
 * The percentile bootstrap's 95 % interval of mean(a) − mean(b) (of mean(a) alone without `b`),
 * each sample resampled on its own: [low, high].
 */
export function bootstrap(a, b = null, { rounds = 4000, seed = 30 } = {}) {
  if (!a.length || (b && !b.length)) return [NaN, NaN];
  const next = random(seed);
  const resampled = (values) => {
    let sum = 0;
    for (let i = 0; i < values.length; i++) sum += values[Math.floor(next() * values.length)];
    return sum / values.length;
  };
  const stats = [];
  for (let i = 0; i < rounds; i++) stats.push(resampled(a) - (b ? resampled(b) : 0));
  return [quantile(stats, 0.025), quantile(stats, 0.975)];
}

/**
 * The median of paired differences `diffs` with the sign test's distribution-free 95 % interval:
 * the order statistics d(k) and d(n + 1 − k) of the sorted differences, k the largest with
 * P(Binomial(n, ½) ≤ k − 1) ≤ 2.5 %; it assumes independent pairs only (no symmetry, unlike the
 * Wilcoxon–Walsh interval). → { median, low, high, coverage, n } (no interval below 6 pairs).
 */
export function medianDifference(diffs) {
  const d = diffs.filter((x) => Number.isFinite(x)).sort((a, b) => a - b);
  const n = d.length;
  let k = 0;
  let tail = 0;
  for (let pmf = 2 ** -n; tail + pmf <= 0.025; k++) {
    tail += pmf;
    pmf = (pmf * (n - k)) / (k + 1);
  }
  const interval = k > 0 ? { low: d[k - 1], high: d[n - k], coverage: 1 - 2 * tail } : { low: NaN, high: NaN, coverage: NaN };
  return { median: median(d), n, ...interval };
}
