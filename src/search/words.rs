//! Words as search compares them: identifiers split at `_-./:` and camelCase humps, lowercased,
//! reduced to a light stem; the words of a request that carry no meaning.

/// Lowercase words: split at non-alphanumerics and at camelCase humps (`getHTTPStatus` → get, http, status).
pub fn words(text: &str) -> Vec<String> {
    let mut out = Vec::new();
    each_word(text, |word| out.push(word.to_string()));
    out
}

/// Calls `f` with each of `text`'s words as `words` gives them, without collecting them.
pub fn each_word(text: &str, mut f: impl FnMut(&str)) {
    let mut current = String::new();
    let mut emit = |current: &mut String| {
        if !current.is_empty() {
            f(current);
            current.clear();
        }
    };
    let mut chars = text.chars().peekable();
    let mut prev: Option<char> = None;
    while let Some(c) = chars.next() {
        if !c.is_alphanumeric() {
            emit(&mut current);
            prev = Some(c);
            continue;
        }
        let next = chars.peek();
        let hump = c.is_uppercase()
            && prev.is_some_and(|p| {
                p.is_lowercase()
                    || p.is_ascii_digit()
                    || (p.is_uppercase() && next.is_some_and(|n| n.is_lowercase()))
            });
        if hump {
            emit(&mut current);
        }
        current.extend(c.to_lowercase());
        prev = Some(c);
    }
    emit(&mut current);
}

/// A light English stem, the same for every form a tool description or a query uses:
/// `files`/`file` → `fil`, `searches`/`searching` → `search`, `created`/`creates` → `creat`.
pub fn stem(word: &str) -> String {
    if word.len() <= 3 || !word.is_ascii() {
        return word.to_string();
    }
    let mut w = word.to_string();
    if let Some(base) = w.strip_suffix("ies") {
        w = format!("{base}y");
    } else if ["sses", "ches", "shes", "xes", "zes"]
        .iter()
        .any(|s| w.ends_with(s))
    {
        w.truncate(w.len() - 2);
    } else if w.ends_with('s') && !w.ends_with("ss") && !w.ends_with("us") && !w.ends_with("is") {
        w.pop();
    }
    for suffix in ["ing", "ed"] {
        if w.len() > suffix.len() + 3 {
            if let Some(base) = w.strip_suffix(suffix) {
                w = undouble(base);
                break;
            }
        }
    }
    if w.len() > 4 && w.ends_with('e') {
        w.pop();
    }
    w
}

/// `runn` → `run`: the doubled consonant of `running`, `stopped`.
fn undouble(base: &str) -> String {
    let bytes = base.as_bytes();
    match bytes {
        [.., a, b] if a == b && !b"aeioulsz".contains(b) => base[..base.len() - 1].to_string(),
        _ => base.to_string(),
    }
}

/// Words a request is made of that say nothing about the tool it wants.
const STOPWORDS: &[&str] = &[
    "a",
    "about",
    "above",
    "after",
    "again",
    "all",
    "am",
    "an",
    "and",
    "any",
    "are",
    "as",
    "at",
    "be",
    "been",
    "before",
    "being",
    "below",
    "between",
    "both",
    "but",
    "by",
    "can",
    "could",
    "did",
    "do",
    "does",
    "doing",
    "down",
    "during",
    "each",
    "few",
    "for",
    "from",
    "further",
    "had",
    "has",
    "have",
    "having",
    "he",
    "her",
    "here",
    "hers",
    "him",
    "his",
    "how",
    "i",
    "if",
    "in",
    "into",
    "is",
    "it",
    "its",
    "itself",
    "just",
    "let",
    "me",
    "more",
    "most",
    "my",
    "myself",
    "no",
    "nor",
    "not",
    "now",
    "of",
    "off",
    "on",
    "once",
    "only",
    "or",
    "other",
    "our",
    "ours",
    "out",
    "over",
    "own",
    "please",
    "same",
    "she",
    "should",
    "so",
    "some",
    "such",
    "than",
    "that",
    "the",
    "their",
    "them",
    "then",
    "there",
    "these",
    "they",
    "this",
    "those",
    "through",
    "to",
    "too",
    "under",
    "until",
    "up",
    "us",
    "very",
    "was",
    "we",
    "were",
    "what",
    "whats",
    "when",
    "where",
    "which",
    "while",
    "who",
    "whom",
    "why",
    "will",
    "with",
    "would",
    "you",
    "your",
    "yours",
    "actually",
    "already",
    "also",
    "anyone",
    "anything",
    "got",
    "need",
    "want",
    "wants",
    "ok",
    "okay",
    "isn",
    "aren",
    "wasn",
    "don",
    "doesn",
    "didn",
    "won",
    "gonna",
    "thing",
    "things",
    "stuff",
    "something",
    "somewhere",
];

/// `text` without the endings of contractions (`what's` → `what`, `isn't` → `isn`), so that
/// they do not become words of their own.
pub fn without_contractions(text: &str) -> String {
    let mut out = String::with_capacity(text.len());
    let mut chars = text.chars().peekable();
    while let Some(c) = chars.next() {
        if c == '\'' || c == '’' {
            let ending: String = chars.clone().take_while(|c| c.is_alphabetic()).collect();
            let known =
                ["s", "t", "d", "m", "ll", "re", "ve"].contains(&ending.to_lowercase().as_str());
            if known && !out.is_empty() {
                chars.nth(ending.chars().count() - 1);
                continue;
            }
        }
        out.push(c);
    }
    out
}

/// Whether `word` (lowercase, as written) carries no meaning for a search.
pub fn is_stopword(word: &str) -> bool {
    STOPWORDS.contains(&word)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn identifiers_split() {
        assert_eq!(
            words("getHTTPStatus_v2-now"),
            ["get", "http", "status", "v2", "now"]
        );
        assert_eq!(words("everything_get-sum"), ["everything", "get", "sum"]);
        assert_eq!(
            words("browser.take/screenshot"),
            ["browser", "take", "screenshot"]
        );
        assert_eq!(words("  "), Vec::<String>::new());
    }

    #[test]
    fn stems_meet() {
        for (a, b) in [
            ("files", "file"),
            ("searches", "search"),
            ("searching", "search"),
            ("created", "creates"),
            ("create", "creating"),
            ("directories", "directory"),
            ("running", "run"),
            ("stopped", "stop"),
            ("entities", "entity"),
            ("relations", "relation"),
        ] {
            assert_eq!(stem(a), stem(b), "{a} vs {b}");
        }
        assert_eq!(stem("status"), "status");
        assert_eq!(stem("ls"), "ls");
        assert_ne!(stem("read"), stem("ready"));
    }

    #[test]
    fn contractions() {
        assert_eq!(
            without_contractions("what's in it? isn't it"),
            "what in it? isn it"
        );
        assert_eq!(
            without_contractions("the user’s 'quoted' words"),
            "the user 'quoted' words"
        );
        assert_eq!(
            words(&without_contractions("s_vanished")),
            ["s", "vanished"]
        );
    }

    #[test]
    fn stopwords() {
        assert!(is_stopword("the") && is_stopword("whats") && !is_stopword("s"));
        assert!(!is_stopword("file") && !is_stopword("show"));
    }
}
