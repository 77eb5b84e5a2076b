#!/usr/bin/env node
// Captures the tool catalogs of real MCP servers into __test__/fixtures/catalogs/*.json, for the
// search-quality evaluation (bench/search-eval.mjs) and search tests, and each server's
// description into __test__/fixtures/search-eval/servers.json. Installs the servers (npm and
// PyPI, pinned) into .tmp/catalogs, starts each through the native adapter, and copies what it
// cached. The description is the server's own (`serverInfo.description`, else its instructions);
// a server that gives neither gets the one sentence written below from its package's README.
// Run it again only to refresh the fixtures: node scripts/capture-catalogs.mjs
import { spawn, spawnSync } from "node:child_process";
import { createRequire } from "node:module";
import { existsSync, mkdirSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { dirname, join } from "node:path";
import { fileURLToPath } from "node:url";

const root = join(dirname(fileURLToPath(import.meta.url)), "..");
const work = join(root, ".tmp", "catalogs");
const out = join(root, "__test__", "fixtures", "catalogs");
const descriptionsFile = join(root, "__test__", "fixtures", "search-eval", "servers.json");
const { McpAdapter } = createRequire(import.meta.url)(join(root, "index.js"));

const NPM = {
  "@playwright/mcp": "0.0.83",
  "chrome-devtools-mcp": "1.11.0",
  "@upstash/context7-mcp": "4.1.1",
  "@modelcontextprotocol/server-sequential-thinking": "2026.8.31",
  "@modelcontextprotocol/server-github": "2025.4.8",
  "@notionhq/notion-mcp-server": "2.5.2",
  "mcp-server-kubernetes": "4.1.7",
  "@modelcontextprotocol/server-slack": "2025.4.25",
  "@modelcontextprotocol/server-postgres": "0.6.2",
  "@modelcontextprotocol/server-puppeteer": "2025.5.12",
  "@modelcontextprotocol/server-brave-search": "0.6.2",
  "@modelcontextprotocol/server-google-maps": "0.6.2",
  "@modelcontextprotocol/server-gitlab": "2025.4.25",
  "mongodb-mcp-server": "3.0.4",
  "@sentry/mcp-server": "0.39.0",
  "@dangahagan/weather-mcp": "1.23.0",
  "@wonderwhy-er/desktop-commander": "0.2.52",
  "tavily-mcp": "0.2.22",
  "firecrawl-mcp": "3.26.0",
  "exa-mcp-server": "3.4.1",
  "@antv/mcp-server-chart": "0.9.10",
  "@winor30/mcp-server-datadog": "1.8.0",
  // Deprecated for CircleCI's hosted server, still the one most installed.
  "@circleci/mcp-server-circleci": "0.20.0",
  "@supabase/mcp-server-supabase": "0.13.0",
  "linear-mcp": "1.2.0",
  "mcp-discord": "1.3.4",
  "@floriscornel/teams-mcp": "0.3.2",
  // 0.3 only relays to Stripe's hosted server: 0.2.5 is the last that lists its tools itself.
  "@stripe/mcp": "0.2.5",
  "@cocal/google-calendar-mcp": "2.6.3",
  "@gongrzhe/server-gmail-autoauth-mcp": "1.1.11", // ISC license
  "vercel-mcp": "0.0.7",
  "@cloudflare/mcp-server-cloudflare": "0.2.0",
  "@azure/mcp": "2.0.5",
  // Tools described in Chinese (lark-mcp when asked for its Chinese descriptions) and in Japanese.
  "@amap/amap-maps-mcp-server": "0.0.8", // ISC license
  "@baidumap/mcp-server-baidu-map": "1.0.5",
  "@larksuiteoapi/lark-mcp": "0.5.1",
  "@cloudbase/cloudbase-mcp": "2.34.6",
  "@chatwork/mcp-server": "0.0.4",
  "freee-mcp": "0.35.2",
};
// One virtual environment each: their dependency ranges do not all fit together.
const PYPI = {
  "mcp-server-git": "2026.10.19",
  "mcp-server-fetch": "2026.10.24",
  "mcp-server-time": "2026.10.19",
  "mcp-atlassian": "0.23.1",
  "excel-mcp-server": "2.2.2",
  "mcp-obsidian": "0.2.3",
  "mcp-grafana": "2.1.1",
  "awslabs.cloudwatch-mcp-server": "0.3.1",
  "redis-mcp-server": "0.5.1",
  "prometheus-mcp-server": "1.6.2",
};

function run(command, args, options = {}) {
  const r = spawnSync(command, args, { stdio: "inherit", ...options });
  if (r.status !== 0) throw new Error(`${command} ${args.join(" ")} failed`);
}

mkdirSync(work, { recursive: true });
const installed = join(work, "installed.json");
const wanted = JSON.stringify({ NPM, PYPI });
if (!existsSync(installed) || readFileSync(installed, "utf8") !== wanted) {
  writeFileSync(join(work, "package.json"), JSON.stringify({ private: true }));
  // Install scripts stay off: none of these servers needs one to list its tools (puppeteer's would
  // download a browser).
  run("npm", ["install", "--no-audit", "--no-fund", "--ignore-scripts", ...Object.entries(NPM).map(([p, v]) => `${p}@${v}`)], { cwd: work });
  for (const [name, version] of Object.entries(PYPI)) {
    run("python3", ["-m", "venv", join(work, "py", name)]);
    run(join(work, "py", name, "bin", "pip"), ["install", "-q", `${name}==${version}`]);
  }
  writeFileSync(installed, wanted);
}

const bin = (name) => join(work, "node_modules", ".bin", name);
const pyBin = (name, program = name) => join(work, "py", name, "bin", program);
// Python's string hashing is salted per process: a set the server turns into text (a parameter's
// default, for one) would come out in another order at each capture.
process.env.PYTHONHASHSEED = "0";
const repoServer = (name) => join(root, "node_modules", "@modelcontextprotocol", name, "dist", "index.js");
// Started by file where the package names no command (linear-mcp) or one as generic as `mcp`.
const packageServer = (name, file, ...args) => ({ command: process.execPath, args: [join(work, "node_modules", name, file), ...args] });
const scratch = join(work, "scratch");
mkdirSync(join(scratch, "repo"), { recursive: true });
mkdirSync(join(scratch, "home"), { recursive: true });
spawnSync("git", ["init", "-q", join(scratch, "repo")]);
// The Google servers refuse to start without an OAuth client file; they read no token to list.
const googleClient = join(scratch, "gcp-oauth.keys.json");
writeFileSync(googleClient, JSON.stringify({ installed: { client_id: "unused", client_secret: "unused", redirect_uris: ["http://localhost"] } }));
// Credentials are placeholders: these servers list their tools without calling their service.
const servers = {
  everything: { command: process.execPath, args: [repoServer("server-everything"), "stdio"] },
  filesystem: { command: process.execPath, args: [repoServer("server-filesystem"), scratch] },
  memory: { command: process.execPath, args: [repoServer("server-memory")], env: { MEMORY_FILE_PATH: join(scratch, "memory.jsonl") } },
  "sequential-thinking": { command: bin("mcp-server-sequential-thinking") },
  playwright: { command: bin("playwright-mcp") },
  "chrome-devtools": { command: bin("chrome-devtools-mcp") },
  context7: { command: bin("context7-mcp") },
  github: { command: bin("mcp-server-github"), env: { GITHUB_PERSONAL_ACCESS_TOKEN: "unused" } },
  notion: { command: bin("notion-mcp-server"), env: { NOTION_TOKEN: "unused" } },
  kubernetes: { command: bin("mcp-server-kubernetes") },
  git: { command: pyBin("mcp-server-git"), args: ["--repository", join(scratch, "repo")] },
  fetch: { command: pyBin("mcp-server-fetch") },
  time: { command: pyBin("mcp-server-time"), args: ["--local-timezone", "UTC"] },
  slack: { command: bin("mcp-server-slack"), env: { SLACK_BOT_TOKEN: "unused", SLACK_TEAM_ID: "unused" } },
  postgres: { command: bin("mcp-server-postgres"), args: ["postgresql://127.0.0.1:1/unused"] },
  puppeteer: { command: bin("mcp-server-puppeteer") },
  "brave-search": { command: bin("mcp-server-brave-search"), env: { BRAVE_API_KEY: "unused" } },
  "google-maps": { command: bin("mcp-server-google-maps"), env: { GOOGLE_MAPS_API_KEY: "unused" } },
  gitlab: { command: bin("mcp-server-gitlab"), env: { GITLAB_PERSONAL_ACCESS_TOKEN: "unused" } },
  mongodb: { command: bin("mongodb-mcp-server"), env: { MDB_MCP_TELEMETRY: "disabled", HOME: join(scratch, "home") } },
  sentry: { command: bin("sentry-mcp"), args: ["--access-token=unused"] },
  // Every tool group (the README's `all` preset), not only the basic five.
  weather: { command: bin("weather-mcp"), env: { ENABLED_TOOLS: "all" } },
  "desktop-commander": { command: bin("desktop-commander"), env: { HOME: join(scratch, "home") } },
  atlassian: {
    command: pyBin("mcp-atlassian"),
    env: {
      JIRA_URL: "https://unused.atlassian.net",
      JIRA_USERNAME: "unused@example.com",
      JIRA_API_TOKEN: "unused",
      CONFLUENCE_URL: "https://unused.atlassian.net/wiki",
      CONFLUENCE_USERNAME: "unused@example.com",
      CONFLUENCE_API_TOKEN: "unused",
    },
  },
  excel: { command: pyBin("excel-mcp-server"), args: ["stdio"], env: { EXCEL_FILES_PATH: scratch } },
  obsidian: { command: pyBin("mcp-obsidian"), env: { OBSIDIAN_API_KEY: "unused" } },
  tavily: { command: bin("tavily-mcp"), env: { TAVILY_API_KEY: "unused" } },
  // With a key, as for an account: a keyless session offers fewer tools.
  firecrawl: { command: bin("firecrawl-mcp"), env: { FIRECRAWL_API_KEY: "unused" } },
  // The README's default and optional tools, not only the default two.
  exa: { command: bin("exa-mcp-server"), env: { EXA_API_KEY: "unused", ENABLED_TOOLS: "web_search_exa,web_fetch_exa,web_search_advanced_exa,agent_run" } },
  chart: { command: bin("mcp-server-chart") },
  datadog: { command: bin("mcp-server-datadog"), env: { DATADOG_API_KEY: "unused", DATADOG_APP_KEY: "unused" } },
  circleci: { command: bin("mcp-server-circleci") },
  // Every feature group but `docs`, which lists its tool only after fetching Supabase's docs schema.
  supabase: {
    command: bin("mcp-server-supabase"),
    args: ["--features=account,database,debugging,development,functions,branching,storage"],
    env: { SUPABASE_ACCESS_TOKEN: "unused" },
  },
  linear: packageServer("linear-mcp", "build/index.js"),
  discord: { command: bin("mcp-discord") },
  teams: { command: bin("teams-mcp") },
  stripe: packageServer("@stripe/mcp", "dist/index.js", "--tools=all", "--api-key=sk_test_unused"),
  "google-calendar": { command: bin("google-calendar-mcp"), env: { GOOGLE_OAUTH_CREDENTIALS: googleClient, HOME: join(scratch, "home") } },
  gmail: { command: bin("gmail-mcp"), env: { GMAIL_OAUTH_PATH: googleClient, HOME: join(scratch, "home") } },
  vercel: { command: bin("vercel-mcp"), args: ["VERCEL_API_KEY=unused"] },
  cloudflare: { command: bin("mcp-server-cloudflare"), args: ["run", "unused"], env: { CLOUDFLARE_API_TOKEN: "unused" } },
  azure: { command: bin("azmcp"), args: ["server", "start"], env: { AZURE_MCP_COLLECT_TELEMETRY: "false" } },
  amap: { command: bin("mcp-amap"), env: { AMAP_MAPS_API_KEY: "unused" } },
  "baidu-map": { command: bin("mcp-server-baidu-map"), env: { BAIDU_MAP_API_KEY: "unused" } },
  // Its default tool preset, described in Chinese (`-l zh`; English is its default).
  lark: { command: bin("lark-mcp"), args: ["mcp", "-a", "unused", "-s", "unused", "-l", "zh"] },
  cloudbase: { command: bin("cloudbase-mcp"), env: { CLOUDBASE_MCP_TELEMETRY_DISABLED: "true" } },
  chatwork: packageServer("@chatwork/mcp-server", "dist/index.js"),
  freee: { command: bin("freee-mcp"), env: { FREEE_CLIENT_ID: "unused", FREEE_CLIENT_SECRET: "unused", HOME: join(scratch, "home") } },
  grafana: { command: pyBin("mcp-grafana"), env: { GRAFANA_URL: "http://127.0.0.1:1", GRAFANA_SERVICE_ACCOUNT_TOKEN: "unused" } },
  cloudwatch: { command: pyBin("awslabs.cloudwatch-mcp-server") },
  redis: { command: pyBin("redis-mcp-server"), args: ["--url", "redis://127.0.0.1:1/0"] },
  prometheus: { command: pyBin("prometheus-mcp-server"), env: { PROMETHEUS_URL: "http://127.0.0.1:1" } },
};

// For servers that describe themselves neither in `serverInfo` nor in instructions (or whose
// instructions name their tools): one neutral sentence from the package's README or registry
// summary, never from its tool list. Written in English for the servers whose tools are described
// in Chinese or Japanese too (amap, baidu-map, lark, cloudbase, chatwork): only a description of
// the server's own stays in its language (freee's).
const WRITTEN = {
  everything: "A test server from the MCP project that exercises every feature of the protocol, for developers of MCP clients.",
  filesystem: "File system operations on the local machine, limited to the directories it is allowed to use.",
  memory: "A persistent memory kept as a local knowledge graph, so that the assistant remembers information about the user across chats.",
  "sequential-thinking": "Dynamic and reflective problem solving through a structured thinking process, broken down into steps.",
  playwright: "Browser automation with Playwright: the assistant works with web pages through structured accessibility snapshots instead of screenshots.",
  "chrome-devtools": "Controls and inspects a live Chrome browser with the full power of Chrome DevTools, for automation, in-depth debugging and performance analysis.",
  github: "The GitHub API: file operations, repository management, search and more.",
  notion: "The official server for the Notion API.",
  kubernetes: "Connects to a Kubernetes cluster and manages it through kubectl.",
  git: "Reads, searches and manipulates Git repositories.",
  fetch: "Fetches web content and converts it for use by the assistant.",
  time: "Time queries and time zone conversions.",
  slack: "The Slack API: lets the assistant interact with Slack workspaces.",
  postgres: "Read-only access to PostgreSQL databases: inspect database schemas and execute read-only queries.",
  puppeteer: "Browser automation with Puppeteer: interact with web pages, take screenshots and execute JavaScript in a real browser.",
  "brave-search": "Web and local search through the Brave Search API.",
  "google-maps": "The Google Maps API.",
  gitlab: "The GitLab API: project management, file operations and more.",
  mongodb: "Works with MongoDB databases and MongoDB Atlas.",
  sentry: "Sentry, the application monitoring service, for the assistant.",
  weather: "Real weather data from free public services: forecasts, current conditions, alerts, air quality, marine conditions, lightning, radar, river levels, wildfires and historical weather.",
  "desktop-commander": "Terminal operations and file editing on the local machine: search, update and manage files, run terminal commands and processes.",
  atlassian: "Connects the assistant to the Atlassian products Jira and Confluence.",
  obsidian: "Works with an Obsidian vault through Obsidian's Local REST API plugin.",
  tavily: "Real-time web search and data extraction from web pages through the Tavily API.",
  firecrawl: "Firecrawl: search, scrape and interact with the web, and search scientific papers, on Firecrawl's cloud or a self-hosted instance.",
  exa: "Connects the assistant to Exa for web search, content fetching and multi-step research.",
  chart: "Generates charts with AntV, for chart generation and data analysis.",
  datadog: "The Datadog API: incident management, monitors, logs, dashboards and metrics.",
  circleci: "Lets the assistant work with CircleCI in natural language, without leaving the IDE.",
  linear: "Linear's API: manages Linear issues, projects and teams.",
  discord: "Lets the assistant interact with the Discord platform.",
  teams: "Microsoft Graph APIs: lets the assistant interact with Microsoft Teams, users and organizational data.",
  stripe: "Stripe's APIs through function calling, for the assistant to work with Stripe's services.",
  "google-calendar": "Google Calendar for the assistant, with several calendars and Google accounts at once.",
  gmail: "Gmail: the assistant manages the mailbox through natural language.",
  vercel: "Connects the assistant to the Vercel API.",
  cloudflare: "Cloudflare's API: the assistant works on a Cloudflare account in natural language.",
  azure: "Connects the assistant to Azure services: all Azure MCP tools in a single server.",
  amap: "The AMap (Gaode) Maps API.",
  "baidu-map": "The Baidu Map API.",
  lark: "The official Feishu/Lark OpenAPI server: messages, group chats, documents, calendar events, Bitable and the rest of the Feishu/Lark platform.",
  cloudbase: "Operates Tencent CloudBase from AI coding tools: login, databases, functions, storage, hosting and logs.",
  chatwork: "Operates Chatwork from the assistant.",
  redis: "A natural language interface to manage and search data in Redis.",
  prometheus: "Gives the assistant access to Prometheus metrics and PromQL queries.",
};

/** The server's own description: `serverInfo.description`, else its instructions unless they
 * name one of its tools (a description must tell what the server is for, not how to call it). */
function ownDescription(info, tools) {
  const described = info.serverInfo?.description?.trim();
  if (described) return described;
  const instructions = info.instructions?.trim();
  const namesTool = (text) => tools.some(({ name }) => new RegExp(`(^|[^\\w-])${name.replace(/[^\w]/g, "\\$&")}($|[^\\w-])`).test(text));
  return instructions && !namesTool(instructions) ? instructions : undefined;
}

/** `serverInfo` and instructions from a bare initialize over stdio (the adapter keeps only the
 * instructions). The process is stopped by its PID within 60 s whatever happens. */
function serverInfo({ command, args = [], env = {} }) {
  return new Promise((resolve) => {
    const child = spawn(command, args, { cwd: scratch, env: { ...process.env, ...env }, stdio: ["pipe", "pipe", "ignore"] });
    let pending = "";
    const finish = (result) => {
      clearTimeout(timer);
      child.kill("SIGKILL");
      resolve(result);
    };
    const timer = setTimeout(() => finish({}), 60_000);
    child.on("error", () => finish({}));
    child.on("exit", () => finish({}));
    child.stdout.on("data", (chunk) => {
      pending += chunk;
      for (let i; (i = pending.indexOf("\n")) >= 0; pending = pending.slice(i + 1)) {
        try {
          const message = JSON.parse(pending.slice(0, i));
          if (message.id === 1) finish(message.result ?? {});
        } catch {}
      }
    });
    const clientInfo = { name: "capture-catalogs", version: "1" };
    child.stdin.write(`${JSON.stringify({ jsonrpc: "2.0", id: 1, method: "initialize", params: { protocolVersion: "2025-11-25", capabilities: {}, clientInfo } })}\n`);
  });
}

const agentDir = join(work, "agent");
rmSync(agentDir, { recursive: true, force: true });
mkdirSync(agentDir, { recursive: true });
writeFileSync(join(agentDir, "mcp.json"), JSON.stringify({ mcpServers: servers }));
const adapter = McpAdapter.open({ cwd: scratch, agentDir });
const failed = [];
try {
  for (const name of Object.keys(servers)) {
    const result = await adapter.connect(name);
    if (result.isError) failed.push(`${name}: ${result.content[0].text}`);
  }
} finally {
  await adapter.shutdown();
}
const cache = JSON.parse(readFileSync(join(agentDir, "mcp-cache.json"), "utf8"));
mkdirSync(out, { recursive: true });
const descriptions = {};
for (const name of Object.keys(servers).sort()) {
  const entry = cache.servers[name];
  if (!entry) continue;
  const catalog = { server: name, tools: entry.tools, resources: entry.resources ?? [] };
  if (entry.instructions) catalog.instructions = entry.instructions;
  // A server may quote the folder it was given (excel does): a machine's path is no fixture.
  writeFileSync(join(out, `${name}.json`), JSON.stringify(catalog, null, 1).replaceAll(scratch, "/home/user") + "\n");
  const own = ownDescription(await serverInfo(servers[name]), entry.tools);
  descriptions[name] = own ?? WRITTEN[name];
  if (!descriptions[name]) throw new Error(`${name} describes itself nowhere: write its sentence in WRITTEN`);
  console.log(`${name}: ${entry.tools.length} tools, ${catalog.resources.length} resources; description ${own ? "its own" : "written"}`);
}
mkdirSync(dirname(descriptionsFile), { recursive: true });
writeFileSync(descriptionsFile, JSON.stringify(descriptions, null, 1) + "\n");
if (failed.length) console.error(`not captured:\n${failed.join("\n")}`);
