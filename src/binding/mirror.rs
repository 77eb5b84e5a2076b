//! The core's types as JavaScript gets them: each a napi object (or enum) that mirrors one core
//! type field for field, with its conversion. A mirror names every field of its core type (the
//! conversion destructures it whole, and matches every variant), so a field or variant the core
//! gains fails the build until JavaScript's contract says what it is.

use super::json::JsonObject;
use napi_derive::napi;
use pi_mcp_core::{adapter, events};
use serde_json::Value;

/// A core value as JavaScript gets it: itself, or its mirror.
pub trait Js {
    type Js;
    fn js(self) -> Self::Js;
}

macro_rules! as_itself {
    ($($t:ty),*) => {
        $(impl Js for $t {
            type Js = $t;
            fn js(self) -> $t {
                self
            }
        })*
    };
}
as_itself!(String, bool, u32, f64, Value);

impl Js for &'static str {
    type Js = String;
    fn js(self) -> String {
        self.to_string()
    }
}

/// An id or a count: exact as a JavaScript number up to 2^53, far beyond any the core makes.
impl Js for u64 {
    type Js = f64;
    fn js(self) -> f64 {
        self as f64
    }
}

impl<T: Js> Js for Vec<T> {
    type Js = Vec<T::Js>;
    fn js(self) -> Self::Js {
        self.into_iter().map(Js::js).collect()
    }
}

impl<T: Js> Js for Option<T> {
    type Js = Option<T::Js>;
    fn js(self) -> Self::Js {
        self.map(Js::js)
    }
}

/// `Name <- module::Core { fields }`: JavaScript gets `Name` for the core's type; `Name ->
/// module::Core { fields }`: it gives one (of plain values). The fields are all of both.
/// `Name <- module::Core { A | B }`: a napi string enum for the core's enum of names, variant
/// for variant (the core's tests check that it names each as napi's case does).
macro_rules! mirror {
    ($name:ident <- $module:ident::$core:ident { $($field:ident),* $(,)? }) => {
        impl Js for $module::$core {
            type Js = $name;
            fn js(self) -> $name {
                let $module::$core { $($field),* } = self;
                $name { $($field: $field.js()),* }
            }
        }
    };
    ($name:ident <- $module:ident::$core:ident { $($variant:ident)|+ }) => {
        impl Js for $module::$core {
            type Js = $name;
            fn js(self) -> $name {
                match self {
                    $($module::$core::$variant => $name::$variant,)+
                }
            }
        }
    };
    ($name:ident -> $module:ident::$core:ident { $($field:ident),* $(,)? }) => {
        impl From<$name> for $module::$core {
            fn from(value: $name) -> Self {
                let $name { $($field),* } = value;
                $module::$core { $($field),* }
            }
        }
    };
}

/// A count: the core's are far below 2^32.
impl Js for usize {
    type Js = u32;
    fn js(self) -> u32 {
        u32::try_from(self).unwrap_or(u32::MAX)
    }
}

/// The `mcp` tool as Pi registers it.
#[napi(object)]
pub struct ToolDefinition {
    pub name: String,
    pub label: String,
    pub description: String,
    pub prompt_snippet: String,
    /// Its parameters' JSON Schema.
    pub parameters: JsonObject,
}
mirror!(ToolDefinition <- adapter::ToolDefinition {
    name, label, description, prompt_snippet, parameters,
});

/// The tools to register, and why any selected tool was left out.
#[napi(object)]
pub struct DirectTools {
    pub tools: Vec<DirectToolDefinition>,
    pub warnings: Vec<String>,
    /// Some enabled server's tools are reached through Pi's `codemode` tool (`exposure:
    /// "codemode"`), resp. its `tool_search` (`"deferred"`): Pi ≥ 0.99 activates those tools.
    pub reach: Reach,
    /// Pi's `autoEnableCodemode` (default true).
    pub auto_enable_codemode: bool,
    /// Servers whose tools are exposed to Pi's codemode or tool_search but not known yet (never
    /// listed, nothing cached): the tools of those are registered once they are listed.
    pub unlisted: Vec<String>,
    /// Pi's resource tools (Pi ≥ 0.99 registers them), run with `piResourceTool`.
    pub resource_tools: Vec<DirectToolDefinition>,
    /// Whether Pi gets the `mcp` tool: not when `settings.disableProxyTool` is set, some tools
    /// are declared to the model as Pi tools of ours, and every server that declares tools is
    /// known.
    pub proxy: bool,
}
mirror!(DirectTools <- adapter::DirectTools {
    tools, warnings, reach, auto_enable_codemode, unlisted, resource_tools, proxy,
});

/// Which of Pi's tool-reaching tools the config's exposures call for.
#[napi(object)]
pub struct Reach {
    pub codemode: bool,
    pub tool_search: bool,
}
mirror!(Reach <- adapter::Reach { codemode, tool_search });

/// A Pi tool definition for one MCP tool, and the server and MCP name it calls.
#[napi(object)]
pub struct DirectToolDefinition {
    pub name: String,
    pub label: String,
    pub description: String,
    pub prompt_snippet: String,
    /// An object schema (what Pi registers).
    pub parameters: JsonObject,
    pub server: String,
    /// The tool's MCP name.
    pub tool: String,
    /// The server's MCP hints, for Pi's `annotations` (permission extensions read them).
    pub annotations: Option<ToolAnnotations>,
    /// Set for a tool registered because of the config's `exposure`/`toolExposure`:
    /// `direct`, `codemode` or `deferred` (Pi ≥ 0.99 registers the last two hidden from the
    /// model, for its `codemode` scripts and `tool_search`).
    pub exposure: Option<super::detail_entries::Exposure>,
    /// Pi's namespace of the server's tools (exposure-registered tools only).
    pub namespace: Option<ToolNamespace>,
    /// The JSON schema of the tool's `structuredContent` (what Pi's codemode scripts get).
    pub output_schema: Option<JsonObject>,
}
mirror!(DirectToolDefinition <- adapter::DirectToolDefinition {
    name, label, description, prompt_snippet, parameters, server, tool, annotations, exposure,
    namespace, output_schema,
});

/// MCP's tool annotations (hints), as Pi's `ToolDefinition.annotations` takes them.
#[napi(object)]
pub struct ToolAnnotations {
    pub read_only_hint: Option<bool>,
    pub destructive_hint: Option<bool>,
    pub idempotent_hint: Option<bool>,
    pub open_world_hint: Option<bool>,
}
mirror!(ToolAnnotations <- adapter::ToolAnnotations {
    read_only_hint, destructive_hint, idempotent_hint, open_world_hint,
});

/// Pi's `ToolDefinition.namespace`: the server as a group of tools.
#[napi(object)]
pub struct ToolNamespace {
    pub name: String,
    pub aliases: Vec<String>,
    pub description: Option<String>,
    pub instructions: Option<String>,
}
mirror!(ToolNamespace <- adapter::ToolNamespace { name, aliases, description, instructions });

/// How the servers whose tools Pi declares stood when its first request went.
#[napi(object)]
pub struct DeclaredListing {
    /// Servers still being listed: their tools are declared once they are.
    pub pending: Vec<String>,
    /// What to tell the user about them, when the request waited for them in vain.
    pub notice: Option<String>,
}
mirror!(DeclaredListing <- adapter::DeclaredListing { pending, notice });

/// One change picked in the panel: `choice` (`mcp`, `direct`, `hidden`) for one tool (its MCP
/// name), or without `tool` for every tool of the server.
#[napi(object)]
pub struct ExposureChange {
    pub server: String,
    pub tool: Option<String>,
    pub choice: String,
}
mirror!(ExposureChange -> adapter::ExposureChange { server, tool, choice });

/// Every enabled server's exposure with the changes made, and the direct tools' cost.
#[napi(object)]
pub struct ExposurePreview {
    pub servers: Vec<ServerExposure>,
    /// The direct tools of all servers once saved.
    pub direct: DirectCost,
    /// The direct tools of all servers now.
    pub saved: DirectCost,
}
mirror!(ExposurePreview <- adapter::ExposurePreview { servers, direct, saved });

/// How many tools are declared to the model, and their declarations' estimated tokens.
#[napi(object)]
pub struct DirectCost {
    pub tools: u32,
    pub tokens: u32,
}
mirror!(DirectCost <- adapter::DirectCost { tools, tokens });

/// One server's exposure.
#[napi(object)]
pub struct ServerExposure {
    pub server: String,
    /// The keys a save writes: `exposure` (`exposure`, `toolExposure`) or `directTools`
    /// (`directTools`, `excludeTools`).
    pub keys: String,
    /// The file a save writes.
    pub file: String,
    /// What the user should know about the save: an override entry, `MCP_DIRECT_TOOLS`.
    pub notes: Vec<String>,
    /// Its tools' state once saved where they share one (`mcp`, `direct`, `hidden`, `codemode`,
    /// `deferred`), else `mixed`.
    pub state: String,
    /// Whether a save would change its config.
    pub changed: bool,
    pub direct: DirectCost,
    pub saved: DirectCost,
    pub tools: Vec<ExposedTool>,
}
mirror!(ServerExposure <- adapter::ServerExposure {
    server, keys, file, notes, state, changed, direct, saved, tools,
});

/// One tool of a server, listed or cached (those the config hides or leaves out too).
#[napi(object)]
pub struct ExposedTool {
    /// The name the model calls it by through the `mcp` tool.
    pub name: String,
    /// Its MCP name.
    pub tool: String,
    /// Its state once saved (as `ServerExposure.state`).
    pub state: String,
    /// Its state now.
    pub saved: String,
    /// Its declaration's estimated tokens, were it direct.
    pub tokens: u32,
    /// Why the panel cannot change it.
    pub locked: Option<String>,
    pub annotations: Option<ToolAnnotations>,
    /// The first line of its description.
    pub description: String,
}
mirror!(ExposedTool <- adapter::ExposedTool {
    name, tool, state, saved, tokens, locked, annotations, description,
});

/// A change saved to a config file.
#[napi(object)]
pub struct SavedChange {
    /// The file written (or that already said so).
    pub file: String,
    /// Whether the file changed.
    pub changed: bool,
}
mirror!(SavedChange <- adapter::SavedChange { file, changed });

/// What the user chose in `setup`.
#[napi(object)]
pub struct SetupRequest {
    /// The project's `.pi/mcp.json` instead of the user's file.
    pub project: Option<bool>,
    /// Tools to list in `imports` (`cursor`, `claude-code`, …).
    pub imports: Option<Vec<String>>,
    /// Tools whose servers (those not configured yet) are copied into the file.
    pub copy: Option<Vec<String>>,
    /// Well-known servers to add, by id.
    pub add: Option<Vec<String>>,
    /// Show the change without writing it.
    pub dry_run: Option<bool>,
}
mirror!(SetupRequest -> adapter::SetupRequest { project, imports, copy, add, dry_run });

/// A prompt as a command to register.
#[napi(object)]
pub struct PromptCommand {
    /// `mcp__<server>__<prompt>`.
    pub name: String,
    pub server: String,
    pub prompt: String,
    /// The prompt's description and its usage line.
    pub description: String,
}
mirror!(PromptCommand <- adapter::PromptCommand { name, server, prompt, description });

/// A completion of what was typed after a command: the whole new text, and what to show.
#[napi(object)]
pub struct Completion {
    pub value: String,
    pub label: String,
}
mirror!(Completion <- adapter::Completion { value, label });

/// Something that happened to a server, or the progress of a running call.
#[napi(discriminant_case = "kebab-case")]
pub enum LifecycleEvent {
    Connecting {
        server: String,
    },
    Opened {
        server: String,
    },
    Connected {
        server: String,
        tools: u32,
    },
    Reconnected {
        server: String,
        tools: u32,
    },
    IdleShutdown {
        server: String,
        idle_minutes: f64,
    },
    Failed {
        server: String,
        error: String,
        needs_auth: bool,
    },
    Disconnected {
        server: String,
        reason: String,
    },
    CatalogChanged {
        server: String,
        tools: u32,
    },
    AuthUrl {
        server: String,
        url: String,
        text: String,
        prompt: String,
    },
    AuthDone {
        server: String,
        signed_in: bool,
        error: Option<String>,
    },
    ResourceUpdated {
        server: String,
        uri: String,
        text: String,
        note: String,
    },
    FamilyOff {
        text: String,
    },
    App {
        kind: String,
        server: String,
        tool: String,
        url: String,
        text: String,
    },
    Progress {
        call_id: String,
        server: String,
        tool: String,
        progress: f64,
        total: Option<f64>,
        message: Option<String>,
        text: String,
    },
}

impl Js for events::Event {
    type Js = LifecycleEvent;
    fn js(self) -> LifecycleEvent {
        match self {
            events::Event::Connecting { server } => LifecycleEvent::Connecting { server },
            events::Event::Opened { server } => LifecycleEvent::Opened { server },
            events::Event::Connected { server, tools } => {
                LifecycleEvent::Connected { server, tools }
            }
            events::Event::Reconnected { server, tools } => {
                LifecycleEvent::Reconnected { server, tools }
            }
            events::Event::IdleShutdown {
                server,
                idle_minutes,
            } => LifecycleEvent::IdleShutdown {
                server,
                idle_minutes,
            },
            events::Event::Failed {
                server,
                error,
                needs_auth,
            } => LifecycleEvent::Failed {
                server,
                error,
                needs_auth,
            },
            events::Event::Disconnected { server, reason } => {
                LifecycleEvent::Disconnected { server, reason }
            }
            events::Event::CatalogChanged { server, tools } => {
                LifecycleEvent::CatalogChanged { server, tools }
            }
            events::Event::AuthUrl {
                server,
                url,
                text,
                prompt,
            } => LifecycleEvent::AuthUrl {
                server,
                url,
                text,
                prompt,
            },
            events::Event::AuthDone {
                server,
                signed_in,
                error,
            } => LifecycleEvent::AuthDone {
                server,
                signed_in,
                error,
            },
            events::Event::ResourceUpdated {
                server,
                uri,
                text,
                note,
            } => LifecycleEvent::ResourceUpdated {
                server,
                uri,
                text,
                note,
            },
            events::Event::FamilyOff { text } => LifecycleEvent::FamilyOff { text },
            events::Event::App {
                kind,
                server,
                tool,
                url,
                text,
            } => LifecycleEvent::App {
                kind,
                server,
                tool,
                url,
                text,
            },
            events::Event::Progress {
                call_id,
                server,
                tool,
                progress,
                total,
                message,
                text,
            } => LifecycleEvent::Progress {
                call_id,
                server,
                tool,
                progress,
                total,
                message,
                text,
            },
        }
    }
}

/// The stable codes of `details.error`, the one list of them (exported to TypeScript as a
/// string-literal union). Programs branch on these; the text beside them is for the model.
#[napi(string_enum = "snake_case")]
pub enum ErrorCode {
    InvalidArgs,
    NestedParams,
    InvalidQuery,
    ToolNotFound,
    AmbiguousTool,
    ToolHidden,
    ToolExcluded,
    ToolForApp,
    ServerNotFound,
    ServerDisabled,
    ServerRequired,
    ServerUnavailable,
    ConnectFailed,
    AuthRequired,
    SignInFailed,
    ToolError,
    Aborted,
    Timeout,
    ConnectionLost,
    ResultTooLarge,
    ResultTooDeep,
    CallFailed,
    UrlElicitationRequired,
    ConfigError,
    ShutDown,
    BadUsage,
    ServerExists,
    ProjectUntrusted,
    ApprovalRequired,
    ApprovalDenied,
}

mirror!(ErrorCode <- adapter::ErrorCode {
    InvalidArgs | NestedParams | InvalidQuery | ToolNotFound | AmbiguousTool | ToolHidden |
    ToolExcluded | ToolForApp | ServerNotFound | ServerDisabled | ServerRequired |
    ServerUnavailable | ConnectFailed | AuthRequired | SignInFailed | ToolError | Aborted |
    Timeout | ConnectionLost | ResultTooLarge | ResultTooDeep | CallFailed |
    UrlElicitationRequired | ConfigError | ShutDown | BadUsage | ServerExists | ProjectUntrusted |
    ApprovalRequired | ApprovalDenied
});

/// What an outcome answers (`details.mode`; exported to TypeScript as a string-literal union).
#[napi(string_enum = "snake_case")]
pub enum Mode {
    Call,
    Read,
    Search,
    List,
    Describe,
    Status,
    Connect,
    Instructions,
    Tools,
    Prompts,
    Prompt,
    Login,
    Logout,
    Auth,
    Doctor,
    Broker,
    Setup,
    Add,
    ListMcpResources,
    ListMcpResourceTemplates,
    ReadMcpResource,
}

mirror!(Mode <- adapter::Mode {
    Call | Read | Search | List | Describe | Status | Connect | Instructions | Tools | Prompts |
    Prompt | Login | Logout | Auth | Doctor | Broker | Setup | Add | ListMcpResources |
    ListMcpResourceTemplates | ReadMcpResource
});
