// A consumer of the package's types (index.d.ts), type-checked by `npm test` (`tsc -p
// __test__/types`), never run. It calls every method and reads every field the types declare, so
// that a method or field renamed, dropped or retyped in the core fails the check; `Exactly` and
// the `Record`s over `keyof` make a method, field or error code added without being read here
// fail it too, so this file keeps up with the contract.
import { McpAdapter, configHash } from "../../index.js";
import type {
  BrokerServer,
  BrokerStatus,
  ConnectEntry,
  DiagnosticEntry,
  DiagnosticLevel,
  DoctorServer,
  Exposure,
  FamilyRole,
  FamilyRoleName,
  FoundEntry,
  ImportedEntry,
  ImportKind,
  Lifecycle,
  PackageEntry,
  RemoteTransport,
  ServerState,
  ServerTransport,
  SharingEntry,
  SharingScope,
  SourceEntry,
  SourceRole,
  SourceState,
  StatusServer,
  TrustBasis,
  TrustEntry,
  WellKnownEntry,
} from "../../index.js";
import type {
  AppGrant,
  ApprovalAnswer,
  ApprovalChoice,
  ApprovalOption,
  ApprovalQuestion,
  CallOpts,
  Completion,
  ContentBlock,
  DeclaredListing,
  DirectCost,
  DirectToolDefinition,
  DirectTools,
  ErrorCode,
  ExposedTool,
  ExposureChange,
  ExposurePreview,
  FamilyVariable,
  FieldKind,
  FieldOption,
  FieldTaken,
  FrontEndCallbacks,
  LifecycleEvent,
  ListedPrompt,
  ListOpts,
  McpParams,
  Mode,
  OpenApp,
  OpenOptions,
  Outcome,
  OutcomeDetails,
  PendingListing,
  PromptCommand,
  Question,
  QuestionAnswer,
  QuestionField,
  QuestionLabels,
  Reach,
  RegisteredServer,
  SamplingAnswer,
  SamplingContext,
  SamplingOptions,
  SamplingRequest,
  SamplingTool,
  SavedChange,
  SearchMatch,
  SearchOpts,
  SearchSignals,
  ServerExposure,
  SessionEntry,
  SetupRequest,
  StartOpts,
  ToolAnnotations,
  ToolDefinition,
  ToolNamespace,
  ToolRef,
} from "../../index.js";

/** The declared keys of `T`, without an index signature's `string`. */
type DeclaredKeys<T> = keyof { [K in keyof T as string extends K ? never : number extends K ? never : K]: T[K] };
/** `true` only when `K` names every declared key of `T`: an object type's fields read in full. */
type Exactly<T, K extends DeclaredKeys<T>> = [Exclude<DeclaredKeys<T>, K>] extends [never] ? true : never;
/** Fails the check when a `switch` over a union's tag misses a member. */
function unreachable(member: never): never {
  throw new Error(`unexpected ${JSON.stringify(member)}`);
}

// Every mode an outcome answers, no more and no fewer.
const modes: Record<Mode, true> = {
  call: true,
  read: true,
  search: true,
  list: true,
  describe: true,
  status: true,
  connect: true,
  instructions: true,
  tools: true,
  prompts: true,
  prompt: true,
  login: true,
  logout: true,
  auth: true,
  doctor: true,
  broker: true,
  setup: true,
  add: true,
  list_mcp_resources: true,
  list_mcp_resource_templates: true,
  read_mcp_resource: true,
};

// Every stable error code, no more and no fewer.
const errorCodes: Record<ErrorCode, true> = {
  invalid_args: true,
  nested_params: true,
  invalid_query: true,
  tool_not_found: true,
  ambiguous_tool: true,
  tool_hidden: true,
  tool_excluded: true,
  tool_for_app: true,
  server_not_found: true,
  server_disabled: true,
  server_required: true,
  server_unavailable: true,
  connect_failed: true,
  auth_required: true,
  sign_in_failed: true,
  tool_error: true,
  aborted: true,
  timeout: true,
  connection_lost: true,
  result_too_large: true,
  result_too_deep: true,
  call_failed: true,
  url_elicitation_required: true,
  config_error: true,
  shut_down: true,
  bad_usage: true,
  server_exists: true,
  project_untrusted: true,
  approval_required: true,
  approval_denied: true,
};

function readContent(block: ContentBlock): string {
  switch (block.type) {
    case "text":
      return block.text;
    case "image": {
      const { data, mimeType }: { data: string; mimeType: string } = block;
      return `${mimeType}:${data.length}`;
    }
    default:
      return unreachable(block);
  }
}

const outcomeFields: Exactly<Outcome, "content" | "details" | "isError" | "structuredContent"> = true;
const detailFields: Exactly<
  OutcomeDetails,
  | "mode" | "error" | "server" | "tool" | "uri" | "prompt" | "listing" | "elapsedMs" | "fullOutputPath"
  | "tools" | "offset" | "query" | "matches" | "total" | "weak" | "likelyServers" | "servers" | "signals" | "inputSchema"
  | "totalTools" | "problems" | "family" | "prompts" | "revocationFailed" | "needsAuth" | "oauth"
  | "trust" | "sources" | "configured" | "diagnostics" | "cacheWarning" | "logWarning" | "file" | "entry" | "saved"
  | "exists" | "found" | "wellKnown" | "preview" | "written" | "broker" | "stopped"
> = true;
const listingFields: Exactly<PendingListing, "pending" | "servers"> = true;
const matchFields: Exactly<SearchMatch, "server" | "tool" | "also"> = true;
const toolRefFields: Exactly<ToolRef, "server" | "tool"> = true;
const signalFields: Exactly<SearchSignals, "strength" | "firstShare" | "firstScore" | "fifthOfFirst" | "terms"> = true;
const listedPromptFields: Exactly<ListedPrompt, "server" | "prompt" | "command"> = true;
function readListing({ pending, servers }: PendingListing): string {
  return `${pending satisfies number} ${(servers satisfies string[]).join(",")}`;
}
function readMatch({ server, tool, also }: SearchMatch): string {
  const others = (also ?? []).map(({ server, tool }: ToolRef) => `${server satisfies string}_${tool satisfies string}`);
  return `${server satisfies string}_${tool satisfies string} ${others.join(",")}`;
}
function readSignals({ strength, firstShare, firstScore, fifthOfFirst, terms }: SearchSignals): number {
  return (strength satisfies number) + (firstShare satisfies number) + (firstScore satisfies number) + (fifthOfFirst satisfies number) + (terms satisfies number);
}
function readListedPrompt({ server, prompt, command }: ListedPrompt): string {
  return `${server satisfies string} ${prompt satisfies string} /${command satisfies string}`;
}
const statusServerFields: Exactly<
  StatusServer,
  "name" | "state" | "tools" | "leftOut" | "source" | "transport" | "description" | "exposure" | "imported" | "registeredBy" | "package" | "problem" | "signIn" | "shared"
> = true;
const packageFields: Exactly<PackageEntry, "name" | "root" | "settings" | "project"> = true;
const sharingFields: Exactly<SharingEntry, "scope" | "sessions" | "runsIn" | "runsHere" | "text"> = true;
const familyRoleFields: Exactly<FamilyRole, "role" | "members" | "endpoint" | "hubPid" | "why"> = true;
const trustFields: Exactly<TrustEntry, "trusted" | "basis" | "file" | "folder"> = true;
const sourceFields: Exactly<SourceEntry, "path" | "role" | "import" | "importedBy" | "state" | "servers" | "shadowed"> = true;
const doctorServerFields: Exactly<
  DoctorServer,
  "name" | "source" | "files" | "lifecycle" | "disabled" | "exposure" | "package" | "transport" | "command" | "args" | "url" | "socket" | "imported" | "connect" | "signIn"
> = true;
const importedFields: Exactly<ImportedEntry, "kind" | "by"> = true;
const connectFields: Exactly<ConnectEntry, "ok" | "ms" | "tools" | "error" | "log"> = true;
const diagnosticFields: Exactly<DiagnosticEntry, "level" | "file" | "line" | "server" | "field" | "message" | "text"> = true;
const foundFields: Exactly<FoundEntry, "tool" | "files" | "servers" | "new" | "imported"> = true;
const wellKnownFields: Exactly<WellKnownEntry, "id" | "title" | "about" | "entry" | "configured"> = true;
const brokerFields: Exactly<BrokerStatus, "pid" | "version" | "endpoint" | "uptimeMs" | "sessions" | "servers"> = true;
const brokerServerFields: Exactly<BrokerServer, "name" | "identity" | "command" | "pid" | "sessions" | "idleMs" | "failure"> = true;
// Each name the entries take, no more and no fewer (as the README lists them).
const serverStates: Record<ServerState, true> = { connected: true, connecting: true, cached: true, "not-connected": true, failed: true, "needs-auth": true, disabled: true };
const remoteTransports: Record<RemoteTransport, true> = { "streamable-http": true, sse: true };
const exposures: Record<Exposure, true> = { codemode: true, deferred: true, direct: true, hidden: true };
const importKinds: Record<ImportKind, true> = { cursor: true, "claude-code": true, "claude-desktop": true, vscode: true, windsurf: true, codex: true, opencode: true };
const sharingScopes: Record<SharingScope, true> = { user: true, family: true };
const familyRoles: Record<FamilyRoleName, true> = { host: true, member: true, off: true, alone: true };
const trustBases: Record<TrustBasis, true> = { given: true, default: true, saved: true };
const sourceRoles: Record<SourceRole, true> = { shared: true, "pi-global": true, explicit: true, project: true, import: true, package: true };
const sourceStates: Record<SourceState, true> = { missing: true, blank: true, invalid: true, loaded: true, untrusted: true };
const lifecycles: Record<Lifecycle, true> = { lazy: true, eager: true, "keep-alive": true, "lazy-keep-alive": true };
const serverTransports: Record<ServerTransport, true> = { stdio: true, http: true, socket: true };
const diagnosticLevels: Record<DiagnosticLevel, true> = { error: true, warning: true, note: true };
// A literal of each is a value of it, and a name from another list is not.
const needsAuth: ServerState = "needs-auth";
// @ts-expect-error "running" is no server's state
const running: ServerState = "running";
function readPackage({ name, root, settings, project }: PackageEntry): string {
  return `${name satisfies string} ${root satisfies string} ${settings satisfies string} ${project satisfies boolean}`;
}
function readSharing({ scope, sessions, runsIn, runsHere, text }: SharingEntry): string {
  return `${sharingScopes[scope] && (scope satisfies SharingScope)} ${sessions satisfies number | null} ${runsIn satisfies string | null} ${runsHere satisfies string | null} ${text satisfies string}`;
}
function readStatusServer(s: StatusServer): string {
  const { name, state, tools, leftOut, source, transport, description, exposure, imported, registeredBy, problem, signIn } = s;
  const strings: (string | null)[] = [name, state satisfies ServerState, source, transport satisfies RemoteTransport | null, description, exposure satisfies Exposure | null, imported satisfies ImportKind | null, registeredBy, problem, signIn];
  const named = [serverStates[state], transport === null || remoteTransports[transport], exposure === null || exposures[exposure], imported === null || importKinds[imported]];
  const counts: number[] = [tools, leftOut];
  return [...strings, ...named, ...counts, s.package && readPackage(s.package), s.shared && readSharing(s.shared)].join(" ");
}
function readFamily({ role, members, endpoint, hubPid, why }: FamilyRole): string {
  return `${familyRoles[role] && (role satisfies FamilyRoleName)} ${members satisfies number | null} ${endpoint satisfies string | null} ${hubPid satisfies number | null} ${why satisfies string | null}`;
}
function readTrust({ trusted, basis, file, folder }: TrustEntry): string {
  return `${trusted satisfies boolean} ${trustBases[basis] && (basis satisfies TrustBasis)} ${file satisfies string | undefined} ${folder satisfies string | undefined}`;
}
function readSource({ path, role, import: tool, importedBy, state, servers, shadowed }: SourceEntry): string {
  const names: string[] = [...(servers ?? []), ...(shadowed ?? [])];
  const named = [sourceRoles[role satisfies SourceRole], tool === undefined || importKinds[tool satisfies ImportKind], sourceStates[state satisfies SourceState]];
  return `${path satisfies string} ${role} ${tool} ${importedBy satisfies string | undefined} ${state} ${names.join(",")} ${named.join(",")}`;
}
function readConnect({ ok, ms, tools, error, log }: ConnectEntry): string {
  return `${ok satisfies boolean} ${ms satisfies number} ${tools satisfies number | undefined} ${error satisfies string | undefined} ${(log satisfies string[] | undefined)?.join("\n")}`;
}
function readDoctorServer(s: DoctorServer): string {
  const { name, source, files, lifecycle, disabled, exposure, transport, command, args, url, socket, imported, connect, signIn } = s;
  const strings: (string | undefined)[] = [name, source, lifecycle satisfies Lifecycle, exposure satisfies Exposure | undefined, transport satisfies ServerTransport, command, url, socket, signIn];
  const named = [lifecycles[lifecycle], exposure === undefined || exposures[exposure], serverTransports[transport]];
  const where = imported && `${importKinds[imported.kind satisfies ImportKind] && imported.kind} ${imported.by satisfies string}`;
  return [...strings, ...named, ...files, ...(args ?? []), String(disabled satisfies boolean), s.package && readPackage(s.package), where, connect && readConnect(connect)].join(" ");
}
function readDiagnostic({ level, file, line, server, field, message, text }: DiagnosticEntry): string {
  return `${diagnosticLevels[level] && (level satisfies DiagnosticLevel)} ${file satisfies string | null}:${line satisfies number | null} ${server satisfies string | null} ${field satisfies string | null} ${message satisfies string} ${text satisfies string}`;
}
function readFound({ tool, files, servers, new: added, imported }: FoundEntry): string {
  const names: string[] = [...files, ...servers, ...added];
  return `${importKinds[tool] && (tool satisfies ImportKind)} ${names.join(",")} ${imported satisfies boolean}`;
}
function readWellKnown({ id, title, about, entry, configured }: WellKnownEntry): string {
  return `${id satisfies string} ${title satisfies string} ${about satisfies string} ${Object.keys(entry satisfies Record<string, unknown>)} ${configured satisfies boolean}`;
}
function readBrokerServer({ name, identity, command, pid, sessions, idleMs, failure }: BrokerServer): string {
  return `${name satisfies string} ${identity satisfies string} ${command satisfies string} ${pid satisfies number | null} ${sessions satisfies number} ${idleMs satisfies number} ${failure satisfies string | null}`;
}
function readBroker(broker: BrokerStatus | null | undefined): string {
  if (!broker) return String(broker);
  const { pid, version, endpoint, uptimeMs, sessions, servers } = broker;
  return `${pid satisfies number} ${version satisfies string} ${endpoint satisfies string} ${uptimeMs satisfies number} ${sessions satisfies number} ${servers.map(readBrokerServer).join(";")}`;
}
function readOutcome(outcome: Outcome): string[] {
  const { content, details, isError, structuredContent }: { content: ContentBlock[]; details: OutcomeDetails; isError: boolean; structuredContent?: Record<string, unknown> } =
    outcome;
  const { mode, error, server, tool, uri, prompt, listing, elapsedMs, fullOutputPath }: { mode: Mode; error?: ErrorCode; server?: string; tool?: string; uri?: string; prompt?: string; listing?: PendingListing; elapsedMs?: number; fullOutputPath?: string } =
    details;
  const known: boolean = modes[mode] && (error === undefined || errorCodes[error]);
  const common = [mode, server ?? "", tool ?? "", uri ?? "", prompt ?? "", listing ? readListing(listing) : "", String(elapsedMs), fullOutputPath ?? "", String(isError && known)];
  // search and list
  const { tools, offset, query, matches, total, weak, likelyServers, signals }: { tools?: number; offset?: number; query?: string; matches?: SearchMatch[]; total?: number; weak?: boolean; likelyServers?: string[]; signals?: SearchSignals } = details;
  const found = [String(tools), String(offset), query ?? "", ...(matches ?? []).map(readMatch), String(total), String(weak), ...(likelyServers ?? []), String(signals && readSignals(signals))];
  // describe, status, tools, call, prompts, sign-in
  const { servers, inputSchema, totalTools, problems, family, prompts, revocationFailed, needsAuth, oauth }: { servers?: StatusServer[]; inputSchema?: Record<string, unknown>; totalTools?: number; problems?: string[]; family?: FamilyRole; prompts?: ListedPrompt[]; revocationFailed?: boolean; needsAuth?: boolean; oauth?: boolean } = details;
  const states = [...(servers ?? []).map(readStatusServer), String(inputSchema), String(totalTools), ...(problems ?? []), family ? readFamily(family) : "", ...(prompts ?? []).map(readListedPrompt), String(revocationFailed), String(needsAuth), String(oauth)];
  // doctor, add, setup, broker
  const { trust, sources, configured, diagnostics, cacheWarning, logWarning, file, entry, saved, exists, found: imports, wellKnown, preview, written, broker, stopped }: { trust?: TrustEntry; sources?: SourceEntry[]; configured?: DoctorServer[]; diagnostics?: DiagnosticEntry[]; cacheWarning?: string; logWarning?: string; file?: string; entry?: Record<string, unknown>; saved?: boolean; exists?: boolean; found?: FoundEntry[]; wellKnown?: WellKnownEntry[]; preview?: string; written?: boolean; broker?: BrokerStatus | null; stopped?: BrokerStatus | null } = details;
  const checks = [trust ? readTrust(trust) : "", ...(sources ?? []).map(readSource), ...(configured ?? []).map(readDoctorServer), ...(diagnostics ?? []).map(readDiagnostic)];
  const offers = [...(imports ?? []).map(readFound), ...(wellKnown ?? []).map(readWellKnown)];
  const commands = [...checks, cacheWarning ?? "", logWarning ?? "", file ?? "", String(entry), String(saved), String(exists), ...offers, preview ?? "", String(written), readBroker(broker), readBroker(stopped)];
  return [...content.map(readContent), ...common, ...found, ...states, ...commands, String(structuredContent)];
}

function readEvent(event: LifecycleEvent): string {
  switch (event.type) {
    case "connecting":
    case "opened":
      return event.server;
    case "connected":
    case "reconnected":
    case "catalog-changed":
      return `${event.server} ${event.tools satisfies number}`;
    case "idle-shutdown":
      return `${event.server} ${event.idleMinutes satisfies number}`;
    case "failed":
      return `${event.server} ${event.error} ${event.needsAuth satisfies boolean}`;
    case "disconnected":
      return `${event.server} ${event.reason}`;
    case "auth-url":
      return `${event.server} ${event.url} ${event.text} ${event.prompt}`;
    case "auth-done":
      return `${event.server} ${event.signedIn satisfies boolean} ${event.error satisfies string | undefined}`;
    case "resource-updated":
      return `${event.server} ${event.uri} ${event.text} ${event.note}`;
    case "family-off":
      return event.text;
    case "app":
      return `${event.kind} ${event.server} ${event.tool} ${event.url} ${event.text}`;
    case "progress": {
      const { callId, server, tool, progress, total, message, text }: { callId: string; server: string; tool: string; progress: number; total?: number; message?: string; text: string } =
        event;
      return `${callId} ${server} ${tool} ${progress}/${total} ${message} ${text}`;
    }
    default:
      return unreachable(event);
  }
}

const annotationFields: Exactly<ToolAnnotations, "readOnlyHint" | "destructiveHint" | "idempotentHint" | "openWorldHint"> = true;
function readAnnotations({ readOnlyHint, destructiveHint, idempotentHint, openWorldHint }: ToolAnnotations): (boolean | undefined)[] {
  return [readOnlyHint, destructiveHint, idempotentHint, openWorldHint];
}

const namespaceFields: Exactly<ToolNamespace, "name" | "aliases" | "description" | "instructions"> = true;
const directToolFields: Exactly<
  DirectToolDefinition,
  "name" | "label" | "description" | "promptSnippet" | "parameters" | "server" | "tool" | "annotations" | "exposure" | "namespace" | "outputSchema"
> = true;
function readDirectTool(tool: DirectToolDefinition): unknown[] {
  const { name, label, description, promptSnippet, parameters, server, tool: mcpName, annotations, exposure, namespace, outputSchema } = tool;
  const strings: string[] = [name, label, description, promptSnippet, server, mcpName, (exposure satisfies Exposure | undefined) ?? ""];
  const ns: [string, string[], string?, string?] | undefined = namespace && [namespace.name, namespace.aliases, namespace.description, namespace.instructions];
  return [...strings, parameters satisfies Record<string, unknown>, annotations && readAnnotations(annotations), ns, outputSchema satisfies Record<string, unknown> | undefined];
}

const directToolsFields: Exactly<DirectTools, "tools" | "warnings" | "reach" | "autoEnableCodemode" | "unlisted" | "resourceTools" | "proxy"> = true;
const reachFields: Exactly<Reach, "codemode" | "toolSearch"> = true;
function readDirectTools({ tools, warnings, reach, autoEnableCodemode, unlisted, resourceTools, proxy }: DirectTools): unknown[] {
  const flags: boolean[] = [reach.codemode, reach.toolSearch, autoEnableCodemode, proxy];
  const names: string[] = [...warnings, ...unlisted];
  return [...tools.map(readDirectTool), ...resourceTools.map(readDirectTool), ...flags, ...names];
}

const toolDefinitionFields: Exactly<ToolDefinition, "name" | "label" | "description" | "promptSnippet" | "parameters"> = true;
const costFields: Exactly<DirectCost, "tools" | "tokens"> = true;
const readCost = ({ tools, tokens }: DirectCost): number => tools + tokens;
const exposedToolFields: Exactly<ExposedTool, "name" | "tool" | "state" | "saved" | "tokens" | "locked" | "annotations" | "description"> = true;
const serverExposureFields: Exactly<ServerExposure, "server" | "keys" | "file" | "notes" | "state" | "changed" | "direct" | "saved" | "tools"> = true;
const previewFields: Exactly<ExposurePreview, "servers" | "direct" | "saved"> = true;
function readExposure({ servers, direct, saved }: ExposurePreview): unknown[] {
  return [
    readCost(direct),
    readCost(saved),
    ...servers.map((s) => [s.server, s.keys, s.file, ...s.notes, s.state, s.changed, readCost(s.direct), readCost(s.saved)]),
    ...servers.flatMap((s) =>
      s.tools.map((t) => [t.name, t.tool, t.state, t.saved, t.tokens satisfies number, t.locked satisfies string | undefined, t.annotations && readAnnotations(t.annotations), t.description]),
    ),
  ];
}

const savedFields: Exactly<SavedChange, "file" | "changed"> = true;
const readSaved = ({ file, changed }: SavedChange): string => `${file} ${changed satisfies boolean}`;
const familyFields: Exactly<FamilyVariable, "name" | "value"> = true;
const declaredFields: Exactly<DeclaredListing, "pending" | "notice"> = true;
const promptCommandFields: Exactly<PromptCommand, "name" | "server" | "prompt" | "description"> = true;
const completionFields: Exactly<Completion, "value" | "label"> = true;
const openAppFields: Exactly<OpenApp, "server" | "tool" | "url" | "sinceMs"> = true;
const appGrantFields: Exactly<AppGrant, "server" | "what"> = true;

// The questions the core asks the front end, read as a front end does.
const questionFieldFields: Exactly<QuestionField, "name" | "kind" | "required" | "skippable" | "prompt" | "placeholder" | "options" | "minItems" | "maxItems"> = true;
const fieldOptionFields: Exactly<FieldOption, "value" | "label"> = true;
function readQuestionField(field: QuestionField): unknown[] {
  const { name, kind, required, skippable, prompt, placeholder, options, minItems, maxItems } = field;
  const kinds: Record<FieldKind, true> = { text: true, number: true, boolean: true, choice: true, choices: true };
  const offered: [unknown, string][] = (options ?? []).map(({ value, label }: FieldOption) => [value, label]);
  return [name, kinds[kind], required satisfies boolean, skippable satisfies boolean, prompt, placeholder, offered, minItems satisfies number | undefined, maxItems satisfies number | undefined];
}
const labelFields: Exactly<QuestionLabels, "answer" | "decline" | "done" | "skip" | "chosen" | "open"> = true;
function readQuestion(question: Question): unknown[] {
  const { id, server, title, labels } = question;
  const { answer, decline, done, skip, chosen, open }: QuestionLabels = labels;
  const common = [id satisfies number, server, title, answer, decline, done, skip, chosen, open];
  switch (question.mode) {
    case "form":
      return [...common, ...question.fields.map(readQuestionField)];
    case "url":
      return [...common, question.message, question.url];
    default:
      return unreachable(question);
  }
}
const approvalFields: Exactly<ApprovalQuestion, "id" | "server" | "title" | "options" | "timeoutMs"> = true;
const approvalOptionFields: Exactly<ApprovalOption, "label" | "value" | "remember"> = true;
const entryFields: Exactly<SessionEntry, "customType" | "data"> = true;
function readApproval({ id, server, title, options, timeoutMs }: ApprovalQuestion): unknown[] {
  const values: Record<ApprovalChoice, true> = { once: true, tool: true, server: true, session: true, always: true, deny: true };
  const picked = options.map(({ label, value, remember }) => [label, values[value], remember?.customType, remember?.data satisfies unknown]);
  return [id satisfies number, server, title, picked, timeoutMs satisfies number];
}
const samplingFields: Exactly<SamplingRequest, "id" | "server" | "approve" | "title" | "preview" | "context" | "options" | "hints"> = true;
const samplingContextFields: Exactly<SamplingContext, "systemPrompt" | "messages" | "tools"> = true;
const samplingToolFields: Exactly<SamplingTool, "name" | "description" | "parameters"> = true;
const samplingOptionsFields: Exactly<SamplingOptions, "maxTokens" | "temperature"> = true;
const samplingAnswerFields: Exactly<SamplingAnswer, "refused" | "content" | "stopReason" | "errorMessage" | "model"> = true;
function readSampling({ id, server, approve, title, preview, context, options, hints }: SamplingRequest): unknown[] {
  const { systemPrompt, messages, tools }: SamplingContext = context;
  const offered = (tools ?? []).map(({ name, description, parameters }: SamplingTool) => [name, description, parameters]);
  const { maxTokens, temperature }: SamplingOptions = options;
  return [id, server, approve satisfies boolean, title, preview, systemPrompt, messages satisfies unknown[], offered, maxTokens, temperature, ...hints];
}
const frontEndFields: Exactly<FrontEndCallbacks, "elicit" | "sample" | "withdraw" | "approve"> = true;
const answers: QuestionAnswer[] = [{ action: "accept", content: { name: "x" } }, { action: "decline" }, { action: "cancel" }];
const approvalAnswerFields: Exactly<ApprovalAnswer, "choice"> = true;
const fieldTakenFields: Exactly<FieldTaken, "value" | "error"> = true;
const frontEnd: FrontEndCallbacks = {
  elicit: async (question) => (readQuestion(question).length ? answers[0] : null),
  sample: async (request): Promise<SamplingAnswer> => ({ content: readSampling(request), stopReason: "stop", model: "m" }),
  withdraw: (id: number) => void id,
  approve: async (question): Promise<ApprovalAnswer> => ({ choice: readApproval(question).length ? "once" : null }),
};

// What a program passes in: every option spelled out, so that a renamed one fails.
const params: Required<McpParams> = {
  tool: "t",
  read: "file:///notes/{day}",
  args: { a: 1 },
  connect: "s",
  describe: "t",
  instructions: "s",
  search: "q",
  regex: false,
  includeSchemas: true,
  server: "s",
  limit: 5,
  offset: 0,
};
const registered: Required<RegisteredServer> = { name: "s", config: { command: "x" }, extensionPath: "/e" };
const options: Required<OpenOptions> = {
  cwd: "/",
  agentDir: "/a",
  configPath: "/c.json",
  env: { HOME: "/" },
  healthIntervalMs: 1,
  failureBackoffMs: 1,
  fillGraceMs: 1,
  listWaitMs: 1,
  maxServerTools: 1,
  maxServerMetadataBytes: 1,
  fillConcurrency: 1,
  projectTrusted: true,
  maxConfigBytes: 1,
  maxCacheBytes: 1,
  maxEnvFileBytes: 1,
  maxTokenFileBytes: 1,
  pipeTimeoutMs: 1,
  cli: true,
  autoAuth: true,
  registered: [registered],
  toolsAllowed: ["mcp__*"],
  toolsExcluded: [],
  assumeYes: false,
  familyLabel: "worker",
};
const callOpts: Required<CallOpts> = { server: "s", callId: "c", timeoutMs: 1 };
const listOpts: Required<ListOpts> = { limit: 1, offset: 0 };
const searchOpts: Required<SearchOpts> = { regex: true, server: "s", includeSchemas: true, limit: 1, offset: 0 };
const startOpts: Required<StartOpts> = { deferFill: true };
const setup: Required<SetupRequest> = { project: true, imports: ["cursor"], copy: [], add: ["memory"], dryRun: true };
const changes: Required<ExposureChange>[] = [{ server: "s", tool: "t", choice: "direct" }];

// Every method of McpAdapter, with what it returns read.
export async function everyMethod(): Promise<unknown[]> {
  const adapter: McpAdapter = McpAdapter.open(options);
  const hash: string = configHash({ command: "x" }, { HOME: "/" });
  const seen: unknown[] = [hash];
  const out = (outcome: Outcome) => seen.push(...readOutcome(outcome));
  const calls: { [M in keyof McpAdapter]: () => unknown } = {
    familyEnv: () => {
      const family: FamilyVariable | null = adapter.familyEnv();
      return family && `${family.name}=${family.value}`;
    },
    toolDefinition: () => {
      const { name, label, description, promptSnippet, parameters }: ToolDefinition = adapter.toolDefinition();
      return [name, label, description, promptSnippet, parameters satisfies Record<string, unknown>];
    },
    serversSection: (): string | null => adapter.serversSection(),
    directTools: () => readDirectTools(adapter.directTools()),
    piResourceTool: async () => out(await adapter.piResourceTool("mcp_resource_read", { uri: "file:///" }, "call-1")),
    exposure: () => readExposure(adapter.exposure(changes, true)),
    saveExposure: () => adapter.saveExposure(changes, false).map(readSaved),
    setEnabled: () => readSaved(adapter.setEnabled("s", false, true)),
    addServer: async () => [out(await adapter.addServer("s -- npx x", true)), out(await adapter.addServer(["s", "--", "npx", "x"]))],
    setupPlan: () => out(adapter.setupPlan(true)),
    setupApply: () => out(adapter.setupApply(setup)),
    projectTrusted: (): boolean => adapter.projectTrusted(),
    diagnostics: (): string[] => adapter.diagnostics(),
    servers: (): string[] => adapter.servers(true),
    footer: (): string | null => adapter.footer(),
    tools: async () => out(await adapter.tools()),
    start: (): Promise<void> => adapter.start(startOpts),
    status: async () => out(await adapter.status()),
    brokerStatus: async () => out(await adapter.brokerStatus()),
    brokerStop: async () => out(await adapter.brokerStop()),
    listDeclared: async () => {
      const { pending, notice }: DeclaredListing = await adapter.listDeclared(true);
      return [...pending, notice satisfies string | undefined];
    },
    listServers: async (): Promise<string[]> => adapter.listServers(["s"]),
    list: async () => out(await adapter.list("s", listOpts)),
    search: async () => out(await adapter.search("q", searchOpts)),
    describe: async () => out(await adapter.describe("t", "s", true)),
    instructions: async () => out(await adapter.instructions("s")),
    authHelp: () => out(adapter.authHelp("s")),
    login: async () => out(await adapter.login("s")),
    logout: async () => out(await adapter.logout("s")),
    paste: (): boolean => adapter.paste("s", "https://localhost/?code=x"),
    cancelSignIn: (): boolean => adapter.cancelSignIn("s"),
    setInteractive: (): void => adapter.setInteractive(true),
    connect: async () => out(await adapter.connect("s")),
    promptCommands: () => adapter.promptCommands().map(({ name, server, prompt, description }) => [name, server, prompt, description]),
    runPrompt: async () => out(await adapter.runPrompt("mcp__s__p", "a b")),
    completePrompt: async () => (await adapter.completePrompt("mcp__s__p", "a")).map(({ value, label }) => `${value} ${label}`),
    prompts: async () => out(await adapter.prompts("s")),
    getPrompt: async () => out(await adapter.getPrompt("s", "p", { a: "b" })),
    call: async () => out(await adapter.call("t", { a: 1 }, callOpts)),
    execute: async () => out(await adapter.execute(params, "call-2")),
    doctor: async () => out(await adapter.doctor(false)),
    cancel: (): void => adapter.cancel("call-2"),
    onCredential: (): void => adapter.onCredential(async (provider: string) => (provider === "x" ? "key" : null)),
    setCwd: (): Promise<void> => adapter.setCwd("/"),
    setFrontEnd: (): void => adapter.setFrontEnd(frontEnd),
    restoreGrants: (): void => adapter.restoreGrants([{ customType: "pi-mcp-native-grant", data: {} }, { customType: "other" }]),
    takeField: () => {
      const { value, error }: FieldTaken = adapter.takeField(1, "name", "x");
      return [value, error];
    },
    openUrl: (): string | null => adapter.openUrl("https://example.com/"),
    enableApps: (): void => adapter.enableApps(Buffer.from("script"), { theme: "dark" }),
    setAppsContext: (): void => adapter.setAppsContext({ theme: "light" }),
    appInputPartial: (): void => adapter.appInputPartial("t", { a: 1 }, "s"),
    openApps: () => adapter.openApps().map(({ server, tool, url, sinceMs }) => [server, tool, url, sinceMs satisfies number]),
    appGrants: () => adapter.appGrants().map(({ server, what }) => `${server} ${what}`),
    revokeAppGrants: (): number => adapter.revokeAppGrants("s"),
    onEvent: (): void => adapter.onEvent((event: LifecycleEvent) => void seen.push(readEvent(event))),
    shutdown: (): Promise<void> => adapter.shutdown(),
  };
  for (const call of Object.values(calls)) seen.push(await call());
  const fieldChecks: true[] = [
    outcomeFields,
    detailFields,
    listingFields,
    matchFields,
    toolRefFields,
    signalFields,
    listedPromptFields,
    statusServerFields,
    packageFields,
    sharingFields,
    familyRoleFields,
    trustFields,
    sourceFields,
    doctorServerFields,
    importedFields,
    connectFields,
    diagnosticFields,
    foundFields,
    wellKnownFields,
    brokerFields,
    brokerServerFields,
    annotationFields,
    namespaceFields,
    directToolFields,
    directToolsFields,
    reachFields,
    toolDefinitionFields,
    costFields,
    exposedToolFields,
    serverExposureFields,
    previewFields,
    savedFields,
    familyFields,
    declaredFields,
    promptCommandFields,
    completionFields,
    openAppFields,
    appGrantFields,
    questionFieldFields,
    fieldOptionFields,
    labelFields,
    approvalFields,
    approvalOptionFields,
    entryFields,
    approvalAnswerFields,
    fieldTakenFields,
    samplingFields,
    samplingContextFields,
    samplingToolFields,
    samplingOptionsFields,
    samplingAnswerFields,
    frontEndFields,
  ];
  return [...seen, fieldChecks, needsAuth, running];
}
