// @ts-check
// `/mcp setup`: the core's plan (other tools' configs, well-known servers) as choices in Pi's
// dialogs, then the change it would make shown for confirmation, written only when confirmed.
// Outside a UI (print, json) it shows the plan: there is nobody to confirm a change.

const DONE = "Continue: show the change";

/** Adds `/mcp setup [--project]` to `mcp` (see mcp-command.js). */
/**
 * @param {ReturnType<typeof import("./mcp-command.js").createMcpCommand>} mcp
 * @param {object} parts
 * @param {() => import("../../index.js").McpAdapter} parts.core
 * @param {(outcome: import("../../index.js").Outcome) => string} parts.textOf
 * @param {(ctx: any) => void} parts.reopen
 */
export function addSetup(mcp, { core, textOf, reopen }) {
  mcp.add("setup", {
    summary: "import your other tools' MCP servers or add well-known ones, with a preview (--project: this project's .pi/mcp.json)",
    usage: "[--project]",
    async run(args, ctx, out) {
      const project = args.includes("--project");
      const plan = core().setupPlan(project);
      if (plan.isError || !ctx?.hasUI) return plan.isError ? out.error(textOf(plan)) : out.info(textOf(plan));
      const choice = await choose(ctx, plan.details);
      if (!choice) return out.info("Setup cancelled: nothing was written.");
      const preview = core().setupApply({ ...choice, project, dryRun: true });
      if (preview.isError) return out.error(textOf(preview));
      if (!preview.details.preview) return out.info(textOf(preview));
      const write = await ctx.ui.confirm(`Write ${preview.details.file}?`, preview.details.preview);
      if (!write) return out.info("Nothing was written.");
      const done = core().setupApply({ ...choice, project });
      if (done.isError) return out.error(textOf(done));
      reopen(ctx);
      out.info(textOf(done));
    },
  });
}

/** Asks what to take, one pick at a time (a pick again drops it); undefined when cancelled. */
async function choose(ctx, plan) {
  const offers = [];
  for (const found of plan.found) {
    if (found.imported || found.new.length === 0) continue;
    const names = found.new.join(", ");
    offers.push({ label: `Import ${found.tool} (${names}): read from its file each time`, key: ["imports", found.tool] });
    offers.push({ label: `Copy ${found.tool}'s servers (${names}) into the file`, key: ["copy", found.tool] });
  }
  for (const known of plan.wellKnown) {
    if (!known.configured) offers.push({ label: `Add ${known.title} (${known.id}): ${known.about}`, key: ["add", known.id] });
  }
  if (!plan.exists) offers.push({ label: "Start an empty config", key: ["empty"] });
  const picked = new Set();
  for (;;) {
    const labels = offers.map((o) => `${picked.has(o) ? "✓" : "·"} ${o.label}`);
    const answer = await ctx.ui.select(`MCP setup: pick what to take (${picked.size} picked), then continue`, [...labels, DONE]);
    if (answer === undefined || answer === null) return undefined;
    if (answer === DONE) break;
    const offer = offers[labels.indexOf(answer)];
    if (!offer) continue;
    picked.has(offer) ? picked.delete(offer) : picked.add(offer);
  }
  const choice = { imports: [], copy: [], add: [] };
  for (const { key } of picked) if (key[0] !== "empty") choice[key[0]].push(key[1]);
  return choice;
}
