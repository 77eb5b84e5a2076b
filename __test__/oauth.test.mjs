// OAuth sign-in as users meet it, against a loopback authorization server and protected MCP server
// (fixtures/oauth-server.mjs): `pi-mcp auth` through a headless browser ($BROWSER), the sign-in in
// Pi's store, status, calls, `--auth`, sign-out; two processes renewing one expiring token while Pi's
// own store code writes other entries; and inside the real Pi: `/mcp login` over RPC, a token that
// expires mid-session, Pi's built-in sign-in (`pi mcp login`) used by us and ours by `pi mcp list`.
import { after, before, describe, test } from "node:test";
import assert from "node:assert/strict";
import { spawn } from "node:child_process";
import { chmodSync, mkdirSync, mkdtempSync, readdirSync, readFileSync, rmSync, statSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { pathToFileURL } from "node:url";
import { startOAuthServer } from "./fixtures/oauth-server.mjs";
import { E2E_DIR, NODE22, PI_BUILTIN_MCP, piCli, piTest, runPi, runPiRpc, toolResultsOf } from "./helpers/pi.mjs";
import { pimcp, root, tempAgent } from "./helpers/servers.mjs";

const browserScript = join(root, "__test__", "helpers", "browser.mjs");
const BROWSER = `${process.execPath} ${browserScript}`;
const text = (outcome) => outcome.content.map((c) => c.text ?? "").join("\n");
const parsed = (run) => {
  try {
    return JSON.parse(run.stdout);
  } catch (e) {
    throw new Error(`not JSON (exit ${run.code}): ${e.message}\nstdout: ${run.stdout}\nstderr: ${run.stderr}`);
  }
};
const store = (agent) => JSON.parse(readFileSync(join(agent.agentDir, "mcp-auth.json"), "utf8"));
const keyOf = (as) => `mcp__srv|${as.url}`;
/** proper-lockfile's lock directories (Pi's and ours) left in `dir`. */
const locksIn = (dir) => readdirSync(dir, { withFileTypes: true }).filter((e) => e.isDirectory() && e.name.endsWith(".lock")).map((e) => e.name);

describe("pi-mcp signs in to an OAuth server", () => {
  let as;
  let agent;
  before(async () => {
    as = await startOAuthServer();
    agent = tempAgent({ mcpServers: { srv: { url: as.url } } });
  });
  after(async () => {
    agent?.cleanup();
    await as?.close();
  });

  test("without a sign-in a call says so and names the command; pi-mcp auth signs in through the browser", async () => {
    const refused = await pimcp(agent, ["call", "whoami", "--server", "srv", "--json"]);
    assert.equal(refused.code, 1, refused.stderr);
    const outcome = parsed(refused);
    assert.equal(outcome.details.error, "auth_required", text(outcome));
    assert.match(text(outcome), /needs sign-in: .*HTTP 401 Unauthorized\. Sign in with `pi-mcp auth srv`/);

    const signed = await pimcp(agent, ["auth", "srv"], { env: { BROWSER } });
    assert.equal(signed.code, 0, signed.stdout + signed.stderr);
    assert.match(signed.stdout, /^Signed in to "srv", the access token expires in 60 min; 1 tool available\./);
    assert.match(signed.stderr, /Sign in to "srv" in a browser:\n {2}http:\/\/127\.0\.0\.1:\d+\/authorize\?response_type=code&/);
    assert.deepEqual([as.stats.register, as.stats.authorize, as.stats.authorization_code], [1, 1, 1]);

    const state = store(agent)[keyOf(as)];
    assert.equal(state.serverUrl, as.url);
    assert.equal(state.tokens.token_type, "Bearer");
    assert.ok(state.tokensExpireAt > Date.now());
    assert.equal(state.clientInformation.client_id, "client-1");
    assert.equal(statSync(join(agent.agentDir, "mcp-auth.json")).mode & 0o777, 0o600);
    assert.deepEqual(locksIn(agent.agentDir), []);

    const status = await pimcp(agent, ["status"]);
    assert.match(status.stdout, /srv: connected|srv: 1 tool \(cached/);
    assert.match(status.stdout, /\[signed in, expires in 60 min\]/);
    const doctor = await pimcp(agent, ["doctor"]);
    assert.match(doctor.stdout, /✓ srv: \d+ ms, 1 tool \[signed in, expires in 60 min\]/);
    const call = await pimcp(agent, ["call", "whoami", "--server", "srv"]);
    assert.equal(call.code, 0, call.stderr);
    assert.match(call.stdout, /signed in as test-user/);

    // No token reaches an output or the metadata cache.
    const cache = readFileSync(join(agent.agentDir, "mcp-cache.json"), "utf8");
    for (const secret of [state.tokens.access_token, state.tokens.refresh_token]) {
      for (const seen of [refused.stdout, signed.stdout, signed.stderr, status.stdout, doctor.stdout, call.stdout, call.stderr, cache]) {
        assert.ok(!seen.includes(secret), "a token was printed or cached");
      }
    }
  });

  test("pi-mcp logout revokes and deletes; --auth signs in by itself and retries", async () => {
    const out = await pimcp(agent, ["logout", "srv"]);
    assert.equal(out.code, 0, out.stderr);
    assert.match(out.stdout, /Signed out of "srv": the tokens were revoked at the authorization server and deleted\./);
    assert.equal(as.stats.revoked, 2);
    assert.equal(store(agent)[keyOf(as)], undefined);

    const auto = await pimcp(agent, ["--auth", "call", "whoami", "--server", "srv"], { env: { BROWSER } });
    assert.equal(auto.code, 0, auto.stdout + auto.stderr);
    assert.match(auto.stdout, /signed in as test-user/);
    assert.match(auto.stderr, /Sign in to "srv" in a browser/);
    assert.equal(as.stats.authorize, 2);
  });
});

/** Pi's own credential store code (the backend Pi 1.5's MCP sign-ins use, as shipped in Pi 0.87.1). */
async function piStoreBackend(path) {
  const module = join(E2E_DIR, "node_modules", "@earendil-works", "pi-coding-agent", "dist", "core", "auth-storage.js");
  const { FileAuthStorageBackend } = await import(pathToFileURL(module).href);
  return new FileAuthStorageBackend(path);
}

test("two processes renew one expiring token once while Pi writes other entries; nothing is lost", async () => {
  const as = await startOAuthServer({ tokenDelayMs: 300 }); // a slow token endpoint
  const agent = tempAgent({ mcpServers: { srv: { url: as.url } } });
  try {
    const signed = await pimcp(agent, ["auth", "srv"], { env: { BROWSER } });
    assert.equal(signed.code, 0, signed.stderr);
    // As if the hour had passed: the token expires within the renewal margin.
    const states = store(agent);
    states[keyOf(as)].tokensExpireAt = Date.now() + 5000;
    writeFileSync(join(agent.agentDir, "mcp-auth.json"), JSON.stringify(states));
    const before = states[keyOf(as)].tokens.refresh_token;
    const pi = await piStoreBackend(join(agent.agentDir, "mcp-auth.json"));
    let writes = 0;
    let writing = true;
    const piWrites = (async () => {
      while (writing) {
        const n = writes++;
        pi.withLock((current) => {
          const states = JSON.parse(current || "{}");
          states[`mcp__other_${n}|https://other.example/${n}`] = { serverUrl: `https://other.example/${n}`, tokens: { access_token: `o${n}`, token_type: "Bearer" } };
          return { result: undefined, next: `${JSON.stringify(states, null, 2)}\n` };
        });
        await new Promise((r) => setTimeout(r, 5));
      }
    })();
    const calls = await Promise.all([1, 2].map(() => pimcp(agent, ["call", "whoami", "--server", "srv"])));
    writing = false;
    await piWrites;
    for (const call of calls) {
      assert.equal(call.code, 0, call.stdout + call.stderr);
      assert.match(call.stdout, /signed in as test-user/);
    }
    assert.equal(as.stats.refresh_token, 1, "one refresh for both processes");
    const after = store(agent);
    assert.notEqual(after[keyOf(as)].tokens.refresh_token, before);
    for (let n = 0; n < writes; n++) assert.ok(after[`mcp__other_${n}|https://other.example/${n}`], `Pi's entry ${n} was lost`);
    assert.ok(writes > 10, `only ${writes} writes by Pi raced the refresh`);
    assert.deepEqual(locksIn(agent.agentDir), []);
  } finally {
    agent.cleanup();
    await as.close();
  }
});

const mcp = (args) => ({ tool_calls: [{ name: "mcp", arguments: args }] });

piTest("/mcp login over RPC, then calls; a token expiring mid-session is renewed without the model noticing", {}, async (pi) => {
  const as = await startOAuthServer();
  try {
    const steps = [mcp({ tool: "whoami", server: "srv" }), mcp({ tool: "whoami", server: "srv" }), { text: "done" }];
    let ended = 0;
    const rpc = await runPiRpc({
      pi,
      extensionDir: root,
      mcpConfig: { mcpServers: { srv: { url: as.url } } },
      env: { BROWSER },
      script: { steps },
      commands: ["/mcp login srv", "who am I?"],
      // The paste prompt stays unanswered: the browser finishes the sign-in (a cancel would end it).
      leaveOpen: (request) => request.method === "input",
      // The first call's token dies before the second call.
      onEvent: (msg) => msg.type === "tool_execution_end" && ++ended === 1 && as.expireAll(),
    });
    assert.equal(rpc.code, 0, rpc.stderr);
    const login = rpc.perCommand[0].notifications.map((n) => n.message).join("\n");
    assert.match(login, /Sign in to "srv" in a browser/);
    assert.match(login, /Signed in to "srv"/);
    const results = toolResultsOf(rpc.events);
    assert.equal(results.length, 2, JSON.stringify(results, null, 2));
    for (const result of results) {
      assert.equal(result.isError, false, result.text);
      assert.match(result.text, /signed in as test-user/);
    }
    assert.deepEqual([as.stats.authorize, as.stats.refresh_token], [1, 1]);
  } finally {
    await as.close();
  }
});

/** A sandbox HOME for Pi's own `pi mcp` commands and ours; `xdg-open` there is the headless browser. */
function sharedHome(as) {
  const home = mkdtempSync(join(tmpdir(), "pi-mcp-oauth-shared-"));
  const agentDir = join(home, ".pi", "agent");
  const bin = join(home, "bin");
  for (const dir of [agentDir, bin]) mkdirSync(dir, { recursive: true });
  writeFileSync(join(agentDir, "mcp.json"), JSON.stringify({ mcpServers: { srv: { url: as.url } } }));
  writeFileSync(join(bin, "xdg-open"), `#!/bin/sh\nexec '${process.execPath}' '${browserScript}' "$1"\n`);
  chmodSync(join(bin, "xdg-open"), 0o755);
  const env = { PATH: `${bin}:${process.env.PATH}`, HOME: home, PI_CODING_AGENT_DIR: agentDir, PI_OFFLINE: "1", PI_TELEMETRY: "0", PI_SKIP_VERSION_CHECK: "1", NO_COLOR: "1", BROWSER };
  return { home, agentDir, cwd: home, env, cleanup: () => rmSync(home, { recursive: true, force: true }) };
}

/** Pi's own shell command `pi mcp <args>` (always its built-in MCP). */
function piMcpCommand(pi, box, args) {
  return new Promise((resolve) => {
    const child = spawn(NODE22, [piCli(pi), "mcp", ...args], { cwd: box.cwd, env: box.env, stdio: ["ignore", "pipe", "pipe"] });
    let output = "";
    child.stdout.on("data", (d) => (output += d));
    child.stderr.on("data", (d) => (output += d));
    const timer = setTimeout(() => child.kill("SIGKILL"), 60_000);
    child.on("close", (code) => {
      clearTimeout(timer);
      resolve({ code, output });
    });
  });
}

piTest("one sign-in for Pi and us: Pi's `pi mcp login` serves our calls, ours serves `pi mcp list`", { pis: PI_BUILTIN_MCP }, async (pi) => {
  const as = await startOAuthServer();
  const box = sharedHome(as);
  try {
    // Ours, seen by Pi's built-in.
    const ours = await pimcp(box, ["auth", "srv"]);
    assert.equal(ours.code, 0, ours.stdout + ours.stderr);
    const listed = await piMcpCommand(pi, box, ["list"]);
    assert.equal(listed.code, 0, listed.output);
    assert.match(listed.output, /srv/);
    assert.match(listed.output, /whoami|1 tool/);
    assert.equal(as.stats.authorize, 1, "Pi needed no sign-in of its own");

    // Pi's, used by us in Pi.
    rmSync(join(box.agentDir, "mcp-auth.json"));
    const login = await piMcpCommand(pi, box, ["login", "srv"]);
    assert.equal(login.code, 0, login.output);
    assert.match(login.output, /Signed in to MCP server "srv"/);
    assert.equal(as.stats.authorize, 2);
    const run = await runPi({
      pi,
      extensionDir: root,
      home: box.home,
      mcpConfig: { mcpServers: { srv: { url: as.url } } },
      script: { steps: [mcp({ tool: "whoami", server: "srv" }), { text: "done" }] },
    });
    assert.equal(run.code, 0, run.stderr);
    assert.match(run.toolResults[0]?.text ?? "", /signed in as test-user/, JSON.stringify(run.toolResults));
    assert.equal(as.stats.authorize, 2, "no second sign-in");
  } finally {
    box.cleanup();
    await as.close();
  }
});
