#!/usr/bin/env node
// Puts the helper executable cargo built (crates/helper: `pi-mcp-native-helper`) next to the
// addon as `pi-mcp-native-helper-<platform>`, where the loader looks for it.
//   node scripts/place-helper.mjs [--profile helper] [--target <triple>]
// `npm run build:debug` runs it after `napi build -p pi-mcp-helper` (the dev profile), the release
// workflow after each target's helper build (Cargo.toml's `helper` profile), scripts/build-native.mjs
// after its own build.
import { execFileSync } from "node:child_process";
import { chmodSync, copyFileSync, renameSync } from "node:fs";
import { createRequire } from "node:module";
import { dirname, join } from "node:path";
import { fileURLToPath, pathToFileURL } from "node:url";
import { parseArgs } from "node:util";

const root = join(dirname(fileURLToPath(import.meta.url)), "..");
const { helperFile, platformId } = createRequire(import.meta.url)("../loader.js");

/** Copies the helper `executable` to where the loader looks for platform `id`'s helper. */
export function placeHelper(executable, id) {
  const dest = join(root, helperFile(id));
  copyFileSync(executable, `${dest}.tmp`);
  chmodSync(`${dest}.tmp`, 0o755);
  renameSync(`${dest}.tmp`, dest);
  return dest;
}

if (import.meta.url === pathToFileURL(process.argv[1]).href) {
  const { values } = parseArgs({ options: { profile: { type: "string", default: "dev" }, target: { type: "string" } } });
  // The napi CLI (a dev dependency) names a target's platform; without a target it is this machine.
  const id = values.target ? (await import("@napi-rs/cli")).parseTriple(values.target).platformArchABI : platformId();
  const exe = `pi-mcp-native-helper${id.startsWith("win32") ? ".exe" : ""}`;
  const targetDir = process.env.CARGO_TARGET_DIR ?? join(root, "target");
  // `napi build` always hands cargo a `--target` (this machine's triple when none is given), so
  // its output is under target/<triple>/, never target/debug.
  const triple = values.target ?? execFileSync("rustc", ["-vV"], { encoding: "utf8" }).match(/^host: (\S+)$/m)[1];
  // Cargo's dev profile builds into debug/, every other profile into a directory of its name.
  const built = join(targetDir, triple, values.profile === "dev" ? "debug" : values.profile, exe);
  console.log(`pi-mcp-native: helper ${placeHelper(built, id)}`);
}
