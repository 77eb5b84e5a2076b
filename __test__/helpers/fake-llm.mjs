// Scripted fake of the OpenAI chat-completions API on 127.0.0.1, no dependencies.
// Chat request i is answered with steps[i]; past the end of the script it answers with a final text.
// With `conversations` ({ "Task: one": steps, … }), a request whose first user message starts with
// a key is a turn of that conversation instead, answered from its own steps (several Pi processes,
// e.g. subagents, on one fake LLM); its record says which (`conversation`).
//   module: const llm = await startFakeLlm({ steps }); … llm.requests … await llm.close();
//   CLI:    node fake-llm.mjs --script s.json --port-file p [--max-requests n] [--timeout-s s] [--log requests.json]
import http from "node:http";
import { readFileSync, renameSync, writeFileSync } from "node:fs";
import { pathToFileURL } from "node:url";

export const FINAL_TEXT = "done";

export function startFakeLlm({ steps = [], conversations = {}, maxRequests = Infinity, timeoutMs = 60_000, port = 0, onRequest } = {}) {
  const requests = [];
  let answered = 0;
  let closing = false;
  const server = http.createServer((req, res) => {
    const tRecv = Date.now();
    const chunks = [];
    req.on("data", (c) => chunks.push(c));
    req.on("end", () => {
      if (req.method === "GET" && req.url.replace(/\?.*$/, "").endsWith("/models")) {
        return sendJson(res, 200, { object: "list", data: [{ id: "fake-model", object: "model", owned_by: "fake" }] });
      }
      if (req.method !== "POST" || !req.url.includes("/chat/completions")) {
        return sendJson(res, 404, { error: { message: `fake-llm: no route ${req.method} ${req.url}` } });
      }
      let body;
      try {
        body = JSON.parse(Buffer.concat(chunks).toString("utf8"));
      } catch (e) {
        return sendJson(res, 400, { error: { message: `fake-llm: bad JSON: ${e.message}` } });
      }
      const index = requests.length;
      const conversation = conversationOf(body, conversations);
      const turn = conversation ? requests.filter((r) => r.conversation === conversation).length : requests.filter((r) => !r.conversation).length;
      const step = (conversation ? conversations[conversation] : steps)[turn] ?? { text: FINAL_TEXT };
      const headers = { ...req.headers };
      delete headers.authorization;
      const record = { index, conversation, path: req.url, headers, body, step, tRecv, tDone: null };
      requests.push(record);
      res.on("finish", () => {
        record.tDone = Date.now();
        onRequest?.(record, requests);
        if (++answered >= maxRequests) close();
      });
      if (body.stream) streamStep(res, step, index, body);
      else sendJson(res, 200, completion(step, index, body));
    });
  });

  const timer = setTimeout(() => close(), timeoutMs);
  timer.unref();

  const closed = new Promise((resolve) => server.once("close", resolve));
  function close() {
    if (!closing) {
      closing = true;
      clearTimeout(timer);
      server.close();
      server.closeAllConnections();
    }
    return closed;
  }

  return new Promise((resolve, reject) => {
    server.once("error", reject);
    server.listen(port, "127.0.0.1", () => {
      const { port } = server.address();
      resolve({ url: `http://127.0.0.1:${port}/v1`, port, requests, close, closed });
    });
  });
}

/** The key of `conversations` the request's first user message starts with, or null. */
function conversationOf(body, conversations) {
  const first = (body.messages ?? []).find((m) => m.role === "user");
  const content = first?.content;
  const text = typeof content === "string" ? content : (content ?? []).map((c) => c.text ?? "").join("");
  return Object.keys(conversations).find((key) => text.startsWith(key)) ?? null;
}

function toolCalls(step, index) {
  return (step.tool_calls ?? []).map((call, j) => ({
    id: call.id ?? `call_${index}_${j}`,
    type: "function",
    function: {
      name: call.name,
      // A string is passed through verbatim, so a script can send malformed JSON.
      arguments: typeof call.arguments === "string" ? call.arguments : JSON.stringify(call.arguments ?? {}),
    },
  }));
}

function usage(body) {
  const prompt = Math.ceil(JSON.stringify(body).length / 4);
  return { prompt_tokens: prompt, completion_tokens: 10, total_tokens: prompt + 10 };
}

function completion(step, index, body) {
  const calls = toolCalls(step, index);
  const message = { role: "assistant", content: calls.length ? null : (step.text ?? "") };
  if (calls.length) message.tool_calls = calls;
  return {
    id: `chatcmpl-fake-${index}`,
    object: "chat.completion",
    created: Math.floor(Date.now() / 1000),
    model: body.model,
    choices: [{ index: 0, message, finish_reason: calls.length ? "tool_calls" : "stop" }],
    usage: usage(body),
  };
}

function streamStep(res, step, index, body) {
  res.writeHead(200, { "content-type": "text/event-stream", "cache-control": "no-cache", connection: "keep-alive" });
  const base = { id: `chatcmpl-fake-${index}`, object: "chat.completion.chunk", created: Math.floor(Date.now() / 1000), model: body.model };
  const send = (choices, extra = {}) => res.write(`data: ${JSON.stringify({ ...base, choices, ...extra })}\n\n`);
  const delta = (d, finish_reason = null) => send([{ index: 0, delta: d, finish_reason }]);

  delta({ role: "assistant", content: "" });
  const calls = toolCalls(step, index);
  calls.forEach((call, j) => {
    // Header chunk with id and name, then the arguments in two pieces as real APIs do.
    delta({ tool_calls: [{ index: j, id: call.id, type: "function", function: { name: call.function.name, arguments: "" } }] });
    const args = call.function.arguments;
    const cut = Math.ceil(args.length / 2);
    for (const piece of [args.slice(0, cut), args.slice(cut)]) {
      if (piece) delta({ tool_calls: [{ index: j, function: { arguments: piece } }] });
    }
  });
  if (!calls.length) delta({ content: step.text ?? "" });
  delta({}, calls.length ? "tool_calls" : "stop");
  if (body.stream_options?.include_usage) send([], { usage: usage(body) });
  res.end("data: [DONE]\n\n");
}

function sendJson(res, status, value) {
  res.writeHead(status, { "content-type": "application/json" });
  res.end(JSON.stringify(value));
}

function parseArgs(argv) {
  const out = {};
  for (let i = 0; i < argv.length; i += 2) {
    if (!argv[i].startsWith("--") || argv[i + 1] === undefined) throw new Error(`bad argument: ${argv[i]}`);
    out[argv[i].slice(2)] = argv[i + 1];
  }
  return out;
}

if (process.argv[1] && import.meta.url === pathToFileURL(process.argv[1]).href) {
  const args = parseArgs(process.argv.slice(2));
  const script = args.script ? JSON.parse(readFileSync(args.script, "utf8")) : { steps: [] };
  const writeAtomic = (file, text) => {
    writeFileSync(`${file}.tmp`, text);
    renameSync(`${file}.tmp`, file);
  };
  const llm = await startFakeLlm({
    steps: script.steps,
    conversations: script.conversations,
    port: Number(args.port ?? 0),
    maxRequests: args["max-requests"] ? Number(args["max-requests"]) : Infinity,
    timeoutMs: Number(args["timeout-s"] ?? 300) * 1000,
    onRequest: (_r, all) => args.log && writeAtomic(args.log, JSON.stringify(all, null, 2)),
  });
  if (args["port-file"]) writeAtomic(args["port-file"], String(llm.port));
  console.log(`fake-llm listening on ${llm.url}`);
  await llm.closed;
}
