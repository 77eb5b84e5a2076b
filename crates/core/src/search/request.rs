//! What a request asks for: its needs (its sentences, and their parts joined by commas or by
//! words like `and` and `then`), and its words as terms: each with the words it may stand for,
//! how much it counts, and the needs it is part of.

use super::related::{self, INTENT};
use super::words::{is_stopword, stem, without_contractions, words};
use std::collections::HashMap;

/// How much a word counts when it only starts a word of the tool.
const PREFIX_FACTOR: f64 = 0.5;
/// How much the words an abbreviation means count, and a question word (`who`, `where`) that
/// only stands for others.
const MEANS_WEIGHT: f64 = 0.9;
const QUESTION_WEIGHT: f64 = 0.5;
/// How much a phrase of the table (`let … know`) counts for what it stands for.
const PHRASE_WEIGHT: f64 = 1.0;
/// How much a word counts that a request implies by its form: a file's name (`notes.txt`) the
/// word `file`, an issue's key (`PROJ-123`, `#42`) the word `issue`, `#general` a channel,
/// `@alice` a user.
const IMPLIED_WEIGHT: f64 = 1.0;
/// How much the English words a Chinese or Japanese word of the glossary stands for count.
pub const TRANSLATED: f64 = 0.9;
/// Endings of web addresses, which look like a file's name but are not.
const WEB_ENDINGS: &[&str] = &["com", "org", "net", "io", "dev", "app", "ai", "co", "html"];
/// How much of a request is read: its first words, in tokens of at most this many characters
/// (a longer one is data, such as an encoded blob or a key, not words).
const MOST_WORDS: usize = 200;
const LONGEST_TOKEN: usize = 80;
/// Needs told apart; the parts of a request after these many belong to the last.
pub const MOST_NEEDS: usize = 16;
/// Punctuation that ends a sentence or a part of one when a space follows.
const ENDING: &[char] = &['.', '!', '?', ';', ':', ','];
/// Punctuation that ends one whatever follows: Chinese and Japanese forms, line breaks.
const ALWAYS_ENDING: &[char] = &['。', '！', '？', '；', '：', '，', '、', '\n'];
/// Words that join the parts of a sentence that ask for different things.
const JOINING_WORDS: &[&str] = &[
    "and",
    "then",
    "also",
    "plus",
    "if",
    "but",
    "before",
    "after",
    "once",
    "so",
    "otherwise",
];
/// The same in Chinese and Japanese, found anywhere (no spaces mark words there).
const JOINING_CJK: &[&str] = &[
    "然后",
    "并且",
    "同时",
    "顺便",
    "接着",
    "之后",
    "另外",
    "それから",
    "そして",
];

/// One word of a request (or a word it implies), with the words it may stand for and how much
/// each counts; `needs` has bit `i` set when the word is in the request's need `i`.
#[derive(Debug)]
pub struct Term {
    pub weight: f64,
    pub alternatives: Vec<(String, f64)>,
    pub needs: u32,
}

/// A request's terms and how many needs it was split into.
#[derive(Debug)]
pub struct Request {
    pub terms: Vec<Term>,
    pub needs: usize,
}

/// The parts of `query` that ask for different things, in order: its sentences (ended by
/// `. ! ? ; :` and a space, a line break, or their Chinese and Japanese forms), split again at
/// commas and at words that join clauses (`and`, `then`, `if` …; `然后`, `それから`). At most
/// `MOST_NEEDS`; parts without a letter or digit are left out.
pub fn needs(query: &str) -> Vec<&str> {
    let mut parts = Vec::new();
    let mut start = 0;
    let mut word_start = None;
    let mut chars = query.char_indices().peekable();
    while let Some((i, c)) = chars.next() {
        if c.is_alphanumeric() {
            word_start.get_or_insert(i);
        } else if let Some(w) = word_start.take() {
            if JOINING_WORDS.contains(&query[w..i].to_lowercase().as_str()) {
                parts.push(&query[start..w]);
                start = i;
            }
        }
        let next = chars.peek().map(|&(_, n)| n);
        if ALWAYS_ENDING.contains(&c)
            || (ENDING.contains(&c) && next.is_none_or(char::is_whitespace))
        {
            parts.push(&query[start..i]);
            start = i + c.len_utf8();
        }
        if let Some(joiner) = JOINING_CJK.iter().find(|j| query[i..].starts_with(**j)) {
            parts.push(&query[start..i]);
            start = i + joiner.len();
            for _ in 1..joiner.chars().count() {
                chars.next();
            }
            word_start = None;
        }
    }
    if let Some(w) = word_start {
        if JOINING_WORDS.contains(&query[w..].to_lowercase().as_str()) {
            parts.push(&query[start..w]);
            start = query.len();
        }
    }
    parts.push(&query[start..]);
    parts.retain(|p| p.chars().any(char::is_alphanumeric));
    if parts.len() > MOST_NEEDS {
        let offset = |part: &str| part.as_ptr() as usize - query.as_ptr() as usize;
        let last = offset(parts[MOST_NEEDS - 1]);
        parts.truncate(MOST_NEEDS - 1);
        parts.push(&query[last..]);
    }
    parts
}

/// The terms of `query`: stopwords dropped (unless nothing else is left), question words kept
/// only for what they stand for, abbreviations joined by the words they mean, each word once,
/// marked with every need it is in; `vocabulary` (sorted) gives the words a word starts.
pub fn parse(query: &str, vocabulary: &[String]) -> Request {
    let needs = needs(query);
    let mut raw: Vec<Vec<String>> = Vec::new();
    let mut read = 0;
    for need in &needs {
        let mut need_words = request_words(need);
        need_words.truncate(MOST_WORDS - read);
        read += need_words.len();
        raw.push(need_words);
    }
    let meaningful = raw.iter().flatten().any(|w| !is_stopword(w));
    let mut terms = Terms::default();
    for (i, (need, raw)) in needs.iter().zip(&raw).enumerate() {
        let bit = 1 << i;
        for word in raw {
            let stemmed = stem(word);
            if meaningful && is_stopword(word) {
                terms.add(&stemmed, bit, || question_word(word, &stemmed));
                continue;
            }
            terms.add(&stemmed, bit, || term(word, &stemmed, 1.0, vocabulary));
            for meant in related::means(&stemmed) {
                terms.add(meant, bit, || term(meant, meant, MEANS_WEIGHT, vocabulary));
            }
        }
        for (word, english) in related::glossed(need) {
            // Keyed apart from the word's own pairs of characters, which are terms too.
            terms.add(&format!("{word} (glossed)"), bit, || Term {
                weight: 1.0,
                alternatives: english.iter().map(|e| (e.clone(), TRANSLATED)).collect(),
                needs: 0,
            });
        }
        for implied in implied_words(need) {
            let stemmed = stem(implied);
            terms.add(&stemmed, bit, || Term {
                weight: IMPLIED_WEIGHT,
                alternatives: vec![(stemmed.clone(), INTENT)],
                needs: 0,
            });
        }
        let stems: Vec<String> = raw.iter().map(|w| stem(w)).collect();
        for meant in related::phrases(&stems) {
            terms.list.push(Term {
                weight: PHRASE_WEIGHT,
                alternatives: meant.iter().map(|m| (m.clone(), INTENT)).collect(),
                needs: bit,
            });
        }
    }
    let mut terms = terms.list;
    terms.retain(|t| !t.alternatives.is_empty());
    Request {
        terms,
        needs: needs.len(),
    }
}

/// Terms, each word once.
#[derive(Default)]
struct Terms {
    list: Vec<Term>,
    by_word: HashMap<String, usize>,
}

impl Terms {
    /// Marks `word`'s term as part of the need `bit`, making it first with `make`.
    fn add(&mut self, word: &str, bit: u32, make: impl FnOnce() -> Term) {
        let i = match self.by_word.get(word) {
            Some(&i) => i,
            None => {
                self.list.push(make());
                self.by_word.insert(word.to_string(), self.list.len() - 1);
                self.list.len() - 1
            }
        };
        self.list[i].needs |= bit;
    }
}

/// A stopword that stands for other words (`who` → user, `what's` → list, get): only those,
/// and only the ones the hand-made table gives; none for any other stopword.
fn question_word(word: &str, stemmed: &str) -> Term {
    let alternatives = related::alternatives(word, stemmed);
    let stands_for = !alternatives.is_empty() && related::means(stemmed).is_empty();
    Term {
        weight: QUESTION_WEIGHT,
        alternatives: alternatives
            .into_iter()
            .filter(|(_, f)| stands_for && *f >= INTENT)
            .collect(),
        needs: 0,
    }
}

/// A word of the request: itself, the indexed words it starts (three letters or more) and the
/// words it may stand for.
fn term(raw: &str, stemmed: &str, weight: f64, vocabulary: &[String]) -> Term {
    let mut alternatives = vec![(stemmed.to_string(), 1.0)];
    if stemmed.len() >= 3 {
        let start = vocabulary.partition_point(|w| w.as_str() < stemmed);
        alternatives.extend(
            vocabulary[start..]
                .iter()
                .take_while(|w| w.starts_with(stemmed))
                .filter(|w| w.as_str() != stemmed)
                .map(|w| (w.clone(), PREFIX_FACTOR)),
        );
    }
    alternatives.extend(related::alternatives(raw, stemmed));
    alternatives.sort_by(|a, b| a.0.cmp(&b.0).then(b.1.total_cmp(&a.1)));
    alternatives.dedup_by(|a, b| a.0 == b.0);
    alternatives.sort_by(|a, b| b.1.total_cmp(&a.1));
    Term {
        weight,
        alternatives,
        needs: 0,
    }
}

/// The words of a part of a request that count: its first `MOST_WORDS` words outside tokens
/// (runs between spaces) longer than `LONGEST_TOKEN` characters. A request of any size costs
/// at most that many words.
fn request_words(text: &str) -> Vec<String> {
    let tokens = text
        .split_whitespace()
        .filter(|token| token.chars().nth(LONGEST_TOKEN).is_none());
    let mut raw = Vec::new();
    for token in tokens {
        raw.extend(words(&without_contractions(token)));
        if raw.len() >= MOST_WORDS {
            raw.truncate(MOST_WORDS);
            break;
        }
    }
    raw
}

/// Words `query` implies by the form of its tokens: `file` for a file's name or path
/// (`report.md`, `src/main.rs`; not a number, not a web address), `issue` for an issue's key
/// (`PROJ-123`, `#42`), `channel` for `#general`, `user` for `@alice`.
fn implied_words(query: &str) -> Vec<&'static str> {
    let mut implied = Vec::new();
    for token in query.split_whitespace() {
        let word = token.trim_matches(|c: char| !c.is_alphanumeric());
        let word_implies = if names_a_file(token, word) {
            "file"
        } else if is_issue_key(token, word) {
            "issue"
        } else if names_a(token, '#') {
            "channel"
        } else if names_a(token, '@') {
            "user"
        } else {
            continue;
        };
        if !implied.contains(&word_implies) {
            implied.push(word_implies);
        }
    }
    implied
}

fn names_a_file(token: &str, word: &str) -> bool {
    let Some((name, ending)) = word.rsplit_once('.') else {
        return false;
    };
    !token.contains("://")
        && name.chars().any(char::is_alphanumeric)
        && (1..=5).contains(&ending.len())
        && ending.starts_with(|c: char| c.is_ascii_alphabetic())
        && ending.chars().all(|c| c.is_ascii_alphanumeric())
        && !WEB_ENDINGS.contains(&ending.to_ascii_lowercase().as_str())
}

/// `#general` (a channel), `@alice` (a user): the sign, then a name that starts with a letter.
fn names_a(token: &str, sign: char) -> bool {
    token
        .strip_prefix(sign)
        .is_some_and(|name| name.starts_with(|c: char| c.is_alphabetic()))
}

/// `PROJ-123` (a project's key in capitals, a number) or `#42`.
fn is_issue_key(token: &str, word: &str) -> bool {
    let number = |s: &str| !s.is_empty() && s.bytes().all(|b| b.is_ascii_digit());
    if let Some(rest) = token.strip_prefix('#') {
        return number(rest.trim_end_matches(|c: char| !c.is_alphanumeric()));
    }
    word.split_once('-').is_some_and(|(key, n)| {
        key.len() >= 2 && key.bytes().all(|b| b.is_ascii_uppercase()) && number(n)
    })
}

#[cfg(test)]
mod tests {
    use super::{implied_words, needs, parse, MOST_NEEDS};

    #[test]
    fn a_request_splits_into_its_needs() {
        assert_eq!(needs("read the config file"), ["read the config file"]);
        assert_eq!(
            needs(
                "Deploy failed on Vercel. Pull the build log, open an issue, and post it on Slack."
            ),
            [
                "Deploy failed on Vercel",
                " Pull the build log",
                " open an issue",
                " post it on Slack"
            ]
        );
        assert_eq!(
            needs("get its logs and, if the error isn't ours, search the web"),
            ["get its logs ", " the error isn't ours", " search the web"]
        );
        assert_eq!(
            needs("check notes.txt, v1.2 and https://example.com/a.b then stop"),
            [
                "check notes.txt",
                " v1.2 ",
                " https://example.com/a.b ",
                " stop"
            ]
        );
        assert_eq!(
            needs("把地址转成经纬度，然后写回数据库。再画个饼图"),
            ["把地址转成经纬度", "写回数据库", "再画个饼图"]
        );
        assert_eq!(
            needs("勤怠を確認して、チャットワークで報告してください。"),
            ["勤怠を確認して", "チャットワークで報告してください"]
        );
        let long = (0..40)
            .map(|i| format!("step {i}"))
            .collect::<Vec<_>>()
            .join(", ");
        let parts = needs(&long);
        assert_eq!(parts.len(), MOST_NEEDS);
        let last = parts[MOST_NEEDS - 1].trim();
        assert!(
            last.starts_with("step 15") && last.ends_with("step 39"),
            "{last}"
        );
    }

    #[test]
    fn a_word_in_several_needs_is_one_term_marked_with_each() {
        let request = parse("list the issues, then close the issues", &[]);
        assert_eq!(request.needs, 2);
        let issue = request
            .terms
            .iter()
            .find(|t| t.alternatives[0].0 == "issu")
            .unwrap();
        assert_eq!(issue.needs, 0b11);
        let glossed = parse("画一个饼图", &[]);
        assert!(
            glossed
                .terms
                .iter()
                .any(|t| t.alternatives.iter().any(|(w, _)| w == "pie")),
            "a Chinese word stands for the English words of the glossary"
        );
    }

    #[test]
    fn a_token_s_form_implies_a_word() {
        assert_eq!(implied_words("show me what notes.txt says"), ["file"]);
        assert_eq!(
            implied_words("open src/main.rs, then PROJ-123"),
            ["file", "issue"]
        );
        assert_eq!(implied_words("close #42 please"), ["issue"]);
        assert_eq!(
            implied_words("tell @alice in #general"),
            ["user", "channel"]
        );
        for none in [
            "bind to 0.0.0.0",
            "fetch https://example.com",
            "read example.com",
            "version 1.2",
            "a well-known x-ray",
            "# 42",
            "a@b",
        ] {
            assert!(implied_words(none).is_empty(), "{none}");
        }
    }
}
