#!/usr/bin/env node
// Installs Pi 1.5.2 for the end-to-end tests into __test__/e2e/pi-1.5 (run by `npm test` when it is
// missing). `npm install @earendil-works/pi-coding-agent@1.5.2` cannot work: the package depends on
// workspace packages of Pi's monorepo (@earendil-works/pi-codemode, pi-mcp, ...) that were never
// published. Its published tarball does work: the CLI entry (dist/bundle/cli.js) is a bundle that
// inlines them and loads only the three packages __test__/e2e/pi-1.5/package.json lists. So: `npm ci`
// those, then `npm pack` the tarball (npm checks it against the registry), check it against the
// integrity pinned in that package.json, and unpack it as node_modules/@earendil-works/pi-coding-agent.
// Unpacked after `npm ci`, which would otherwise remove it as extraneous.
import { spawnSync } from "node:child_process";
import { createHash } from "node:crypto";
import { mkdirSync, mkdtempSync, readFileSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { dirname, join } from "node:path";
import { fileURLToPath } from "node:url";

const dir = join(dirname(fileURLToPath(import.meta.url)), "..", "__test__", "e2e", "pi-1.5");
const { tarball } = JSON.parse(readFileSync(join(dir, "package.json"), "utf8"));

function run(command, args, options) {
  const result = spawnSync(command, args, { encoding: "utf8", stdio: ["ignore", "pipe", "inherit"], ...options });
  if (result.status !== 0) throw new Error(`${command} ${args.join(" ")} failed (exit ${result.status ?? result.signal})`);
  return result.stdout;
}

run("npm", ["ci", "--no-audit", "--no-fund", "--ignore-scripts"], { cwd: dir, stdio: "inherit" });
const scratch = mkdtempSync(join(tmpdir(), "pi-mcp-native-pi-tarball-"));
try {
  const [packed] = JSON.parse(run("npm", ["pack", tarball.spec, "--json", "--pack-destination", scratch], { cwd: scratch }));
  const file = join(scratch, packed.filename);
  const integrity = `sha512-${createHash("sha512").update(readFileSync(file)).digest("base64")}`;
  if (integrity !== tarball.integrity) {
    throw new Error(`${tarball.spec} from the registry has integrity ${integrity}, expected ${tarball.integrity}`);
  }
  const target = join(dir, "node_modules", "@earendil-works", "pi-coding-agent");
  rmSync(target, { recursive: true, force: true });
  mkdirSync(target, { recursive: true });
  run("tar", ["-xzf", file, "-C", target, "--strip-components=1"]);
  console.log(`${tarball.spec} unpacked in ${target}`);
} finally {
  rmSync(scratch, { recursive: true, force: true });
}
