// @ts-check
// Asking a person what an MCP server wants to know (elicitation), with whatever dialogs are at
// hand: Pi's (`ctx.ui`) or a terminal's (bin/terminal-ui.mjs), both `{ select, input, notify }`.
// The core writes every text and checks every answer (`adapter.takeField`); this walks the fields.

/**
 * The dialogs a question is asked with: Pi's `ctx.ui`, or a terminal's.
 * @typedef {object} Dialogs
 * @property {(title: string, options: string[], opts?: { signal?: AbortSignal; timeout?: number }) => Promise<string | undefined>} select
 * @property {(title: string, placeholder?: string, opts?: { signal?: AbortSignal }) => Promise<string | undefined>} input
 * @property {(text: string, level?: "info" | "warning" | "error") => void} notify
 */

const CANCEL = Symbol("cancel");

/**
 * Asks `question` (a form or a URL); resolves with `{ action, content? }`.
 * @param {Dialogs} ui
 * @param {import("../../index.js").McpAdapter} adapter
 * @param {import("../../index.js").Question} question
 * @param {AbortSignal} signal
 * @returns {Promise<import("../../index.js").QuestionAnswer>}
 */
export async function ask(ui, adapter, question, signal) {
  try {
    return question.mode === "url" ? await askUrl(ui, adapter, question, signal) : await askForm(ui, adapter, question, signal);
  } catch {
    return { action: "cancel" }; // a dialog that failed (or was closed under us) answers nothing
  }
}

/**
 * @typedef {import("../../index.js").McpAdapter} McpAdapter
 * @typedef {import("../../index.js").Question} Question
 * @typedef {import("../../index.js").QuestionField} QuestionField
 */

/**
 * @param {Dialogs} ui
 * @param {McpAdapter} adapter
 * @param {Extract<Question, { mode: "form" }>} q
 * @param {AbortSignal} signal
 * @returns {Promise<import("../../index.js").QuestionAnswer>}
 */
async function askForm(ui, adapter, q, signal) {
  const start = await ui.select(q.title, [q.labels.answer, q.labels.decline], { signal });
  if (start === undefined) return { action: "cancel" };
  if (start === q.labels.decline) return { action: "decline" };
  /** @type {Record<string, unknown>} */
  const content = {};
  for (const field of q.fields) {
    const value = await askField(ui, adapter, q, field, signal);
    if (value === CANCEL) return { action: "cancel" };
    if (value !== null && value !== undefined) content[field.name] = value;
  }
  return { action: "accept", content };
}

/**
 * One field, asked again until the core accepts the answer (a multi-select keeps its picks).
 * @param {Dialogs} ui
 * @param {McpAdapter} adapter
 * @param {Question} q
 * @param {QuestionField} field
 * @param {AbortSignal} signal
 */
async function askField(ui, adapter, q, field, signal) {
  let answer = null;
  for (;;) {
    answer = await answerOf(ui, q, field, signal, answer);
    if (answer === CANCEL || signal?.aborted) return CANCEL;
    const taken = adapter.takeField(q.id, field.name, answer);
    if (taken.error === undefined) return taken.value;
    ui.notify(taken.error, "warning");
  }
}

/**
 * @param {Dialogs} ui
 * @param {Question} q
 * @param {QuestionField} field
 * @param {AbortSignal} signal
 * @param {any} previous  the answer the core did not take, if any
 */
async function answerOf(ui, q, field, signal, previous) {
  // The core gives a `choices` field its options.
  if (field.kind === "choices") return pickMany(ui, q, /** @type {Parameters<typeof pickMany>[2]} */ (field), signal, previous ?? []);
  if (field.options) {
    const labels = field.options.map((o) => o.label);
    if (field.skippable) labels.push(q.labels.skip);
    for (;;) {
      const picked = await ui.select(field.prompt, labels, { signal });
      if (picked === undefined) return CANCEL;
      if (picked === q.labels.skip) return null;
      const option = field.options[labels.indexOf(picked)];
      if (option) return option.value;
    }
  }
  const typed = await ui.input(field.prompt, field.placeholder, { signal });
  return typed === undefined ? CANCEL : typed;
}

/**
 * A multi-select: one `select` per pick or unpick, chosen options marked, until "Done"; the core
 * then checks the count (minItems, maxItems) and says what is wrong.
 * @param {Dialogs} ui
 * @param {Question} q
 * @param {QuestionField & Required<Pick<QuestionField, "options">>} field
 * @param {AbortSignal} signal
 * @param {unknown[]} previous
 */
async function pickMany(ui, q, field, signal, previous) {
  const chosen = [...previous];
  for (;;) {
    const labels = field.options.map((o) => (chosen.includes(o.value) ? q.labels.chosen : "") + o.label);
    labels.push(q.labels.done);
    const picked = await ui.select(field.prompt, labels, { signal });
    if (picked === undefined) return CANCEL;
    if (picked === q.labels.done) return chosen.length ? chosen : null;
    const option = field.options[labels.indexOf(picked)];
    if (!option) continue;
    const at = chosen.indexOf(option.value);
    if (at >= 0) chosen.splice(at, 1);
    else chosen.push(option.value);
  }
}

/**
 * Whether a tool may run (the core's approval question): one select, closed by Pi after
 * `timeoutMs`; a grant for the session is handed to `remember` to keep. Resolves with the picked
 * option's value, null when closed without one.
 */
/**
 * @param {Dialogs} ui
 * @param {import("../../index.js").ApprovalQuestion} q
 * @param {AbortSignal} signal
 * @param {(entry: import("../../index.js").SessionEntry) => void} [remember]
 * @returns {Promise<import("../../index.js").ApprovalAnswer>}
 */
export async function askApproval(ui, q, signal, remember) {
  let picked;
  try {
    picked = await ui.select(q.title, q.options.map((o) => o.label), { signal, timeout: q.timeoutMs });
  } catch {} // a dialog that failed (or was closed under us) allows nothing
  const option = q.options.find((o) => o.label === picked);
  if (option?.remember && !signal?.aborted) remember?.(option.remember);
  return { choice: option && !signal?.aborted ? option.value : null };
}

/**
 * A page to open: shown, and opened (by the core, `$BROWSER` as for sign-ins) only once agreed.
 * @param {Dialogs} ui
 * @param {McpAdapter} adapter
 * @param {Extract<Question, { mode: "url" }>} q
 * @param {AbortSignal} signal
 * @returns {Promise<import("../../index.js").QuestionAnswer>}
 */
async function askUrl(ui, adapter, q, signal) {
  const picked = await ui.select(`${q.title}\n\n${q.message}`, [q.labels.open, q.labels.decline], { signal });
  if (picked === undefined) return { action: "cancel" };
  if (picked === q.labels.decline) return { action: "decline" };
  const failed = adapter.openUrl(q.url);
  if (failed) ui.notify(failed, "warning");
  return { action: "accept" };
}
