//! What the model asks of the `mcp` tool: its parameters parsed once into a [`Request`], and the
//! one `match` that runs it. The mode is the first of tool > read > connect > describe >
//! instructions > search > server (list) > nothing (status).

use super::{CallOptions, Page, Tool};
use crate::adapter::pi_resources::Resources;
use crate::adapter::status::Status;
use crate::adapter::Mode;
use crate::adapter::{trimmed, ErrorCode, Outcome};
use crate::search::SearchOptions;
use pi_mcp_connection::value_kind::value_kind;
use serde_json::{Map, Value};

/// Fields of the `mcp` tool that pick a mode; finding one inside `args` means the model nested them.
const GATEWAY_FIELDS: [&str; 7] = [
    "tool",
    "read",
    "connect",
    "describe",
    "instructions",
    "search",
    "server",
];
/// Search results per page unless `limit` says otherwise.
pub const DEFAULT_LIMIT: usize = 12;

/// One use of the `mcp` tool.
#[derive(Clone, Debug)]
pub enum Request {
    Call {
        tool: String,
        args: Map<String, Value>,
        server: Option<String>,
    },
    /// A resource by URI (a template's variables from `args`).
    Read {
        uri: String,
        server: Option<String>,
        args: Map<String, Value>,
    },
    Connect(String),
    Describe {
        tool: String,
        server: Option<String>,
    },
    Instructions(String),
    Search {
        query: String,
        options: SearchOptions,
        include_schemas: bool,
    },
    List {
        server: String,
        page: Page,
    },
    Status,
}

impl Request {
    /// The request `params` make, or the answer to parameters that make none.
    pub fn parse(params: &Value) -> Result<Request, Outcome> {
        let text = |key: &str| trimmed(params, key).map(str::to_string);
        let flag = |key: &str| params.get(key).and_then(Value::as_bool);
        let count = |key: &str| {
            params
                .get(key)
                .and_then(Value::as_f64)
                .filter(|n| *n >= 0.0)
                .map(|n| n as usize)
        };
        let server = text("server");
        let args = parse_args(params.get("args"))?;
        if let Some(tool) = text("tool") {
            return Ok(Request::Call { tool, args, server });
        }
        if let Some(uri) = text("read") {
            return Ok(Request::Read { uri, server, args });
        }
        if GATEWAY_FIELDS.iter().any(|f| args.contains_key(*f)) {
            return Err(Outcome::error(
                Mode::Call,
                ErrorCode::NestedParams,
                "Gateway fields were nested inside `args`; pass them at the top level, e.g. mcp({ search: \"...\" }) or mcp({ tool: \"name\", args: {...} }).",
            ));
        }
        let request = if let Some(name) = text("connect") {
            Request::Connect(name)
        } else if let Some(tool) = text("describe") {
            Request::Describe { tool, server }
        } else if let Some(name) = text("instructions") {
            Request::Instructions(name)
        } else if let Some(query) = params.get("search").and_then(Value::as_str) {
            Request::Search {
                query: query.trim().to_string(),
                options: SearchOptions {
                    regex: flag("regex").unwrap_or(false),
                    server,
                    limit: count("limit").filter(|n| *n > 0).unwrap_or(DEFAULT_LIMIT),
                    offset: count("offset").unwrap_or(0),
                },
                include_schemas: flag("includeSchemas").unwrap_or(true),
            }
        } else if let Some(server) = server {
            Request::List {
                server,
                page: Page {
                    limit: count("limit").filter(|n| *n > 0),
                    offset: count("offset").unwrap_or(0),
                },
            }
        } else {
            Request::Status
        };
        Ok(request)
    }
}

impl Tool<'_> {
    /// Runs the `mcp` tool with the parameters the model gave. The first use starts a deferred
    /// cache fill.
    pub async fn execute(&self, params: &Value, call_id: Option<String>) -> Outcome {
        self.kernel.begin_deferred_fill();
        match Request::parse(params) {
            Ok(request) => self.run(request, call_id).await,
            Err(outcome) => outcome,
        }
    }

    /// Runs one request; `call_id` lets `cancel` abort a call.
    pub async fn run(&self, request: Request, call_id: Option<String>) -> Outcome {
        match request {
            Request::Call { tool, args, server } => {
                let opts = CallOptions {
                    server,
                    call_id,
                    ..CallOptions::default()
                };
                self.call(&tool, args, opts).await
            }
            Request::Read { uri, server, args } => {
                Resources::from(self.kernel)
                    .read(&uri, server.as_deref(), args, call_id)
                    .await
            }
            Request::Connect(name) => self.connect(&name).await,
            Request::Describe { tool, server } => self.describe(&tool, server.as_deref()).await,
            Request::Instructions(name) => self.instructions(&name).await,
            Request::Search {
                query,
                options,
                include_schemas,
            } => self.search(&query, options, include_schemas).await,
            Request::List { server, page } => self.list(&server, page).await,
            Request::Status => Status::from(self.kernel).status(),
        }
    }
}

/// `args` as an object: given as one, or as a JSON string encoding one.
fn parse_args(args: Option<&Value>) -> Result<Map<String, Value>, Outcome> {
    let invalid = |why: String| Outcome::error(Mode::Call, ErrorCode::InvalidArgs, why);
    match args {
        None | Some(Value::Null) => Ok(Map::new()),
        Some(Value::Object(map)) => Ok(map.clone()),
        Some(Value::String(s)) if s.trim().is_empty() => Ok(Map::new()),
        Some(Value::String(s)) => match serde_json::from_str::<Value>(s) {
            Ok(Value::Object(map)) => Ok(map),
            Ok(other) => Err(invalid(format!(
                "`args` must be a JSON object, got {}.",
                value_kind(&other)
            ))),
            Err(e) => Err(invalid(format!("`args` is not valid JSON: {e}."))),
        },
        Some(other) => Err(invalid(format!(
            "`args` must be an object, got {}.",
            value_kind(other)
        ))),
    }
}

#[cfg(test)]
mod tests {
    use crate::adapter::*;
    use serde_json::json;

    fn parse(params: Value) -> Request {
        Request::parse(&params).unwrap_or_else(|o| panic!("{}", o.joined_text()))
    }

    #[test]
    fn the_first_mode_given_wins() {
        let all =
            json!({ "tool": "t", "connect": "c", "describe": "d", "search": "s", "server": "v" });
        assert!(matches!(parse(all), Request::Call { tool, .. } if tool == "t"));
        assert!(
            matches!(parse(json!({ "connect": "c", "describe": "d" })), Request::Connect(c) if c == "c")
        );
        assert!(
            matches!(parse(json!({ "instructions": " x ", "search": "s" })), Request::Instructions(x) if x == "x")
        );
        assert!(
            matches!(parse(json!({ "search": "s", "server": "v" })), Request::Search { options, .. } if options.server.as_deref() == Some("v"))
        );
        let page = Page {
            limit: Some(5),
            offset: 10,
        };
        assert!(
            matches!(parse(json!({ "server": "v", "limit": 5, "offset": 10 })), Request::List { server, page: p } if server == "v" && p == page)
        );
        assert!(matches!(parse(json!({ "tool": "  " })), Request::Status));
    }

    #[test]
    fn search_defaults_and_blank_fields() {
        let Request::Search {
            query,
            options,
            include_schemas,
        } = parse(json!({ "search": " echo ", "limit": 0, "offset": -3 }))
        else {
            panic!("a search");
        };
        assert_eq!(query, "echo");
        assert_eq!((options.limit, options.offset), (DEFAULT_LIMIT, 0));
        assert!(include_schemas && !options.regex);
    }

    #[test]
    fn args_as_text_and_mistakes() {
        let Request::Call { args, .. } = parse(json!({ "tool": "t", "args": "{\"a\": 1}" })) else {
            panic!("a call");
        };
        assert_eq!(args["a"], 1);
        let refused = |params: Value| Request::parse(&params).unwrap_err();
        assert_eq!(
            refused(json!({ "tool": "t", "args": "[1]" })).details.error,
            Some(ErrorCode::InvalidArgs)
        );
        assert_eq!(
            refused(json!({ "tool": "t", "args": 3 })).details.error,
            Some(ErrorCode::InvalidArgs)
        );
        let nested = refused(json!({ "args": { "search": "x" } }));
        assert_eq!(
            nested.details.error.map(|e| e.as_str()),
            Some("nested_params")
        );
    }
}
