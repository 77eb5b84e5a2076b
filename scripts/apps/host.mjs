// @ts-check
// The host page's script (bundled into extension/pi-mcp-native/apps/host.js by
// scripts/build-apps.mjs): ext-apps' AppBridge between the app's sandboxed frame and the core's
// bridge on this origin. It decides nothing: every request of the app goes to the core, which
// applies the policy (docs/design/mcp-apps.md).
import { AppBridge, PostMessageTransport } from "@modelcontextprotocol/ext-apps/app-bridge";

// The core's page always has the settings' element.
const settings = JSON.parse(/** @type {string} */ (/** @type {HTMLElement} */ (document.getElementById("pi-mcp-app")).textContent));
// Opened with the opener's one-time code: the tab's address becomes the one a reload can use.
history.replaceState(null, "", settings.address);
const headers = { "Content-Type": "application/json", "X-Pi-Mcp-Token": settings.token };

function say(text) {
  let status = document.getElementById("status");
  if (!status) {
    status = document.createElement("div");
    status.id = "status";
    document.body.append(status);
  }
  status.textContent = text;
}

/** One request of the app, answered by the core; its error becomes the app's. */
async function core(method, params) {
  const response = await fetch(settings.rpc, { method: "POST", headers, body: JSON.stringify({ method, params }) });
  if (!response.ok) throw new Error(`the host refused the request (${response.status})`);
  const answer = await response.json();
  if (answer.error) throw Object.assign(new Error(answer.error.message), { code: answer.error.code });
  return answer.result;
}

const frame = document.createElement("iframe");
frame.id = "app";
frame.title = `${settings.tool} (MCP server ${settings.server})`;
frame.setAttribute("sandbox", settings.sandbox);
frame.setAttribute("referrerpolicy", "no-referrer");
// The features the app's resource asked for (its _meta.ui.permissions), checked by the core.
if (settings.allow) frame.setAttribute("allow", settings.allow);
if (settings.border === true) frame.className = "border";
document.body.append(frame);

const bridge = new AppBridge(
  null,
  { name: "pi-mcp-native", version: "1" },
  {
    openLinks: {},
    serverTools: {},
    serverResources: {},
    message: { text: {} },
    updateModelContext: { text: {}, structuredContent: {} },
    sandbox: { permissions: settings.permissions },
  },
  { hostContext: settings.hostContext },
);
let hostContext = settings.hostContext;
bridge.oncalltool = (params) => core("tools/call", params);
bridge.onreadresource = (params) => core("resources/read", params);
bridge.onlistresources = (params) => core("resources/list", params);
bridge.onlistresourcetemplates = (params) => core("resources/templates/list", params);
bridge.onmessage = (params) => core("ui/message", params);
bridge.onupdatemodelcontext = (params) => core("ui/update-model-context", params);
bridge.onopenlink = (params) => core("ui/open-link", params);
bridge.onrequestdisplaymode = async () => ({ mode: /** @type {const} */ ("inline") });
bridge.addEventListener("loggingmessage", (params) => {
  core("notifications/message", params).catch(() => {});
});
bridge.addEventListener("sizechange", ({ height }) => {
  if (typeof height === "number" && height > 0) frame.style.height = `${Math.min(height, 100000)}px`;
});

let ended = false;
async function end(why) {
  if (ended) return;
  ended = true;
  try {
    await Promise.race([bridge.teardownResource({}), new Promise((done) => setTimeout(done, 2000))]);
  } catch {}
  frame.remove();
  say(why);
}
bridge.addEventListener("requestteardown", async () => {
  await core("ui/notifications/request-teardown", {}).catch(() => {});
  end("The app closed itself.");
});

/** One push of the core to the app. */
async function deliver({ method, params }) {
  switch (method) {
    case "ui/notifications/tool-input-partial":
      return bridge.sendToolInputPartial(params);
    case "ui/notifications/tool-input":
      return bridge.sendToolInput(params);
    case "ui/notifications/tool-result":
      return bridge.sendToolResult(params);
    case "ui/notifications/tool-cancelled":
      return bridge.sendToolCancelled(params);
    case "ui/notifications/host-context-changed":
      // The bridge sends the app what differs from the context it had.
      hostContext = { ...hostContext, ...params };
      return bridge.setHostContext(hostContext);
  }
}

/** The core's pushes (the calls' input and end, context changes) until the app session ends. */
async function listen() {
  // Nothing listening any more (Pi ended the session as the app started): the same end.
  const response = await fetch(settings.events, { headers: { "X-Pi-Mcp-Token": settings.token } }).catch(() => null);
  if (!response) return end("This app's session is over (Pi ended it).");
  if (!response.ok || !response.body) return end("This app's session is over.");
  const reader = response.body.pipeThrough(new TextDecoderStream()).getReader();
  let buffered = "";
  for (;;) {
    const { value, done } = await reader.read().catch(() => /** @type {{ done: true; value?: undefined }} */ ({ done: true }));
    if (done) break;
    buffered += value;
    let newline;
    while ((newline = buffered.indexOf("\n")) >= 0) {
      const push = JSON.parse(buffered.slice(0, newline));
      buffered = buffered.slice(newline + 1);
      await deliver(push);
    }
  }
  end("This app's session is over (Pi ended it).");
}

bridge.addEventListener("initialized", () => {
  listen();
});
// The frame is in the page: it has a window.
await bridge.connect(new PostMessageTransport(/** @type {Window} */ (frame.contentWindow), /** @type {Window} */ (frame.contentWindow)));
frame.src = settings.document;
