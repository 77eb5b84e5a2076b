//! Values that must never reach a message, a log line or the cache in clear: bearer tokens,
//! header values, OAuth access tokens.

use std::fmt;

/// A secret string: `Debug` and `Display` print a placeholder; [`Secret::expose`] is the one
/// way to read it (when it goes on the wire).
#[derive(Clone, PartialEq, Eq, Default)]
pub struct Secret(String);

impl Secret {
    pub fn new(value: impl Into<String>) -> Secret {
        Secret(value.into())
    }

    pub fn expose(&self) -> &str {
        &self.0
    }

    pub fn is_empty(&self) -> bool {
        self.0.trim().is_empty()
    }
}

impl fmt::Debug for Secret {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("Secret(***)")
    }
}

impl fmt::Display for Secret {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("***")
    }
}

/// Removes known secrets from texts that may quote them (error messages of HTTP libraries quote
/// URLs, servers echo headers back).
#[derive(Clone, Debug, Default)]
pub struct Scrubber {
    /// `(secret, replacement)`, longest first so a secret containing another is replaced whole.
    pairs: Vec<(Secret, String)>,
}

/// Shorter values are too likely to be ordinary words ("on", "1") to be worth hiding.
const MIN_SECRET_LEN: usize = 4;

impl Scrubber {
    pub fn hide(&mut self, secret: &Secret) {
        self.replace(secret, "***");
    }

    /// Replaces `secret` with `replacement` (e.g. a URL by its redacted form).
    pub fn replace(&mut self, secret: &Secret, replacement: &str) {
        if secret.expose().len() >= MIN_SECRET_LEN && secret.expose() != replacement {
            self.pairs.push((secret.clone(), replacement.to_string()));
            self.pairs
                .sort_by_key(|(s, _)| std::cmp::Reverse(s.expose().len()));
        }
    }

    pub fn scrub(&self, text: &str) -> String {
        let mut out = text.to_string();
        for (secret, replacement) in &self.pairs {
            if out.contains(secret.expose()) {
                out = out.replace(secret.expose(), replacement);
            }
        }
        out
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn never_printed() {
        let s = Secret::new("tok-123");
        assert_eq!(format!("{s} {s:?}"), "*** Secret(***)");
        assert_eq!(s.expose(), "tok-123");
    }

    #[test]
    fn scrubs_longest_first() {
        let mut scrubber = Scrubber::default();
        scrubber.hide(&Secret::new("abcd"));
        scrubber.replace(&Secret::new("http://h/x?key=abcd"), "http://h/x?…");
        scrubber.hide(&Secret::new("on"));
        assert_eq!(
            scrubber.scrub("GET http://h/x?key=abcd failed; token abcd; on"),
            "GET http://h/x?… failed; token ***; on"
        );
    }
}
