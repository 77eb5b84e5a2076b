// Rows of the reliability matrix (docs/reliability.md). Each row is a node:test test that also
// records its result, time and figures as a JSON file in target/reliability/, beside the rows
// the Rust tests record; `node scripts/reliability-report.mjs` renders them all.
import { test } from "node:test";
import { mkdirSync, writeFileSync } from "node:fs";
import { basename, join } from "node:path";
import { root } from "./servers.mjs";

const dir = join(root, "target", "reliability");

/**
 * A matrix row: `run({ note })` is the test body; `note("...")` adds a figure to the report.
 * `file` is the test file (import.meta.url), named in the report.
 */
export function row(id, title, file, run) {
  test(`row ${id}: ${title}`, async () => {
    const figures = [];
    const started = performance.now();
    let result = "fail";
    try {
      await run({ note: (figure) => figures.push(figure) });
      result = "pass";
    } finally {
      const ms = Math.round(performance.now() - started);
      const slug = `${id}-${title}`.replace(/[^a-z0-9]+/gi, "-").slice(0, 80);
      mkdirSync(dir, { recursive: true });
      const record = { row: id, case: title, result, ms, figures: figures.join("; "), suite: basename(new URL(file).pathname) };
      writeFileSync(join(dir, `node-${slug}.json`), JSON.stringify(record));
    }
  });
}

/** Runs `fn` and returns [its result, elapsed ms]. */
export async function timed(fn) {
  const started = performance.now();
  const result = await fn();
  return [result, Math.round(performance.now() - started)];
}
