//! Checking an answer against its form: every value fits its field, nothing unknown, every
//! required field present once the defaults are filled in. Also the one place that turns what
//! someone typed into a field's value, so every front end (Pi's dialogs, a terminal) agrees.

use super::{Field, Form, Kind, TextFormat};
use regex::Regex;
use serde_json::{Map, Value};
use std::fmt;
use std::sync::LazyLock;

/// The `content` of an accepted elicitation.
pub type Content = Map<String, Value>;

/// Why an answer does not fit its form.
#[derive(Clone, Debug, PartialEq)]
pub struct AnswerError {
    pub field: Option<String>,
    pub message: String,
}

impl fmt::Display for AnswerError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match &self.field {
            Some(field) => write!(f, "`{field}`: {}", self.message),
            None => f.write_str(&self.message),
        }
    }
}

impl Form {
    /// `content` with every omitted field that has a default filled in (SEP-1034), checked
    /// against the form.
    pub fn complete(&self, mut content: Content) -> Result<Content, AnswerError> {
        if let Some(unknown) = content.keys().find(|k| self.field(k).is_none()) {
            return Err(AnswerError {
                field: Some(unknown.clone()),
                message: "is not a field of this form".into(),
            });
        }
        let mut ordered = Content::new();
        for field in &self.fields {
            let value = match content.remove(&field.name).filter(|v| !v.is_null()) {
                Some(value) => value,
                None => match &field.default {
                    Some(default) => default.clone(),
                    None if field.required => {
                        return Err(AnswerError {
                            field: Some(field.name.clone()),
                            message: "is required and has no default".into(),
                        })
                    }
                    None => continue,
                },
            };
            field.check(&value).map_err(|message| AnswerError {
                field: Some(field.name.clone()),
                message,
            })?;
            ordered.insert(field.name.clone(), value);
        }
        Ok(ordered)
    }
}

impl Field {
    /// Whether `value` fits this field; the error says how it does not.
    pub fn check(&self, value: &Value) -> Result<(), String> {
        match (&self.kind, value) {
            (
                Kind::Text {
                    min_length,
                    max_length,
                    format,
                },
                Value::String(s),
            ) => {
                let chars = s.chars().count() as u64;
                if let Some(min) = min_length.filter(|min| chars < *min) {
                    return Err(format!("needs at least {min} characters"));
                }
                if let Some(max) = max_length.filter(|max| chars > *max) {
                    return Err(format!("allows at most {max} characters"));
                }
                match format {
                    Some(format) if !fits_format(*format, s) => {
                        Err(format!("is not a valid {}", format.name()))
                    }
                    _ => Ok(()),
                }
            }
            (
                Kind::Number {
                    integer,
                    minimum,
                    maximum,
                },
                Value::Number(n),
            ) => {
                let x = n.as_f64().unwrap_or(f64::NAN);
                if *integer && !(n.is_i64() || n.is_u64() || x.fract() == 0.0) {
                    return Err("must be a whole number".into());
                }
                if let Some(min) = minimum.filter(|min| x < *min) {
                    return Err(format!("must be at least {min}"));
                }
                if let Some(max) = maximum.filter(|max| x > *max) {
                    return Err(format!("must be at most {max}"));
                }
                Ok(())
            }
            (Kind::Boolean, Value::Bool(_)) => Ok(()),
            (Kind::Choice { options }, Value::String(s)) => {
                match options.iter().any(|o| &o.value == s) {
                    true => Ok(()),
                    false => Err(format!("\"{s}\" is not one of the options")),
                }
            }
            (
                Kind::Choices {
                    options,
                    min_items,
                    max_items,
                },
                Value::Array(items),
            ) => {
                let mut seen = Vec::with_capacity(items.len());
                for item in items {
                    let s = item
                        .as_str()
                        .ok_or("holds something that is not a string")?;
                    if !options.iter().any(|o| o.value == s) {
                        return Err(format!("\"{s}\" is not one of the options"));
                    }
                    if seen.contains(&s) {
                        return Err(format!("\"{s}\" is chosen twice"));
                    }
                    seen.push(s);
                }
                let n = items.len() as u64;
                if let Some(min) = min_items.filter(|min| n < *min) {
                    return Err(format!("needs at least {min} chosen"));
                }
                if let Some(max) = max_items.filter(|max| n > *max) {
                    return Err(format!("allows at most {max} chosen"));
                }
                Ok(())
            }
            (kind, other) => Err(format!("expects {}, got {other}", kind.expects())),
        }
    }

    /// A front end's answer for this field: what someone typed (a string) or picked (an option's
    /// value, a list of them), checked. `None`: left empty, which only a field with a default or
    /// an optional one allows.
    pub fn take(&self, answer: &Value) -> Result<Option<Value>, String> {
        let taken = match answer {
            Value::String(text) => self.parse_text(text)?,
            Value::Null => None,
            other => {
                self.check(other)?;
                Some(other.clone())
            }
        };
        if taken.is_none() && self.required && self.default.is_none() {
            return Err("is required".into());
        }
        Ok(taken)
    }

    /// What someone typed, as this field's value (checked). An empty text is `None`: the field
    /// is left out (and gets its default, if it has one).
    pub fn parse_text(&self, text: &str) -> Result<Option<Value>, String> {
        let trimmed = text.trim();
        if trimmed.is_empty() {
            return Ok(None);
        }
        let value = match &self.kind {
            Kind::Text { .. } => Value::String(text.to_string()),
            Kind::Number { .. } => {
                let n: f64 = trimmed
                    .parse()
                    .map_err(|_| format!("\"{trimmed}\" is not a number"))?;
                serde_json::Number::from_f64(n)
                    .map(|n| match n.as_f64() {
                        Some(x) if x.fract() == 0.0 && x.abs() < 9.0e15 => Value::from(x as i64),
                        _ => Value::Number(n),
                    })
                    .ok_or_else(|| format!("\"{trimmed}\" is not a finite number"))?
            }
            Kind::Boolean => match trimmed.to_ascii_lowercase().as_str() {
                "y" | "yes" | "true" | "1" => Value::Bool(true),
                "n" | "no" | "false" | "0" => Value::Bool(false),
                _ => return Err(format!("\"{trimmed}\" is not yes or no")),
            },
            Kind::Choice { options } => {
                let chosen = options
                    .iter()
                    .find(|o| o.value == trimmed || o.title.as_deref() == Some(trimmed))
                    .ok_or_else(|| format!("\"{trimmed}\" is not one of the options"))?;
                Value::String(chosen.value.clone())
            }
            Kind::Choices { options, .. } => {
                let mut chosen = Vec::new();
                for part in trimmed.split(',').map(str::trim).filter(|p| !p.is_empty()) {
                    let option = options
                        .iter()
                        .find(|o| o.value == part || o.title.as_deref() == Some(part))
                        .ok_or_else(|| format!("\"{part}\" is not one of the options"))?;
                    chosen.push(Value::String(option.value.clone()));
                }
                Value::Array(chosen)
            }
        };
        self.check(&value)?;
        Ok(Some(value))
    }
}

impl Kind {
    fn expects(&self) -> &'static str {
        match self {
            Kind::Text { .. } => "a string",
            Kind::Number { integer: true, .. } => "an integer",
            Kind::Number { .. } => "a number",
            Kind::Boolean => "true or false",
            Kind::Choice { .. } => "one of the options",
            Kind::Choices { .. } => "a list of options",
        }
    }
}

fn fits_format(format: TextFormat, s: &str) -> bool {
    static EMAIL: LazyLock<Regex> =
        LazyLock::new(|| Regex::new(r"^[^@\s]+@[^@\s]+\.[^@\s]+$").expect("a valid regex"));
    static URI: LazyLock<Regex> =
        LazyLock::new(|| Regex::new(r"^[A-Za-z][A-Za-z0-9+.-]*:\S+$").expect("a valid regex"));
    static DATE_TIME: LazyLock<Regex> = LazyLock::new(|| {
        Regex::new(r"^(\d{4}-\d{2}-\d{2})[Tt ]([01]\d|2[0-3]):[0-5]\d:([0-5]\d|60)(\.\d+)?([Zz]|[+-]([01]\d|2[0-3]):[0-5]\d)$")
            .expect("a valid regex")
    });
    match format {
        TextFormat::Email => EMAIL.is_match(s),
        TextFormat::Uri => URI.is_match(s),
        TextFormat::Date => valid_date(s),
        TextFormat::DateTime => DATE_TIME.captures(s).is_some_and(|c| valid_date(&c[1])),
    }
}

/// `YYYY-MM-DD` naming a day that exists.
fn valid_date(s: &str) -> bool {
    let parts: Vec<&str> = s.split('-').collect();
    let [y, m, d] = parts[..] else { return false };
    if y.len() != 4 || m.len() != 2 || d.len() != 2 {
        return false;
    }
    let (Ok(y), Ok(m), Ok(d)) = (y.parse::<u32>(), m.parse::<u32>(), d.parse::<u32>()) else {
        return false;
    };
    let leap = y % 4 == 0 && (y % 100 != 0 || y % 400 == 0);
    let days = match m {
        1 | 3 | 5 | 7 | 8 | 10 | 12 => 31,
        4 | 6 | 9 | 11 => 30,
        2 if leap => 29,
        2 => 28,
        _ => return false,
    };
    (1..=days).contains(&d)
}
