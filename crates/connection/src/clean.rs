//! Text that servers and authorization servers supply, made safe to show a person: the one rule
//! for every such text, wherever it ends up (`pi-mcp`'s output, Pi's dialogs, notifications,
//! footer and tool results, `mcp.log`, a file name, the browser).
//!
//! - Escape sequences (CSI, OSC, DCS, SOS, PM, APC and the short ones, introduced by ESC or by
//!   their one-character C1 forms) are removed whole: they retitle, clear or reprogram a terminal
//!   and write its clipboard, and what they carry is not text.
//! - Every other control character (C0, DEL, C1) is shown visibly, as `\x1b`. Multi-line text
//!   keeps newline and tab, and turns CR LF and a lone CR (which would draw over a line) into a
//!   newline.
//! - Bidi embeddings, overrides and isolates, tag characters and interlinear annotations are shown
//!   visibly, as `\u{202e}`: they reorder or hide what is around them.
//! - A one-line field (a name, a title, a label, a URL, an error's description) shows newline, tab
//!   and CR visibly too, and invisible characters (zero-width spaces and joiners, bidi marks, soft
//!   hyphens, fillers), which make look-alike names; multi-line text keeps those (emoji sequences
//!   and some scripts need them).
//!
//! Every visible form is plain ASCII, so cleaning twice changes nothing. A URL to open is not
//! cleaned but checked ([`Link`]): one holding any of these characters is refused.

use std::borrow::Cow;
use std::fmt;
use url::{Position, Url};

/// `text` for a one-line field.
pub fn line(text: &str) -> Cow<'_, str> {
    clean(text, Field::Line)
}

/// `text`, which may run over several lines (a description), for a one-line field: its white
/// space, newlines included, collapsed to single spaces, then cleaned as [`line`].
pub fn one_line(text: &str) -> String {
    let words = text.split_whitespace().collect::<Vec<_>>().join(" ");
    match line(&words) {
        Cow::Borrowed(_) => words,
        Cow::Owned(cleaned) => cleaned,
    }
}

/// The start of `text` (an HTTP body, say) on one line, as [`one_line`], cut as [`clip`].
pub fn excerpt(text: &str, max: usize) -> String {
    clip(&one_line(text), max)
}

/// `text` whole when it has at most `max` characters, else cut to at most `max` and marked with
/// `…`: at the last space when that keeps more than half, never inside a character shown as
/// `\u{…}` (the rule's visible form), without the commas, colons or full stops before the cut.
pub fn clip(text: &str, max: usize) -> String {
    let Some((end, _)) = text.char_indices().nth(max) else {
        return text.to_string();
    };
    let mut cut = &text[..end];
    if let Some(space) = cut
        .rfind(' ')
        .filter(|&at| cut[..at].chars().count() > max / 2)
    {
        cut = &cut[..space];
    }
    if let Some(escape) = cut.rfind("\\u{").filter(|&at| !cut[at..].contains('}')) {
        cut = &cut[..escape];
    }
    format!("{}…", cut.trim_end_matches([',', ';', ':', '.', ' ']))
}

/// `text` for a field that may hold several lines: descriptions, instructions, messages, a
/// server's stderr and log messages, and tool results.
pub fn text(text: &str) -> Cow<'_, str> {
    clean(text, Field::Text)
}

/// A URL for a one-line field: a valid http(s) one as [`Link::shown`] shows it (a look-alike
/// host beside its ASCII form), any other cleaned as a line.
pub fn url(raw: &str) -> Cow<'_, str> {
    match Link::parse(raw) {
        Ok(link) => Cow::Owned(link.shown()),
        Err(_) => line(raw),
    }
}

/// A JSON value as text for the model or a person: still valid JSON, the characters serde_json
/// leaves as they are that [`text`] would change (DEL, C1, line separators, bidi, tags) written as
/// `\u` escapes, so the value reads back exactly.
pub fn json(value: &serde_json::Value) -> String {
    let json = value.to_string();
    if !json.contains(|c| needs_care(c, Field::Text)) {
        return json;
    }
    let mut out = String::with_capacity(json.len() + 16);
    for c in json.chars() {
        match needs_care(c, Field::Text) {
            true => {
                for unit in c.encode_utf16(&mut [0; 2]) {
                    out.push_str(&format!("\\u{unit:04x}"));
                }
            }
            false => out.push(c),
        }
    }
    out
}

/// Whether `c` is shown as it is in a one-line field.
pub fn is_plain(c: char) -> bool {
    !needs_care(c, Field::Line)
}

/// `text` as part of the name of a file we create: ASCII letters, digits, `-` and `_` kept,
/// anything else `_`, at most `max` characters.
pub fn file_part(text: &str, max: usize) -> String {
    text.chars()
        .map(
            |c| match c.is_ascii_alphanumeric() || c == '-' || c == '_' {
                true => c,
                false => '_',
            },
        )
        .take(max)
        .collect()
}

#[derive(Clone, Copy, PartialEq, Eq)]
enum Field {
    Line,
    Text,
}

fn clean(input: &str, field: Field) -> Cow<'_, str> {
    let Some(start) = input.find(|c| needs_care(c, field)) else {
        return Cow::Borrowed(input);
    };
    let mut out = String::with_capacity(input.len() + 16);
    out.push_str(&input[..start]);
    // No string terminator (BEL, ESC, ST) from here on: a later string introducer finds none
    // either, so the text is scanned once however many there are.
    let mut unterminated_from = usize::MAX;
    let mut at = start;
    loop {
        let Some(plain) = input[at..].find(|c| needs_care(c, field)) else {
            out.push_str(&input[at..]);
            break;
        };
        out.push_str(&input[at..at + plain]);
        at += plain;
        let Some(c) = input[at..].chars().next() else {
            break;
        };
        if let Some(len) = sequence_len(&input[at..], at >= unterminated_from) {
            at += len;
            continue;
        }
        if is_string_introducer(&input[at..]) {
            unterminated_from = unterminated_from.min(at);
        }
        at += c.len_utf8();
        match c {
            '\r' if field == Field::Text => {
                out.push('\n');
                if input[at..].starts_with('\n') {
                    at += 1;
                }
            }
            '\u{2028}' | '\u{2029}' if field == Field::Text => out.push('\n'),
            c if needs_care(c, field) => push_visible(&mut out, c),
            c => out.push(c),
        }
    }
    Cow::Owned(out)
}

/// Whether `c` is removed, replaced or shown visibly in `field`.
fn needs_care(c: char, field: Field) -> bool {
    match c {
        '\n' | '\t' => field == Field::Line,
        '\0'..='\x1f' | '\x7f'..='\u{9f}' => true,
        '\u{2028}' | '\u{2029}' => true,
        c => reorders_or_hides(c) || (field == Field::Line && invisible(c)),
    }
}

/// Bidi embeddings, overrides and isolates, interlinear annotations and tag characters.
fn reorders_or_hides(c: char) -> bool {
    matches!(c, '\u{202a}'..='\u{202e}' | '\u{2066}'..='\u{2069}' | '\u{fff9}'..='\u{fffb}' | '\u{e0000}'..='\u{e007f}')
}

/// Characters that show nothing (or only a gap): zero-width spaces, joiners and non-joiners,
/// bidi marks, the word joiner and invisible operators, soft hyphen, byte order mark, Hangul
/// fillers, and other invisible format characters.
fn invisible(c: char) -> bool {
    matches!(
        c,
        '\u{ad}'
            | '\u{34f}'
            | '\u{61c}'
            | '\u{115f}'
            | '\u{1160}'
            | '\u{17b4}'
            | '\u{17b5}'
            | '\u{180e}'
            | '\u{200b}'..='\u{200f}'
            | '\u{2060}'..='\u{2064}'
            | '\u{206a}'..='\u{206f}'
            | '\u{3164}'
            | '\u{feff}'
            | '\u{ffa0}'
            | '\u{1bca0}'..='\u{1bca3}'
            | '\u{1d173}'..='\u{1d17a}'
    )
}

/// `\n`, `\t`, `\r`, `\x1b` (other control characters), `\u{202e}` (the rest).
fn push_visible(out: &mut String, c: char) {
    match c {
        '\n' => out.push_str("\\n"),
        '\t' => out.push_str("\\t"),
        '\r' => out.push_str("\\r"),
        c if c.is_control() => out.push_str(&format!("\\x{:02x}", c as u32)),
        c => out.push_str(&format!("\\u{{{:x}}}", c as u32)),
    }
}

/// ESC or a C1 introducer of a control string (OSC, DCS, SOS, PM, APC).
fn is_string_introducer(s: &str) -> bool {
    let mut chars = s.chars();
    match chars.next() {
        Some('\x1b') => matches!(chars.next(), Some(']' | 'P' | 'X' | '^' | '_')),
        Some(c) => matches!(c, '\u{9d}' | '\u{90}' | '\u{98}' | '\u{9e}' | '\u{9f}'),
        None => false,
    }
}

/// The length of the complete escape sequence `s` starts with, if it starts with one.
/// `unterminated`: no control string terminator follows (so a control string is incomplete).
fn sequence_len(s: &str, unterminated: bool) -> Option<usize> {
    let bytes = s.as_bytes();
    let (string, body) = match s.chars().next()? {
        '\x1b' => match *bytes.get(1)? {
            b'[' => (false, 2),
            b']' | b'P' | b'X' | b'^' | b'_' => (true, 2),
            // Intermediates, then a final byte (ESC ( B).
            0x20..=0x2f => {
                let n = bytes[1..]
                    .iter()
                    .take_while(|b| (0x20..=0x2f).contains(*b))
                    .count();
                return match bytes.get(1 + n) {
                    Some(0x30..=0x7e) => Some(2 + n),
                    _ => None,
                };
            }
            // ESC 7, ESC c (reset), ESC M, ESC \ …
            0x30..=0x7e => return Some(2),
            _ => return None,
        },
        '\u{9b}' => (false, 2),
        '\u{9d}' | '\u{90}' | '\u{98}' | '\u{9e}' | '\u{9f}' => (true, 2),
        _ => return None,
    };
    let rest = &bytes[body..];
    if string {
        if unterminated {
            return None;
        }
        return string_len(&s[body..]).map(|n| body + n);
    }
    // CSI: parameter bytes, intermediate bytes, a final byte.
    let params = rest
        .iter()
        .take_while(|b| (0x30..=0x3f).contains(*b))
        .count();
    let inter = rest[params..]
        .iter()
        .take_while(|b| (0x20..=0x2f).contains(*b))
        .count();
    match rest.get(params + inter) {
        Some(0x40..=0x7e) => Some(body + params + inter + 1),
        _ => None,
    }
}

/// The length of a control string's body with its terminator: BEL, ST (ESC \ or U+009C), or an
/// ESC starting something else (which ends the string, as terminals do, and is read next).
fn string_len(body: &str) -> Option<usize> {
    let end = body.find(['\x07', '\x1b', '\u{9c}'])?;
    Some(match &body[end..] {
        rest if rest.starts_with("\x1b\\") => end + 2,
        rest if rest.starts_with('\x1b') => end,
        rest => end + rest.chars().next().map_or(1, char::len_utf8),
    })
}

/// An http(s) URL fit to hand to the browser and show a person: it holds no character
/// [`line`] would change. The browser gets its ASCII form ([`Link::as_str`]); a person is shown
/// its host as written with the ASCII form beside it when they differ ([`Link::shown`]), so that a
/// look-alike host in another script stands out.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Link {
    url: Url,
    /// As given.
    raw: String,
}

/// Why a URL is not opened.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum LinkError {
    /// It holds a control character, an escape sequence or an invisible or bidi character: the
    /// character and its position (in characters, from 1).
    Hidden {
        c: char,
        at: usize,
    },
    NotHttp(String),
    Invalid(String),
}

impl fmt::Display for LinkError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            LinkError::Hidden { c, at } => {
                let kind = match c.is_control() {
                    true => "control",
                    false => "invisible",
                };
                let mut shown = String::new();
                push_visible(&mut shown, *c);
                write!(f, "it holds the {kind} character {shown} (character {at})")
            }
            LinkError::NotHttp(scheme) => write!(
                f,
                "it is a {} address; only http and https ones are opened",
                line(scheme)
            ),
            LinkError::Invalid(why) => write!(f, "it is not a valid URL ({why})"),
        }
    }
}

impl std::error::Error for LinkError {}

impl Link {
    pub fn parse(raw: &str) -> Result<Link, LinkError> {
        Link::check(raw)?;
        let url = Url::parse(raw).map_err(|e| LinkError::Invalid(e.to_string()))?;
        match url.scheme() {
            "http" | "https" => Ok(Link {
                url,
                raw: raw.to_string(),
            }),
            other => Err(LinkError::NotHttp(other.to_string())),
        }
    }

    /// Whether `raw` holds no hidden character (control, escape, invisible or bidi character),
    /// so that it may be shown and opened as it is.
    pub fn check(raw: &str) -> Result<(), LinkError> {
        match raw.chars().enumerate().find(|(_, c)| !is_plain(*c)) {
            Some((at, c)) => Err(LinkError::Hidden { c, at: at + 1 }),
            None => Ok(()),
        }
    }

    /// The URL as the browser gets it: ASCII, the host in punycode.
    pub fn as_str(&self) -> &str {
        self.url.as_str()
    }

    /// The URL as a person reads it: as given, or when its host is not all ASCII (or is written
    /// in punycode), with the host in Unicode and its ASCII form beside it
    /// (`https://аpple.com/ (host in ASCII: xn--pple-43d.com)`).
    pub fn shown(&self) -> String {
        let ascii = self.url.host_str().unwrap_or_default();
        let (unicode, _) = idna::domain_to_unicode(ascii);
        let unicode = line(&unicode);
        if unicode == ascii {
            return self.raw.clone();
        }
        let url = self.as_str();
        format!(
            "{}{unicode}{} (host in ASCII: {ascii})",
            &url[..self.url[..Position::BeforeHost].len()],
            &url[self.url[..Position::AfterHost].len()..]
        )
    }
}

#[cfg(test)]
mod tests;
