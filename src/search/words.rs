//! Words as search compares them: identifiers split at `_-./:` and camelCase humps, lowercased,
//! reduced to a light stem, and a small table of synonyms that tool authors and users mix up.

/// Lowercase words: split at non-alphanumerics and at camelCase humps (`getHTTPStatus` → get, http, status).
pub fn words(text: &str) -> Vec<String> {
    let mut out = Vec::new();
    let mut current = String::new();
    let chars: Vec<char> = text.chars().collect();
    for (i, &c) in chars.iter().enumerate() {
        if !c.is_alphanumeric() {
            flush(&mut current, &mut out);
            continue;
        }
        let prev = i.checked_sub(1).map(|j| chars[j]);
        let next = chars.get(i + 1);
        let hump = c.is_uppercase()
            && prev.is_some_and(|p| {
                p.is_lowercase()
                    || p.is_ascii_digit()
                    || (p.is_uppercase() && next.is_some_and(|n| n.is_lowercase()))
            });
        if hump {
            flush(&mut current, &mut out);
        }
        current.extend(c.to_lowercase());
    }
    flush(&mut current, &mut out);
    out
}

fn flush(current: &mut String, out: &mut Vec<String>) {
    if !current.is_empty() {
        out.push(std::mem::take(current));
    }
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

/// Groups of words that name the same action or thing in tool names, descriptions and requests.
const SYNONYMS: &[&[&str]] = &[
    &[
        "delete", "remove", "erase", "rm", "drop", "destroy", "forget",
    ],
    &["create", "make", "new", "add", "insert", "post"],
    &["reset", "unstage", "revert"],
    &["list", "enumerate", "ls", "show", "all"],
    &[
        "read", "get", "fetch", "open", "view", "cat", "load", "retrieve",
    ],
    &["write", "save", "store", "put", "persist"],
    &["edit", "modify", "update", "change", "patch", "replace"],
    &["search", "find", "query", "lookup", "grep", "look"],
    &["move", "rename", "mv"],
    &["directory", "folder", "dir"],
    &["file", "document", "doc"],
    &["navigate", "goto", "visit", "browse", "go"],
    &["click", "press", "tap"],
    &["type", "fill", "enter", "input"],
    &["screenshot", "snapshot", "capture"],
    &["time", "clock", "date", "timezone"],
    &["url", "link", "web", "page", "website"],
    &["entity", "node"],
    &["relation", "link", "edge", "connection"],
    &["observation", "fact", "note"],
    &["issue", "ticket", "bug"],
    &["repository", "repo"],
    &["commit", "revision"],
    &["log", "history"],
    &["status", "state"],
    &["env", "environment", "variable"],
    &["sum", "add", "plus", "total"],
    &["echo", "repeat"],
    &["wait", "sleep", "delay"],
    &["evaluate", "eval", "execute", "run"],
    &["console", "log"],
    &["network", "request", "http"],
    &["tree", "hierarchy", "structure"],
    &["size", "length", "bytes"],
    &["info", "metadata", "details", "stat"],
];

/// The stems of words that mean the same as `stemmed` (itself excluded).
pub fn synonyms(stemmed: &str) -> Vec<String> {
    let mut out: Vec<String> = SYNONYMS
        .iter()
        .filter(|group| group.iter().any(|w| stem(w) == stemmed))
        .flat_map(|group| group.iter().map(|w| stem(w)))
        .filter(|w| w != stemmed)
        .collect();
    out.sort();
    out.dedup();
    out
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
    fn synonym_groups() {
        let of_remove = synonyms(&stem("remove"));
        assert!(of_remove.contains(&stem("delete")), "{of_remove:?}");
        assert!(synonyms(&stem("folders")).contains(&stem("directory")));
        assert!(synonyms("zzz").is_empty());
    }
}
