// Bounds on what servers put before a person or the model, through the native API: questions
// (elicitation, sampling) ended with the call that asked them, a flood of questions, oversized
// questions, prompts with huge argument lists as commands, and thousands of resources listed for
// Pi's resource tools. Rows F7 to F10 of the reliability matrix (issue 26's items 7 to 10).
import { describe } from "node:test";
import assert from "node:assert/strict";
import { join } from "node:path";
import { frontEnd, piModel } from "../extension/pi-mcp-native/front-end.js";
import { row, timed } from "./helpers/matrix.mjs";
import { everything, tapped, text, waitFor, wireOf, withAdapter } from "./helpers/servers.mjs";

const here = import.meta.url;

/** Dialogs that stay open until their signal aborts; `open` and `closed` count them. */
function heldDialogs() {
  const counts = { open: 0, closed: 0 };
  const hold = (_title, _options, { signal }) =>
    new Promise((resolve) => {
      counts.open += 1;
      signal.addEventListener("abort", () => ((counts.closed += 1), resolve(undefined)));
    });
  return { counts, ui: { select: hold, input: hold, confirm: hold, notify: () => {} } };
}

describe("questions end with their call", () => {
  row("F7", "a call stopped by callTimeoutMs while its question is open (no call id): the dialog closes, the server is told", here, async ({ note }) => {
    await withAdapter(
      ({ cwd, home }) => ({ ev: tapped(everything({ cwd, callTimeoutMs: 800 }), join(home, "wire.log")) }),
      async ({ adapter, agent }) => {
        const wire = join(agent.home, "wire.log");
        const held = heldDialogs();
        const model = { hasUI: true, ui: held.ui, model: { id: "m", provider: "p" }, modelRegistry: { getAvailable: () => [], complete: async () => ({}) } };
        adapter.setFrontEnd(frontEnd(adapter, { ui: () => held.ui, runModel: piModel(() => model) }));
        const figures = [];
        for (const [tool, args, kind] of [["ev_trigger-elicitation-request", {}, "form"], ["ev_trigger-sampling-request", { prompt: "x" }, "sampling approval"]]) {
          const opened = held.counts.open + 1;
          const [outcome, ms] = await timed(() => adapter.call(tool, args));
          assert.equal(outcome.details.error, "timeout", text(outcome));
          assert.match(text(outcome), /ran longer than its limit of 0\.8 s \(callTimeoutMs\) and was stopped/);
          assert.equal(held.counts.open, opened, `the ${kind} was shown`);
          const [, closing] = await timed(() => waitFor(() => held.counts.closed === opened, 3000, `the ${kind} to close`));
          figures.push(`${kind}: call stopped after ${ms} ms, its dialog closed ${closing} ms later`);
        }
        // What the server was told: each call cancelled, the form answered cancel, the sampling
        // request an error.
        const answers = (lines) => lines.filter((m) => m.result?.action || m.error);
        const sent = await waitFor(() => {
          const lines = wireOf(wire);
          return lines.filter((m) => m.method === "notifications/cancelled").length === 2 && answers(lines).length === 2 && lines;
        }, 3000, "the server to be told");
        const calls = sent.filter((m) => m.method === "tools/call").map((m) => m.id);
        assert.deepEqual(sent.filter((m) => m.method === "notifications/cancelled").map((m) => m.params.requestId), calls);
        const [form, sampling] = answers(sent);
        assert.equal(form.result?.action, "cancel", JSON.stringify(sent));
        assert.deepEqual(sampling.error, { code: -1, message: "the sampling request was cancelled" });
        // The same server answers the next question.
        adapter.setFrontEnd(frontEnd(adapter, { ui: () => ({ select: async () => "Decline", input: async () => undefined, notify: () => {} }) }));
        assert.match(text(await adapter.call("ev_trigger-elicitation-request", {})), /User declined/);
        assert.equal(wireOf(wire).filter((m) => m.method === "initialize").length, 1);
        note(`${figures.join("; ")}; the server got notifications/cancelled for both calls, the form answered cancel and the sampling request an error; the next question was answered`);
      },
    );
  });
});
