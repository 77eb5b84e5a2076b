// The static figures of a checkout for `npm run bench -- --compare`: its release addon's and
// helper's sizes, the Rust lines of each crate, and the `json!` and `.get("…")` in its non-test code.
import { execFileSync } from "node:child_process";
import { existsSync, readFileSync, readdirSync, statSync } from "node:fs";
import { createRequire } from "node:module";
import { join, relative } from "node:path";

/** Test code by its file: test directories and files, the MCP test server, the tests' support crate. */
export const TEST_FILE = /(^|\/)(tests\/|tests\.rs$|[^/]*_tests\.rs$|test_[^/]*\.rs$|bin\/mcp-test-server\/)|^crates\/test-support\//;
/** What is counted in non-test code: occurrences, not lines. */
export const PATTERNS = { "json!": /\bjson!/g, '.get("…")': /\.get\("/g };

/** `text` without its `#[cfg(test)]` items (the attribute, any attributes after it, the item to its closing brace or `;`). */
export function withoutTestItems(text) {
  const lines = text.split("\n");
  const kept = [];
  for (let i = 0; i < lines.length; i++) {
    if (lines[i].trim() !== "#[cfg(test)]") {
      kept.push(lines[i]);
      continue;
    }
    i++;
    while (i < lines.length && lines[i].trim().startsWith("#[")) i++;
    let depth = 0;
    let opened = false;
    for (; i < lines.length; i++) {
      const line = lines[i].replace(/"(\\.|[^"\\])*"|'(\\.|[^'\\])'|\/\/.*$/g, "");
      for (const c of line) {
        if (c === "{") (depth++, (opened = true));
        else if (c === "}") depth--;
      }
      if ((opened && depth === 0) || (!opened && line.trimEnd().endsWith(";"))) break;
    }
  }
  return kept.join("\n");
}

function rustFiles(dir, out = []) {
  for (const entry of readdirSync(dir, { withFileTypes: true })) {
    const path = join(dir, entry.name);
    if (entry.isDirectory()) rustFiles(path, out);
    else if (entry.name.endsWith(".rs")) out.push(path);
  }
  return out;
}

const lineCount = (text) => text.split("\n").length - (text.endsWith("\n") ? 1 : 0);

/**
 * Per crate of the checkout in `root` (the root package's `src` and each `crates/*\/src`): Rust
 * lines in all (inline tests and test files included) and outside tests, and the counts of
 * PATTERNS outside tests.
 */
export function sourceFigures(root) {
  const crates = [".", ...(existsSync(join(root, "crates")) ? readdirSync(join(root, "crates")).map((c) => join("crates", c)) : [])];
  return crates
    .filter((crate) => existsSync(join(root, crate, "src")))
    .map((crate) => {
      const name = /^name\s*=\s*"([^"]+)"/m.exec(readFileSync(join(root, crate, "Cargo.toml"), "utf8"))[1];
      const figures = { crate: name, lines: 0, nonTestLines: 0, ...Object.fromEntries(Object.keys(PATTERNS).map((p) => [p, 0])) };
      for (const file of rustFiles(join(root, crate, "src"))) {
        const text = readFileSync(file, "utf8");
        figures.lines += lineCount(text);
        if (TEST_FILE.test(relative(root, file))) continue;
        const code = withoutTestItems(text);
        figures.nonTestLines += lineCount(code);
        for (const [label, pattern] of Object.entries(PATTERNS)) figures[label] += code.match(pattern)?.length ?? 0;
      }
      return figures;
    });
}

/** The release addon and helper the checkout in `root` placed beside its index.js: { addon, helper } of { file, bytes, stripped }. */
export function binaryFigures(root) {
  const { binaryFile, helperFile, platformId } = createRequire(import.meta.url)(join(root, "loader.js"));
  const figure = (file) => {
    const path = join(root, file);
    return { file, bytes: statSync(path).size, stripped: !/not stripped/.test(execFileSync("file", ["-b", path], { encoding: "utf8" })) };
  };
  return { addon: figure(binaryFile(platformId())), helper: figure(helperFile(platformId())) };
}
