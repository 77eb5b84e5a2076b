//! Pi 1.5's `exposure` and `toolExposure`: how the model reaches each tool of a server.
//! `toolExposure` keys are exact tool names or patterns (`*` any characters, `?` one); an
//! exact name wins over patterns, and among patterns the first in the file wins. Without either
//! key a server keeps pi-mcp-native's own behaviour (its tools behind the `mcp` tool, plus any
//! `directTools`), unless `settings.exposure` gives a default.

use super::glob::{is_pattern, matches};
use super::server::describe;
use serde_json::Value;

/// How the model reaches a tool.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Exposure {
    /// Behind the `mcp` tool; on Pi ≥ 0.99 also a Pi tool for `codemode` scripts.
    Codemode,
    /// Behind the `mcp` tool; on Pi ≥ 0.99 also a Pi tool that `tool_search` loads.
    Deferred,
    /// A Pi tool declared to the model (and behind the `mcp` tool).
    Direct,
    /// Unreachable: not listed, searched, described or called.
    Hidden,
}

impl Exposure {
    pub const ALL: [Exposure; 4] = [
        Exposure::Codemode,
        Exposure::Deferred,
        Exposure::Direct,
        Exposure::Hidden,
    ];

    /// The value as written in a config.
    pub fn name(self) -> &'static str {
        match self {
            Exposure::Codemode => "codemode",
            Exposure::Deferred => "deferred",
            Exposure::Direct => "direct",
            Exposure::Hidden => "hidden",
        }
    }

    /// A config value; `codemode-deferred` is Pi's older name for `codemode`.
    pub fn parse(value: &Value) -> Result<Exposure, String> {
        let text = value.as_str().unwrap_or_default();
        if text == "codemode-deferred" {
            return Ok(Exposure::Codemode);
        }
        Exposure::ALL
            .into_iter()
            .find(|e| e.name() == text)
            .ok_or_else(|| {
                let names: Vec<String> = Exposure::ALL
                    .iter()
                    .map(|e| format!("\"{}\"", e.name()))
                    .collect();
                format!(
                    "must be one of {}, got {}",
                    names.join(", "),
                    describe(value)
                )
            })
    }
}

/// A server's `exposure` and `toolExposure`.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct ToolExposure {
    /// `exposure` (or `settings.exposure` for a server with neither key).
    pub server: Option<Exposure>,
    /// `toolExposure` entries without `*`.
    pub exact: Vec<(String, Exposure)>,
    /// `toolExposure` entries with `*`, in file order.
    pub patterns: Vec<(String, Exposure)>,
}

impl ToolExposure {
    /// Whether the config says anything about exposure.
    pub fn is_set(&self) -> bool {
        self.server.is_some() || !self.exact.is_empty() || !self.patterns.is_empty()
    }

    /// The exposure of `tool` (its MCP name); `None`: the config does not say.
    pub fn of(&self, tool: &str) -> Option<Exposure> {
        self.exact
            .iter()
            .find(|(name, _)| name == tool)
            .or_else(|| self.patterns.iter().find(|(p, _)| matches(p, tool)))
            .map(|(_, exposure)| *exposure)
            .or(self.server)
    }

    /// Whether every tool of the server has one of `exposures`, whatever tools it lists (a tool
    /// no entry matches takes `exposure`, or stays behind the `mcp` tool without one).
    pub fn always_among(&self, exposures: &[Exposure]) -> bool {
        let every_tool_matched =
            self.server.is_some() || self.patterns.iter().any(|(p, _)| p == "*");
        every_tool_matched && self.possible().iter().all(|e| exposures.contains(e))
    }

    /// Every exposure some tool of the server may have, known before it is listed.
    pub fn possible(&self) -> Vec<Exposure> {
        let mut all: Vec<Exposure> = self.server.into_iter().collect();
        for (_, e) in self.exact.iter().chain(&self.patterns) {
            if !all.contains(e) {
                all.push(*e);
            }
        }
        all
    }
}

/// Reads `exposure` and `toolExposure` from a server entry; each problem is `(field, message)`.
pub fn parse(
    exposure: Option<&Value>,
    tool_exposure: Option<&Value>,
    default: Option<Exposure>,
    problems: &mut Vec<(String, String)>,
) -> ToolExposure {
    let mut out = ToolExposure::default();
    if let Some(value) = exposure.filter(|v| !v.is_null()) {
        match Exposure::parse(value) {
            Ok(e) => out.server = Some(e),
            Err(why) => problems.push((
                "exposure".into(),
                format!("{why}; the server's tools stay behind the mcp tool"),
            )),
        }
    }
    match tool_exposure.filter(|v| !v.is_null()) {
        None => {}
        Some(Value::Object(entries)) => {
            for (tool, value) in entries {
                match Exposure::parse(value) {
                    Ok(e) if is_pattern(tool) => out.patterns.push((tool.clone(), e)),
                    Ok(e) => out.exact.push((tool.clone(), e)),
                    Err(why) => {
                        problems.push((format!("toolExposure.{tool}"), format!("{why}; ignored")))
                    }
                }
            }
        }
        Some(other) => problems.push((
            "toolExposure".into(),
            format!(
                "must map tool names (or patterns with *) to exposures, got {}; ignored",
                describe(other)
            ),
        )),
    }
    if !out.is_set() {
        out.server = default;
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn exact_names_before_patterns_first_pattern_wins() {
        let mut problems = vec![];
        let e = parse(
            Some(&json!("deferred")),
            Some(
                &json!({"delete_*": "hidden", "*_issue": "direct", "search_code": "direct", "delete_issue": "codemode-deferred"}),
            ),
            None,
            &mut problems,
        );
        assert!(problems.is_empty(), "{problems:?}");
        assert_eq!(e.of("delete_issue"), Some(Exposure::Codemode));
        assert_eq!(e.of("delete_repo"), Some(Exposure::Hidden));
        assert_eq!(e.of("get_issue"), Some(Exposure::Direct));
        assert_eq!(e.of("search_code"), Some(Exposure::Direct));
        assert_eq!(e.of("list"), Some(Exposure::Deferred));
        assert_eq!(
            e.possible(),
            [
                Exposure::Deferred,
                Exposure::Direct,
                Exposure::Codemode,
                Exposure::Hidden
            ]
        );
    }

    #[test]
    fn defaults_and_bad_values() {
        let mut problems = vec![];
        assert_eq!(parse(None, None, None, &mut problems).of("x"), None);
        let defaulted = parse(None, None, Some(Exposure::Direct), &mut problems);
        assert_eq!(defaulted.of("x"), Some(Exposure::Direct));
        // A server with its own keys does not take the default.
        let own = parse(
            None,
            Some(&json!({"a": "hidden"})),
            Some(Exposure::Direct),
            &mut problems,
        );
        assert_eq!((own.of("a"), own.of("b")), (Some(Exposure::Hidden), None));
        assert!(problems.is_empty());
        let bad = parse(
            Some(&json!("visible")),
            Some(&json!({"a": 1})),
            None,
            &mut problems,
        );
        assert_eq!(bad, ToolExposure::default());
        assert_eq!(problems[0].0, "exposure");
        assert!(problems[0].1.starts_with("must be one of \"codemode\", \"deferred\", \"direct\", \"hidden\", got string \"visible\""));
        assert_eq!(problems[1].0, "toolExposure.a");
        parse(None, Some(&json!(["a"])), None, &mut problems);
        assert!(problems[2].1.contains("must map tool names"));
    }
}
