// End-to-end harness checks: the real Pi (headless) + the scripted fake LLM + the probe extension.
// Run: node --test __test__/harness.test.mjs   (needs `npm install --prefix __test__/e2e`)
import { test } from "node:test";
import assert from "node:assert/strict";
import { fileURLToPath } from "node:url";
import { startFakeLlm } from "./helpers/fake-llm.mjs";
import { PI_073, PI_BUILTIN_MCP, PI_VERSIONS, piCli, piTest, runPi, runPiRpc } from "./helpers/pi.mjs";

const PROBE = fileURLToPath(new URL("./fixtures/probe-extension", import.meta.url));
const PROBE_SCHEMA = { type: "object", properties: { msg: { type: "string" } }, required: ["msg"] };
const callProbe = (...args) => ({ tool_calls: args.map((a) => ({ name: "probe", arguments: a })) });
const OPTS = { timeout: 90_000 };

function assertRan(r) {
  const why = `code=${r.code} signal=${r.signal} timedOut=${r.timedOut}\nstderr:\n${r.stderr}`;
  assert.equal(r.timedOut, false, `Pi timed out: ${why}`);
  assert.equal(r.code, 0, `Pi failed: ${why}`);
  assert.equal(r.leftover, false, "processes of Pi's group outlived it");
}

// The harness itself on every Pi the suites use.
const ALL = { ...OPTS, pis: [...PI_VERSIONS, PI_073] };

piTest("probe tool with a plain JSON Schema round-trips through the LLM", ALL, async (pi) => {
  piCli(pi); // says how to install it when missing
  const r = await runPi({ pi, extensionDir: PROBE, script: { steps: [callProbe({ msg: "hi" }), { text: "bye" }] } });
  assertRan(r);

  assert.equal(r.toolResults.length, 1);
  assert.deepEqual(
    { ...r.toolResults[0], toolCallId: undefined },
    { toolCallId: undefined, toolName: "probe", args: { msg: "hi" }, text: "probe: hi", isError: false, details: { n: 1 } },
  );
  // The schema reaches the LLM unchanged (0.73.1 adds `strict: false` next to it).
  const tools = r.requests[0].body.tools;
  assert.deepEqual(tools.map((t) => t.function.name), ["probe"]);
  assert.deepEqual(tools[0].function.parameters, PROBE_SCHEMA);
  // …and the result goes back to the LLM as the tool message of the next request.
  const toolMessage = r.requests[1].body.messages.find((m) => m.role === "tool");
  assert.equal(toolMessage.content, "probe: hi");
  assert.equal(r.requests.length, 2);
  assert.equal(r.events.at(-1).type, pi === PI_073 ? "agent_end" : "agent_settled");
});

piTest("arguments are validated (and coerced) against the plain schema", ALL, async (pi) => {
  piCli(pi);
  const r = await runPi({ pi, extensionDir: PROBE, script: { steps: [callProbe({}, { msg: 42 })] } });
  assertRan(r);

  const [missing, coerced] = r.toolResults;
  // execute() is not called; Pi returns the validation error to the LLM as an error result.
  assert.equal(missing.isError, true);
  // Pi ≥ 0.99 validates with its own schema library (pi-schema), which words it differently.
  const why = PI_BUILTIN_MCP.includes(pi) ? "missing" : "must have required properties msg";
  assert.equal(missing.text, `Validation failed for tool "probe":\n  - msg: ${why}\n\nReceived arguments:\n{}`);
  assert.deepEqual(missing.details, {});
  // A primitive of the wrong type is coerced (42 → "42") before validation, not rejected.
  assert.deepEqual([coerced.isError, coerced.text, coerced.args], [false, "probe: 42", { msg: 42 }]);
});

piTest("RPC mode, /probe notifies and sets a status", ALL, async (pi) => {
  piCli(pi);
  const r = await runPiRpc({ pi, extensionDir: PROBE, commands: ["/probe"], timeoutMs: 30_000 });
  assertRan(r);

  assert.deepEqual(r.notifications, [{ command: "/probe", message: "probe ok", notifyType: "info" }]);
  assert.deepEqual(r.statuses, [{ command: "/probe", key: "probe", text: "P" }]);
  assert.equal(r.perCommand[0].response.success, true);
  assert.equal(r.requests.length, 0, "an extension command must not reach the LLM");
});

test("fake LLM: plain JSON answers, /models, past-the-end text, idempotent close", async () => {
  const llm = await startFakeLlm({ steps: [callProbe({ msg: "x" })], timeoutMs: 10_000 });
  const post = (body) =>
    fetch(`${llm.url}/chat/completions`, { method: "POST", body: JSON.stringify({ model: "m", ...body }) }).then((r) => r.json());

  const models = await (await fetch(`${llm.url}/models`)).json();
  assert.equal(models.data[0].id, "fake-model");
  const first = await post({ messages: [] });
  assert.equal(first.choices[0].finish_reason, "tool_calls");
  assert.deepEqual(first.choices[0].message.tool_calls[0].function, { name: "probe", arguments: '{"msg":"x"}' });
  const second = await post({ messages: [] });
  assert.deepEqual([second.choices[0].finish_reason, second.choices[0].message.content], ["stop", "done"]);
  assert.equal(llm.requests.length, 2);
  assert.ok(llm.requests.every((r) => r.tDone >= r.tRecv));

  await Promise.all([llm.close(), llm.close()]);
  await llm.close();
  await assert.rejects(fetch(`${llm.url}/models`));
});
