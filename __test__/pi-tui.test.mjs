// The real Pi's terminal UI under tmux (0.87.1 and 1.5.2): how Pi lists the extension, and the
// `/mcp` panel.
import assert from "node:assert/strict";
import { piTest } from "./helpers/pi.mjs";
import { root } from "./helpers/servers.mjs";
import { TMUX_SKIP, withPiTui } from "./helpers/tui.mjs";

const OPTS = { timeout: 90_000, skip: TMUX_SKIP };

piTest("the startup list names the extension pi-mcp-native; no servers, no footer, no crash", OPTS, async (pi) => {
  await withPiTui({ pi, extensionDir: root, mcpConfig: { mcpServers: {} } }, async (tui) => {
    const screen = await tui.waitFor(/\[Extensions\][ ]*\n[ ]+pi-mcp-native[ ]*\n/, "the extension in the startup list");
    assert.doesNotMatch(screen, /index\.(m?js)/);
    // The footer line with the model: Pi is up, and still up a moment later.
    await tui.waitFor(/fake-model/, "the footer");
    await new Promise((r) => setTimeout(r, 500));
    assert.match(tui.screen(), /fake-model/);
  });
});
