// @ts-check
// The callbacks the core asks a person or a model through (`adapter.setFrontEnd`): dialogs from
// `ui()` (Pi's `ctx.ui`, a terminal; undefined where nobody can answer) and a model from
// `runModel` (Pi's; absent in the command line). A question the server withdraws, or whose call
// ended, closes its dialog. An approval granted for the session is kept by `remember` (Pi's
// session entries; absent in the command line). The dialogs' code loads with the first question:
// most sessions get none, and Pi holds every module it loads for the whole session.

/**
 * @typedef {import("../../index.js").McpAdapter} McpAdapter
 * @typedef {import("../../index.js").SamplingRequest} SamplingRequest
 * @typedef {import("../../index.js").SamplingAnswer} SamplingAnswer
 * @typedef {import("./questions.js").Dialogs} Dialogs
 */

/**
 * @param {McpAdapter} adapter
 * @param {object} sources
 * @param {() => Dialogs | undefined} sources.ui
 * @param {(request: SamplingRequest, signal: AbortSignal) => Promise<SamplingAnswer | null>} [sources.runModel]
 * @param {(entry: import("../../index.js").SessionEntry) => void} [sources.remember]
 * @returns {Required<import("../../index.js").FrontEndCallbacks>}
 */
export function frontEnd(adapter, { ui, runModel, remember }) {
  const open = new Map(); // question or request id -> AbortController
  /** @type {<T>(id: number, work: (signal: AbortSignal) => Promise<T>) => Promise<T>} */
  const track = async (id, work) => {
    const controller = new AbortController();
    open.set(id, controller);
    try {
      return await work(controller.signal);
    } finally {
      open.delete(id);
    }
  };
  return {
    elicit: async (question) => {
      const dialogs = ui();
      if (!dialogs) return null;
      const { ask } = await import("./questions.js");
      return track(question.id, (signal) => ask(dialogs, adapter, question, signal));
    },
    sample: async (request) => (runModel ? track(request.id, (signal) => runModel(request, signal)) : null),
    approve: async (question) => {
      const dialogs = ui();
      if (!dialogs) return null;
      const { askApproval } = await import("./questions.js");
      return track(question.id, (signal) => askApproval(dialogs, question, signal, remember));
    },
    withdraw: (id) => open.get(id)?.abort(),
  };
}

/**
 * Runs a sampling request on Pi's model (`ctx.modelRegistry.complete`), after the user allows it.
 * @param {() => any} getCtx  Pi's session context (its model registry differs between versions)
 * @returns {(request: SamplingRequest, signal: AbortSignal) => Promise<SamplingAnswer | null>}
 */
export function piModel(getCtx) {
  return async (request, signal) => {
    const ctx = getCtx();
    if (!ctx?.modelRegistry) return null;
    if (request.approve) {
      if (!ctx.hasUI) return { refused: "no-ui" };
      if (!(await ctx.ui.confirm(request.title, request.preview, { signal }))) return { refused: "declined" };
    }
    const model = preferred(ctx, request.hints) ?? ctx.model;
    if (!model) return { refused: "no-model" };
    return ctx.modelRegistry.complete(model, request.context, { ...request.options, signal });
  };
}

/**
 * The first model of the current provider a hint names (hints are parts of model ids, best first):
 * a server's preference never moves the user to another provider's bill.
 */
function preferred(ctx, hints) {
  if (!hints.length) return undefined;
  let available = [];
  try {
    available = (ctx.modelRegistry.getAvailable?.() ?? []).filter((m) => !ctx.model || m.provider === ctx.model.provider);
  } catch {}
  for (const hint of hints) {
    const found = available.find((m) => m.id?.toLowerCase().includes(hint.toLowerCase()));
    if (found) return found;
  }
  return undefined;
}
