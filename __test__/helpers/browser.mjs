// Browsers for tests, used as $BROWSER.
// - Run as a script, a headless one for sign-in tests: `node browser.mjs <url>` opens the
//   authorization URL and follows its redirects (the authorization server approves at once) to
//   the client's loopback listener, as a user's browser would. Bounded in time; prints the final
//   status. With BROWSER_LOG set, appends each URL it opens to that file.
// - recordingBrowser(): one that only writes down each URL it is asked to open.
import { appendFileSync, chmodSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { pathToFileURL } from "node:url";

/** `{ path, opened(), cleanup() }`: $BROWSER = path; opened() lists the URLs it was started with. */
export function recordingBrowser() {
  const dir = mkdtempSync(join(tmpdir(), "pi-mcp-native-browser-"));
  const path = join(dir, "browser.sh");
  const log = join(dir, "opened.txt");
  writeFileSync(path, `#!/bin/sh\necho "$1" >> '${log}'\n`);
  chmodSync(path, 0o755);
  const opened = () => {
    try {
      return readFileSync(log, "utf8").split("\n").filter(Boolean);
    } catch {
      return [];
    }
  };
  return { path, opened, cleanup: () => rmSync(dir, { recursive: true, force: true }) };
}

async function open(url) {
  if (process.env.BROWSER_LOG) appendFileSync(process.env.BROWSER_LOG, `${url}\n`);
  try {
    const answer = await fetch(url, { redirect: "follow", signal: AbortSignal.timeout(30_000) });
    process.stdout.write(`${answer.status} ${answer.url}\n`);
  } catch (error) {
    process.stderr.write(`browser: ${error.message}\n`);
    process.exitCode = 1;
  }
}

if (process.argv[1] && import.meta.url === pathToFileURL(process.argv[1]).href) await open(process.argv.at(-1));
