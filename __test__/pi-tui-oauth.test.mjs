// Signing in to an OAuth server inside the real Pi's terminal UI (tmux), as a user whose browser
// is not on this machine (over SSH) does it: the authorization URL is shown, the test opens it as
// that browser would (the authorization server redirects to our loopback callback, which that
// browser cannot reach), and pastes the address it ended on into the prompt. Against the loopback
// authorization server + protected MCP server of the OAuth tests (fixtures/oauth-server.mjs).
// Pi 1.5.2 only: Pi 0.87.1 draws the same dialogs (ctx.ui.input, custom, notify).
import assert from "node:assert/strict";
import { readFileSync } from "node:fs";
import { join } from "node:path";
import { startOAuthServer } from "./fixtures/oauth-server.mjs";
import { PI_15, piTest } from "./helpers/pi.mjs";
import { root } from "./helpers/servers.mjs";
import { TMUX_SKIP, withPiTui } from "./helpers/tui.mjs";

const OPTS = { timeout: 120_000, skip: TMUX_SKIP, pis: [PI_15] };
// No browser on this machine: the URL is only shown.
const NO_BROWSER = { BROWSER: "/nonexistent/browser" };
const PROMPT = /Paste the address the browser ended on \(or the code\) to finish signing in to "srv"\s*\n\s*>/;

const mcp = (args) => ({ tool_calls: [{ name: "mcp", arguments: args }] });
const store = (tui) => JSON.parse(readFileSync(join(tui.box.agentDir, "mcp-auth.json"), "utf8"));
const keyOf = (as) => `mcp__srv|${as.url}`;

/**
 * The authorization URL as the screen shows it (Pi wraps it over several lines), opened as the
 * user's browser would: the authorization server approves and redirects to our loopback
 * callback; the address it redirects to is what the user copies back.
 */
async function authorizeFromScreen(screen) {
  const shown = /Sign in to "srv" in a browser: *\n([^]*?)\n *No browser was opened/.exec(screen);
  assert.ok(shown, `no authorization URL on the screen:\n${screen}`);
  const url = shown[1].split("\n").map((line) => line.trim()).join("");
  assert.match(url, /^http:\/\/127\.0\.0\.1:\d+\/authorize\?response_type=code&/);
  const answer = await fetch(url, { redirect: "manual", signal: AbortSignal.timeout(10_000) });
  assert.equal(answer.status, 302);
  const redirect = answer.headers.get("location");
  assert.match(redirect, /^http:\/\/127\.0\.0\.1:\d+\/callback\?code=/);
  return redirect;
}

/** Completes the sign-in waiting at the paste prompt, as a user pasting the redirect does. */
async function pasteRedirect(tui, screen) {
  tui.type(await authorizeFromScreen(screen));
  tui.keys("Enter");
  return tui.waitFor(/Signed in to "srv", the access token expires in 60 min; 1 tool available\./, "the sign-in", 30_000);
}

piTest("/mcp login shows the URL and a paste prompt; the pasted redirect signs in, and the model's call works", OPTS, async (pi) => {
  const as = await startOAuthServer();
  try {
    const steps = [mcp({ tool: "whoami", server: "srv" }), { text: "done" }];
    await withPiTui({ pi, extensionDir: root, mcpConfig: { mcpServers: { srv: { url: as.url } } }, env: NO_BROWSER, script: { steps } }, async (tui) => {
      await tui.waitFor(/fake-model/, "Pi to be up");
      // Esc at the prompt ends the sign-in, and Pi takes commands again.
      await tui.submit("/mcp login srv", PROMPT, "the paste prompt");
      tui.keys("Escape");
      await tui.waitFor(/Signing in to "srv" was cancelled; nothing was saved\./, "the cancellation");
      assert.equal(as.stats.authorization_code, 0);

      await tui.submit("/mcp login srv", PROMPT, "the paste prompt again");
      const screen = tui.screen();
      assert.match(screen, /No browser was opened \(no browser could be started/);
      await pasteRedirect(tui, screen);
      assert.deepEqual([as.stats.authorize, as.stats.authorization_code], [1, 1]);
      assert.ok(store(tui)[keyOf(as)].tokens.access_token);
      await tui.waitFor(/MCP 1\/1 connected/, "the footer");

      await tui.submit("who am I?", /signed in as test-user[^]*done/, "the model's call");
    });
  } finally {
    await as.close();
  }
});
