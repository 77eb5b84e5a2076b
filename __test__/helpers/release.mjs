// The package as the release workflow publishes it, staged in a temp dir from this checkout with the
// local build of the addon as this platform's binary, packed (the main package and this platform's
// package) and installed from the two tarballs into an empty project.
import { spawnSync } from "node:child_process";
import { cpSync, mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { createRequire } from "node:module";
import { tmpdir } from "node:os";
import { delimiter, dirname, join } from "node:path";
import { parseTriple } from "@napi-rs/cli";
import { stageRelease as stagePlatformPackages } from "../../scripts/stage-release.mjs";
import { root } from "./servers.mjs";

const { platformId, binaryFile, helperFile } = createRequire(import.meta.url)("../../loader.js");
export const PLATFORM = platformId();
export const manifest = JSON.parse(readFileSync(join(root, "package.json"), "utf8"));
export const platformPackage = (id = PLATFORM) => `${manifest.name}-${id}`;

/** Runs npm (through a shell on Windows, where npm is a .cmd); throws with its output on failure. */
export function npm(args, cwd, env = process.env) {
  const win = process.platform === "win32";
  const r = spawnSync(win ? "npm.cmd" : "npm", win ? args.map((a) => `"${a}"`) : args, { cwd, env, encoding: "utf8", shell: win });
  if (r.status !== 0) throw new Error(`npm ${args.join(" ")} failed in ${cwd} (${r.error?.message ?? `exit ${r.status}`}):\n${r.stdout}\n${r.stderr}`);
  return r.stdout;
}

/** `npm pack` of `dir` into `dest` → { filename, size, unpackedSize, files: [path] }. */
export function pack(dir, dest) {
  const [info] = JSON.parse(npm(["pack", "--json", "--ignore-scripts", "--pack-destination", dest], dir));
  return { ...info, path: join(dest, info.filename), files: info.files.map((f) => f.path).sort() };
}

/** Files `npm pack` would take from the repo, as paths relative to it. */
export function packedFromRepo() {
  const [info] = JSON.parse(npm(["pack", "--dry-run", "--json", "--ignore-scripts"], root));
  return info.files.map((f) => f.path).sort();
}

/**
 * Stages a release in `dir`/stage the way the workflow's publish job does: the files `npm pack` takes
 * from the repo, scripts/stage-release.mjs on the artifacts (`binary(id)` gives each platform's
 * .node, `helper(id)` its helper executable), then the prepublishOnly script (`napi pre-publish`)
 * minus the publishing of the platform packages. Returns the stage dir.
 */
export async function stageRelease(dir, binary, helper) {
  const stage = join(dir, "stage");
  for (const file of packedFromRepo()) cpSync(join(root, file), join(stage, file), { recursive: true });
  const artifacts = join(dir, "artifacts");
  for (const target of manifest.napi.targets) {
    const id = parseTriple(target).platformArchABI;
    mkdirSync(join(artifacts, `bindings-${target}`), { recursive: true });
    writeFileSync(join(artifacts, `bindings-${target}`, binaryFile(id)), binary(id));
    writeFileSync(join(artifacts, `bindings-${target}`, helperFile(id)), helper(id));
  }
  await quietly(() => stagePlatformPackages(stage, artifacts));
  // package.json's own prepublishOnly, with the napi CLI of this checkout, told not to publish.
  const pathKey = Object.keys(process.env).find((k) => k.toUpperCase() === "PATH") ?? "PATH"; // `Path` on Windows
  const env = { ...process.env, [pathKey]: [join(root, "node_modules", ".bin"), process.env[pathKey]].join(delimiter) };
  npm(["run", "prepublishOnly", "--", "--skip-optional-publish"], stage, env);
  return stage;
}

/** Runs `fn` with the napi CLI's progress lines (on the console) held back unless it throws. */
async function quietly(fn) {
  const methods = ["log", "info", "warn", "error"];
  const saved = methods.map((m) => console[m]);
  const held = [];
  for (const m of methods) console[m] = (...args) => held.push(args.join(" "));
  try {
    return await fn();
  } catch (error) {
    error.message += `\n${held.join("\n")}`;
    throw error;
  } finally {
    methods.forEach((m, i) => (console[m] = saved[i]));
  }
}

/**
 * The release for this platform (with the local build as its binary), packed and installed with
 * `npm install <tarballs>` into an empty project. → { dir, main, platform (pack infos), project,
 * installed (the installed package dir), cleanup }.
 */
export async function installRelease() {
  const dir = mkdtempSync(join(tmpdir(), "pi-mcp-native-release-"));
  try {
    const [binary, helper] = [binaryFile, helperFile].map((file) => readFileSync(join(root, file(PLATFORM))));
    // Only the release workflow can build the other targets: their packages get stand-ins, never packed.
    const standIn = (own) => (id) => (id === PLATFORM ? own : Buffer.from(`stand-in for ${id}`));
    const stage = await stageRelease(dir, standIn(binary), standIn(helper));
    const tarballs = join(dir, "tarballs");
    mkdirSync(tarballs);
    const main = pack(stage, tarballs);
    const platform = pack(join(stage, "npm", PLATFORM), tarballs);
    const project = join(dir, "project");
    mkdirSync(project);
    writeFileSync(join(project, "package.json"), JSON.stringify({ name: "install-test", private: true }));
    npm(["install", "--offline", "--no-audit", "--no-fund", main.path, platform.path], project);
    const installed = join(project, "node_modules", manifest.name);
    return { dir, main, platform, project, installed, cleanup: () => rmSync(dir, { recursive: true, force: true }) };
  } catch (error) {
    rmSync(dir, { recursive: true, force: true });
    throw error;
  }
}

/** Copies the installed package (and, if `withPlatform`, its platform package) into a fresh layout under `dir`. */
export function copyInstalled(release, dir, { withPlatform = true } = {}) {
  const modules = join(dir, "node_modules");
  cpSync(release.installed, join(modules, manifest.name), { recursive: true });
  if (withPlatform) cpSync(join(dirname(release.installed), platformPackage()), join(modules, platformPackage()), { recursive: true });
  return { modules, pkg: join(modules, manifest.name), platformDir: join(modules, platformPackage()) };
}
