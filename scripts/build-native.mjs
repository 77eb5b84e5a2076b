#!/usr/bin/env node
// `npm run build`: builds the native addon and its helper executable from source (release) with
// cargo alone, and puts them next to index.js as `pi-mcp-native.<platform>.node` and
// `pi-mcp-native-helper-<platform>`, where the loader looks first. Needs only Rust and
// Node: it works in a fresh git checkout before any `npm install`. (`npm run build:debug` is the
// development build: it also regenerates index.d.ts, which needs @napi-rs/cli.)
//
// `--prepare` (the npm `prepare` script) builds only for installs that omit dev dependencies, i.e.
// `pi install git:…` and `npm install --omit=dev` in a checkout, and only when no binary loads yet.
import { spawnSync } from "node:child_process";
import { copyFileSync, readFileSync, renameSync, statSync } from "node:fs";
import { createRequire } from "node:module";
import { dirname, join } from "node:path";
import { fileURLToPath } from "node:url";
import { placeHelper } from "./place-helper.mjs";

const root = join(dirname(fileURLToPath(import.meta.url)), "..");
const require = createRequire(import.meta.url);
const { binaryFile, platformId } = require("../loader.js");

function fail(message) {
  console.error(`\npi-mcp-native build: ${message}`);
  process.exit(1);
}

/** Why the addon does not load, or null when it does. */
function loadError() {
  try {
    require("../index.js");
    return null;
  } catch (error) {
    return error.message;
  }
}

if (process.argv.includes("--prepare")) {
  const omitted = (process.env.npm_config_omit ?? "").split(/[\s,]+/);
  if (!omitted.includes("dev")) {
    console.log("pi-mcp-native: development install, not building (`npm run build` or `npm test` build the addon).");
    process.exit(0);
  }
  if (loadError() === null) process.exit(0);
}

const rustVersion = readFileSync(join(root, "Cargo.toml"), "utf8").match(/^rust-version\s*=\s*"([\d.]+)"/m)[1];
const cargo = spawnSync("cargo", ["--version"], { encoding: "utf8" });
if (cargo.error || cargo.status !== 0) {
  fail(
    `cargo was not found. Building from source needs Rust ≥ ${rustVersion}: install it from https://rustup.rs,\n` +
      "open a new shell and run this again. Or install a prebuilt release instead: `pi install npm:pi-mcp-native`.",
  );
}
const numbers = (version) => version.split(".").map(Number);
const [have, need] = [cargo.stdout.match(/\d+\.\d+/)?.[0] ?? "0.0", rustVersion].map(numbers);
if (have[0] < need[0] || (have[0] === need[0] && have[1] < need[1])) fail(`${cargo.stdout.trim()} is too old: Rust ≥ ${rustVersion} is needed (\`rustup update\`).`);

const id = platformId();
const env = { ...process.env };
// A musl cdylib must not link the C runtime statically (rustc's default for musl targets; `napi build`
// adds the same flag).
if (id.includes("musl") && !/crt-static/.test(env.RUSTFLAGS ?? "")) {
  env.RUSTFLAGS = `${env.RUSTFLAGS ?? ""} -C target-feature=-crt-static`.trim();
}
console.log(`pi-mcp-native: building the addon for ${id} with ${cargo.stdout.trim()} (release, takes a few minutes)…`);
/** Builds `pkg` with cargo's `profile` and returns the artifacts cargo reports (their paths honour CARGO_TARGET_DIR). */
function cargoBuild(pkg, profile) {
  const build = spawnSync("cargo", ["build", "--profile", profile, "-p", pkg, "--message-format=json-render-diagnostics"], {
    cwd: root,
    env,
    encoding: "utf8",
    maxBuffer: 256 * 1024 * 1024,
    stdio: ["ignore", "pipe", "inherit"],
  });
  if (build.error || build.status !== 0) fail(`cargo build failed (${build.error?.message ?? `exit ${build.status}`}); see the errors above.`);
  return build.stdout
    .split("\n")
    .filter((line) => line.startsWith("{"))
    .map((line) => JSON.parse(line))
    .filter((m) => m.reason === "compiler-artifact");
}

// Two builds: the helper's crates alone leave out what only the addon needs (cargo would build one
// set of features for both), with Cargo.toml's `helper` profile (the release profile optimized for
// size).
const artifacts = [...cargoBuild("pi-mcp-native", "release"), ...cargoBuild("pi-mcp-helper", "helper")];
const library = artifacts
  .filter((m) => m.target?.crate_types?.includes("cdylib"))
  .flatMap((m) => m.filenames)
  .find((file) => /\.(so|dylib|dll)$/.test(file));
if (!library) fail("cargo reported no cdylib for the addon.");
const helper = artifacts.find((m) => m.target?.kind?.includes("bin") && m.executable)?.executable;
if (!helper) fail("cargo reported no helper executable.");

const dest = join(root, binaryFile(id));
copyFileSync(library, `${dest}.tmp`);
renameSync(`${dest}.tmp`, dest);
placeHelper(helper, id);
const error = loadError();
if (error) fail(`${dest} was built but does not load:\n${error}`);
const mb = (statSync(dest).size / 1e6).toFixed(1);
console.log(`pi-mcp-native: built ${dest} (${mb} MB). Use this directory in Pi: pi install ${root}`);
