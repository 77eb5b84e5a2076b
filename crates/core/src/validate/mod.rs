//! Checking a call's arguments against the tool's JSON Schema before anything is sent, so a wrong
//! call costs no round trip and the model learns exactly what to fix. A practical subset of JSON
//! Schema is checked (types, required, properties, enum/const, items, bounds, pattern, anyOf/oneOf/
//! allOf, local `$ref`); unknown keywords are ignored, so an unusual schema never rejects a call.

use crate::search::similarity;
use pi_mcp_connection::value_kind::describe;
use regex::Regex;
use serde_json::{Map, Value};

mod coerce;
#[cfg(test)]
mod tests;

pub use coerce::coerce_arguments;

/// Problems reported at most; more would bury the first ones.
const MAX_PROBLEMS: usize = 8;
/// `$ref` chains and nesting deeper than this are not followed.
const MAX_DEPTH: usize = 32;

/// One thing wrong with the arguments: where (`query`, `options.depth`, `paths[2]`) and what.
#[derive(Clone, Debug, PartialEq)]
pub struct Problem {
    pub path: String,
    pub message: String,
}

impl std::fmt::Display for Problem {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        if self.path.is_empty() {
            write!(f, "{}", self.message)
        } else {
            write!(f, "`{}`: {}", self.path, self.message)
        }
    }
}

/// What is wrong with `args` (the arguments object) for a tool taking `schema`; empty when they
/// fit.
pub fn check_arguments(schema: &Value, args: &Value) -> Vec<Problem> {
    let mut checker = Checker {
        root: schema,
        problems: Vec::new(),
    };
    checker.check(schema, args, "", 0);
    checker.problems.truncate(MAX_PROBLEMS);
    checker.problems
}

/// `args` without the optional ones given as `null` where the schema does not allow null: models
/// often write `null` for "not given", and servers (and SEP-2243 headers) treat it as left out.
pub fn without_null_optionals(schema: &Value, mut args: Map<String, Value>) -> Map<String, Value> {
    let required: Vec<&str> = schema
        .get("required")
        .and_then(Value::as_array)
        .map(|r| r.iter().filter_map(Value::as_str).collect())
        .unwrap_or_default();
    let properties = schema.get("properties").and_then(Value::as_object);
    args.retain(|key, value| {
        let allows_null = || {
            let Some(property) = properties.and_then(|p| p.get(key)) else {
                return true; // unknown: not ours to judge
            };
            property.get("nullable").and_then(Value::as_bool) == Some(true)
                || match property.get("type") {
                    Some(Value::String(t)) => t == "null",
                    Some(Value::Array(ts)) => ts.iter().any(|t| t == "null"),
                    _ => true,
                }
        };
        !value.is_null() || required.contains(&key.as_str()) || allows_null()
    });
    args
}

struct Checker<'a> {
    root: &'a Value,
    problems: Vec<Problem>,
}

impl<'a> Checker<'a> {
    fn report(&mut self, path: &str, message: String) {
        self.problems.push(Problem {
            path: path.to_string(),
            message,
        });
    }

    fn check(&mut self, schema: &'a Value, value: &Value, path: &str, depth: usize) {
        let Some(schema) = schema.as_object() else {
            return; // `true`, `{}` or something unreadable: anything goes.
        };
        if depth > MAX_DEPTH || self.problems.len() >= MAX_PROBLEMS {
            return;
        }
        if let Some(target) = schema.get("$ref").and_then(Value::as_str) {
            if let Some(target) = self.resolve(target) {
                self.check(target, value, path, depth + 1);
            }
        }
        if !self.type_fits(schema, value, path) {
            return;
        }
        self.check_values(schema, value, path);
        self.check_combinations(schema, value, path, depth);
        match value {
            Value::Object(map) => self.check_object(schema, map, path, depth),
            Value::Array(items) => self.check_array(schema, items, path, depth),
            Value::String(s) => self.check_string(schema, s, path),
            Value::Number(n) => self.check_number(schema, n.as_f64().unwrap_or(0.0), path),
            _ => {}
        }
    }

    /// `#/$defs/x`-style pointers into the same schema; anything else is not followed.
    fn resolve(&self, reference: &str) -> Option<&'a Value> {
        let pointer = reference.strip_prefix('#')?;
        self.root.pointer(pointer)
    }

    fn type_fits(&mut self, schema: &Map<String, Value>, value: &Value, path: &str) -> bool {
        let mut allowed: Vec<&str> = match schema.get("type") {
            Some(Value::String(t)) => vec![t.as_str()],
            Some(Value::Array(ts)) => ts.iter().filter_map(Value::as_str).collect(),
            _ => return true,
        };
        if schema.get("nullable").and_then(Value::as_bool) == Some(true) {
            allowed.push("null");
        }
        if allowed.is_empty() || allowed.iter().any(|t| is_type(value, t)) {
            return true;
        }
        let message = format!("expected {}, got {}", allowed.join(" or "), describe(value));
        self.report(path, message);
        false
    }

    fn check_values(&mut self, schema: &Map<String, Value>, value: &Value, path: &str) {
        if let Some(options) = schema.get("enum").and_then(Value::as_array) {
            if !options.iter().any(|o| same(o, value)) {
                let listed: Vec<String> = options.iter().map(Value::to_string).collect();
                let message = format!("must be one of {}, got {}", listed.join(", "), value);
                self.report(path, message);
            }
        }
        if let Some(constant) = schema.get("const") {
            if !same(constant, value) {
                self.report(path, format!("must be {constant}, got {value}"));
            }
        }
    }

    fn check_combinations(
        &mut self,
        schema: &'a Map<String, Value>,
        value: &Value,
        path: &str,
        depth: usize,
    ) {
        if let Some(all) = schema.get("allOf").and_then(Value::as_array) {
            for part in all {
                self.check(part, value, path, depth + 1);
            }
        }
        for key in ["anyOf", "oneOf"] {
            let Some(options) = schema.get(key).and_then(Value::as_array) else {
                continue;
            };
            let outcomes: Vec<Vec<Problem>> = options
                .iter()
                .map(|option| self.trial(option, value, path, depth))
                .collect();
            if outcomes.iter().any(Vec::is_empty) {
                continue;
            }
            // Of the forms whose type fits, a single one is surely what was meant: show its
            // problems; otherwise say which forms are allowed.
            let typed: Vec<&Vec<Problem>> = options
                .iter()
                .zip(&outcomes)
                .filter(|(option, _)| type_accepts(option, value))
                .map(|(_, problems)| problems)
                .collect();
            match typed.as_slice() {
                [only] => self.problems.extend(only.iter().cloned()),
                _ => {
                    let forms: Vec<String> = options.iter().map(form_name).collect();
                    let message =
                        format!("matches none of the allowed forms ({})", forms.join(" | "));
                    self.report(path, message);
                }
            }
        }
    }

    /// The problems `value` would have against `schema`, without reporting them.
    fn trial(&self, schema: &'a Value, value: &Value, path: &str, depth: usize) -> Vec<Problem> {
        let mut inner = Checker {
            root: self.root,
            problems: Vec::new(),
        };
        inner.check(schema, value, path, depth + 1);
        inner.problems
    }

    fn check_object(
        &mut self,
        schema: &'a Map<String, Value>,
        map: &Map<String, Value>,
        path: &str,
        depth: usize,
    ) {
        let properties = schema.get("properties").and_then(Value::as_object);
        for name in schema
            .get("required")
            .and_then(Value::as_array)
            .into_iter()
            .flatten()
            .filter_map(Value::as_str)
        {
            if !map.contains_key(name) {
                let about = properties
                    .and_then(|p| p.get(name))
                    .map(type_name)
                    .filter(|t| !t.is_empty())
                    .map(|t| format!(" ({t})"))
                    .unwrap_or_default();
                self.report(&join(path, name), format!("required{about}, missing"));
            }
        }
        let closed = schema.get("additionalProperties");
        let has_patterns = schema.contains_key("patternProperties");
        for (key, item) in map {
            match properties.and_then(|p| p.get(key)) {
                Some(sub) => self.check(sub, item, &join(path, key), depth + 1),
                None if has_patterns => {}
                None => match closed {
                    Some(Value::Bool(false)) => {
                        let message = match closest(key, properties) {
                            Some(near) => {
                                format!("not a parameter of this tool; did you mean `{near}`?")
                            }
                            None => "not a parameter of this tool".into(),
                        };
                        self.report(&join(path, key), message);
                    }
                    Some(extra @ Value::Object(_)) => {
                        self.check(extra, item, &join(path, key), depth + 1)
                    }
                    _ => {}
                },
            }
        }
    }

    fn check_array(
        &mut self,
        schema: &'a Map<String, Value>,
        items: &[Value],
        path: &str,
        depth: usize,
    ) {
        let count = |key: &str| schema.get(key).and_then(Value::as_u64);
        if let Some(min) = count("minItems").filter(|m| (items.len() as u64) < *m) {
            self.report(
                path,
                format!("needs at least {min} items, got {}", items.len()),
            );
        }
        if let Some(max) = count("maxItems").filter(|m| items.len() as u64 > *m) {
            self.report(
                path,
                format!("takes at most {max} items, got {}", items.len()),
            );
        }
        let item_schema = item_schemas(schema);
        for (i, item) in items.iter().enumerate() {
            let item_path = format!("{path}[{i}]");
            match item_schema(i) {
                Some(sub) => self.check(sub, item, &item_path, depth + 1),
                None => break,
            }
        }
    }

    fn check_string(&mut self, schema: &Map<String, Value>, s: &str, path: &str) {
        let length = s.chars().count() as u64;
        let count = |key: &str| schema.get(key).and_then(Value::as_u64);
        if let Some(min) = count("minLength").filter(|m| length < *m) {
            self.report(
                path,
                format!("needs at least {min} characters, got {length}"),
            );
        }
        if let Some(max) = count("maxLength").filter(|m| length > *m) {
            self.report(
                path,
                format!("takes at most {max} characters, got {length}"),
            );
        }
        // Patterns the regex crate cannot compile (look-around, backreferences) are not checked.
        if let Some(pattern) = schema.get("pattern").and_then(Value::as_str) {
            if let Ok(re) = Regex::new(pattern) {
                if !re.is_match(s) {
                    self.report(path, format!("must match the pattern {pattern}"));
                }
            }
        }
    }

    fn check_number(&mut self, schema: &Map<String, Value>, n: f64, path: &str) {
        let bound = |key: &str| schema.get(key).and_then(Value::as_f64);
        let flag = |key: &str| schema.get(key).and_then(Value::as_bool) == Some(true);
        if let Some(min) = bound("minimum") {
            if n < min || (flag("exclusiveMinimum") && n == min) {
                self.report(path, format!("must be at least {min}, got {n}"));
            }
        }
        if let Some(max) = bound("maximum") {
            if n > max || (flag("exclusiveMaximum") && n == max) {
                self.report(path, format!("must be at most {max}, got {n}"));
            }
        }
        if let Some(min) = bound("exclusiveMinimum").filter(|m| n <= *m) {
            self.report(path, format!("must be greater than {min}, got {n}"));
        }
        if let Some(max) = bound("exclusiveMaximum").filter(|m| n >= *m) {
            self.report(path, format!("must be less than {max}, got {n}"));
        }
    }
}

/// The schema of an array's `i`-th item: `prefixItems` (or a tuple `items`), then `items`.
fn item_schemas<'a>(schema: &'a Map<String, Value>) -> impl Fn(usize) -> Option<&'a Value> {
    let prefix = match (schema.get("prefixItems"), schema.get("items")) {
        (Some(Value::Array(prefix)), _) | (None, Some(Value::Array(prefix))) => prefix.as_slice(),
        _ => &[],
    };
    let rest = schema.get("items").filter(|i| i.is_object());
    move |i| prefix.get(i).or(rest)
}

fn is_type(value: &Value, name: &str) -> bool {
    match name {
        "string" => value.is_string(),
        "number" => value.is_number(),
        "integer" => value
            .as_f64()
            .is_some_and(|n| n.fract() == 0.0 && n.is_finite()),
        "boolean" => value.is_boolean(),
        "object" => value.is_object(),
        "array" => value.is_array(),
        "null" => value.is_null(),
        _ => true,
    }
}

/// Whether `schema` says nothing against `value`'s type (used to pick the meant `anyOf` form).
fn type_accepts(schema: &Value, value: &Value) -> bool {
    match schema.get("type") {
        Some(Value::String(t)) => is_type(value, t),
        Some(Value::Array(ts)) => ts
            .iter()
            .filter_map(Value::as_str)
            .any(|t| is_type(value, t)),
        _ => true,
    }
}

/// Equality where `1` and `1.0` are the same number.
fn same(a: &Value, b: &Value) -> bool {
    match (a.as_f64(), b.as_f64()) {
        (Some(x), Some(y)) => x == y,
        _ => a == b,
    }
}

fn type_name(schema: &Value) -> String {
    match schema.get("type") {
        Some(Value::String(t)) => t.clone(),
        Some(Value::Array(ts)) => ts
            .iter()
            .filter_map(Value::as_str)
            .collect::<Vec<_>>()
            .join(" or "),
        _ => String::new(),
    }
}

fn form_name(schema: &Value) -> String {
    if let Some(c) = schema.get("const") {
        return c.to_string();
    }
    match type_name(schema) {
        t if t.is_empty() => "…".into(),
        t => t,
    }
}

fn join(path: &str, key: &str) -> String {
    if path.is_empty() {
        key.to_string()
    } else {
        format!("{path}.{key}")
    }
}

/// The declared parameter most like a misspelt `key`, if any is close.
fn closest<'a>(key: &str, properties: Option<&'a Map<String, Value>>) -> Option<&'a str> {
    let loose = |s: &str| s.to_lowercase().replace(['_', '-'], "");
    properties?
        .keys()
        .map(|name| (similarity(&loose(key), &loose(name)), name.as_str()))
        .filter(|(score, _)| *score >= 0.6)
        .max_by(|a, b| a.0.total_cmp(&b.0))
        .map(|(_, name)| name)
}
