//! A tool's `_meta.ui` as ext-apps 2.x defines it: the `ui://` resource of its interface
//! (`resourceUri`, or the older flat key `ui/resourceUri`) and who may call it (`visibility`).

use serde_json::Value;

/// The flat key servers written for ext-apps 1.x still send beside (or instead of) `ui`.
const LEGACY_RESOURCE_URI: &str = "ui/resourceUri";

/// The `ui://` resource of the tool's interface, if it declares one. Any other scheme is not an
/// MCP App and is passed over.
pub fn resource_uri(tool: &Value) -> Option<&str> {
    let meta = tool.get("_meta")?;
    meta.get("ui")
        .and_then(|ui| ui.get("resourceUri"))
        .or_else(|| meta.get(LEGACY_RESOURCE_URI))
        .and_then(Value::as_str)
        .filter(|uri| uri.starts_with("ui://") && uri.len() > "ui://".len())
}

/// Who may call a tool (`_meta.ui.visibility`; both when absent).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Visibility {
    /// The model: listed, searched, described and called through the gateway.
    pub model: bool,
    /// The app of the same server, from its interface.
    pub app: bool,
}

impl Visibility {
    /// What the tool says. A list without a word we know, or a value that is not a list of
    /// strings, is read as absent: a server's mistake must not hide its tools from the model.
    pub fn of(tool: &Value) -> Visibility {
        let both = Visibility {
            model: true,
            app: true,
        };
        let Some(list) = tool
            .get("_meta")
            .and_then(|m| m.get("ui"))
            .and_then(|ui| ui.get("visibility"))
            .and_then(Value::as_array)
        else {
            return both;
        };
        let has = |word: &str| list.iter().any(|v| v.as_str() == Some(word));
        let said = Visibility {
            model: has("model"),
            app: has("app"),
        };
        match said.model || said.app {
            true => said,
            false => both,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn the_resource_is_read_from_either_key_and_only_as_ui() {
        let nested = json!({ "_meta": { "ui": { "resourceUri": "ui://clock/app.html" } } });
        assert_eq!(resource_uri(&nested), Some("ui://clock/app.html"));
        let flat = json!({ "_meta": { "ui/resourceUri": "ui://clock/old.html" } });
        assert_eq!(resource_uri(&flat), Some("ui://clock/old.html"));
        let both =
            json!({ "_meta": { "ui": { "resourceUri": "ui://a" }, "ui/resourceUri": "ui://b" } });
        assert_eq!(resource_uri(&both), Some("ui://a"));
        for not_an_app in [
            json!({}),
            json!({ "_meta": { "ui": { "resourceUri": "https://x/app.html" } } }),
            json!({ "_meta": { "ui": { "resourceUri": "ui://" } } }),
            json!({ "_meta": { "ui": { "resourceUri": 7 } } }),
        ] {
            assert_eq!(resource_uri(&not_an_app), None, "{not_an_app}");
        }
    }

    #[test]
    fn visibility_defaults_to_both_and_a_bad_value_hides_nothing() {
        let of = |v: Value| Visibility::of(&json!({ "_meta": { "ui": { "visibility": v } } }));
        let both = Visibility {
            model: true,
            app: true,
        };
        assert_eq!(Visibility::of(&json!({ "name": "t" })), both);
        assert_eq!(
            of(json!(["app"])),
            Visibility {
                model: false,
                app: true
            }
        );
        assert_eq!(
            of(json!(["model"])),
            Visibility {
                model: true,
                app: false
            }
        );
        assert_eq!(of(json!(["model", "app"])), both);
        for bad in [
            json!([]),
            json!("app"),
            json!(["APP"]),
            json!([1]),
            json!(null),
        ] {
            assert_eq!(of(bad.clone()), both, "{bad}");
        }
    }
}
