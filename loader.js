// Finds and loads the native addon `pi-mcp-native.<platform>.node`. Written by hand, not by
// `napi build` (which runs with --no-js here): every candidate is required by ABSOLUTE path, because
// runtimes such as the Bun-compiled Pi cannot resolve a platform package from a bare native require.
// Beside the addon sits its helper executable `pi-mcp-native-helper-<platform>` (servers start
// through it on Linux); the addon is told where, by absolute path too.
// Candidates, first that loads wins:
//   1. $PI_MCP_NATIVE_BINARY (then nothing else)
//   2. a local build (from source) next to this file
//   3. the platform package `pi-mcp-native-<platform>` (an optional dependency), found on disk in
//      every enclosing node_modules, then through Node's resolution by name (NODE_PATH, Yarn PnP)
"use strict";

const { existsSync, readFileSync } = require("node:fs");
const { basename, dirname, join } = require("node:path");

const BINARY_NAME = "pi-mcp-native";
const OVERRIDE_ENV = "PI_MCP_NATIVE_BINARY";
const manifest = JSON.parse(readFileSync(join(__dirname, "package.json"), "utf8"));

/** "gnu" or "musl" on Linux, from ldd (cheap), else from Node's report. */
function linuxLibc() {
  try {
    return readFileSync("/usr/bin/ldd", "utf8").includes("musl") ? "musl" : "gnu";
  } catch {
    // no /usr/bin/ldd (NixOS, slim images): ask the runtime
  }
  try {
    if (process.report) process.report.excludeNetwork = true;
    const header = process.report?.getReport?.()?.header;
    if (header && !header.glibcVersionRuntime) return "musl";
  } catch {
    // no report support: assume glibc, the common case
  }
  return "gnu";
}

/** The napi-rs name of this platform: linux-x64-gnu, darwin-arm64, win32-x64-msvc, … */
function platformId(platform = process.platform, arch = process.arch, libc) {
  if (platform === "linux") {
    libc ??= linuxLibc();
    return arch === "arm" ? `linux-arm-${libc}eabihf` : `linux-${arch}-${libc}`;
  }
  if (platform === "win32") return `win32-${arch}-msvc`;
  return `${platform}-${arch}`;
}

const binaryFile = (id) => `${BINARY_NAME}.${id}.node`;
const helperFile = (id) => `${BINARY_NAME}-helper-${id}${id.startsWith("win32") ? ".exe" : ""}`;
const platformPackage = (id) => `${BINARY_NAME}-${id}`;

/** Directories that may hold the platform package: <d>/node_modules for every ancestor d, and d itself when it is a node_modules. */
function packageRoots() {
  const roots = [];
  for (let dir = __dirname; ; dir = dirname(dir)) {
    roots.push(basename(dir) === "node_modules" ? dir : join(dir, "node_modules"));
    if (dirname(dir) === dir) return [...new Set(roots)];
  }
}

/** [{ path, label, fromPackage, version? }] in the order they are tried. */
function candidates(id) {
  const file = binaryFile(id);
  const name = platformPackage(id);
  const fromPackageDir = (dir, how) => {
    const version = readVersion(join(dir, "package.json"));
    return { path: join(dir, file), label: `${name}@${version} (${how})`, fromPackage: true, version };
  };
  const list = [{ path: join(__dirname, file), label: "local build" }];
  for (const root of packageRoots()) {
    if (existsSync(join(root, name))) list.push(fromPackageDir(join(root, name), "on disk"));
  }
  try {
    const dir = dirname(require.resolve(`${name}/package.json`));
    if (!list.some((c) => c.path === join(dir, file))) list.push(fromPackageDir(dir, "resolved by name"));
  } catch {
    // not resolvable by name: reported below if nothing else loads
  }
  return list;
}

function readVersion(packageJson) {
  try {
    return JSON.parse(readFileSync(packageJson, "utf8")).version;
  } catch {
    return undefined;
  }
}

/** Platforms with a published binary: the optionalDependencies napi writes into the published package.json. */
function prebuiltPlatforms() {
  const prefix = `${BINARY_NAME}-`;
  return Object.keys(manifest.optionalDependencies ?? {})
    .filter((dep) => dep.startsWith(prefix))
    .map((dep) => dep.slice(prefix.length));
}

function failure(id, tried) {
  const prebuilt = prebuiltPlatforms();
  const lines = [`${BINARY_NAME}: no loadable native binary for ${id} (Node ${process.version}).`, "Tried:"];
  lines.push(...tried.map((t) => `  - ${t}`), "");
  if (prebuilt.includes(id)) {
    lines.push(
      `A prebuilt binary for ${id} is published as ${platformPackage(id)}@${manifest.version}, an optional dependency:`,
      `reinstall with optional dependencies enabled (no --omit=optional / --no-optional), e.g. \`pi install npm:${BINARY_NAME}\`.`,
    );
  } else if (prebuilt.length) {
    lines.push(`No prebuilt binary is published for ${id} (prebuilt: ${prebuilt.join(", ")}).`);
  } else {
    lines.push("This copy of the package has no prebuilt binaries (a source checkout): build it.");
  }
  const checkout = existsSync(join(__dirname, "Cargo.toml"));
  lines.push(
    `To build from source you need Rust ≥ 1.89 (https://rustup.rs) and Node ≥ 20, then:`,
    checkout
      ? `  cd ${__dirname} && npm run build`
      : `  git clone ${repositoryUrl()} && cd ${BINARY_NAME} && npm run build`,
    checkout
      ? `and load this directory again.`
      : `then use that directory (\`pi install /path/to/${BINARY_NAME}\`), or set ${OVERRIDE_ENV} to the .node file it builds.`,
  );
  return new Error(lines.join("\n"));
}

function repositoryUrl() {
  const url = typeof manifest.repository === "string" ? manifest.repository : manifest.repository?.url;
  return (url ?? "").replace(/^git\+/, "");
}

/** The addon's API, once it knows where its helper is (the hook itself is not part of the API). */
function withHelper(binding, binaryPath, id) {
  const { setHelper, ...api } = binding;
  setHelper?.(join(dirname(binaryPath), helperFile(id)));
  return api;
}

function load() {
  const id = platformId();
  const override = process.env[OVERRIDE_ENV];
  if (override) {
    try {
      return withHelper(require(override), override, id);
    } catch (error) {
      throw new Error(`${BINARY_NAME}: ${OVERRIDE_ENV}=${override} could not be loaded: ${error.message}`);
    }
  }
  const tried = [];
  const list = candidates(id);
  for (const candidate of list) {
    if (!existsSync(candidate.path)) {
      tried.push(`${candidate.label}: ${candidate.path} not found`);
      continue;
    }
    if (candidate.fromPackage && candidate.version !== manifest.version) {
      tried.push(`${candidate.label}: version ${candidate.version}, ${BINARY_NAME} is ${manifest.version}`);
      continue;
    }
    try {
      return withHelper(require(candidate.path), candidate.path, id);
    } catch (error) {
      tried.push(`${candidate.label}: ${candidate.path} failed to load: ${error.message}`);
    }
  }
  if (!list.some((c) => c.fromPackage)) tried.push(`package ${platformPackage(id)}: not installed`);
  throw failure(id, tried);
}

module.exports = { load, platformId, binaryFile, helperFile };
