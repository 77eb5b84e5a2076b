//! Lenient typed reads of one object's keys (`settings`, a server entry, `oauth`, …), each key a
//! [`Field`] of the table. A value of the wrong kind is reported once, as "must be X, got Y;
//! using Z", X from the field's kind and Z from its default; `null` counts as absent.

use super::fields::{Field, Kind, Using};
use super::Level;
use pi_mcp_connection::value_kind::{describe, scalar_text, value_kind};
use serde_json::{Map, Value};
use std::time::Duration;

/// Where a [`Reader`] reports, boxed.
pub type Report<'r> = Box<dyn FnMut(Level, &str, String) + 'r>;

pub struct Reader<'a, R: FnMut(Level, &str, String)> {
    object: &'a Map<String, Value>,
    report: R,
    /// A server entry: a key that is also a setting falls back to it.
    in_server: bool,
}

impl<'a, R: FnMut(Level, &str, String)> Reader<'a, R> {
    pub fn new(object: &'a Map<String, Value>, report: R) -> Self {
        Reader {
            object,
            report,
            in_server: false,
        }
    }

    /// Reading a server entry.
    pub fn in_server(object: &'a Map<String, Value>, report: R) -> Self {
        Reader {
            in_server: true,
            ..Reader::new(object, report)
        }
    }

    pub fn get(&self, field: &Field) -> Option<&'a Value> {
        self.object.get(field.name).filter(|v| !v.is_null())
    }

    pub fn report(&mut self, level: Level, key: &str, message: String) {
        (self.report)(level, key, message);
    }

    /// Reports every key of the object that `check` (the table's, for its place) has a word on.
    pub fn check_keys(&mut self, check: impl Fn(&str) -> Option<(Level, String)>) {
        for key in self.object.keys() {
            if let Some((level, message)) = check(key) {
                self.report(level, key, message);
            }
        }
    }

    /// What applies when `field`'s value is wrong, here.
    pub fn using(&self, field: &Field) -> Using {
        field.using(self.in_server)
    }

    /// Reports `field`'s value as not what it must be; `got` describes it.
    pub fn wrong(&mut self, field: &Field, got: &str) {
        self.wrong_at(field.name, field, got);
    }

    /// As [`Reader::wrong`], for `key` (a part of `field`'s value).
    pub fn wrong_at(&mut self, key: &str, field: &Field, got: &str) {
        self.wrong_as(key, field, &field.kind.expected(), got);
    }

    /// As [`Reader::wrong_at`], saying what the value must be in other words.
    fn wrong_as(&mut self, key: &str, field: &Field, expected: &str, got: &str) {
        let message = match self.using(field) {
            Using::Nothing => format!("must be {expected}, got {got}"),
            using => format!("must be {expected}, got {got}; {using}"),
        };
        self.report(field.severity, key, message);
    }

    /// `true` or `false`; `None` when absent or of another kind.
    pub fn flag_set(&mut self, field: &Field) -> Option<bool> {
        match self.get(field)? {
            Value::Bool(b) => Some(*b),
            other => {
                self.wrong(field, &describe(other));
                None
            }
        }
    }

    /// `true` or `false`; the field's default when absent or of another kind.
    pub fn flag(&mut self, field: &Field) -> bool {
        let default = match self.using(field) {
            Using::Flag(on) => on,
            _ => false,
        };
        self.flag_set(field).unwrap_or(default)
    }

    /// A whole number of at least 1; the field's default when absent or not that.
    pub fn count(&mut self, field: &Field) -> u64 {
        let default = match field.default {
            Using::Count(n) => n,
            _ => 0,
        };
        match self.get(field) {
            None => default,
            Some(value) => value.as_u64().filter(|n| *n > 0).unwrap_or_else(|| {
                self.wrong(field, &describe(value));
                default
            }),
        }
    }

    /// Milliseconds (fractions dropped). A number below 1 is the default, silently, as in
    /// pi-mcp-adapter, unless the field's kind says it must be above 0; `0` is `Some(None)` for
    /// a field that may be off.
    pub fn millis(&mut self, field: &Field) -> Option<Option<Duration>> {
        let value = self.get(field)?;
        let ms = value.as_f64().filter(|_| value.is_number());
        match (ms, field.kind) {
            (Some(ms), _) if ms >= 1.0 => Some(Some(Duration::from_millis(ms as u64))),
            (Some(0.0), Kind::MillisOrOff) => Some(None),
            (Some(_), Kind::Millis) => None,
            _ => {
                self.wrong(field, &describe(value));
                None
            }
        }
    }

    /// A number of minutes (fractions allowed), `0` for never.
    pub fn minutes(&mut self, field: &Field) -> Option<f64> {
        let value = self.get(field)?;
        match value.as_f64() {
            Some(m) if m >= 0.0 && m.is_finite() => Some(m),
            _ => {
                self.wrong(field, &describe(value));
                None
            }
        }
    }

    /// A positive number of seconds (fractions allowed), as milliseconds.
    pub fn seconds(&mut self, field: &Field) -> Option<u64> {
        let value = self.get(field)?;
        match value.as_f64() {
            Some(s) if s > 0.0 && s.is_finite() => Some(((s * 1000.0).round() as u64).max(1)),
            _ => {
                self.wrong(field, &describe(value));
                None
            }
        }
    }

    /// A port number.
    pub fn port(&mut self, field: &Field) -> Option<u16> {
        let value = self.get(field)?;
        let port = value.as_u64().filter(|p| (1..=65535).contains(p));
        if port.is_none() {
            self.wrong(field, &describe(value));
        }
        port.map(|p| p as u16)
    }

    /// A string; `None` when absent or of another kind.
    pub fn string(&mut self, field: &Field) -> Option<String> {
        match self.get(field)? {
            Value::String(s) => Some(s.clone()),
            other => {
                self.wrong_as(field.name, field, "a string", &describe(other));
                None
            }
        }
    }

    /// One of the words `parse` knows; an unknown one is reported with the words the field's
    /// kind offers, and is `None`, as is an absent value.
    pub fn word<T>(&mut self, field: &Field, parse: impl Fn(&str) -> Option<T>) -> Option<T> {
        let word = self.string(field)?;
        let parsed = parse(&word);
        if parsed.is_none() {
            self.unknown(field, &word);
        }
        parsed
    }

    /// Reports `word` as not one of `field`'s.
    pub fn unknown(&mut self, field: &Field, word: &str) {
        let (expected, using) = (field.kind.expected(), self.using(field));
        let message = format!("unknown value \"{word}\" (expected {expected}); {using}");
        self.report(Level::Warning, field.name, message);
    }

    /// A list of strings (numbers and booleans taken as their text); `None` when absent or of
    /// another kind. Said by kind alone: a list may hold what must not be shown.
    pub fn strings(&mut self, field: &Field) -> Option<Vec<String>> {
        let value = self.get(field)?;
        let items = value
            .as_array()
            .and_then(|items| items.iter().map(scalar_text).collect::<Option<Vec<_>>>());
        if items.is_none() {
            self.wrong(field, value_kind(value));
        }
        items
    }

    /// An object of string values as written (numbers and booleans are taken as their text);
    /// said by kind alone, as the values may be secrets. `what` ends a message about an entry.
    pub fn text_map(&mut self, field: &Field, what: &str) -> Vec<(String, String)> {
        let Some(value) = self.get(field) else {
            return vec![];
        };
        let Some(map) = value.as_object() else {
            self.wrong(field, value_kind(value));
            return vec![];
        };
        let mut out = Vec::with_capacity(map.len());
        for (key, v) in map {
            match scalar_text(v) {
                Some(s) => out.push((key.clone(), s)),
                None => {
                    let message = format!("must be a string, got {}{what}", value_kind(v));
                    self.report(field.severity, &format!("{}.{key}", field.name), message);
                }
            }
        }
        out
    }

    /// An object whose values are lists of strings (`{"create_*": ["new", "add"]}`); an entry
    /// of another kind is left out with a warning.
    pub fn lists(&mut self, field: &Field) -> Vec<(String, Vec<String>)> {
        let Some(value) = self.get(field) else {
            return vec![];
        };
        let Some(map) = value.as_object() else {
            self.wrong(field, &describe(value));
            return vec![];
        };
        let mut out = vec![];
        for (name, words) in map {
            let list = words.as_array().and_then(|items| {
                items
                    .iter()
                    .map(|item| item.as_str().map(str::to_string))
                    .collect::<Option<Vec<_>>>()
            });
            match list {
                Some(list) => out.push((name.clone(), list)),
                None => {
                    let message = format!(
                        "must be a list of strings, got {}; ignored",
                        describe(words)
                    );
                    self.report(Level::Warning, &format!("{}.{name}", field.name), message);
                }
            }
        }
        out
    }
}
