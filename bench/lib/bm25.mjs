// The plain BM25 baseline the search eval prints beside our ranking: one flat document per tool
// (server, name, description, parameter names and descriptions), Okapi BM25 with k1 = 1.2 and
// b = 0.75, each distinct word of the request once. The tokenizer is deliberately simple but
// fair to other scripts: lowercase, split at anything that is not a letter, digit or mark, and
// Chinese, Japanese and Korean text as overlapping character pairs (one character alone stays
// a word), so that the baseline is not handicapped on tools described in those scripts.

const K1 = 1.2;
const B = 0.75;
const WORD = /[\p{L}\p{N}\p{M}]+/gu;
/** A character of CJK text (Han, kana with its prolonged sound mark, Hangul). */
const CJK = /[\p{scx=Han}\p{scx=Hiragana}\p{scx=Katakana}\p{scx=Hangul}]/u;

/** The words of `text` as the baseline counts them. */
export function tokens(text) {
  const out = [];
  for (const [word] of text.toLowerCase().matchAll(WORD)) {
    let run = "";
    let cjk = false;
    const flush = () => {
      if (!run) return;
      const chars = [...run];
      if (!cjk || chars.length === 1) out.push(run);
      else for (let i = 0; i + 1 < chars.length; i++) out.push(chars[i] + chars[i + 1]);
      run = "";
    };
    for (const c of word) {
      const isCjk = CJK.test(c);
      if (run && isCjk !== cjk) flush();
      cjk = isCjk;
      run += c;
    }
    flush();
  }
  return out;
}

/** Names and descriptions of a JSON schema's properties, nested ones included. */
function schemaText(schema, out = []) {
  if (!schema || typeof schema !== "object") return out;
  for (const [name, property] of Object.entries(schema.properties ?? {})) {
    out.push(name);
    if (typeof property?.description === "string") out.push(property.description);
    schemaText(property, out);
  }
  if (schema.items) schemaText(schema.items, out);
  return out;
}

/** The flat text of a tool: server, name, description, parameter names and descriptions. */
export function toolText({ server, name, description, inputSchema }) {
  return [server, name, description ?? "", ...schemaText(inputSchema)].join("\n");
}

/**
 * An index of `docs` (`{ id, text }`); `rank(query, n)` gives the ids of the `n` best, best
 * first (ties by position).
 */
export function bm25(docs) {
  const postings = new Map();
  const lengths = [];
  docs.forEach(({ text }, doc) => {
    const words = tokens(text);
    lengths.push(words.length);
    const counts = new Map();
    for (const w of words) counts.set(w, (counts.get(w) ?? 0) + 1);
    for (const [w, tf] of counts) {
      if (!postings.has(w)) postings.set(w, []);
      postings.get(w).push([doc, tf]);
    }
  });
  const n = docs.length;
  const average = lengths.reduce((a, b) => a + b, 0) / Math.max(1, n);
  return {
    rank(query, limit) {
      const scores = new Map();
      for (const word of new Set(tokens(query))) {
        const list = postings.get(word);
        if (!list) continue;
        const idf = Math.log(1 + (n - list.length + 0.5) / (list.length + 0.5));
        for (const [doc, tf] of list) {
          const norm = K1 * (1 - B + (B * lengths[doc]) / average);
          scores.set(doc, (scores.get(doc) ?? 0) + (idf * tf * (K1 + 1)) / (tf + norm));
        }
      }
      return [...scores]
        .sort((a, b) => b[1] - a[1] || a[0] - b[0])
        .slice(0, limit)
        .map(([doc]) => docs[doc].id);
    },
  };
}
