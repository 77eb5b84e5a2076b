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
