// A headless Chromium driven over the DevTools protocol for the MCP Apps tests: Debian's
// `chromium` (.ci/run installs it), started with --remote-debugging-pipe (the protocol on file
// descriptors 3 and 4: no WebSocket, which Node 20 lacks), as root with --no-sandbox (the
// process sandbox only; an iframe's sandbox and the CSP still apply), in a throwaway profile,
// bounded in time and killed by its PID (its process group) at the end.
import { spawn } from "node:child_process";
import { existsSync, mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";

export const CHROMIUM = ["/usr/lib/chromium/chromium", "/usr/bin/chromium"].find((p) => existsSync(p));

/** Starts the browser: `{ pid, send(method, params, sessionId), on(method, handler), open(url), close() }`. */
export async function chromium({ limitMs = 90_000 } = {}) {
  if (!CHROMIUM) throw new Error("Debian's chromium is needed for the MCP Apps tests: apt-get install --no-install-recommends chromium (.ci/run does it)");
  const profile = mkdtempSync(join(tmpdir(), "pi-mcp-native-chromium-"));
  const args = [
    "--headless",
    "--remote-debugging-pipe",
    `--user-data-dir=${profile}`,
    "--no-first-run",
    "--no-default-browser-check",
    "--disable-gpu",
    "--disable-extensions",
    "--disable-background-networking",
    "--disable-sync",
    "--mute-audio",
    "--window-size=900,700",
    ...(process.getuid?.() === 0 ? ["--no-sandbox"] : []),
    "about:blank",
  ];
  const child = spawn(CHROMIUM, args, { stdio: ["ignore", "ignore", "pipe", "pipe", "pipe"], detached: true });
  const [, , stderr, input, output] = child.stdio;
  let log = "";
  stderr.on("data", (d) => (log = (log + d).slice(-4000)));
  const killer = setTimeout(() => kill(), limitMs);
  killer.unref();
  const kill = () => {
    try {
      process.kill(-child.pid, "SIGKILL");
    } catch {}
  };
  let next = 1;
  const waiting = new Map();
  const handlers = new Map();
  let buffered = Buffer.alloc(0);
  output.on("data", (chunk) => {
    buffered = Buffer.concat([buffered, chunk]);
    let end;
    while ((end = buffered.indexOf(0)) >= 0) {
      const message = JSON.parse(buffered.subarray(0, end).toString("utf8"));
      buffered = buffered.subarray(end + 1);
      if (message.id && waiting.has(message.id)) {
        const { resolve, reject, method } = waiting.get(message.id);
        waiting.delete(message.id);
        if (message.error) reject(new Error(`${method}: ${message.error.message}`));
        else resolve(message.result);
      } else if (message.method) {
        for (const handler of handlers.get(message.method) ?? []) handler(message.params, message.sessionId);
      }
    }
  });
  const exited = new Promise((resolve) => child.once("exit", resolve));
  const send = (method, params = {}, sessionId) =>
    new Promise((resolve, reject) => {
      const id = next++;
      waiting.set(id, { resolve, reject, method });
      input.write(`${JSON.stringify({ id, method, params, ...(sessionId && { sessionId }) })}\0`);
    });
  const on = (method, handler) => handlers.set(method, [...(handlers.get(method) ?? []), handler]);
  try {
    await Promise.race([send("Browser.getVersion"), exited.then(() => Promise.reject(new Error(`chromium exited: ${log}`)))]);
  } catch (error) {
    kill();
    rmSync(profile, { recursive: true, force: true });
    throw error;
  }

  /** Opens `url` in a new tab: `{ targetId, session, frames: Map<url prefix → session>, evaluate, app(origin, expression), screenshot() }`. */
  async function open(url) {
    const { targetId } = await send("Target.createTarget", { url: "about:blank" });
    const { sessionId } = await send("Target.attachToTarget", { targetId, flatten: true });
    const frames = new Map(); // out-of-process frames (a sandboxed iframe may be one): url → session
    on("Target.attachedToTarget", (params, parent) => {
      if (parent === sessionId && params.targetInfo.type === "iframe") {
        frames.set(params.sessionId, params.targetInfo.url);
        send("Runtime.runIfWaitingForDebugger", {}, params.sessionId).catch(() => {});
      }
    });
    on("Target.targetInfoChanged", ({ targetInfo }) => {
      for (const [session, _] of frames) if (targetInfo.type === "iframe") frames.set(session, targetInfo.url);
    });
    await send("Page.enable", {}, sessionId);
    await send("Target.setAutoAttach", { autoAttach: true, flatten: true, waitForDebuggerOnStart: false }, sessionId);
    await send("Page.navigate", { url }, sessionId);
    const evaluate = async (expression, session = sessionId, contextId) => {
      const { result, exceptionDetails } = await send("Runtime.evaluate", { expression, returnByValue: true, awaitPromise: true, ...(contextId && { contextId }) }, session);
      if (exceptionDetails) throw new Error(`${expression}: ${exceptionDetails.exception?.description ?? exceptionDetails.text}`);
      return result.value;
    };
    /** Evaluates in the frame whose document is at `prefix`: its own target, or an isolated world in the page's. */
    const app = async (prefix, expression) => {
      for (const [session, frameUrl] of frames) if (frameUrl.startsWith(prefix)) return evaluate(expression, session);
      const { frameTree } = await send("Page.getFrameTree", {}, sessionId);
      const frame = (frameTree.childFrames ?? []).map((c) => c.frame).find((f) => f.url.startsWith(prefix));
      if (!frame) throw new Error(`no frame at ${prefix} yet`);
      const { executionContextId } = await send("Page.createIsolatedWorld", { frameId: frame.id, worldName: "test" }, sessionId);
      return evaluate(expression, sessionId, executionContextId);
    };
    const screenshot = async () => Buffer.from((await send("Page.captureScreenshot", { format: "png" }, sessionId)).data, "base64");
    const close = () => send("Target.closeTarget", { targetId });
    return { targetId, session: sessionId, evaluate, app, screenshot, close };
  }

  async function close() {
    clearTimeout(killer);
    await Promise.race([send("Browser.close").catch(() => {}), new Promise((r) => setTimeout(r, 3000))]);
    await Promise.race([exited, new Promise((r) => setTimeout(r, 3000))]);
    kill(); // whatever of its group is left
    rmSync(profile, { recursive: true, force: true });
  }

  return { pid: child.pid, send, on, open, close, log: () => log };
}
