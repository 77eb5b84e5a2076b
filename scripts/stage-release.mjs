#!/usr/bin/env node
// `node scripts/stage-release.mjs <artifacts dir>` (the release workflow's publish job; the install
// test runs it on a copy of the package): writes the per-platform packages npm/<platform>/ with the
// napi CLI (create-npm-dirs) and moves each target's binary from <artifacts>/bindings-<target>/ into
// its package (artifacts), with the helper executable beside it. `npm publish` then runs `napi
// pre-publish` (prepublishOnly), which publishes every platform package and writes them into the
// main package's optionalDependencies.
import { chmodSync, copyFileSync, existsSync, readFileSync, readdirSync, writeFileSync } from "node:fs";
import { createRequire } from "node:module";
import { join, resolve } from "node:path";
import { pathToFileURL } from "node:url";
import { NapiCli } from "@napi-rs/cli";

const { helperFile } = createRequire(import.meta.url)("../loader.js");

/** Keywords the platform packages do not inherit: `pi-package` would list a bare binary as a Pi package. */
const MAIN_PACKAGE_ONLY_KEYWORDS = new Set(["pi-package"]);

/** The binary compiles in a table distilled from WordNet, whose license must travel with it. */
const NOTICES = ["LICENSE-WordNet"];

/** Stages the platform packages of the package in `cwd` from the binaries under `artifactsDir`. */
export async function stageRelease(cwd, artifactsDir) {
  const napi = new NapiCli();
  await napi.createNpmDirs({ cwd });
  const artifacts = resolve(cwd, artifactsDir);
  await napi.artifacts({ cwd, outputDir: artifacts });
  const npmDir = join(cwd, "npm");
  for (const platform of readdirSync(npmDir)) {
    const file = join(npmDir, platform, "package.json");
    const manifest = JSON.parse(readFileSync(file, "utf8"));
    manifest.keywords = manifest.keywords?.filter((k) => !MAIN_PACKAGE_ONLY_KEYWORDS.has(k));
    for (const notice of NOTICES) copyFileSync(join(cwd, notice), join(npmDir, platform, notice));
    const helper = helperFile(platform);
    const built = readdirSync(artifacts).map((dir) => join(artifacts, dir, helper)).find((path) => existsSync(path));
    if (!built) throw new Error(`${helper} is not among the artifacts in ${artifacts}: every platform package ships its helper`);
    copyFileSync(built, join(npmDir, platform, helper));
    chmodSync(join(npmDir, platform, helper), 0o755); // artifact downloads lose the mode
    manifest.files = [...(manifest.files ?? []), ...NOTICES, helper];
    writeFileSync(file, `${JSON.stringify(manifest, null, 2)}\n`);
  }
}

if (import.meta.url === pathToFileURL(process.argv[1]).href) {
  const artifacts = process.argv[2];
  if (!artifacts) {
    console.error("usage: node scripts/stage-release.mjs <artifacts dir holding bindings-<target>/ folders>");
    process.exit(2);
  }
  await stageRelease(process.cwd(), artifacts);
}
