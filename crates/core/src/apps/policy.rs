//! The rules every request of an app's pages meets, whatever it asks: the `Host` it names, the
//! app session's token, the sizes and pace of what reaches the conversation, and the
//! `Content-Security-Policy` the app's document is served with.

use crate::loopback::{header, same_secret};
use pi_mcp_connection::clean;
use serde_json::Value;
use std::sync::LazyLock;
use std::time::{Duration, Instant};
use url::{Host, Url};

/// The most one `ui/message` or `ui/update-model-context` may carry to the conversation.
pub const MAX_MESSAGE: usize = 64 * 1024;
/// The least time between two of them from one app session.
pub const MESSAGE_INTERVAL: Duration = Duration::from_secs(1);
/// The most a request of the host page may carry (an app's tool arguments, say).
pub const MAX_BODY: usize = 256 * 1024;
/// The header the host page sends the app session's token in.
pub const TOKEN_HEADER: &str = "x-pi-mcp-token";

/// Whether the request names exactly the listener it reached: `127.0.0.1:<port>`. Anything
/// else is a name that resolved to us by someone else's doing (DNS rebinding) or a confused
/// client; both are refused.
pub fn host_is(head: &str, port: u16) -> bool {
    header(head, "host") == Some(format!("127.0.0.1:{port}").as_str())
}

/// Whether `given` is the app session's token.
pub fn token_is(given: Option<&str>, token: &str) -> bool {
    given.is_some_and(|given| same_secret(given, token))
}

/// The token of a request: the header, else the `t` of the query (the first load of a page,
/// which a link cannot give a header).
pub fn token_of<'h>(head: &'h str, query: Option<&'h str>) -> Option<&'h str> {
    header(head, TOKEN_HEADER).or_else(|| {
        query?
            .split('&')
            .filter_map(|pair| pair.split_once('='))
            .find(|(key, _)| *key == "t")
            .map(|(_, value)| value)
    })
}

/// The `Content-Security-Policy` of an app's document, from its resource's `_meta.ui.csp`, and
/// the sources it declared that were left out (not an origin we can write into the header, or
/// one on the user's machine or network).
#[derive(Debug, PartialEq)]
pub struct Csp {
    pub header: String,
    pub dropped: Vec<String>,
}

/// An origin with an optional `*.` for its subdomains and an optional path; http(s) or ws(s).
static SOURCE: LazyLock<regex::Regex> = LazyLock::new(|| {
    regex::Regex::new(r"^(https?|wss?)://(\*\.)?[A-Za-z0-9-]+(\.[A-Za-z0-9-]+)*(:(\d{1,5}|\*))?(/[A-Za-z0-9._~%/-]*)?$")
        .expect("a valid pattern")
});

/// Whether a source names the user's own machine or network (loopback, `localhost`, private,
/// link-local or unspecified addresses, in any of the forms a browser reads: `127.1`,
/// `2130706433`, `0x7f.0.0.1`). An app of a remote server must not reach, from the user's
/// browser, what listens there (ours among it); one such service is its own server's to reach.
fn names_the_user_s_machine_or_network(source: &str) -> bool {
    // As the browser reads the host: a `*.` wildcard and a `:*` port do not change it.
    let readable = source
        .replacen("://*.", "://wildcard.", 1)
        .replacen(":*", "", 1);
    match Url::parse(&readable)
        .ok()
        .and_then(|url| url.host().map(|h| h.to_owned()))
    {
        Some(Host::Ipv4(ip)) => {
            ip.is_loopback() || ip.is_private() || ip.is_link_local() || ip.is_unspecified()
        }
        Some(Host::Ipv6(ip)) => ip.is_loopback() || ip.is_unspecified(),
        Some(Host::Domain(name)) => name == "localhost" || name.ends_with(".localhost"),
        None => true,
    }
}

impl Csp {
    /// Nothing reaches the network unless the resource declared it: no fetch, no frame, no
    /// form, no plugin; inline script and style (an app is one document) and `data:`/`blob:`
    /// images and media are allowed.
    pub fn of(ui: Option<&Value>) -> Csp {
        let csp = ui.and_then(|ui| ui.get("csp"));
        let mut dropped = Vec::new();
        let mut list = |key: &str| -> Vec<String> {
            let declared = csp.and_then(|c| c.get(key)).and_then(Value::as_array);
            let mut kept = Vec::new();
            for value in declared.into_iter().flatten() {
                let source = value.as_str().filter(|s| SOURCE.is_match(s));
                match source.filter(|s| !names_the_user_s_machine_or_network(s)) {
                    Some(source) => kept.push(source.to_string()),
                    None => dropped.push(clean::line(&value.to_string()).into_owned()),
                }
            }
            kept
        };
        let (connect, resource, frame, base) = (
            list("connectDomains"),
            list("resourceDomains"),
            list("frameDomains"),
            list("baseUriDomains"),
        );
        let sources = |fixed: &[&str], extra: &[String]| {
            let all: Vec<&str> = fixed
                .iter()
                .copied()
                .chain(extra.iter().map(String::as_str))
                .collect();
            match all.is_empty() {
                true => "'none'".to_string(),
                false => all.join(" "),
            }
        };
        let header = [
            "default-src 'none'".to_string(),
            format!("script-src {}", sources(&["'unsafe-inline'"], &resource)),
            format!("style-src {}", sources(&["'unsafe-inline'"], &resource)),
            format!("img-src {}", sources(&["data:", "blob:"], &resource)),
            format!("font-src {}", sources(&["data:"], &resource)),
            format!("media-src {}", sources(&["data:", "blob:"], &resource)),
            format!("connect-src {}", sources(&[], &connect)),
            format!("frame-src {}", sources(&[], &frame)),
            format!("base-uri {}", sources(&[], &base)),
            "form-action 'none'".to_string(),
            "object-src 'none'".to_string(),
        ]
        .join("; ");
        Csp { header, dropped }
    }
}

/// The features of ext-apps' `_meta.ui.permissions`, as the Permissions Policy names them.
const PERMISSIONS: &[(&str, &str)] = &[
    ("camera", "camera"),
    ("microphone", "microphone"),
    ("geolocation", "geolocation"),
    ("clipboardWrite", "clipboard-write"),
];

/// The app's frame as its resource's `_meta.ui` asks for it: the features it may use (the
/// frame's `allow`; the browser still asks the user for camera, microphone and location), its
/// border, and what was declared that this host does not honour (said in the server's log).
#[derive(Debug, Default, PartialEq)]
pub struct Frame {
    /// Permissions Policy features, in ext-apps' order.
    pub allow: Vec<&'static str>,
    /// `prefersBorder`: a visible border and background (`true`), none (`false`), or ours.
    pub border: Option<bool>,
    pub ignored: Vec<String>,
}

impl Frame {
    pub fn of(ui: Option<&Value>) -> Frame {
        let mut frame = Frame::default();
        let Some(ui) = ui else {
            return frame;
        };
        match ui.get("permissions") {
            None | Some(Value::Null) => {}
            Some(Value::Object(asked)) => {
                for (key, value) in asked {
                    if !PERMISSIONS.iter().any(|(name, _)| name == key) {
                        frame.ignored.push(format!(
                            "permissions.{}: not a permission an app may ask for (camera, microphone, geolocation, clipboardWrite)",
                            clean::line(key)
                        ));
                    } else if !matches!(value, Value::Object(_) | Value::Bool(_) | Value::Null) {
                        frame.ignored.push(format!(
                            "permissions.{key}: not an object ({})",
                            clean::line(&value.to_string())
                        ));
                    }
                }
                frame.allow = PERMISSIONS
                    .iter()
                    .filter(|(key, _)| {
                        matches!(asked.get(*key), Some(Value::Object(_) | Value::Bool(true)))
                    })
                    .map(|(_, feature)| *feature)
                    .collect();
            }
            Some(other) => frame.ignored.push(format!(
                "permissions: not an object ({})",
                clean::line(&other.to_string())
            )),
        }
        match ui.get("prefersBorder") {
            None | Some(Value::Null) => {}
            Some(Value::Bool(border)) => frame.border = Some(*border),
            Some(other) => frame.ignored.push(format!(
                "prefersBorder: not true or false ({})",
                clean::line(&other.to_string())
            )),
        }
        if let Some(domain) = ui.get("domain").filter(|d| !d.is_null()) {
            frame.ignored.push(format!(
                "domain {}: a host on 127.0.0.1 has no dedicated origins to give; the app runs in an opaque origin of its own (its requests say Origin: null)",
                clean::line(&domain.to_string())
            ));
        }
        frame
    }

    /// The `Permissions-Policy` of the app's document: every feature an app may ask for that
    /// it did not is off, even should the frame be given more.
    pub fn policy(&self) -> String {
        PERMISSIONS
            .iter()
            .filter(|(_, feature)| !self.allow.contains(feature))
            .map(|(_, feature)| format!("{feature}=()"))
            .collect::<Vec<_>>()
            .join(", ")
    }

    /// ext-apps' `permissions` of what the frame was given, for `hostCapabilities.sandbox`.
    pub fn granted(&self) -> Value {
        let granted = PERMISSIONS
            .iter()
            .filter(|(_, feature)| self.allow.contains(feature))
            .map(|(key, _)| (key.to_string(), Value::Object(Default::default())));
        Value::Object(granted.collect())
    }
}

/// At most one message per [`MESSAGE_INTERVAL`] from an app session.
#[derive(Default)]
pub struct Pace {
    last: Option<Instant>,
}

impl Pace {
    /// Takes the turn at `now`, or says how long to wait for the next one.
    pub fn admit(&mut self, now: Instant) -> Result<(), Duration> {
        if let Some(wait) = self
            .last
            .map(|last| MESSAGE_INTERVAL.saturating_sub(now.saturating_duration_since(last)))
            .filter(|wait| !wait.is_zero())
        {
            return Err(wait);
        }
        self.last = Some(now);
        Ok(())
    }
}

/// The text an app sends to the conversation (`ui/message`'s `content`, or
/// `ui/update-model-context`'s `content` and `structuredContent`): its text blocks, and the
/// structured content as JSON, cleaned for a person and the model; refused past
/// [`MAX_MESSAGE`] or with nothing in it. Blocks of other kinds are named, not carried.
pub fn message_text(params: &Value) -> Result<String, String> {
    let size = params.to_string().len();
    if size > MAX_MESSAGE {
        return Err(format!(
            "the message is {size} bytes; an app may send at most {MAX_MESSAGE}"
        ));
    }
    let mut parts = Vec::new();
    for block in params["content"].as_array().into_iter().flatten() {
        match (block["type"].as_str(), block["text"].as_str()) {
            (Some("text"), Some(text)) => parts.push(clean::text(text).into_owned()),
            (kind, _) => parts.push(format!(
                "[a {} block, not shown]",
                clean::line(kind.unwrap_or("malformed"))
            )),
        }
    }
    if let Some(structured) = params.get("structuredContent").filter(|v| !v.is_null()) {
        parts.push(clean::json(structured));
    }
    match parts.iter().any(|p| !p.trim().is_empty()) {
        true => Ok(parts.join("\n")),
        false => Err("the message has no text".into()),
    }
}

#[cfg(test)]
mod tests;
