// @ts-check
// A resource the model read changed (a `resource-updated` event of the core): the user is shown
// it, and the model told with its next request, without a turn of its own (Pi adds the note after
// a running turn, or at once when idle). Once per resource until the model runs again: servers
// may send an update every few seconds.

/** Registers with `pi`; returns the event handler. `ui()` is the session's UI (none: not shown). */
/**
 * @param {import("@earendil-works/pi-coding-agent").ExtensionAPI} pi
 * @param {() => import("./questions.js").Dialogs | undefined} ui
 * @returns {(event: Extract<import("../../index.js").LifecycleEvent, { type: "resource-updated" }>) => void}
 */
export function resourceUpdates(pi, ui) {
  const announced = new Set();
  pi.on("agent_start", () => announced.clear());
  return (event) => {
    const key = `${event.server}\n${event.uri}`;
    if (announced.has(key)) return;
    announced.add(key);
    ui()?.notify(event.text, "info");
    pi.sendMessage?.({ customType: "mcp-resource-updated", content: event.note, display: true }, { triggerTurn: false });
  };
}
