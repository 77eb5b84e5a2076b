// Builds the host page's script of MCP Apps, extension/pi-mcp-native/app-host.js, from
// scripts/apps/host.mjs and ext-apps' AppBridge with its dependencies, as pinned in
// package-lock.json: `npm run build:apps`. The output is committed and shipped; the same inputs
// give the same bytes (__test__/apps.test.mjs rebuilds it and compares). Nothing is fetched when
// the page runs.
import { build } from "esbuild";
import { existsSync, readFileSync, writeFileSync } from "node:fs";
import { dirname, join } from "node:path";
import { fileURLToPath } from "node:url";

const root = join(dirname(fileURLToPath(import.meta.url)), "..");
export const OUTPUT = join(root, "extension", "pi-mcp-native", "app-host.js");

// zod bundles every language of its error messages; the bridge's messages are its own, so only
// English (zod's default) is kept: 264 KB less.
const englishOnly = {
  name: "zod-english-only",
  setup(build) {
    build.onResolve({ filter: /^\.\.\/locales\/index\.js$/ }, (args) =>
      args.importer.includes(`${"zod"}`) ? { path: "zod-locales", namespace: "english-only" } : undefined,
    );
    build.onLoad({ filter: /.*/, namespace: "english-only" }, () => ({
      contents: 'export { default as en } from "zod/v4/locales/en.js";',
      resolveDir: root,
    }));
  },
};

/** The package a bundled file comes from (`node_modules/<name>/…`, scoped or not). */
function packageOf(input) {
  const parts = input.split("/");
  const at = parts.lastIndexOf("node_modules");
  if (at < 0) return undefined;
  return parts[at + 1].startsWith("@") ? `${parts[at + 1]}/${parts[at + 2]}` : parts[at + 1];
}

/** Each bundled package's license text, in a comment after the code. */
function notices(inputs) {
  const names = [...new Set(Object.keys(inputs).map(packageOf).filter(Boolean))].sort();
  return names
    .map((name) => {
      const dir = join(root, "node_modules", name);
      const manifest = JSON.parse(readFileSync(join(dir, "package.json"), "utf8"));
      const file = ["LICENSE", "LICENSE.md", "LICENSE.txt", "license"].find((f) => existsSync(join(dir, f)));
      const text = file ? readFileSync(join(dir, file), "utf8").trim() : `${manifest.license} (no license file in the package)`;
      return `/*! ${name} ${manifest.version} (${manifest.license})\n\n${text.replaceAll("*/", "* /")}\n*/`;
    })
    .join("\n");
}

/** The bundle's bytes. */
export async function bundle() {
  const version = (name) => JSON.parse(readFileSync(join(root, "node_modules", name, "package.json"), "utf8")).version;
  const built = await build({
    entryPoints: [join(root, "scripts", "apps", "host.mjs")],
    bundle: true,
    format: "esm",
    minify: true,
    target: ["chrome110", "firefox110", "safari16"],
    legalComments: "eof",
    charset: "utf8",
    write: false,
    metafile: true,
    absWorkingDir: root,
    plugins: [englishOnly],
    banner: {
      js: `// pi-mcp-native: the host page of MCP Apps. Built by \`npm run build:apps\` (scripts/build-apps.mjs) from scripts/apps/host.mjs and @modelcontextprotocol/ext-apps ${version("@modelcontextprotocol/ext-apps")} (MIT), with @modelcontextprotocol/client and core ${version("@modelcontextprotocol/client")} and zod ${version("zod")}; the license of each bundled package follows the code.`,
    },
  });
  const code = Buffer.from(built.outputFiles[0].contents);
  return Buffer.concat([code, Buffer.from(`${notices(built.metafile.inputs)}\n`)]);
}

if (process.argv[1] === fileURLToPath(import.meta.url)) {
  const bytes = await bundle();
  writeFileSync(OUTPUT, bytes);
  console.log(`${OUTPUT}: ${bytes.length} bytes`);
}
