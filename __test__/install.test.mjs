// The package as users install it: the release staged from this checkout (the local build as this
// platform's binary), `npm pack`ed, installed from the tarballs into an empty project, then used from
// plain Node, the pi-mcp command, the real Pi and a Bun-compiled executable; plus the loader's
// fallbacks, its messages when no binary fits, and the build script's checks.
import { after, before, test } from "node:test";
import assert from "node:assert/strict";
import { spawnSync } from "node:child_process";
import { cpSync, mkdirSync, mkdtempSync, readdirSync, readFileSync, rmSync, statSync, writeFileSync } from "node:fs";
import { createRequire } from "node:module";
import { tmpdir } from "node:os";
import { dirname, join } from "node:path";
import { parseTriple } from "@napi-rs/cli";
import { copyInstalled, installRelease, manifest, PLATFORM, platformPackage } from "./helpers/release.mjs";
import { BUN, piTest, runPi } from "./helpers/pi.mjs";
import { everything, processesIn, root, waitFor } from "./helpers/servers.mjs";

const { binaryFile, helperFile, platformId } = createRequire(import.meta.url)("../loader.js");
const OPTS = { timeout: 120_000 };
const RUST_VERSION = readFileSync(join(root, "Cargo.toml"), "utf8").match(/^rust-version\s*=\s*"([\d.]+)"/m)[1];
let release;
let scratch;

before(async () => {
  release = await installRelease();
  scratch = mkdtempSync(join(tmpdir(), "pi-mcp-native-install-"));
  const kb = (n) => `${(n / 1024).toFixed(1)} KiB`;
  console.log(`# ${release.main.filename}: ${kb(release.main.size)} packed, ${kb(release.main.unpackedSize)} unpacked, ${release.main.files.length} files`);
  console.log(`# ${release.platform.filename}: ${kb(release.platform.size)} packed, ${kb(release.platform.unpackedSize)} unpacked (this checkout's build)`);
});
after(() => {
  release?.cleanup();
  if (scratch) rmSync(scratch, { recursive: true, force: true });
});

/** Runs `node -e <code>` in `cwd` (CommonJS, or ESM with `esm`) → { status, stdout, stderr }. */
function node(code, { cwd, env = {}, esm = false, args = [] }) {
  const flags = esm ? ["--input-type=module"] : [];
  return spawnSync(process.execPath, [...args, ...flags, "-e", code], { cwd, env: { ...process.env, ...env }, encoding: "utf8", timeout: 60_000 });
}

/** A fresh directory under the scratch dir. */
const freshDir = () => mkdtempSync(join(scratch, "case-"));

test("the main tarball holds the runtime files only", () => {
  const relative = (p) => p.replace(/^\.\//, "");
  const entries = [...manifest.pi.extensions, ...Object.values(manifest.bin)].map(relative);
  // The extension's folder (named so that Pi lists it as pi-mcp-native) with its modules, and the
  // terminal dialogs pi-mcp imports; the folder's package.json only makes them ES modules.
  const folder = dirname(relative(manifest.pi.extensions[0]));
  const extension = readdirSync(join(root, folder)).map((file) => `${folder}/${file}`);
  const expected = [...new Set(["CHANGELOG.md", "LICENSE", "LICENSE-WordNet", "README.md", "index.d.ts", "index.js", "loader.js", "package.json", ...extension, ...entries, "bin/terminal-ui.mjs"])];
  assert.deepEqual(release.main.files, expected.sort());
  // 224 KiB: the host page's script of MCP Apps (ext-apps' AppBridge with its dependencies,
  // minified, extension/pi-mcp-native/app-host.js) is 375 KiB, 95 KiB packed; the README and the
  // CHANGELOG, 187 KiB unpacked, grow with the features; the code is the rest (about 40 KiB packed).
  // A file that should not ship (a build, a fixture) goes far past it.
  assert.ok(release.main.size < 224 * 1024, `the main tarball grew to ${release.main.size} bytes`);
});

test("the platform tarball holds this platform's binary and helper, its manifest, README and WordNet's license", () => {
  assert.deepEqual(release.platform.files, ["LICENSE-WordNet", "README.md", "package.json", binaryFile(PLATFORM), helperFile(PLATFORM)].sort());
});

test("the installed helper is executable, and on Linux each server starts through it", { ...OPTS, skip: process.platform === "win32" && "no mode bits" }, () => {
  const helper = join(release.project, "node_modules", platformPackage(), helperFile(PLATFORM));
  assert.ok(statSync(helper).mode & 0o111, `${helper} is not executable`);
  if (process.platform !== "linux") return;
  const home = freshDir();
  const config = join(home, "mcp.json");
  writeFileSync(config, JSON.stringify({ mcpServers: { parent: parentReporter(home) } }));
  const code = `
    const { McpAdapter } = require("${manifest.name}");
    const adapter = McpAdapter.open({ cwd: process.cwd(), configPath: ${JSON.stringify(config)}, env: { ...process.env, HOME: ${JSON.stringify(home)} } });
    adapter.call("parent_x", {}).then(async (r) => { await adapter.shutdown(); console.log(JSON.stringify(r.content[0].text)); });`;
  const r = node(code, { cwd: release.project });
  assert.equal(r.status, 0, r.stderr);
  assert.match(JSON.parse(r.stdout.trim().split("\n").pop()), startedThroughHelper(home));
});

/** A "server" in `cwd` that prints its parent's command line and exits: the failure quotes it. */
const parentReporter = (cwd) => ({ command: "sh", args: ["-c", "tr '\\0' ' ' < /proc/$PPID/cmdline >&2; exit 1"], cwd });
/** That command line when the server in `cwd` was started through the installed helper. */
const escape = (s) => s.replace(/[.*+?^${}()|[\]\\/]/g, "\\$&");
const startedThroughHelper = (cwd) =>
  new RegExp(`${escape(join(release.project, "node_modules", platformPackage(), helperFile(PLATFORM)))} supervise ${escape(cwd)} /\\S+/sh sh -c`);

test("the installed manifests carry the metadata and the 8 optional platform packages", () => {
  const main = JSON.parse(readFileSync(join(release.installed, "package.json"), "utf8"));
  assert.equal(main.license, "MIT");
  assert.match(main.repository.url, /^git\+https:\/\/.+\.git$/);
  assert.equal(main.engines.node, ">=20");
  assert.equal(main.types, "index.d.ts");
  assert.equal(main.main, "index.js");
  for (const keyword of ["pi-package", "mcp"]) assert.ok(main.keywords.includes(keyword), keyword);
  assert.deepEqual(main.dependencies ?? {}, {}, "the package needs nothing at run time beyond its binary");
  const ids = manifest.napi.targets.map((t) => parseTriple(t).platformArchABI);
  assert.equal(ids.length, 8);
  assert.deepEqual(main.optionalDependencies, Object.fromEntries(ids.map((id) => [platformPackage(id), manifest.version])));

  const platform = JSON.parse(readFileSync(join(release.project, "node_modules", platformPackage(), "package.json"), "utf8"));
  assert.equal(platform.version, manifest.version);
  assert.equal(platform.main, binaryFile(PLATFORM));
  assert.deepEqual([platform.os, platform.cpu], [[process.platform], [process.arch]]);
  if (process.platform === "linux") assert.deepEqual(platform.libc, [PLATFORM.endsWith("musl") ? "musl" : "glibc"]);
  assert.equal(platform.license, "MIT");
  assert.match(readFileSync(join(release.installed, "CHANGELOG.md"), "utf8"), new RegExp(`^## \\[${manifest.version}\\]`, "m"));
  assert.equal(platform.engines.node, ">=20");
  assert.ok(!platform.keywords.includes("pi-package"), "a bare binary is not listed as a Pi package");
});

test("the loader names every target the way napi names its binaries", () => {
  for (const target of manifest.napi.targets) {
    const { platform, arch, abi, platformArchABI } = parseTriple(target);
    const libc = abi === "musl" ? "musl" : "gnu";
    assert.equal(platformId(platform, arch, libc), platformArchABI, target);
  }
});

test("plain Node loads the installed package, CommonJS and ESM, and runs a real server", OPTS, () => {
  const home = freshDir();
  const config = join(home, "mcp.json");
  writeFileSync(config, JSON.stringify({ mcpServers: { everything: everything({ cwd: home }) } }));
  const code = `
    import * as named from "${manifest.name}";
    import { createRequire } from "node:module";
    const cjs = createRequire(process.cwd() + "/")("${manifest.name}");
    const missing = Object.keys(cjs).filter((k) => !(k in named));
    if (missing.length) throw new Error("not importable by name: " + missing);
    const adapter = named.McpAdapter.open({ cwd: process.cwd(), configPath: ${JSON.stringify(config)}, env: { ...process.env, HOME: ${JSON.stringify(home)} } });
    const r = await adapter.call("everything_echo", { message: "from a tarball" });
    await adapter.shutdown();
    console.log(JSON.stringify({ exports: Object.keys(cjs).sort(), text: r.content[0].text, isError: r.isError }));`;
  const r = node(code, { cwd: release.project, esm: true });
  assert.equal(r.status, 0, r.stderr);
  const out = JSON.parse(r.stdout.trim().split("\n").pop());
  assert.deepEqual(out, { exports: ["McpAdapter", "configHash"], text: "Echo: from a tarball", isError: false });
  const declared = [...readFileSync(join(release.installed, "index.d.ts"), "utf8").matchAll(/^export declare (?:class|function|const) (\w+)/gm)].map((m) => m[1]);
  assert.deepEqual(declared.sort(), out.exports, "index.d.ts declares what index.js exports");
});

test("the installed pi-mcp command calls a real server", OPTS, () => {
  const home = freshDir();
  const config = join(home, "mcp.json");
  writeFileSync(config, JSON.stringify({ mcpServers: { everything: everything({ cwd: home }) } }));
  const bin = join(release.project, "node_modules", ".bin", process.platform === "win32" ? "pi-mcp.cmd" : "pi-mcp");
  const r = spawnSync(bin, ["call", "everything_echo", '{"message":"from the CLI"}', "--config", config], {
    cwd: home,
    env: { ...process.env, HOME: home },
    encoding: "utf8",
    shell: process.platform === "win32",
    timeout: 60_000,
  });
  assert.equal(r.status, 0, r.stderr);
  assert.match(r.stdout, /Echo: from the CLI/);
});

// The harness's Pi (on its own Node 22) and Bun are linux-x64 glibc builds; the release workflow runs
// this suite on every target, where the other cases still test the binary.
const HARNESS_SKIP = PLATFORM === "linux-x64-gnu" ? false : "the Pi and Bun of __test__/e2e run on linux-x64-gnu only";

piTest("the real Pi loads the installed package (pi -e <installed dir>) and calls a tool", { ...OPTS, skip: HARNESS_SKIP }, async (pi) => {
  const serverCwd = freshDir();
  const steps = [{ tool_calls: [{ name: "mcp", arguments: { tool: "everything_echo", args: { message: "installed" } } }] }, { text: "done" }];
  const r = await runPi({ pi, extensionDir: release.installed, mcpConfig: { mcpServers: { everything: everything({ cwd: serverCwd }) } }, script: { steps } });
  assert.equal(r.code, 0, `code=${r.code} timedOut=${r.timedOut}\n${r.stderr}`);
  assert.deepEqual(r.requests[0].body.tools.map((t) => t.function.name), ["mcp"]);
  assert.equal(r.toolResults[0]?.text, "Echo: installed", r.stderr);
  await waitFor(() => processesIn(serverCwd).length === 0, 5000, "servers to be gone after Pi exits");
});

test("a Bun-compiled executable, like Pi's binary releases, loads the installed package and calls a tool", { ...OPTS, skip: HARNESS_SKIP }, () => {
  // Inside a `bun build --compile` executable the platform package cannot be resolved by name
  // (pi-mcp-adapter issue #230); napi's generated loader fails there, this package's finds it on disk.
  const dir = freshDir();
  const config = join(dir, "mcp.json");
  const sharedCwd = join(dir, "shared");
  mkdirSync(sharedCwd);
  writeFileSync(config, JSON.stringify({ mcpServers: { everything: everything({ cwd: dir }), parent: parentReporter(dir), shared: everything({ cwd: sharedCwd, shared: true }) } }));
  writeFileSync(
    join(dir, "entry.js"),
    `const [pkg, config, home] = process.argv.slice(2);
     const { McpAdapter } = require(pkg);
     let byName = true;
     try { require.resolve(${JSON.stringify(platformPackage())}, { paths: [pkg] }); } catch { byName = false; }
     const adapter = McpAdapter.open({ cwd: home, configPath: config, env: { ...process.env, HOME: home } });
     const r = await adapter.call("everything_echo", { message: "from bun" });
     const parent = await adapter.call("parent_x", {});
     const shared = await adapter.call("shared_echo", { message: "through the broker" });
     const broker = (await adapter.brokerStatus()).details.broker;
     await adapter.brokerStop();
     await adapter.shutdown();
     console.log(JSON.stringify({ byName, text: r.content[0].text, parent: parent.content[0].text, shared: shared.content[0].text, brokerServers: broker?.servers.map((s) => s.name) }));`,
  );
  const exe = join(dir, "compiled");
  const build = spawnSync(BUN, ["build", "--compile", join(dir, "entry.js"), "--outfile", exe], { cwd: dir, encoding: "utf8", timeout: 60_000 });
  assert.equal(build.status, 0, build.stderr);
  const r = spawnSync(exe, [release.installed, config, dir], { cwd: dir, encoding: "utf8", timeout: 60_000 });
  rmSync(exe, { force: true }); // ~100 MB: Bun itself
  assert.equal(r.status, 0, r.stderr);
  const { parent, ...out } = JSON.parse(r.stdout.trim().split("\n").pop());
  // The shared server ran in the broker, the helper's `broker` subcommand, started from the
  // compiled executable (whose process.execPath is not Node) and stopped again.
  assert.deepEqual(out, { byName: false, text: "Echo: from bun", shared: "Echo: through the broker", brokerServers: ["shared"] });
  assert.equal(processesIn(sharedCwd).length, 0);
  // process.execPath is the compiled executable here: the helper is found beside the addon all the same.
  assert.match(parent, startedThroughHelper(dir));
});

test("the binary is found by absolute path when the platform package cannot be resolved by name", () => {
  // What the Bun-compiled Pi does: its loader cannot resolve the platform package by name.
  const dir = freshDir();
  const { modules } = copyInstalled(release, dir);
  const blocker = join(dir, "no-resolution-by-name.cjs");
  writeFileSync(
    blocker,
    `const Module = require("node:module");
     const resolve = Module._resolveFilename;
     Module._resolveFilename = function (request, ...rest) {
       if (request.startsWith(${JSON.stringify(`${manifest.name}-`)})) throw new Error("cannot resolve " + request + " by name");
       return resolve.call(this, request, ...rest);
     };`,
  );
  const r = node(`console.log(typeof require(${JSON.stringify(join(modules, manifest.name))}).McpAdapter.open)`, { cwd: dir, args: ["--require", blocker] });
  assert.equal(r.status, 0, r.stderr);
  assert.equal(r.stdout.trim(), "function");
});

test("without a binary for this platform, loading says which platform and how to build from source", () => {
  const dir = freshDir();
  const { pkg } = copyInstalled(release, dir, { withPlatform: false });
  const r = node(`require(${JSON.stringify(pkg)})`, { cwd: dir });
  assert.notEqual(r.status, 0);
  assert.match(r.stderr, new RegExp(`no loadable native binary for ${PLATFORM}`));
  assert.match(r.stderr, new RegExp(`${platformPackage()}: not installed`));
  assert.match(r.stderr, new RegExp(`published as ${platformPackage()}@${manifest.version}`));
  assert.match(r.stderr, /optional dependencies/);
  assert.match(r.stderr, /git clone https:\/\/\S+ && cd pi-mcp-native && npm run build/);
  assert.match(r.stderr, /PI_MCP_NATIVE_BINARY/);
  assert.ok(r.stderr.includes(`Rust ≥ ${RUST_VERSION} `), `the message asks for Cargo.toml's rust-version ${RUST_VERSION}`);
});

test("on a platform without a published binary, loading says so and lists the prebuilt ones", () => {
  const dir = freshDir();
  const { pkg } = copyInstalled(release, dir, { withPlatform: false });
  const file = join(pkg, "package.json");
  const published = JSON.parse(readFileSync(file, "utf8"));
  delete published.optionalDependencies[platformPackage()];
  writeFileSync(file, JSON.stringify(published));
  const r = node(`require(${JSON.stringify(pkg)})`, { cwd: dir });
  assert.notEqual(r.status, 0);
  const others = Object.keys(published.optionalDependencies).map((name) => name.slice(manifest.name.length + 1));
  assert.ok(r.stderr.includes(`No prebuilt binary is published for ${PLATFORM} (prebuilt: ${others.join(", ")}).`), r.stderr);
  assert.match(r.stderr, /npm run build/);
});

test("a platform package of another version is not loaded", () => {
  const dir = freshDir();
  const { pkg, platformDir } = copyInstalled(release, dir);
  const file = join(platformDir, "package.json");
  writeFileSync(file, JSON.stringify({ ...JSON.parse(readFileSync(file, "utf8")), version: "0.0.1" }));
  const r = node(`require(${JSON.stringify(pkg)})`, { cwd: dir });
  assert.notEqual(r.status, 0);
  assert.match(r.stderr, new RegExp(`${platformPackage()}@0.0.1 \\(on disk\\): version 0.0.1, ${manifest.name} is ${manifest.version}`));
});

test("PI_MCP_NATIVE_BINARY loads a binary from anywhere, and says so when it cannot", () => {
  const dir = freshDir();
  const { pkg } = copyInstalled(release, dir, { withPlatform: false });
  const binary = join(dir, "elsewhere.node");
  cpSync(join(root, binaryFile(PLATFORM)), binary);
  const ok = node(`console.log(typeof require(${JSON.stringify(pkg)}).configHash)`, { cwd: dir, env: { PI_MCP_NATIVE_BINARY: binary } });
  assert.equal(ok.status, 0, ok.stderr);
  assert.equal(ok.stdout.trim(), "function");
  const bad = node(`require(${JSON.stringify(pkg)})`, { cwd: dir, env: { PI_MCP_NATIVE_BINARY: join(dir, "missing.node") } });
  assert.match(bad.stderr, /PI_MCP_NATIVE_BINARY=.*missing\.node could not be loaded/);
});

test("`npm run build` without Rust says how to get it", () => {
  const emptyPath = freshDir();
  const r = spawnSync(process.execPath, [join(root, "scripts", "build-native.mjs")], { env: { PATH: emptyPath }, encoding: "utf8" });
  assert.equal(r.status, 1);
  assert.match(r.stderr, new RegExp(`cargo was not found\\. Building from source needs Rust ≥ ${RUST_VERSION.replace(".", "\\.")}: install it from https://rustup\\.rs`));
});

test("the prepare script builds only for installs without dev dependencies, and only without a binary", () => {
  // `pi install git:…` runs `npm install --omit=dev` in the clone; a development install builds through npm test.
  const prepare = (omit) => spawnSync(process.execPath, [join(root, "scripts", "build-native.mjs"), "--prepare"], { env: { ...process.env, npm_config_omit: omit, PATH: freshDir() }, encoding: "utf8" });
  const dev = prepare("");
  assert.equal(dev.status, 0, dev.stderr);
  assert.match(dev.stdout, /development install, not building/);
  const built = prepare("dev"); // this checkout's build loads: nothing to do (and no cargo on the PATH to do it)
  assert.equal(built.status, 0, built.stderr);
  assert.equal(built.stdout, "");
});

test("a source checkout without a build says to run `npm run build` there", () => {
  const dir = freshDir();
  for (const file of ["index.js", "loader.js", "package.json", "Cargo.toml"]) cpSync(join(root, file), join(dir, file));
  const r = node(`require("./index.js")`, { cwd: dir });
  assert.notEqual(r.status, 0);
  assert.match(r.stderr, /has no prebuilt binaries \(a source checkout\)/);
  assert.ok(r.stderr.includes(`cd ${dir} && npm run build`), r.stderr);
});
