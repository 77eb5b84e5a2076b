//! An inverted index over the catalog, built once per catalog change, so that a query costs
//! only the postings of its words and of the words they may stand for: BM25 over weighted fields
//! (name, MCP name, parameter names, server, description, the config's `searchKeywords`), and the
//! servers' own descriptions and instructions as a weak field.

use super::cover::{cover, NeedScores};
use super::related::INTENT;
use super::request::{self, Request, TRANSLATED};
use super::script::{self, Script};
use super::twins::Twins;
use super::weak::Signals;
use super::words::{each_word, stem};
use crate::catalog::ToolInfo;
use serde_json::Value;
use std::collections::HashMap;

/// Field weights: a word in a tool's name counts most.
const NAME_WEIGHT: f64 = 3.0;
const ORIGINAL_WEIGHT: f64 = 1.5;
const PARAM_WEIGHT: f64 = 1.5;
const SERVER_WEIGHT: f64 = 1.0;
const TEXT_WEIGHT: f64 = 1.0;
/// How much a request's word counts for every tool of a server whose description or
/// instructions hold it.
const SERVER_TEXT_FACTOR: f64 = 0.2;
/// BM25F parameters: saturation, and length normalization of descriptions and of names.
const K1: f64 = 2.0;
const B: f64 = 0.75;
const NAME_B: f64 = 0.3;
/// The first hits a request of several needs is judged on.
const JUDGED: usize = 5;
/// How much more a tool counts for a request of several needs (and for each need) that names
/// its server: "post it to Slack" says which of the servers that post is meant.
const NAMED_SERVER: f64 = 1.25;
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
        // Each field is read once, its words kept as numbers of their stems; catalogs repeat
        // their words, so each is stemmed and hashed once per distinct word, not per use.
        let mut words: HashMap<String, u32> = HashMap::new();
        let mut stems: HashMap<String, u32> = HashMap::new();
        let mut terms: Vec<u32> = Vec::new();
        let mut lengths: Vec<Vec<usize>> = Vec::with_capacity(documents.len());
        for fields in documents {
            let mut of_fields = Vec::with_capacity(fields.len());
            for field in fields {
                let before = terms.len();
                each_word(field.text, |word| {
                    let term = match words.get(word) {
                        Some(&term) => term,
                        None => {
                            let next = stems.len() as u32;
                            let term = *stems.entry(stem(word)).or_insert(next);
                            words.insert(word.to_string(), term);
                            term
                        }
                    };
                    terms.push(term);
                });
                of_fields.push(terms.len() - before);
            }
            lengths.push(of_fields);
        }
        let mut average = vec![0.0f64; documents.first().map_or(0, Vec::len)];
        for lengths in &lengths {
            for (sum, length) in average.iter_mut().zip(lengths) {
                *sum += *length as f64;
            }
        }
        for sum in &mut average {
            *sum = (*sum / documents.len().max(1) as f64).max(1.0);
        }
        let mut by_term: Vec<Vec<Posting>> = vec![Vec::new(); stems.len()];
        let mut terms = terms.iter();
        for (doc, (fields, lengths)) in documents.iter().zip(&lengths).enumerate() {
            let doc = doc as u32;
            for ((field, length), average) in fields.iter().zip(lengths).zip(&average) {
                let norm = 1.0 - field.b + field.b * *length as f64 / average;
                let add = (field.weight / norm) as f32;
                let in_name = if field.name { add } else { 0.0 };
                for &term in terms.by_ref().take(*length) {
                    let list = &mut by_term[term as usize];
                    match list.last_mut() {
                        Some(last) if last.doc == doc => {
                            last.tf += add;
                            last.in_name += in_name;
                        }
                        _ => list.push(Posting {
                            doc,
                            tf: add,
                            in_name,
                        }),
                    }
                }
            }
        }
        let lists = stems
            .into_iter()
            .map(|(stem, term)| (stem, std::mem::take(&mut by_term[term as usize])))
            .collect();
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

/// The tools a query ranks first, best first, and how well the best one matched.
pub struct Ranked {
    pub hits: Vec<usize>,
    /// A hit's twins (the same tool on other servers) that matched too, shown with it.
    pub also: HashMap<usize, Vec<usize>>,
    /// Matches, twins counted once.
    pub total: usize,
    /// How well the request was matched.
    pub signals: Signals,
    /// The needs the request was split into.
    pub needs: usize,
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
    /// A server's name, or its name's first word (`google` of `google-calendar`), stemmed → the
    /// tools of the servers so named.
    named: HashMap<String, Vec<usize>>,
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
        let parameters: Vec<Vec<&str>> = tools
            .iter()
            .map(|tool| parameter_names(tool).collect())
            .collect();
        let params: Vec<String> = parameters.iter().map(|names| names.join(" ")).collect();
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
            haystacks: tools
                .iter()
                .zip(&parameters)
                .map(|(tool, parameters)| haystack(tool, parameters))
                .collect(),
            scripts: tools
                .iter()
                .map(|t| script::of_text(&t.description))
                .collect(),
            twins: Twins::find(tools),
            named: named_servers(tools),
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
    /// `keep`, and how many match in all; for a request of several needs, the first cover as
    /// many needs as they can (after exact and prefix name matches). Only the best are sorted:
    /// a query over 10,000 tools costs its postings, not a full sort.
    pub fn rank(&self, query: &str, keep: impl Fn(usize) -> bool, want: usize) -> Ranked {
        let n = self.tools.documents;
        let Request { terms, needs } = request::parse(query, &self.vocabulary);
        let names = NameWeight {
            scripts: &self.scripts,
            request: script::of_text(query),
        };
        let mut scores = vec![0.0f64; n];
        let mut closeness = vec![0.0f64; n];
        let mut by_need = covers(needs, names.request).then(|| NeedScores::new(needs, n));
        let mut close_by_need = (needs > 1).then(|| NeedScores::new(needs, n));
        let mut best = Best::new(n);
        let mut server_best = Best::new(self.server_names.len());
        let mut naming: Vec<(&[usize], u32)> = Vec::new();
        for term in &terms {
            // A server is named by the request's own word or what the glossary gives for it.
            for (word, _) in term.alternatives.iter().filter(|a| a.1 >= TRANSLATED) {
                if let Some(tools) = self.named.get(word) {
                    naming.push((tools, term.needs));
                }
            }
            self.tools.best_of(&term.alternatives, &names, &mut best);
            self.servers
                .best_of(&term.alternatives, &NameWeight::NONE, &mut server_best);
            for &server in &server_best.touched {
                let weak = SERVER_TEXT_FACTOR * term.weight * server_best.score[server];
                for &doc in &self.server_tools[server] {
                    scores[doc] += weak;
                    if let Some(by_need) = &mut by_need {
                        by_need.add(term.needs, doc, weak);
                    }
                }
            }
            for &doc in &best.touched {
                let score = term.weight * best.score[doc];
                scores[doc] += score;
                let close = term.weight * certainty(best.factor[doc]);
                closeness[doc] += close;
                if let Some(close_by_need) = &mut close_by_need {
                    close_by_need.add(term.needs, doc, close);
                }
                if let Some(by_need) = &mut by_need {
                    by_need.add(term.needs, doc, score);
                }
            }
            best.clear();
            server_best.clear();
        }
        if needs > 1 {
            for &(tools, needs) in &naming {
                for &doc in tools {
                    scores[doc] *= NAMED_SERVER;
                    if let Some(by_need) = &mut by_need {
                        by_need.scale(needs, doc, NAMED_SERVER);
                    }
                }
            }
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
        let matched = |doc: usize| (scores[doc] > 0.0 && keep(doc)).then_some(scores[doc]);
        let mut hits: Vec<(usize, f64)> = (0..n)
            .filter_map(|doc| matched(doc).map(|score| (doc, score)))
            .collect();
        self.twins.collapse(&mut hits);
        let total = hits.len();
        let best_first =
            |a: &(usize, f64), b: &(usize, f64)| b.1.total_cmp(&a.1).then(a.0.cmp(&b.0));
        if let Some(by_need) = &by_need {
            let (mut named, rest): (Vec<_>, Vec<_>) =
                hits.into_iter().partition(|h| closeness[h.0].is_infinite());
            named.sort_by(best_first);
            let covering = cover(&rest, by_need, want.saturating_sub(named.len()));
            // Beyond the covering ones (a later page), the rest by relevance.
            let mut others: Vec<(usize, f64)> = rest
                .into_iter()
                .filter(|h| !covering.iter().any(|c| c.0 == h.0))
                .collect();
            best_of(&mut others, want, best_first);
            hits = named;
            hits.extend(covering);
            hits.extend(others);
        } else {
            best_of(&mut hits, want, best_first);
        }
        hits.truncate(want);
        let weights: f64 = terms.iter().map(|t| t.weight).sum();
        let first_share = hits.first().map_or(0.0, |&(doc, _)| {
            (closeness[doc] / weights.max(1e-9)).min(1.0)
        });
        let first_score = hits.first().map_or(0.0, |h| h.1);
        let fifth_score = hits[..hits.len().min(JUDGED)].last().map_or(0.0, |h| h.1);
        let signals = Signals {
            strength: match &close_by_need {
                None => first_share,
                Some(close_by_need) => {
                    let shown: Vec<usize> = hits.iter().take(JUDGED).map(|h| h.0).collect();
                    close_by_need.mean_best(&terms, &shown)
                }
            },
            first_share,
            first_score,
            fifth_of_first: match first_score {
                0.0 => 0.0,
                first => fifth_score / first,
            },
            terms: terms.len(),
        };
        Ranked {
            also: hits
                .iter()
                .map(|&(doc, _)| (doc, self.twins.of(doc, matched)))
                .filter(|(_, twins)| !twins.is_empty())
                .collect(),
            hits: hits.into_iter().map(|(doc, _)| doc).collect(),
            total,
            signals,
            needs,
        }
    }

    /// Servers whose own words (name, description, instructions) match `query`, best first,
    /// with what each is for.
    pub fn servers_for(&self, query: &str, n: usize) -> Vec<(&str, &str)> {
        let mut scores = vec![0.0f64; self.server_names.len()];
        let mut best = Best::new(self.server_names.len());
        for term in request::parse(query, &self.vocabulary).terms {
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
}

/// Whether a request of `needs` needs written in `script` gets first hits that cover its needs
/// (`cover`). Not one written in Latin letters: there the whole request's words rank its tools
/// better. On the task eval, covering raised the tuning split's English tasks' recall@5 (0.48 →
/// 0.53, hit@5 0.81 either way) but cost the held-out split's (recall@5 0.47 → 0.44, hit@5
/// 0.82 → 0.70); Chinese and Japanese tasks, whose words the glossary translates need by need,
/// gain from it on both.
fn covers(needs: usize, script: Option<Script>) -> bool {
    needs > 1 && script != Some(Script::Latin)
}

/// Each server's name, stemmed, and its name's first word where it has several (`google` of
/// `google-calendar`), to the tools of the servers so named.
fn named_servers(tools: &[ToolInfo]) -> HashMap<String, Vec<usize>> {
    let mut named: HashMap<String, Vec<usize>> = HashMap::new();
    let mut stems: HashMap<&str, [String; 2]> = HashMap::new();
    for (i, tool) in tools.iter().enumerate() {
        let words = stems.entry(tool.server.as_str()).or_insert_with(|| {
            let name = tool.server.to_lowercase();
            let first = name.split(['-', '_', '.', ' ']).next().unwrap_or_default();
            [stem(&name), stem(first)]
        });
        for word in words.iter() {
            let tools = named.entry(word.clone()).or_default();
            if tools.last() != Some(&i) {
                tools.push(i);
            }
        }
    }
    named
}

/// Keeps the `n` first of `hits` under `order`, sorted: a selection, then a sort of those alone.
fn best_of(
    hits: &mut Vec<(usize, f64)>,
    n: usize,
    order: impl Fn(&(usize, f64), &(usize, f64)) -> std::cmp::Ordering,
) {
    if n < hits.len() {
        hits.select_nth_unstable_by(n, &order);
        hits.truncate(n);
    }
    hits.sort_by(order);
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

/// A tool's display name, MCP name, description (on one line) and `parameters`' names, one per
/// line, lowercase.
fn haystack(tool: &ToolInfo, parameters: &[&str]) -> String {
    let mut text = String::with_capacity(
        tool.name.len() + tool.original.len() + tool.description.len() + 16 * parameters.len(),
    );
    text.push_str(&tool.name);
    text.push('\n');
    text.push_str(&tool.original);
    text.push('\n');
    for (i, part) in tool.description.split(['\n', '\r']).enumerate() {
        if i > 0 {
            text.push(' ');
        }
        text.push_str(part);
    }
    for name in parameters {
        text.push('\n');
        text.push_str(name);
    }
    text.to_lowercase()
}
