// A headless "browser" for sign-in tests, used as $BROWSER: `node browser.mjs <url>` opens the
// authorization URL and follows its redirects (the authorization server approves at once) to the
// client's loopback listener, as a user's browser would. Bounded in time; prints the final status.
const url = process.argv.at(-1);
try {
  const answer = await fetch(url, { redirect: "follow", signal: AbortSignal.timeout(30_000) });
  process.stdout.write(`${answer.status} ${answer.url}\n`);
} catch (error) {
  process.stderr.write(`browser: ${error.message}\n`);
  process.exitCode = 1;
}
