//! `Outcome.details` as JavaScript gets it: one flat object, as before the core typed it. The
//! core keeps each mode's fields in a struct of its own (`adapter::Part`); here they are optional
//! fields of one napi object, so that every reader's `details.totalTools` or `details.server`
//! stays as it was: napi cannot flatten a struct into another, and a union discriminated by
//! `mode` would repeat the nine common fields in each of 21 variants. Each field's doc names the
//! modes that set it, and each has one type in every mode that sets it (search's likeliest
//! servers are `likelyServers`, doctor's servers `configured`, status's `servers`).

use super::detail_entries::*;
use super::json::JsonObject;
use super::mirror::{ErrorCode, Js, Mode};
use napi_derive::napi;
use pi_mcp_core::{adapter, search};

/// What an answer is about, for programs: `mode` names the mode; failures set `error` to a
/// stable code (and usually `server`).
#[napi(object)]
pub struct OutcomeDetails {
    pub mode: Mode,
    pub error: Option<ErrorCode>,
    pub server: Option<String>,
    pub tool: Option<String>,
    /// The resource an answer (or a refusal to read it) is about.
    pub uri: Option<String>,
    /// The prompt an answer (or a refusal to get it) is about.
    pub prompt: Option<String>,
    /// Servers still being listed when the answer was given (search, status, …).
    pub listing: Option<PendingListing>,
    /// A tool call's time in the core, from the call to its answer (ms, one decimal).
    pub elapsed_ms: Option<f64>,
    /// Where the whole text went when the output guard cut it.
    pub full_output_path: Option<String>,
    /// list: the server's tools in all; add: the tools the trial connection listed; login: the
    /// server's tools now known.
    pub tools: Option<u32>,
    /// list, search: the page's first item.
    pub offset: Option<u32>,
    /// search: the query.
    pub query: Option<String>,
    /// search: the page's hits.
    pub matches: Option<Vec<SearchMatch>>,
    /// search: the hits in all.
    pub total: Option<u32>,
    /// search: set when nothing matched well (`likelyServers` then names the likeliest servers).
    pub weak: Option<bool>,
    /// search (weak): the likeliest servers' names.
    pub likely_servers: Option<Vec<String>>,
    /// status: each server's state.
    pub servers: Option<Vec<StatusServer>>,
    /// search: what "No strong match" is decided on.
    pub signals: Option<SearchSignals>,
    /// describe: the tool's input schema exactly as the server sent it (left out when over the
    /// metadata byte limit).
    pub input_schema: Option<JsonObject>,
    /// status, tools: the enabled servers' tools in all.
    pub total_tools: Option<u32>,
    /// status: the config's problems; call: why the arguments do not fit the schema.
    pub problems: Option<Vec<String>>,
    /// status: this session's part in a family of Pi sessions sharing servers.
    pub family: Option<FamilyRole>,
    /// prompts: the prompts' slash commands.
    pub prompts: Option<Vec<ListedPrompt>>,
    /// logout: the server refused to revoke the tokens (deleted here all the same).
    pub revocation_failed: Option<bool>,
    /// auth: the server waits for a sign-in.
    pub needs_auth: Option<bool>,
    /// auth: it signs in by OAuth.
    pub oauth: Option<bool>,
    /// doctor: whether the project's config is trusted, and why.
    pub trust: Option<TrustEntry>,
    /// doctor: the config files read.
    pub sources: Option<Vec<SourceEntry>>,
    /// doctor: each server as the config merged it, with its connect check.
    pub configured: Option<Vec<DoctorServer>>,
    /// doctor: the config's problems.
    pub diagnostics: Option<Vec<DiagnosticEntry>>,
    /// doctor: the metadata cache cannot be written.
    pub cache_warning: Option<String>,
    /// doctor: the log cannot be written.
    pub log_warning: Option<String>,
    /// add, setup: the config file written (or that would be).
    pub file: Option<String>,
    /// add: the server's entry as saved (JSON of the config's shape, as written to the file).
    pub entry: Option<JsonObject>,
    /// add: whether it was saved (not on a dry run).
    pub saved: Option<bool>,
    /// setup (plan): whether the config file exists.
    pub exists: Option<bool>,
    /// setup (plan): other agents' configs found to import.
    pub found: Option<Vec<FoundEntry>>,
    /// setup (plan): well-known servers on offer.
    pub well_known: Option<Vec<WellKnownEntry>>,
    /// setup (done): the change as a diff of lines.
    pub preview: Option<String>,
    /// setup (done): whether the file was written.
    pub written: Option<bool>,
    /// broker status: the broker serving this agent dir (null when none runs).
    #[napi(ts_type = "BrokerStatus | null")]
    pub broker: Option<Option<BrokerStatus>>,
    /// broker stop: the broker stopped (null when none ran).
    #[napi(ts_type = "BrokerStatus | null")]
    pub stopped: Option<Option<BrokerStatus>>,
}

/// How many servers were still being listed, and the first few.
#[napi(object)]
pub struct PendingListing {
    pub pending: u32,
    pub servers: Vec<String>,
}
mirror!(PendingListing <- adapter::Listing { pending, servers });

/// A search hit, and the tools of other servers with the same name and description.
#[napi(object)]
pub struct SearchMatch {
    pub server: String,
    pub tool: String,
    pub also: Option<Vec<ToolRef>>,
}

#[napi(object)]
pub struct ToolRef {
    pub server: String,
    pub tool: String,
}
mirror!(ToolRef <- adapter::ToolRef { server, tool });

/// What the ranking says about how well a query was matched (`scripts/fit-weak.mjs`).
#[napi(object)]
pub struct SearchSignals {
    pub strength: f64,
    pub first_share: f64,
    pub first_score: f64,
    pub fifth_of_first: f64,
    pub terms: u32,
}
mirror!(SearchSignals <- search::Signals { strength, first_share, first_score, fifth_of_first, terms });

/// A prompt's slash command.
#[napi(object)]
pub struct ListedPrompt {
    pub server: String,
    pub prompt: String,
    /// The command's name, without the slash.
    pub command: String,
}
mirror!(ListedPrompt <- adapter::ListedPrompt { server, prompt, command });

impl Js for adapter::SearchMatch {
    type Js = SearchMatch;
    fn js(self) -> SearchMatch {
        let adapter::SearchMatch { server, tool, also } = self;
        let also = (!also.is_empty()).then(|| also.js());
        SearchMatch { server, tool, also }
    }
}

impl Js for adapter::Details {
    type Js = OutcomeDetails;
    fn js(self) -> OutcomeDetails {
        let adapter::Details {
            mode,
            error,
            server,
            tool,
            uri,
            prompt,
            listing,
            elapsed_ms,
            full_output_path,
            part,
        } = self;
        let mut js = OutcomeDetails {
            mode: mode.js(),
            error: error.js(),
            server,
            tool,
            uri,
            prompt,
            listing: listing.js(),
            elapsed_ms,
            full_output_path,
            tools: None,
            offset: None,
            query: None,
            matches: None,
            total: None,
            weak: None,
            likely_servers: None,
            servers: None,
            signals: None,
            input_schema: None,
            total_tools: None,
            problems: None,
            family: None,
            prompts: None,
            revocation_failed: None,
            needs_auth: None,
            oauth: None,
            trust: None,
            sources: None,
            configured: None,
            diagnostics: None,
            cache_warning: None,
            log_warning: None,
            file: None,
            entry: None,
            saved: None,
            exists: None,
            found: None,
            well_known: None,
            preview: None,
            written: None,
            broker: None,
            stopped: None,
        };
        if let Some(part) = part {
            js.set(part);
        }
        js
    }
}

impl OutcomeDetails {
    /// Sets the fields of one mode's part.
    fn set(&mut self, part: adapter::Part) {
        use adapter::Part;
        match part {
            Part::List(adapter::ListDetails { tools, offset }) => {
                self.tools = Some(tools.js());
                self.offset = Some(offset.js());
            }
            Part::Search(adapter::SearchDetails {
                query,
                matches,
                total,
                offset,
                weak,
                servers,
                signals,
            }) => {
                self.query = Some(query);
                self.matches = Some(matches.js());
                self.total = Some(total.js());
                self.offset = Some(offset.js());
                self.weak = weak;
                self.likely_servers = servers;
                self.signals = signals.js();
            }
            Part::Describe(adapter::DescribeDetails { input_schema }) => {
                self.input_schema = input_schema
            }
            Part::Status(adapter::StatusDetails {
                servers,
                total_tools,
                problems,
                family,
            }) => {
                self.servers = Some(servers.js());
                self.total_tools = Some(total_tools.js());
                self.problems = Some(problems);
                self.family = family.js();
            }
            Part::Tools(adapter::ToolsDetails { total_tools }) => {
                self.total_tools = Some(total_tools.js())
            }
            Part::Call(adapter::CallDetails { problems }) => self.problems = Some(problems),
            Part::Prompts(adapter::PromptsDetails { prompts }) => self.prompts = Some(prompts.js()),
            Part::Login(adapter::LoginDetails { tools }) => self.tools = Some(tools.js()),
            Part::Logout(adapter::LogoutDetails { revocation_failed }) => {
                self.revocation_failed = revocation_failed
            }
            Part::Auth(adapter::AuthDetails { needs_auth, oauth }) => {
                self.needs_auth = Some(needs_auth);
                self.oauth = Some(oauth);
            }
            Part::Doctor(adapter::DoctorDetails {
                trust,
                sources,
                servers,
                diagnostics,
                cache_warning,
                log_warning,
            }) => {
                self.trust = Some(trust.js());
                self.sources = Some(sources.js());
                self.configured = Some(servers.js());
                self.diagnostics = Some(diagnostics.js());
                self.cache_warning = cache_warning;
                self.log_warning = log_warning;
            }
            Part::Add(adapter::AddDetails {
                file,
                entry,
                tools,
                saved,
            }) => {
                self.file = Some(file);
                self.entry = Some(entry);
                self.tools = Some(tools.js());
                self.saved = Some(saved);
            }
            Part::SetupPlan(adapter::SetupPlanDetails {
                file,
                exists,
                found,
                well_known,
            }) => {
                self.file = Some(file);
                self.exists = Some(exists);
                self.found = Some(found.js());
                self.well_known = Some(well_known.js());
            }
            Part::SetupDone(adapter::SetupDoneDetails {
                file,
                preview,
                written,
            }) => {
                self.file = Some(file);
                self.preview = Some(preview);
                self.written = Some(written);
            }
            Part::Broker(adapter::BrokerDetails { broker }) => self.broker = Some(broker.js()),
            Part::BrokerStopped(adapter::BrokerStoppedDetails { stopped }) => {
                self.stopped = Some(stopped.js())
            }
        }
    }
}
