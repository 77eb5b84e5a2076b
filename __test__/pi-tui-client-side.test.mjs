// What servers ask, as the user sees it in the real Pi's terminal UI (tmux, Pi 0.87.1, 1.5.2 and 1.6.0):
// the scripted model calls server-everything's elicitation, sampling and URL tools; the test reads
// each dialog off the screen and answers with keys, as a person would. One Pi session per version.
import assert from "node:assert/strict";
import { recordingBrowser } from "./helpers/browser.mjs";
import { piTest } from "./helpers/pi.mjs";
import { everything, root, waitFor } from "./helpers/servers.mjs";
import { TMUX_SKIP, withPiTui } from "./helpers/tui.mjs";

const mcp = (tool, args) => ({ tool_calls: [{ name: "mcp", arguments: { tool: `everything_${tool}`, ...(args && { args }) } }] });
const URL_ASKED = "https://example.com/consent?order=7";
const steps = [
  mcp("trigger-elicitation-request"),
  { text: "Filled." },
  mcp("trigger-elicitation-request"),
  { text: "Cancelled." },
  mcp("trigger-elicitation-request"),
  { text: "Declined." },
  mcp("trigger-sampling-request", { prompt: "the weather" }),
  { text: "Sunny, says Pi's model." }, // the sampling request itself
  { text: "Sampled." },
  mcp("trigger-url-elicitation", { url: URL_ASKED, message: "Approve the payment" }),
  { text: "Not opened." },
  mcp("trigger-url-elicitation", { url: URL_ASKED, message: "Approve the payment" }),
  { text: "Opened." },
];

/** Moves the cursor of the select on screen (between its rules) to the option `label` and takes it. */
async function choose(tui, label) {
  const screen = tui.screen();
  const lines = screen.split("\n");
  const at = lines.findIndex((l) => /^\s*→ /.test(l));
  const top = lines.findLastIndex((l, i) => i < at && l.startsWith("─"));
  const option = new RegExp(`^\\s*(→ )?${literal(label)}\\s*$`);
  const target = lines.findIndex((l, i) => i > top && option.test(l));
  assert.ok(at >= 0 && target >= 0, `no option "${label}" in the select on the screen:\n${screen}`);
  const moves = target - at;
  for (let i = 0; i < Math.abs(moves); i++) tui.keys(moves > 0 ? "Down" : "Up");
  const cursor = new RegExp(`^\\s*→ ${literal(label)}\\s*$`, "m");
  await tui.waitFor(cursor, `the cursor on "${label}"`);
  tui.keys("Enter");
}

const literal = (text) => text.replace(/[.*+?^${}()|[\]\\/]/g, "\\$&");

/** Waits for a dialog titled `title` (its first line) and returns the screen. */
const dialog = (tui, title, what = title) => tui.waitFor(new RegExp(`^ ${literal(title)} *$`, "m"), what);

piTest("a server's form, its URL and its sampling request, answered in Pi's dialogs", { timeout: 120_000, skip: TMUX_SKIP }, async (pi) => {
  const browser = recordingBrowser();
  try {
    const mcpConfig = { mcpServers: { everything: everything() } };
    await withPiTui({ pi, extensionDir: root, mcpConfig, script: { steps }, env: { BROWSER: browser.path }, timeoutMs: 100_000 }, async (tui) => {
      await tui.started();
      // The intro: who asks and its message, to answer or decline.
      let screen = await tui.submit("fill in the form", /MCP server "everything" asks:/, "the intro", 40_000);
      assert.match(screen, /MCP server "everything" asks: *\n(?: *\n)? Please provide inputs for the following fields: *\n(?: *\n)?\s*→ Answer *\n\s*Decline *\n/);
      tui.keys("Enter");
      // Each field: its title, what it takes (type, bounds, default or required), its description.
      screen = await dialog(tui, "String (text; required)");
      assert.match(screen, /String \(text; required\) *\n Your full, legal name *\n/);
      tui.type("Ada Lovelace");
      tui.keys("Enter");
      screen = await dialog(tui, "Boolean (yes or no; optional)");
      assert.match(screen, /Agree to the terms and conditions *\n\s*→ Yes *\n\s*No *\n\s*\(leave empty\)/);
      tui.keys("Enter");
      screen = await dialog(tui, "String with default (text; default It was a dark and stormy night.)");
      assert.match(screen, /Favorite first line of a story/);
      tui.keys("Enter"); // left empty: the default
      // An invalid value is refused with what is wrong, and the field asked again.
      screen = await dialog(tui, "String with email format (email; optional)");
      assert.match(screen, /Your email address \(will be verified, and never shared with anyone else\)/);
      tui.type("ada at example");
      tui.keys("Enter");
      screen = await tui.waitFor(/String with email format: is not a valid email/, "the refusal");
      await dialog(tui, "String with email format (email; optional)", "the email asked again");
      tui.type("ada@example.com");
      tui.keys("Enter");
      await dialog(tui, "String with uri format (uri; optional)");
      tui.keys("Enter");
      await dialog(tui, "String with date format (date; optional)");
      tui.type("1815-12-10");
      tui.keys("Enter");
      screen = await dialog(tui, "Integer (whole number from 1 to 100; default 42)");
      assert.match(screen, /Your favorite integer \(do not give us your phone number, pin, or other sensitive info\)/);
      tui.type("500");
      tui.keys("Enter");
      await tui.waitFor(/Integer: must be at most 100/, "the out-of-range refusal");
      await dialog(tui, "Integer (whole number from 1 to 100; default 42)", "the integer asked again");
      tui.type("7");
      tui.keys("Enter");
      await dialog(tui, "Number in range 1-1000 (number from 0 to 1000; default 3.14)");
      tui.keys("Enter");
      screen = await dialog(tui, "Untitled Single Select Enum (one of the options; default Monica)");
      assert.match(screen, /Choose your favorite friend *\n\s*→ Monica *\n\s*Rachel *\n\s*Joey *\n\s*Chandler *\n\s*Ross *\n\s*Phoebe *\n\s*\(leave empty\)/);
      await choose(tui, "Joey");
      // A multi-select: each pick marks its option (a second one unmarks it), "Done" ends it.
      // Four chosen of at most 3: refused with the reason, asked again with the picks kept.
      screen = await dialog(tui, "Untitled Multiple Select Enum (choose 1 to 3; default Guitar)");
      assert.match(screen, /Choose your favorite instruments *\n\s*→ Guitar *\n\s*Piano *\n\s*Violin *\n\s*Drums *\n\s*Bass *\n\s*Done/);
      for (const instrument of ["Piano", "Drums", "Bass", "Violin"]) {
        await choose(tui, instrument);
        await tui.waitFor(new RegExp(`✓ ${instrument}`), `${instrument} marked`);
      }
      await choose(tui, "Done");
      screen = await tui.waitFor(/Untitled Multiple Select Enum: allows at most 3 chosen/, "the refusal of a fourth");
      screen = await dialog(tui, "Untitled Multiple Select Enum (choose 1 to 3; default Guitar)", "the multi-select asked again");
      assert.match(screen, /→ Guitar *\n\s*✓ Piano *\n\s*✓ Violin *\n\s*✓ Drums *\n\s*✓ Bass *\n\s*Done/);
      await choose(tui, "✓ Violin");
      await tui.waitFor(/\n\s*Violin *\n/, "Violin unmarked");
      await choose(tui, "Done");
      // Titled options show their titles.
      screen = await dialog(tui, "Titled Single Select Enum (one of the options; default Superman)");
      assert.match(screen, /Choose your favorite hero *\n\s*→ Superman *\n\s*Green Lantern *\n\s*Wonder Woman/);
      await choose(tui, "Wonder Woman");
      screen = await dialog(tui, "Titled Multiple Select Enum (choose 1 to 3; default Tuna)");
      assert.match(screen, /Choose your favorite types of fish *\n\s*→ Tuna *\n\s*Salmon *\n\s*Trout *\n\s*Done/);
      await choose(tui, "Done");
      screen = await dialog(tui, "Legacy Titled Single Select Enum (one of the options; default Cats)");
      assert.match(screen, /Choose your favorite type of pet *\n\s*→ Cats *\n\s*Dogs *\n\s*Birds *\n\s*Fish *\n\s*Reptiles/);
      await choose(tui, "Dogs");
      screen = await tui.waitFor(/Filled\./, "the model's answer", 30_000);
      assert.match(screen, /✅ User provided the requested information! *\n User inputs: *\n - Name: Ada Lovelace *\n - Agreed to terms: true *\n - Email: ada@example\.com *\n - Birthdate: 1815-12-10 *\n - Favorite Integer: 7 *\n - Favorite Number: 3\.14/);
      // All of it as the server got it, in the tool result the model got (the fake LLM's next request).
      const filled = JSON.stringify(tui.llm.requests[1].body.messages.at(-1).content);
      assert.match(filled, /- Name: Ada Lovelace/, filled);
      assert.match(filled, /- Email: ada@example.com/);
      assert.match(filled, /- Favorite Integer: 7/);
      assert.match(filled, /\\"untitledMultipleSelectEnum\\": \[\\n\s*\\"Piano\\",\\n\s*\\"Drums\\",\\n\s*\\"Bass\\"\\n\s*\]/);
      assert.match(filled, /\\"titledSingleSelectEnum\\": \\"hero-3\\"/);
      assert.match(filled, /\\"titledMultipleSelectEnum\\": \[\\n\s*\\"fish-1\\"\\n\s*\]/, "Done with nothing chosen: the default");
      assert.match(filled, /\\"legacyTitledEnum\\": \\"pet-2\\"/);
      assert.match(filled, /\\"firstLine\\": \\"It was a dark and stormy night.\\"/);

      // Esc in the middle of the form cancels it.
      await tui.submit("again", /MCP server "everything" asks:/, "the intro again");
      tui.keys("Enter");
      await dialog(tui, "String (text; required)");
      tui.keys("Escape");
      await tui.waitFor(/⚠️ User cancelled the elicitation dialog\.[^]*Cancelled\./, "the cancellation and the model's answer");
      // "Decline" at the intro.
      await tui.submit("once more", /MCP server "everything" asks:/, "the intro once more");
      await choose(tui, "Decline");
      await tui.waitFor(/❌ User declined to provide the requested information\.[^]*Declined\./, "the refusal and the model's answer");

      // Sampling: which server asks and what, approved; it runs on Pi's model (the fake LLM).
      screen = await tui.submit("ask the server", /Allow MCP server "everything" to use the model\?/, "the sampling approval");
      assert.match(screen, /Allow MCP server "everything" to use the model\? *\n(?: *\n)? MCP server "everything" asks the model \(1 message, up to 100 tokens\): *\n System: You are a helpful test server\. *\n Last message: Resource trigger-sampling-request context: the weather *\n(?: *\n)?\s*→ Yes *\n\s*No/);
      await choose(tui, "Yes");
      await tui.waitFor(/"text": "Sunny, says Pi's model\."[^]*Sampled\./, "the sampled answer and the model's", 30_000);
      assert.equal(tui.llm.requests[7].body.messages[0].content, "You are a helpful test server.");

      // A URL: shown, opened only when the user says so.
      screen = await tui.submit("open the page", /MCP server "everything" asks you to open a page/, "the URL question");
      assert.match(screen, /Page: https:\/\/example\.com\/consent\?order=7 *\n(?: *\n)? The server's message: *\n +Approve the payment *\n(?: *\n)? Open it in your browser\? *\n(?: *\n)?\s*→ Open in the browser *\n\s*Decline/);
      await choose(tui, "Decline");
      await tui.waitFor(/❌ User declined to open the URL[^]*Not opened\./, "the refusal and the model's answer");
      assert.deepEqual(browser.opened(), []);
      await tui.submit("open it now", /MCP server "everything" asks you to open a page/, "the URL question again");
      assert.deepEqual(browser.opened(), [], "not opened while the question is open");
      await choose(tui, "Open in the browser");
      await tui.waitFor(/✅ User completed the URL elicitation flow\.[^]*Opened\./, "the flow and the model's answer");
      await waitFor(() => browser.opened().length, 5000, "the browser to be started");
      assert.deepEqual(browser.opened(), [URL_ASKED]);
    });
  } finally {
    browser.cleanup();
  }
});
