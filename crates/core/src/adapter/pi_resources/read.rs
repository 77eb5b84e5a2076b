//! `mcp({ read, server, args })`: a resource read by URI (a template's variables filled from
//! `args`), given to the model as text, images, or a private file it can open; a server that
//! offers subscriptions is then asked for updates of it, which arrive as events.

use crate::adapter::pi_resources::Resources;
use crate::adapter::reach::Need;
use crate::adapter::Mode;
use crate::adapter::{ErrorCode, Outcome};
use crate::approval::Subject;
use crate::resources;
use pi_mcp_connection::pool::{RequestError, RequestOptions};
use serde_json::{json, Map, Value};
use std::sync::Arc;

impl Resources<'_> {
    pub async fn read(
        &self,
        uri: &str,
        server: Option<&str>,
        args: Map<String, Value>,
        call_id: Option<String>,
    ) -> Outcome {
        let server = match server {
            Some(server) => server.to_string(),
            None => match self.server_of_resource(uri) {
                Ok(server) => server,
                Err(outcome) => return outcome,
            },
        };
        let uri = match uri.contains('{') {
            true => match resources::expand(uri, &args) {
                Ok(uri) => uri,
                Err(why) => {
                    return Outcome::error(
                        Mode::Read,
                        ErrorCode::InvalidArgs,
                        format!("Cannot read: {why}."),
                    )
                }
            },
            false => uri.to_string(),
        };
        if resources::is_app(&json!({ "uri": uri })) {
            return Outcome::error(
                Mode::Read,
                ErrorCode::InvalidArgs,
                format!("{uri} is an MCP App's user interface, which is not shown to the model."),
            );
        }
        let subject = Subject::Read {
            server: &server,
            uri: &uri,
        };
        if let Err(outcome) = self
            .kernel
            .approved(Mode::Read, subject, &Value::Null, None)
            .await
        {
            return outcome;
        }
        let reached = match self.kernel.ready(&server, Need::Handshake).await {
            Ok(reached) => reached,
            Err(why) => return why.outcome(Mode::Read, &server),
        };
        let cancel = self.kernel.closing.child_token();
        let _pending = call_id
            .as_deref()
            .and_then(|id| self.kernel.servers.call_started(&server, id, &cancel));
        let opts = RequestOptions {
            timeout: self
                .kernel
                .server(&server)
                .map_or(crate::adapter::DEFAULT_REQUEST_TIMEOUT, |s| {
                    self.kernel.request_timeout(s)
                }),
            cancel,
            on_progress: None,
            caller: Some(crate::adapter::caller(call_id.as_deref())),
            total: self
                .kernel
                .server(&server)
                .and_then(|s| self.kernel.config.client_settings(s).call_timeout()),
            tool: None,
        };
        let conn = reached.conn;
        let outcome = match conn
            .request("resources/read", json!({ "uri": uri }), opts)
            .await
        {
            Ok(raw) => {
                conn.subscribe(&uri).await;
                let mut outcome = Outcome::text(Mode::Read, "");
                outcome.content = resources::read_result(&raw);
                self.kernel.within_guard(outcome, &uri)
            }
            Err(RequestError::Aborted) => Outcome::error(
                Mode::Read,
                ErrorCode::Aborted,
                format!("Reading {uri} was aborted."),
            ),
            Err(e) => Outcome::error(
                Mode::Read,
                ErrorCode::from(&e),
                format!("Cannot read {uri}: {e}"),
            ),
        };
        outcome.with_server(server).with_uri(uri)
    }

    /// The server that lists `uri` (or a template it fits); the only server with resources
    /// when none does.
    fn server_of_resource(&self, uri: &str) -> Result<String, Outcome> {
        let names = self.kernel.servers.names(false);
        let metas: Vec<(String, Arc<crate::adapter::ServerMeta>)> = names
            .iter()
            .filter_map(|n| Some((n.to_string(), self.kernel.servers.meta(n)?)))
            .collect();
        let lists = |m: &crate::adapter::ServerMeta| {
            m.resources.iter().any(|r| r["uri"] == uri)
                || m.templates.iter().any(|t| {
                    t["uriTemplate"] == uri
                        || t["uriTemplate"]
                            .as_str()
                            .and_then(|t| t.split('{').next())
                            .is_some_and(|stem| !stem.is_empty() && uri.starts_with(stem))
                })
        };
        if let Some((name, _)) = metas.iter().find(|(_, m)| lists(m)) {
            return Ok(name.clone());
        }
        let with_resources: Vec<&str> = metas
            .iter()
            .filter(|(_, m)| !m.resources.is_empty() || !m.templates.is_empty())
            .map(|(n, _)| n.as_str())
            .collect();
        match with_resources[..] {
            [only] => Ok(only.to_string()),
            _ => Err(Outcome::error(
                Mode::Read,
                ErrorCode::ServerRequired,
                format!(
                    "No server is known to list {uri}; say which one: mcp({{ read: \"{uri}\", server: \"…\" }}). Servers with resources: {}.",
                    match with_resources.is_empty() {
                        true => "none known yet".to_string(),
                        false => with_resources.join(", "),
                    }
                ),
            )),
        }
    }
}
