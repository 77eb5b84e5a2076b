//! What a word of a request may stand for in tools' names and descriptions: the hand-made
//! table of abbreviations, intents and synonym groups (terms.txt), and WordNet's synonyms and
//! broader and narrower words (wordnet.txt, distilled by scripts/distill-wordnet.mjs). Both are
//! compiled into the addon; the table is parsed at the first search, WordNet is read in place.

use super::words::stem;
use crate::sorted_lines;
use std::collections::HashMap;
use std::sync::OnceLock;

/// How much a related word counts, relative to the word itself.
pub const SAME: f64 = 0.6;
pub const ABBREVIATION: f64 = 0.9;
pub const INTENT: f64 = 0.55;
pub const WORDNET_SAME: f64 = 0.35;
pub const WORDNET_BROAD: f64 = 0.25;
pub const WORDNET_NARROW: f64 = 0.2;

const TERMS: &str = include_str!("terms.txt");
const CJK: &str = include_str!("cjk.txt");
const WORDNET: &str = include_str!("wordnet.txt");
/// Where each two-byte key prefix's lines start in `WORDNET` (written by build.rs), so that a
/// lookup reads a few pages of it rather than probing all of it.
static WORDNET_PREFIXES: &[([u8; 2], usize)] =
    include!(concat!(env!("OUT_DIR"), "/wordnet_prefixes.rs"));

/// The hand-made table, keyed by stem.
#[derive(Default)]
struct Table {
    /// Abbreviation → the stems of the words it means.
    means: HashMap<String, Vec<String>>,
    /// Word → (stem it may stand for, factor).
    alternatives: HashMap<String, Vec<(String, f64)>>,
    /// Phrases (their words' stems, in order, other words allowed between) → the stems they
    /// stand for: `let … know` → notify, send, message.
    phrases: Vec<(Vec<String>, Vec<String>)>,
}

fn table() -> &'static Table {
    static TABLE: OnceLock<Table> = OnceLock::new();
    TABLE.get_or_init(|| parse_terms(TERMS))
}

fn parse_terms(text: &str) -> Table {
    let mut table = Table::default();
    let stems = |words: &str| -> Vec<String> { words.split_whitespace().map(stem).collect() };
    for line in text.lines().map(str::trim) {
        if line.is_empty() || line.starts_with('#') {
            continue;
        }
        if let Some(group) = line.strip_prefix('~') {
            let group = stems(group);
            for word in &group {
                for other in group.iter().filter(|o| *o != word) {
                    table.add(word, other, SAME);
                }
            }
        } else if let Some((short, words)) = line.split_once('=') {
            let (short, words) = (stem(short.trim()), stems(words));
            match words.as_slice() {
                [one] => {
                    table.add(&short, one, ABBREVIATION);
                    table.add(one, &short, ABBREVIATION);
                }
                _ => table.means.entry(short).or_default().extend(words),
            }
        } else if let Some((phrase, words)) = line
            .split_once(':')
            .filter(|(phrase, _)| phrase.contains(' '))
        {
            table.phrases.push((stems(phrase), stems(words)));
        } else if let Some((word, words)) = line.split_once(':') {
            let word = stem(word.trim());
            for other in stems(words).iter().filter(|o| **o != word) {
                table.add(&word, other, INTENT);
            }
        }
    }
    table
}

impl Table {
    fn add(&mut self, word: &str, other: &str, factor: f64) {
        let list = self.alternatives.entry(word.to_string()).or_default();
        match list.iter_mut().find(|(w, _)| w == other) {
            Some(entry) => entry.1 = entry.1.max(factor),
            None => list.push((other.to_string(), factor)),
        }
    }
}

/// Most words a phrase's words may have between them (`let the whole team know`).
const PHRASE_GAP: usize = 3;

/// For each phrase of the table whose words `stems` (a request's, in order) hold in order, with
/// at most `PHRASE_GAP` other words between each two, the stems the phrase stands for.
pub fn phrases(stems: &[String]) -> Vec<&'static [String]> {
    table()
        .phrases
        .iter()
        .filter(|(phrase, _)| {
            let mut at = 0;
            phrase.iter().enumerate().all(|(i, word)| {
                let window = if i == 0 { stems.len() } else { PHRASE_GAP + 1 };
                match stems[at.min(stems.len())..]
                    .iter()
                    .take(window)
                    .position(|s| s == word)
                {
                    Some(p) => {
                        at += p + 1;
                        true
                    }
                    None => false,
                }
            })
        })
        .map(|(_, meant)| meant.as_slice())
        .collect()
}

/// Chinese and Japanese words (as written) and the stems of the English words they stand for.
fn glossary() -> &'static [(String, Vec<String>)] {
    static GLOSSARY: OnceLock<Vec<(String, Vec<String>)>> = OnceLock::new();
    GLOSSARY.get_or_init(|| {
        let mut entries = Vec::new();
        for line in CJK.lines().map(str::trim) {
            if line.is_empty() || line.starts_with('#') {
                continue;
            }
            let Some((words, english)) = line.split_once(':') else {
                continue;
            };
            let english: Vec<String> = english.split_whitespace().map(stem).collect();
            for word in words.split_whitespace() {
                entries.push((word.to_string(), english.clone()));
            }
        }
        entries
    })
}

/// The Chinese and Japanese words of the glossary (cjk.txt) that `text` holds, each with the
/// stems of the English words it stands for.
pub fn glossed(text: &str) -> Vec<(&'static str, &'static [String])> {
    if text.is_ascii() {
        return Vec::new();
    }
    glossary()
        .iter()
        .filter(|(word, _)| text.contains(word.as_str()))
        .map(|(word, english)| (word.as_str(), english.as_slice()))
        .collect()
}

/// The stems of the words `word` (a stem) means when it is an abbreviation of several words
/// (`pr` → pull, request).
pub fn means(word: &str) -> &'static [String] {
    table().means.get(word).map_or(&[], Vec::as_slice)
}

/// Stems `word` may stand for, with how much each counts: the hand-made table's, then
/// WordNet's for `raw` (the word as written, lowercase). Each stem once, at its best factor.
pub fn alternatives(raw: &str, word: &str) -> Vec<(String, f64)> {
    let mut out: Vec<(String, f64)> = table().alternatives.get(word).cloned().unwrap_or_default();
    let mut add = |other: &str, factor: f64| {
        let other = stem(other);
        if other == word {
            return;
        }
        match out.iter_mut().find(|(w, _)| *w == other) {
            Some(entry) => entry.1 = entry.1.max(factor),
            None => out.push((other, factor)),
        }
    };
    if let Some(entry) = wordnet(raw) {
        for (words, factor) in entry
            .split('|')
            .zip([WORDNET_SAME, WORDNET_BROAD, WORDNET_NARROW])
        {
            for other in words.split_whitespace() {
                add(other, factor);
            }
        }
    }
    out
}

/// WordNet's line for `raw` (or for its base form: `commits` → `commit`), without the word:
/// `same words|broader words|narrower words`.
fn wordnet(raw: &str) -> Option<&'static str> {
    let bases = [
        Some(raw.to_string()),
        raw.strip_suffix("ies").map(|b| format!("{b}y")),
        raw.strip_suffix("es").map(str::to_string),
        raw.strip_suffix('s').map(str::to_string),
        raw.strip_suffix("ed").map(str::to_string),
        raw.strip_suffix('d').map(str::to_string),
        raw.strip_suffix("ing").map(str::to_string),
        raw.strip_suffix("ing").map(|b| format!("{b}e")),
    ];
    bases
        .into_iter()
        .flatten()
        .filter(|b| b.len() > 1)
        .find_map(|base| lookup(prefix_lines(&base), &base))
}

/// The lines of `WORDNET` whose keys start as `key` does (its first two bytes).
fn prefix_lines(key: &str) -> &'static str {
    let bytes = key.as_bytes();
    let prefix = [
        bytes.first().copied().unwrap_or(0),
        bytes.get(1).copied().unwrap_or(0),
    ];
    let Ok(i) = WORDNET_PREFIXES.binary_search_by(|(p, _)| p.cmp(&prefix)) else {
        return "";
    };
    let end = WORDNET_PREFIXES
        .get(i + 1)
        .map_or(WORDNET.len(), |(_, at)| *at);
    &WORDNET[WORDNET_PREFIXES[i].1..end]
}

/// The rest of the line of a sorted `word|…` table that starts with `key|`.
fn lookup<'a>(text: &'a str, key: &str) -> Option<&'a str> {
    let line = sorted_lines::find(text, key, |line| line.split('|').next().unwrap_or_default())?;
    line.split_once('|').map(|(_, rest)| rest)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn abbreviations_mean_their_words() {
        assert_eq!(means("pr"), [stem("pull"), stem("request")]);
        assert!(
            means(&stem("k8s")).is_empty(),
            "a one-word meaning is an alternative"
        );
        assert!(means("zzz").is_empty());
        let of_repo = alternatives("repo", "repo");
        assert!(
            of_repo.contains(&(stem("repository"), ABBREVIATION)),
            "{of_repo:?}"
        );
        let of_repository = alternatives("repository", &stem("repository"));
        assert!(
            of_repository.iter().any(|(w, _)| w == "repo"),
            "one word works both ways"
        );
    }

    #[test]
    fn intents_groups_and_wordnet() {
        let of_forget = alternatives("forget", &stem("forget"));
        assert!(
            of_forget.contains(&(stem("delete"), INTENT)),
            "{of_forget:?}"
        );
        let of_folder = alternatives("folder", &stem("folder"));
        assert!(
            of_folder.contains(&(stem("directory"), SAME)),
            "{of_folder:?}"
        );
        let of_automobile = alternatives("automobiles", &stem("automobiles"));
        assert!(
            of_automobile.contains(&(stem("car"), WORDNET_SAME)),
            "{of_automobile:?}"
        );
        assert!(alternatives("qqqq", "qqqq").is_empty());
    }

    #[test]
    fn phrases_hold_in_order_with_words_between() {
        let stems = |text: &str| -> Vec<String> { text.split(' ').map(stem).collect() };
        let meant = |text: &str| -> Vec<String> { phrases(&stems(text)).concat() };
        assert!(meant("let the whole team know").contains(&stem("message")));
        assert!(meant("let me know").contains(&stem("message")));
        assert!(
            !meant("know what to let").contains(&stem("message")),
            "in order"
        );
        assert!(
            !meant("let one two three four know").contains(&stem("message")),
            "at most three words between"
        );
        assert!(meant("open a new issue").contains(&stem("create")));
        assert!(meant("what is here").is_empty());
    }

    #[test]
    fn lookup_finds_every_line_and_only_those() {
        let text = "alpha|a||\nbeta|b|c|\ngamma|||d";
        assert_eq!(lookup(text, "alpha"), Some("a||"));
        assert_eq!(lookup(text, "beta"), Some("b|c|"));
        assert_eq!(lookup(text, "gamma"), Some("||d"));
        for missing in ["", "alp", "alphab", "delta", "aaa"] {
            assert_eq!(lookup(text, missing), None, "{missing}");
        }
    }

    #[test]
    fn every_wordnet_line_is_found_within_its_prefix() {
        for line in WORDNET.lines().filter(|l| !l.starts_with('#')) {
            let (key, rest) = line.split_once('|').unwrap();
            assert_eq!(lookup(prefix_lines(key), key), Some(rest), "{key}");
        }
        assert_eq!(prefix_lines("zzzzzz"), "");
        assert!(prefix_lines("a").len() < WORDNET.len() / 100);
    }
}
