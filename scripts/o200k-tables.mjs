#!/usr/bin/env node
// Writes the two tables crates/core/src/render/o200k.rs compiles in to bound a text's o200k tokens without the
// tokenizer, from o200k's vocabulary (the npm package `gpt-tokenizer`, a devDependency):
// - o200k_short.bin: every entry of 2 or 3 printable ASCII bytes, as sorted 3-byte records (a
//   2-byte entry ends in a 0 byte);
// - o200k_words.txt: the WORDS entries of 4 bytes or more that are a word of ASCII letters, with
//   or without a space before it, lowest ranks (the most common) first; sorted, one a line.
// Usage: node scripts/o200k-tables.mjs [--check]   (--check: compare, do not write)
import { readFileSync, writeFileSync } from "node:fs";
import { dirname, join } from "node:path";
import { fileURLToPath } from "node:url";
import ranks from "gpt-tokenizer/bpeRanks/o200k_base";

const dir = join(dirname(fileURLToPath(import.meta.url)), "..", "crates", "core", "src", "render");
const WORDS = 8000;

/** Each file and its content. */
export function tables() {
  const strings = ranks.filter((entry) => typeof entry === "string");
  const short = strings
    .filter((entry) => /^[\x20-\x7e]{2,3}$/.test(entry))
    .map((entry) => Buffer.concat([Buffer.from(entry, "latin1"), Buffer.alloc(3 - entry.length)]))
    .sort(Buffer.compare);
  const words = strings
    .filter((entry) => /^ ?[A-Za-z]+$/.test(entry) && entry.length >= 4)
    .slice(0, WORDS)
    .sort((a, b) => Buffer.compare(Buffer.from(a), Buffer.from(b)));
  return {
    [join(dir, "o200k_short.bin")]: Buffer.concat(short),
    [join(dir, "o200k_words.txt")]: Buffer.from(`${words.join("\n")}\n`),
  };
}

if (process.argv[1] === fileURLToPath(import.meta.url)) {
  const check = process.argv.includes("--check");
  let stale = 0;
  for (const [file, content] of Object.entries(tables())) {
    if (!check) {
      writeFileSync(file, content);
      console.log(`Wrote ${file} (${content.length} bytes).`);
    } else if (Buffer.compare(readFileSync(file), content) !== 0) {
      console.log(`${file} differs: run node scripts/o200k-tables.mjs`);
      stale++;
    }
  }
  if (check && !stale) console.log("The o200k tables are up to date.");
  process.exit(stale ? 1 : 0);
}
