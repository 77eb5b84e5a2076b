//! An inverted index over the catalog, built once per catalog change, so that a query costs
//! only the postings of its words and of the words they may stand for: BM25 over weighted fields
//! (name, MCP name, parameter names, server, description, the config's `searchKeywords`), and the
//! servers' own descriptions and instructions as a weak field.

use super::related::{self, INTENT};
use super::script::{self, Script};
use super::twins::Twins;
use super::words::{each_word, is_stopword, stem, without_contractions, words};
use crate::catalog::ToolInfo;
use serde_json::Value;
use std::collections::{HashMap, HashSet};

/// Field weights: a word in a tool's name counts most.
const NAME_WEIGHT: f64 = 3.0;
const ORIGINAL_WEIGHT: f64 = 1.5;
const PARAM_WEIGHT: f64 = 1.5;
const SERVER_WEIGHT: f64 = 1.0;
const TEXT_WEIGHT: f64 = 1.0;
/// How much a word counts when it only starts a word of the tool.
const PREFIX_FACTOR: f64 = 0.5;
/// How much a request's word counts for every tool of a server whose description or
/// instructions hold it.
const SERVER_TEXT_FACTOR: f64 = 0.2;
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
/// Endings of web addresses, which look like a file's name but are not.
const WEB_ENDINGS: &[&str] = &["com", "org", "net", "io", "dev", "app", "ai", "co", "html"];
/// How much of a request is read: its first words, in tokens of at most this many characters.
const MOST_WORDS: usize = 200;
const LONGEST_TOKEN: usize = 80;
/// BM25F parameters: saturation, and length normalization of descriptions and of names.
const K1: f64 = 2.0;
const B: f64 = 0.75;
const NAME_B: f64 = 0.3;
/// Bonuses that put exact and prefix name matches above any relevance score.
const EXACT_NAME: f64 = 1000.0;
const NAME_PREFIX: f64 = 500.0;

/// A server's own words for the index: its name, and its description and instructions.
pub struct ServerText<'a> {
    pub name: &'a str,
    pub description: Option<&'a str>,
    pub instructions: Option<&'a str>,
}

impl ServerText<'_> {
    /// What the server is for, in a line: its description, else its instructions' first line.
    fn summary(&self) -> String {
        self.description
            .or(self.instructions)
            .and_then(|t| t.lines().map(str::trim).find(|l| !l.is_empty()))
            .unwrap_or_default()
            .to_string()
    }
}

/// One field of a document: its text, how much a word in it counts, how much its length
/// normalizes (BM25's `b`), and whether it is one of the tool's names.
struct Field<'a> {
    text: &'a str,
    weight: f64,
    b: f64,
    name: bool,
}

/// A word in a document: its normalized weighted frequency, and the part of it from the names.
#[derive(Clone, Copy, Debug)]
struct Posting {
    doc: u32,
    tf: f32,
    in_name: f32,
}

/// BM25F postings over a set of documents made of the same fields: each word's frequency in a
/// document is weighted and length-normalized per field, so that a long description does not
/// drown a word of the name.
#[derive(Debug, Default)]
struct Postings {
    /// Stemmed word → the documents holding it.
    lists: HashMap<String, Vec<Posting>>,
    documents: usize,
}

impl Postings {
    fn build(documents: &[Vec<Field>]) -> Postings {
        let lengths: Vec<Vec<usize>> = documents
            .iter()
            .map(|fields| {
                let count = |text| {
                    let mut n = 0;
                    each_word(text, |_| n += 1);
                    n
                };
                fields.iter().map(|field| count(field.text)).collect()
            })
            .collect();
        let mut average = vec![0.0f64; documents.first().map_or(0, Vec::len)];
        for lengths in &lengths {
            for (sum, length) in average.iter_mut().zip(lengths) {
                *sum += *length as f64;
            }
        }
        for sum in &mut average {
            *sum = (*sum / documents.len().max(1) as f64).max(1.0);
        }
        // Catalogs repeat their words: each is stemmed once.
        let mut stems: HashMap<String, String> = HashMap::new();
        let mut lists: HashMap<String, Vec<Posting>> = HashMap::new();
        for (doc, (fields, lengths)) in documents.iter().zip(&lengths).enumerate() {
            let doc = doc as u32;
            for ((field, length), average) in fields.iter().zip(lengths).zip(&average) {
                let norm = 1.0 - field.b + field.b * *length as f64 / average;
                let add = (field.weight / norm) as f32;
                let in_name = if field.name { add } else { 0.0 };
                each_word(field.text, |word| {
                    if !stems.contains_key(word) {
                        stems.insert(word.to_string(), stem(word));
                    }
                    let stemmed = &stems[word];
                    let posting = Posting {
                        doc,
                        tf: add,
                        in_name,
                    };
                    match lists.get_mut(stemmed) {
                        Some(list) => match list.last_mut() {
                            Some(last) if last.doc == doc => {
                                last.tf += add;
                                last.in_name += in_name;
                            }
                            _ => list.push(posting),
                        },
                        None => {
                            lists.insert(stemmed.clone(), vec![posting]);
                        }
                    }
                });
            }
        }
        Postings {
            lists,
            documents: documents.len(),
        }
    }

    /// For each (word, factor), `factor` × BM25 of the word in each document holding it, its
    /// names' part weighted by `names`; keeps the best per document in `best` (noting first
    /// touches in `touched`) and which factor won.
    fn best_of(&self, alternatives: &[(String, f64)], names: &NameWeight, best: &mut Best) {
        let n = self.documents as f64;
        for (word, factor) in alternatives {
            let Some(list) = self.lists.get(word) else {
                continue;
            };
            let df = list.len() as f64;
            let idf = (1.0 + (n - df + 0.5) / (df + 0.5)).ln();
            for posting in list {
                let doc = posting.doc as usize;
                let tf = f64::from(posting.tf) + names.extra(doc) * f64::from(posting.in_name);
                best.offer(doc, factor * idf * tf * (K1 + 1.0) / (tf + K1), *factor);
            }
        }
    }
}

/// How much more a tool's names count for a request written in another script than its
/// description: there, the names are all the two share.
const OTHER_SCRIPT_NAME: f64 = 2.0;

/// For one request, how much more each document's names count.
struct NameWeight<'a> {
    /// Each document's script (its description's).
    scripts: &'a [Option<Script>],
    request: Option<Script>,
}

impl NameWeight<'_> {
    const NONE: NameWeight<'static> = NameWeight {
        scripts: &[],
        request: None,
    };

    fn extra(&self, doc: usize) -> f64 {
        match (self.request, self.scripts.get(doc)) {
            (Some(request), Some(Some(described))) if request != *described => {
                OTHER_SCRIPT_NAME - 1.0
            }
            _ => 0.0,
        }
    }
}

/// Per document, the best score of one query term so far and the factor it came with.
struct Best {
    score: Vec<f64>,
    factor: Vec<f64>,
    touched: Vec<usize>,
}

impl Best {
    fn new(n: usize) -> Best {
        Best {
            score: vec![0.0; n],
            factor: vec![0.0; n],
            touched: Vec::new(),
        }
    }

    fn offer(&mut self, doc: usize, score: f64, factor: f64) {
        if score <= self.score[doc] {
            return;
        }
        if self.score[doc] == 0.0 {
            self.touched.push(doc);
        }
        self.score[doc] = score;
        self.factor[doc] = factor;
    }

    fn clear(&mut self) {
        for doc in self.touched.drain(..) {
            self.score[doc] = 0.0;
            self.factor[doc] = 0.0;
        }
    }
}

/// One word of a request, with the words it may stand for and how much each counts.
#[derive(Debug)]
struct Term {
    weight: f64,
    alternatives: Vec<(String, f64)>,
}

/// The tools a query ranks first, best first, and how well the best one matched.
pub struct Ranked {
    pub hits: Vec<usize>,
    /// A hit's twins (the same tool on other servers) that matched too, shown with it.
    pub also: HashMap<usize, Vec<usize>>,
    /// Matches, twins counted once.
    pub total: usize,
    /// Of the request's words (weighted), the share the best hit holds itself, each counted by
    /// how closely (1 for the word, less for a word it stands for); 1 when its name is the query.
    pub strength: f64,
}

#[derive(Debug, Default)]
pub struct SearchIndex {
    tools: Postings,
    /// Every stemmed word, sorted, for prefix matches.
    vocabulary: Vec<String>,
    /// Display and MCP names, lowercase with `-` as `_`.
    names: Vec<[String; 2]>,
    /// Per tool, the fields a regex searches, lowercase, one per line: display name, MCP name,
    /// description, parameter names.
    haystacks: Vec<String>,
    /// Per tool, the script its description is in.
    scripts: Vec<Option<Script>>,
    twins: Twins,
    /// The servers' own texts, and each server's tools.
    servers: Postings,
    server_names: Vec<String>,
    server_summaries: Vec<String>,
    server_tools: Vec<Vec<usize>>,
}

impl SearchIndex {
    pub fn build(tools: &[ToolInfo], servers: &[ServerText]) -> SearchIndex {
        SearchIndex::build_with(tools, servers, &[])
    }

    /// The index with `keywords[i]`, more words the config gives tool `i` (`searchKeywords`),
    /// weighted as its parameter names.
    pub fn build_with(
        tools: &[ToolInfo],
        servers: &[ServerText],
        keywords: &[String],
    ) -> SearchIndex {
        let params: Vec<String> = tools
            .iter()
            .map(|tool| parameter_names(tool).collect::<Vec<_>>().join(" "))
            .collect();
        let field = |text, weight, b| Field {
            text,
            weight,
            b,
            name: false,
        };
        let name = |text, weight| Field {
            name: true,
            ..field(text, weight, NAME_B)
        };
        let documents: Vec<Vec<Field>> = tools
            .iter()
            .zip(&params)
            .enumerate()
            .map(|(i, (tool, params))| {
                let keywords = keywords.get(i).map_or("", String::as_str);
                vec![
                    name(&tool.name, NAME_WEIGHT),
                    name(&tool.original, ORIGINAL_WEIGHT),
                    field(&tool.server, SERVER_WEIGHT, NAME_B),
                    field(&tool.description, TEXT_WEIGHT, B),
                    field(params, PARAM_WEIGHT, B),
                    field(keywords, PARAM_WEIGHT, B),
                ]
            })
            .collect();
        let postings = Postings::build(&documents);
        let mut vocabulary: Vec<String> = postings.lists.keys().cloned().collect();
        vocabulary.sort();
        let server_names: Vec<String> = servers.iter().map(|s| s.name.to_string()).collect();
        let server_texts: Vec<String> = servers
            .iter()
            .map(|server| {
                let texts = [Some(server.name), server.description, server.instructions];
                texts.into_iter().flatten().collect::<Vec<_>>().join("\n")
            })
            .collect();
        let server_documents: Vec<Vec<Field>> = server_texts
            .iter()
            .map(|text| vec![field(text, 1.0, B)])
            .collect();
        let server_of: HashMap<&str, usize> = servers
            .iter()
            .enumerate()
            .map(|(i, s)| (s.name, i))
            .collect();
        let mut server_tools = vec![Vec::new(); servers.len()];
        for (i, tool) in tools.iter().enumerate() {
            if let Some(&s) = server_of.get(tool.server.as_str()) {
                server_tools[s].push(i);
            }
        }
        SearchIndex {
            tools: postings,
            vocabulary,
            names: tools
                .iter()
                .map(|t| [loose(&t.name), loose(&t.original)])
                .collect(),
            haystacks: tools.iter().map(haystack).collect(),
            scripts: tools
                .iter()
                .map(|t| script::of_text(&t.description))
                .collect(),
            twins: Twins::find(tools),
            servers: Postings::build(&server_documents),
            server_summaries: servers.iter().map(ServerText::summary).collect(),
            server_names,
            server_tools,
        }
    }

    /// The text a regex is matched against for tool `i` (one field per line).
    pub fn haystack(&self, i: usize) -> &str {
        &self.haystacks[i]
    }

    /// The `want` best tools (indexes, best first) among those that match `query` and pass
    /// `keep`, and how many match in all. Only the best are sorted: a query over 10,000 tools
    /// costs its postings, not a full sort.
    pub fn rank(&self, query: &str, keep: impl Fn(usize) -> bool, want: usize) -> Ranked {
        let n = self.tools.documents;
        let terms = self.terms(query);
        let names = NameWeight {
            scripts: &self.scripts,
            request: script::of_text(query),
        };
        let mut scores = vec![0.0f64; n];
        let mut closeness = vec![0.0f64; n];
        let mut best = Best::new(n);
        let mut server_best = Best::new(self.server_names.len());
        for term in &terms {
            self.tools.best_of(&term.alternatives, &names, &mut best);
            self.servers
                .best_of(&term.alternatives, &NameWeight::NONE, &mut server_best);
            for &server in &server_best.touched {
                let weak = SERVER_TEXT_FACTOR * term.weight * server_best.score[server];
                for &doc in &self.server_tools[server] {
                    scores[doc] += weak;
                }
            }
            for &doc in &best.touched {
                scores[doc] += term.weight * best.score[doc];
                closeness[doc] += term.weight * certainty(best.factor[doc]);
            }
            best.clear();
            server_best.clear();
        }
        let whole = loose(query);
        for (doc, names) in self.names.iter().enumerate() {
            if names.contains(&whole) {
                scores[doc] += EXACT_NAME;
                closeness[doc] = f64::INFINITY;
            } else if scores[doc] > 0.0
                && names
                    .iter()
                    .any(|n| n.starts_with(&whole) || n.ends_with(&whole))
            {
                scores[doc] += NAME_PREFIX;
                closeness[doc] = f64::INFINITY;
            }
        }
        let mut hits: Vec<(usize, f64)> = scores
            .into_iter()
            .enumerate()
            .filter(|(doc, s)| *s > 0.0 && keep(*doc))
            .collect();
        let also = self.twins.collapse(&mut hits);
        let total = hits.len();
        let best_first =
            |a: &(usize, f64), b: &(usize, f64)| b.1.total_cmp(&a.1).then(a.0.cmp(&b.0));
        if want < hits.len() {
            hits.select_nth_unstable_by(want, best_first);
            hits.truncate(want);
        }
        hits.sort_by(best_first);
        let weights: f64 = terms.iter().map(|t| t.weight).sum();
        let strength = hits.first().map_or(0.0, |&(doc, _)| {
            (closeness[doc] / weights.max(1e-9)).min(1.0)
        });
        Ranked {
            hits: hits.into_iter().map(|(doc, _)| doc).collect(),
            also,
            total,
            strength,
        }
    }

    /// Servers whose own words (name, description, instructions) match `query`, best first,
    /// with what each is for.
    pub fn servers_for(&self, query: &str, n: usize) -> Vec<(&str, &str)> {
        let mut scores = vec![0.0f64; self.server_names.len()];
        let mut best = Best::new(self.server_names.len());
        for term in self.terms(query) {
            self.servers
                .best_of(&term.alternatives, &NameWeight::NONE, &mut best);
            for &server in &best.touched {
                scores[server] += term.weight * best.score[server];
            }
            best.clear();
        }
        let mut ranked: Vec<(usize, f64)> = scores
            .into_iter()
            .enumerate()
            .filter(|(_, s)| *s > 0.0)
            .collect();
        ranked.sort_by(|a, b| b.1.total_cmp(&a.1).then(a.0.cmp(&b.0)));
        ranked
            .into_iter()
            .take(n)
            .map(|(s, _)| {
                (
                    self.server_names[s].as_str(),
                    self.server_summaries[s].as_str(),
                )
            })
            .collect()
    }

    /// The request's words as terms: stopwords dropped (unless nothing else is left), question
    /// words kept only for what they stand for, abbreviations joined by the words they mean.
    fn terms(&self, query: &str) -> Vec<Term> {
        let raw = request_words(query);
        let meaningful = raw.iter().any(|w| !is_stopword(w));
        let mut seen: HashSet<String> = HashSet::new();
        let mut terms = Vec::new();
        for word in &raw {
            let stemmed = stem(word);
            if !seen.insert(stemmed.clone()) {
                continue;
            }
            if meaningful && is_stopword(word) {
                let alternatives = related::alternatives(word, &stemmed);
                if !alternatives.is_empty() && related::means(&stemmed).is_empty() {
                    terms.push(Term {
                        weight: QUESTION_WEIGHT,
                        alternatives: alternatives
                            .into_iter()
                            .filter(|(_, f)| *f >= INTENT)
                            .collect(),
                    });
                }
                continue;
            }
            terms.push(self.term(word, &stemmed, 1.0));
            for meant in related::means(&stemmed) {
                if seen.insert(meant.clone()) {
                    terms.push(self.term(meant, meant, MEANS_WEIGHT));
                }
            }
        }
        for implied in implied_words(query) {
            let stemmed = stem(implied);
            if seen.insert(stemmed.clone()) {
                terms.push(Term {
                    weight: IMPLIED_WEIGHT,
                    alternatives: vec![(stemmed, INTENT)],
                });
            }
        }
        let stems: Vec<String> = raw.iter().map(|w| stem(w)).collect();
        for meant in related::phrases(&stems) {
            terms.push(Term {
                weight: PHRASE_WEIGHT,
                alternatives: meant.iter().map(|m| (m.clone(), INTENT)).collect(),
            });
        }
        terms.retain(|t| !t.alternatives.is_empty());
        terms
    }

    /// A word of the request: itself, the indexed words it starts (three letters or more) and
    /// the words it may stand for.
    fn term(&self, raw: &str, stemmed: &str, weight: f64) -> Term {
        let mut alternatives = vec![(stemmed.to_string(), 1.0)];
        if stemmed.len() >= 3 {
            let start = self.vocabulary.partition_point(|w| w.as_str() < stemmed);
            alternatives.extend(
                self.vocabulary[start..]
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
        }
    }
}

/// How surely a word of a tool answers a word of the request, from how it was reached: the word
/// itself or one the hand-made table relates to it (abbreviations, synonyms, intents, phrases)
/// surely; a prefix or a WordNet relative by its factor.
fn certainty(factor: f64) -> f64 {
    if factor >= INTENT {
        1.0
    } else {
        factor
    }
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

/// The words of a request that count: those of its first `MOST_WORDS` words that are not part
/// of a token (a run between spaces) longer than `LONGEST_TOKEN` characters, which is data (an
/// encoded blob, a key), not words. A request of any size costs at most that many words.
fn request_words(query: &str) -> Vec<String> {
    let tokens = query
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

/// Names of a tool's top-level parameters.
fn parameter_names(tool: &ToolInfo) -> impl Iterator<Item = &str> {
    tool.input_schema()
        .and_then(|s| s.get("properties"))
        .and_then(Value::as_object)
        .into_iter()
        .flat_map(|props| props.keys().map(String::as_str))
}

/// Lowercase with `-` and `_` alike.
pub fn loose(name: &str) -> String {
    name.trim().to_lowercase().replace('-', "_")
}

fn haystack(tool: &ToolInfo) -> String {
    let mut lines = vec![
        tool.name.clone(),
        tool.original.clone(),
        tool.description.replace(['\n', '\r'], " "),
    ];
    lines.extend(parameter_names(tool).map(str::to_string));
    lines.join("\n").to_lowercase()
}

#[cfg(test)]
mod tests {
    use super::implied_words;

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
