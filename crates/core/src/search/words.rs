//! Words as search compares them: identifiers split at `_-./:` and camelCase humps, lowercased,
//! reduced to a light stem; Chinese, Japanese and Korean text as overlapping pairs of characters
//! (a run of one kind: Han, hiragana, katakana, Hangul); the words of a request that carry no
//! meaning.

use super::script::{paired, Paired};
use regex::Regex;
use std::sync::OnceLock;

/// Lowercase words: split at non-alphanumerics and at camelCase humps (`getHTTPStatus` → get,
/// http, status); a run of CJK characters as its overlapping pairs (`经纬度` → 经纬, 纬度; one
/// character alone is a word).
pub fn words(text: &str) -> Vec<String> {
    let mut out = Vec::new();
    each_word(text, |word| out.push(word.to_string()));
    out
}

/// Calls `f` with each of `text`'s words as `words` gives them, without collecting them. A
/// combining mark or joiner continues the word it follows (the vowel signs and viramas of Indic
/// scripts, Thai tone marks), so that words of scripts written with spaces break where Unicode's
/// word boundaries (UAX #29) put them.
pub fn each_word(text: &str, mut f: impl FnMut(&str)) {
    let mut current = String::new();
    let mut kind: Option<Paired> = None;
    let mut emit = |current: &mut String, kind: Option<Paired>| {
        if kind.is_some() && current.chars().nth(1).is_some() {
            let bounds: Vec<usize> = current
                .char_indices()
                .map(|(i, _)| i)
                .chain([current.len()])
                .collect();
            for pair in bounds.windows(3) {
                f(&current[pair[0]..pair[2]]);
            }
        } else if !current.is_empty() {
            f(current);
        }
        current.clear();
    };
    let mut chars = text.chars().peekable();
    let mut prev: Option<char> = None;
    while let Some(c) = chars.next() {
        if !c.is_alphanumeric() {
            if !current.is_empty() && !c.is_ascii() && is_mark(c) {
                current.push(c);
                continue;
            }
            emit(&mut current, kind);
            prev = Some(c);
            continue;
        }
        let next = chars.peek();
        let this = paired(c);
        let hump = c.is_uppercase()
            && prev.is_some_and(|p| {
                p.is_lowercase()
                    || p.is_ascii_digit()
                    || (p.is_uppercase() && next.is_some_and(|n| n.is_lowercase()))
            });
        if hump || (this != kind && !current.is_empty()) {
            emit(&mut current, kind);
        }
        kind = this;
        if c.is_ascii() {
            current.push(c.to_ascii_lowercase());
        } else {
            current.extend(c.to_lowercase());
        }
        prev = Some(c);
    }
    emit(&mut current, kind);
}

/// Whether `c` (not alphanumeric) continues a word: a combining mark, or a zero-width joiner or
/// non-joiner. Unicode's tables come with the regex engine.
fn is_mark(c: char) -> bool {
    static MARK: OnceLock<Regex> = OnceLock::new();
    let mark =
        MARK.get_or_init(|| Regex::new(r"^[\p{M}\x{200C}\x{200D}]$").expect("a valid class"));
    mark.is_match(c.encode_utf8(&mut [0; 4]))
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

/// Han characters that mostly make the grammar of a Chinese sentence (particles, pronouns,
/// measure words, the commonest verbs of asking): a pair of two of them (`一下`, `帮我`) carries
/// no meaning for a search.
const GRAMMAR_HAN: &str = "的了是在把和与及或我你他她它们这那个一下上中里吗呢吧啊就都也还要会能给让被从到对为其之而并等帮请看些么什怎哪有没不很最得着过来去做想该可以所如果已将每各此再";

/// Whether `word` (lowercase, as written) carries no meaning for a search: an English stopword,
/// Japanese kana of grammar (a word all in hiragana: particles, endings), or a pair of Chinese
/// grammar characters.
pub fn is_stopword(word: &str) -> bool {
    STOPWORDS.contains(&word)
        || (!word.is_ascii() && word.chars().all(|c| paired(c) == Some(Paired::Hiragana)))
        || (!word.is_ascii() && word.chars().all(|c| GRAMMAR_HAN.contains(c)))
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
    fn cjk_text_in_character_pairs() {
        assert_eq!(
            words("将经纬度坐标转换"),
            ["将经", "经纬", "纬度", "度坐", "坐标", "标转", "转换"]
        );
        assert_eq!(
            words("GitHub上のissueを閉じる"),
            ["git", "hub", "上", "の", "issue", "を", "閉", "じる"],
            "a word ends where Han, kana and Latin letters meet"
        );
        assert_eq!(
            words("ユーザー情報を取得します"),
            ["ユー", "ーザ", "ザー", "情報", "を", "取得", "しま", "ます"]
        );
        assert_eq!(
            words("查 the 地址。"),
            ["查", "the", "地址"],
            "one character alone is a word"
        );
        assert_eq!(words("API密钥2024年"), ["api", "密钥", "2024", "年"]);
        assert_eq!(words("채널에 메시지"), ["채널", "널에", "메시", "시지"]);
    }

    #[test]
    fn other_scripts_break_at_unicode_word_boundaries() {
        use unicode_segmentation::UnicodeSegmentation;
        for text in [
            "नमस्ते दुनिया, फ़ाइल पढ़ें",
            "Прочитать файл и отправить сообщение",
            "قراءة الملفّ وإرسال رسالة",
            "קרא את הקובץ",
            "Διάβασε το αρχείο",
            "ഫയൽ വായിക്കുക",
        ] {
            let unicode: Vec<String> = text.unicode_words().map(str::to_lowercase).collect();
            assert_eq!(words(text), unicode, "{text}");
        }
        // Unicode's rules leave Thai to a dictionary (without one, every letter stands alone):
        // a run between spaces is a word here, marks included.
        assert_eq!(words("ส่งข้อความ ถึงทีม"), ["ส่งข้อความ", "ถึงทีม"]);
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
        assert!(is_stopword("ます") && is_stopword("を") && !is_stopword("取得"));
        assert!(is_stopword("一下") && is_stopword("帮我") && !is_stopword("地图"));
    }
}
