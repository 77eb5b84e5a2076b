// Signing in to an OAuth server inside the real Pi's terminal UI (tmux), as a user whose browser
// is not on this machine (over SSH) does it: the authorization URL is shown, the test opens it as
// that browser would (the authorization server redirects to our loopback callback, which that
// browser cannot reach), and pastes the address it ended on into the prompt. Against the loopback
// authorization server + protected MCP server of the OAuth tests (fixtures/oauth-server.mjs).
// On the Pis with their own MCP support only: Pi 0.87.1 draws the same dialogs (ctx.ui.input, custom, notify).
import assert from "node:assert/strict";
import { readFileSync } from "node:fs";
import { join } from "node:path";
import { startOAuthServer } from "./fixtures/oauth-server.mjs";
import { PI_BUILTIN_MCP, piTest } from "./helpers/pi.mjs";
import { everything, root } from "./helpers/servers.mjs";
import { TMUX_SKIP, withPiTui } from "./helpers/tui.mjs";

const OPTS = { timeout: 120_000, skip: TMUX_SKIP, pis: PI_BUILTIN_MCP };
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
  // The last one shown (an earlier sign-in's may still be on the screen).
  const shown = [...screen.matchAll(/Sign in to "srv" in a browser: *\n((?: *\n)* *http[^ \n]*(?: *\n *[^ \n]+)*)/g)].at(-1);
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
      await tui.started();
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

piTest("the /mcp panel: the server needing sign-in comes first; sign in (URL, pasted redirect), then sign out", OPTS, async (pi) => {
  const as = await startOAuthServer();
  try {
    const mcpConfig = { mcpServers: { alpha: everything(), srv: { url: as.url } } };
    await withPiTui({ pi, extensionDir: root, mcpConfig, env: NO_BROWSER }, async (tui) => {
      // The first run's listing found that srv needs sign-in.
      await tui.waitFor(/MCP 0\/2 connected, 1 needs auth/, "the footer", 40_000);
      await tui.submit("/mcp", /MCP servers *\n\s*› srv +needs sign-in · 0 tools · mcp tool · ~\/\.pi\/agent\/mcp\.json *\n\s*alpha +cached · /, "the panel, srv first");
      tui.keys("Enter");
      await tui.waitFor(/MCP server srv[^]*needs sign-in: [^]*Sign in with `\/mcp login srv`[^]*› Tools[^]*\n\s*Reconnect *\n\s*Sign in +opens the browser/, "srv's actions");
      // Esc at the prompt: back in the panel, nothing signed in.
      tui.keys("Down", "Down", "Enter");
      await tui.waitFor(PROMPT, "the paste prompt");
      tui.keys("Escape");
      await tui.waitFor(/MCP server srv[^]*› Sign in[^]*Signing in to "srv" was cancelled; nothing was saved\./, "the cancellation in the panel");
      tui.keys("Enter");
      let screen = await tui.waitFor(PROMPT, "the paste prompt again");
      screen = await pasteRedirect(tui, screen);
      assert.match(screen, /MCP server srv *\n\s*connected · 1 tool · exposure mcp tool · signed in, expires in 60 min/);
      assert.ok(store(tui)[keyOf(as)].tokens.access_token);

      // Sign out: the action took the place of Sign in, under the cursor.
      assert.match(screen, /› Sign out +deletes its stored tokens/);
      tui.keys("Enter");
      screen = await tui.waitFor(/Signed out of "srv": the tokens were revoked at the authorization server and deleted\./, "the sign-out");
      assert.match(screen, /MCP server srv *\n\s*needs sign-in · 1 tool[^]*needs sign-in: signed out, its tokens were deleted\. Sign in with `\/mcp login srv`/);
      assert.match(screen, /Sign in +opens the browser/);
      assert.equal(store(tui)[keyOf(as)], undefined);
      assert.equal(as.stats.revoked, 2);
      tui.keys("Escape");
      await tui.waitFor(/MCP servers *\n\s*› srv +needs sign-in · 1 tool · /, "the list, srv needing sign-in");
      await tui.waitFor(/MCP 0\/2 connected, 1 needs auth/, "the footer");
      tui.keys("Escape");
      await tui.waitFor(/^(?![^]*MCP servers)/, "the panel to close");
    });
  } finally {
    await as.close();
  }
});

piTest("/mcp-auth (pi-mcp-adapter's command) runs the same sign-in; /mcp logout signs out", OPTS, async (pi) => {
  const as = await startOAuthServer();
  try {
    await withPiTui({ pi, extensionDir: root, mcpConfig: { mcpServers: { srv: { url: as.url } } }, env: NO_BROWSER }, async (tui) => {
      await tui.started();
      await tui.submit("/mcp-auth srv", PROMPT, "the paste prompt");
      // What is not an address or a code is refused, and the prompt asks again.
      tui.type("not what the browser showed");
      tui.keys("Enter");
      const refusal = /What\s+was\s+pasted\s+did\s+not\s+finish\s+the\s+sign-in:\s+paste\s+the\s+whole\s+address\s+the\s+browser\s+ended\s+on,\s+or\s+just\s+the\s+code\.\s+It\s+still\s+waits\./;
      const screen = await tui.waitFor(refusal, "the refusal");
      assert.match(screen, PROMPT);
      await pasteRedirect(tui, screen);
      assert.ok(store(tui)[keyOf(as)].tokens.access_token);
      await tui.waitFor(/MCP 1\/1 connected/, "the footer");

      await tui.submit("/mcp logout srv", /Signed out of "srv": the tokens were revoked at the authorization server and deleted\./, "the sign-out");
      assert.equal(store(tui)[keyOf(as)], undefined);
      await tui.waitFor(/MCP 0\/1 connected, 1 needs auth/, "the footer");
    });
  } finally {
    await as.close();
  }
});
