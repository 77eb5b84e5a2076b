// The package as the release workflow publishes it, built in a temp dir from this checkout and the
// local build of the addon: a copy of what `npm pack` takes from the repo, then the napi CLI's
// create-npm-dirs, artifacts and pre-publish (which writes optionalDependencies), then `npm pack` of
// the main package and of the platform package, installed into an empty project from the tarballs.
import { spawnSync } from "node:child_process";
import { cpSync, mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { createRequire } from "node:module";
import { tmpdir } from "node:os";
import { dirname, join } from "node:path";
import { NapiCli, parseTriple } from "@napi-rs/cli";
import { root } from "./servers.mjs";

const { platformId, binaryFile } = createRequire(import.meta.url)("../../loader.js");
export const PLATFORM = platformId();
export const manifest = JSON.parse(readFileSync(join(root, "package.json"), "utf8"));
export const platformPackage = (id = PLATFORM) => `${manifest.name}-${id}`;

/** Runs npm (through a shell on Windows, where npm is a .cmd); throws with its output on failure. */
export function npm(args, cwd) {
  const win = process.platform === "win32";
  const r = spawnSync(win ? "npm.cmd" : "npm", win ? args.map((a) => `"${a}"`) : args, { cwd, encoding: "utf8", shell: win });
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
 * Stages a release for the rust `targets` in `dir`/stage, the way the workflow's publish job does.
 * `artifact(id)` gives the bytes of each target's .node. Returns the stage dir.
 */
export async function stageRelease(dir, targets, artifact) {
  const stage = join(dir, "stage");
  for (const file of packedFromRepo()) cpSync(join(root, file), join(stage, file), { recursive: true });
  const stagedManifest = JSON.parse(readFileSync(join(stage, "package.json"), "utf8"));
  stagedManifest.napi.targets = targets;
  writeFileSync(join(stage, "package.json"), JSON.stringify(stagedManifest, null, 2));
  for (const target of targets) {
    const id = parseTriple(target).platformArchABI;
    mkdirSync(join(dir, "artifacts", `bindings-${target}`), { recursive: true });
    writeFileSync(join(dir, "artifacts", `bindings-${target}`, binaryFile(id)), artifact(id));
  }
  const napi = new NapiCli();
  await quietly(async () => {
    await napi.createNpmDirs({ cwd: stage });
    await napi.artifacts({ cwd: stage, outputDir: join(dir, "artifacts") });
    await napi.prePublish({ cwd: stage, tagStyle: "npm", ghRelease: false, skipOptionalPublish: true });
  });
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

/** The napi target (rust triple) of this machine, from package.json's `napi.targets`. */
export function currentTarget() {
  const target = manifest.napi.targets.find((t) => parseTriple(t).platformArchABI === PLATFORM);
  if (!target) throw new Error(`no napi target in package.json builds ${PLATFORM}`);
  return target;
}

/**
 * The release for this platform (with the local build as its binary), packed and installed with
 * `npm install <tarballs>` into an empty project. → { dir, main, platform (pack infos), project,
 * installed (the installed package dir), cleanup }.
 */
export async function installRelease() {
  const dir = mkdtempSync(join(tmpdir(), "pi-mcp-native-release-"));
  try {
    const binary = readFileSync(join(root, binaryFile(PLATFORM)));
    const stage = await stageRelease(dir, [currentTarget()], () => binary);
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
