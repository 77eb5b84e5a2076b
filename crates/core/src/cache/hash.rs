//! `configHash`: the SHA-256 of a server's identity fields, serialized exactly as pi-mcp-adapter
//! does (keys sorted, absent fields as the bare word `undefined`), so both read each other's cache.

use crate::config::{fields, interpolate, Env};
use serde_json::Value;
use sha2::{Digest, Sha256};

/// The fields that decide which tools a server offers (the table's `hashed` ones), in sorted
/// order. Lifecycle fields (`lifecycle`, `idleTimeout`, `debug`, `directTools`,
/// `requestTimeoutMs`) are left out.
fn identity_fields() -> Vec<&'static str> {
    let mut names = fields::hashed();
    names.sort_unstable();
    names
}

/// The hash of a server entry as written in the config (references are resolved with `env`).
pub fn config_hash(entry: &Value, env: &Env) -> String {
    hex_sha256(&identity(entry, env))
}

/// The SHA-256 of `value` serialized with its keys sorted at every level: the same for the same
/// value however its objects are ordered.
pub fn stable_hash(value: &Value) -> String {
    let mut out = String::new();
    stable(value, &mut out);
    hex_sha256(&out)
}

fn hex_sha256(text: &str) -> String {
    let digest = Sha256::digest(text.as_bytes());
    digest.iter().map(|b| format!("{b:02x}")).collect()
}

/// The serialized identity that gets hashed.
pub fn identity(entry: &Value, env: &Env) -> String {
    let mut out = String::from("{");
    for (i, field) in identity_fields().into_iter().enumerate() {
        if i > 0 {
            out.push(',');
        }
        out.push_str(&serde_json::to_string(field).unwrap_or_default());
        out.push(':');
        let value = resolved(field, entry, env);
        match &value {
            Some(v) => stable(v, &mut out),
            None => out.push_str("undefined"),
        }
    }
    out.push('}');
    out
}

/// A field's value as it takes effect: references interpolated where the adapter does it.
fn resolved(field: &str, entry: &Value, env: &Env) -> Option<Value> {
    let raw = entry.get(field);
    match field {
        "env" | "headers" | "url" | "requestHeadersCommand" => {
            raw.map(|v| interpolate_strings(v, env))
        }
        "cwd" | "socket" => raw.map(|v| match v {
            Value::String(s) => Value::String(expand_home(&interpolate(s, env), env)),
            other => other.clone(),
        }),
        "bearerToken" => match entry.get("bearerTokenEnv").and_then(Value::as_str) {
            Some(var) => env.get(var).map(|token| Value::String(token.clone())),
            None => raw.map(|v| interpolate_strings(v, env)),
        },
        _ => raw.cloned(),
    }
}

fn interpolate_strings(value: &Value, env: &Env) -> Value {
    match value {
        Value::String(s) => Value::String(interpolate(s, env)),
        Value::Array(items) => {
            Value::Array(items.iter().map(|v| interpolate_strings(v, env)).collect())
        }
        Value::Object(map) => Value::Object(
            map.iter()
                .map(|(k, v)| (k.clone(), interpolate_strings(v, env)))
                .collect(),
        ),
        other => other.clone(),
    }
}

fn expand_home(path: &str, env: &Env) -> String {
    match (path.strip_prefix('~'), env.get("HOME")) {
        (Some(rest), Some(home)) if rest.is_empty() || rest.starts_with('/') => {
            format!("{home}{rest}")
        }
        _ => path.to_string(),
    }
}

/// JSON with object keys sorted (by UTF-16 code units, as JavaScript sorts them) at every level.
fn stable(value: &Value, out: &mut String) {
    match value {
        Value::Object(map) => {
            let mut keys: Vec<&String> = map.keys().collect();
            keys.sort_by(|a, b| a.encode_utf16().cmp(b.encode_utf16()));
            out.push('{');
            for (i, key) in keys.into_iter().enumerate() {
                if i > 0 {
                    out.push(',');
                }
                out.push_str(&serde_json::to_string(key).unwrap_or_default());
                out.push(':');
                stable(&map[key], out);
            }
            out.push('}');
        }
        Value::Array(items) => {
            out.push('[');
            for (i, item) in items.iter().enumerate() {
                if i > 0 {
                    out.push(',');
                }
                stable(item, out);
            }
            out.push(']');
        }
        Value::Number(n) => out.push_str(&js_number(n)),
        other => out.push_str(&other.to_string()),
    }
}

/// A number as JavaScript prints it: integral values without a fraction.
fn js_number(n: &serde_json::Number) -> String {
    match n.as_f64() {
        Some(f) if n.is_f64() && f.fract() == 0.0 && f.abs() < 1e21 => format!("{f:.0}"),
        _ => n.to_string(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    const VECTORS: &str = include_str!("../../../../__test__/fixtures/cache-hash-vectors.json");

    #[test]
    fn matches_every_vector_of_pi_mcp_adapter() {
        let vectors: Value = serde_json::from_str(VECTORS).unwrap();
        let env: Env = vectors["environment"]
            .as_object()
            .unwrap()
            .iter()
            .map(|(k, v)| (k.clone(), v.as_str().unwrap().to_string()))
            .collect();
        let cases = vectors["cases"].as_object().unwrap();
        assert!(cases.len() >= 10);
        for (name, case) in cases {
            assert_eq!(
                config_hash(&case["config"], &env),
                case["hash"].as_str().unwrap(),
                "vector {name}: {}",
                identity(&case["config"], &env)
            );
        }
    }

    #[test]
    fn serialization_of_the_first_vector() {
        let entry =
            json!({"command": "npx", "args": ["-y", "@modelcontextprotocol/server-everything"]});
        assert_eq!(
            identity(&entry, &Env::new()),
            r#"{"args":["-y","@modelcontextprotocol/server-everything"],"auth":undefined,"bearerToken":undefined,"bearerTokenEnv":undefined,"command":"npx","cwd":undefined,"env":undefined,"excludeTools":undefined,"exposeResources":undefined,"headers":undefined,"includeTools":undefined,"protocolVersion":undefined,"requestHeadersCommand":undefined,"socket":undefined,"url":undefined}"#
        );
    }

    #[test]
    fn the_field_table_hashes_the_fields_pi_mcp_adapter_does() {
        let listed = [
            "args",
            "auth",
            "bearerToken",
            "bearerTokenEnv",
            "command",
            "cwd",
            "env",
            "excludeTools",
            "exposeResources",
            "headers",
            "includeTools",
            "protocolVersion",
            "requestHeadersCommand",
            "socket",
            "url",
        ];
        assert_eq!(identity_fields(), listed);
    }

    #[test]
    fn numbers_print_like_javascript() {
        let mut out = String::new();
        stable(&json!({"b": 1.0, "a": [2.5, 3]}), &mut out);
        assert_eq!(out, r#"{"a":[2.5,3],"b":1}"#);
    }
}
