//! Scoring, ordering and budgeted selection over an in-memory cache view.
//!
//! The view keeps every document's word counts in an inverted index, so a
//! query costs the postings of its terms plus one pass over the documents for
//! the budget, not a re-read and re-split of every document. The result is the
//! context-engine v0 `SelectionResult`, serialised here with serde_json so the
//! bytes (field order, string escapes, the shortest round-trip form of the f32
//! score) are those of the reference engine.

use crate::caches::tokens;
use rayon::prelude::*;
use serde::Serialize;
use std::collections::HashMap;

pub struct Doc {
    pub id: String,
    pub version: String,
    pub content: String,
}

pub struct View {
    docs: Vec<Doc>, // sorted by id bytes, so an index order is an id order
    tokens: Vec<u64>,
    total_words: Vec<u64>,
    postings: HashMap<Box<str>, Vec<(u32, u32)>>, // word -> (document, occurrences)
}

/// The outcome of one selection, before serialisation.
pub struct Selection {
    pub terms: Vec<String>,
    pub matches: Vec<u64>, // per document: words equal to a query term
    pub picked: Vec<u32>,  // selected documents, in output order
    pub tokens_used: u64,
}

impl View {
    pub fn new(mut docs: Vec<Doc>) -> View {
        docs.sort_by(|a, b| a.id.cmp(&b.id));
        // Per document, in parallel: its lowercased text, its word count, and each distinct
        // word as a span of that text with its occurrences (no allocation per word).
        type Spans = Vec<(usize, usize, u32)>; // (offset, length, occurrences) of each distinct word
        let counted: Vec<(String, u64, Spans)> = docs
            .par_iter()
            .map(|d| {
                let lower = d.content.to_lowercase();
                let base = lower.as_ptr() as usize;
                let mut counts: HashMap<&str, u32> = HashMap::new();
                let mut total = 0u64;
                for w in lower.split_whitespace() {
                    total += 1;
                    *counts.entry(w).or_insert(0) += 1;
                }
                let spans = counts
                    .into_iter()
                    .map(|(w, c)| (w.as_ptr() as usize - base, w.len(), c))
                    .collect();
                (lower, total, spans)
            })
            .collect();
        let mut postings: HashMap<Box<str>, Vec<(u32, u32)>> = HashMap::new();
        let mut total_words = Vec::with_capacity(docs.len());
        for (i, (lower, total, spans)) in counted.iter().enumerate() {
            total_words.push(*total);
            for &(at, len, c) in spans {
                let w = &lower[at..at + len];
                match postings.get_mut(w) {
                    Some(list) => list.push((i as u32, c)),
                    None => {
                        postings.insert(Box::from(w), vec![(i as u32, c)]);
                    }
                }
            }
        }
        let tokens = docs
            .iter()
            .map(|d| tokens::approx_tokens(&d.content))
            .collect();
        View {
            docs,
            tokens,
            total_words,
            postings,
        }
    }

    pub fn len(&self) -> usize {
        self.docs.len()
    }

    /// Score every document, order by (score desc, id asc), then fill the budget
    /// greedily, skipping (not stopping at) documents that do not fit. A budget
    /// of 0 selects nothing, not even empty documents (the spec's budget rule 4).
    pub fn select(&self, query: &str, budget: u64) -> Selection {
        let terms = tokens::query_terms(query);
        // A word counts once however often its term repeats in the query, so the
        // score stays within [0, 1].
        let mut distinct: Vec<&str> = terms.iter().map(String::as_str).collect();
        distinct.sort_unstable();
        distinct.dedup();
        let n = self.docs.len();
        let mut matches = vec![0u64; n];
        for term in distinct {
            if let Some(list) = self.postings.get(term) {
                for &(d, c) in list {
                    matches[d as usize] += c as u64;
                }
            }
        }
        let mut ranked: Vec<(f32, u32)> = matches
            .iter()
            .enumerate()
            .filter(|(_, &m)| m > 0)
            .map(|(i, &m)| (tokens::score(m, self.total_words[i]), i as u32))
            .collect();
        ranked.sort_by(|a, b| b.0.total_cmp(&a.0).then(a.1.cmp(&b.1)));
        // Every document without a match scores 0.0 and follows, in id order.
        let zeros = (0..n as u32).filter(|&i| matches[i as usize] == 0);
        let mut picked = Vec::new();
        let mut used = 0u64;
        for i in ranked
            .iter()
            .map(|&(_, i)| i)
            .chain(zeros)
            .take_while(|_| budget > 0)
        {
            let t = self.tokens[i as usize];
            if let Some(total) = used.checked_add(t).filter(|&s| s <= budget) {
                used = total;
                picked.push(i);
            }
        }
        Selection {
            terms,
            matches,
            picked,
            tokens_used: used,
        }
    }

    /// The `SelectionResult` JSON of a selection (compact, no trailing newline).
    pub fn to_json(&self, query: &str, budget: u64, sel: &Selection) -> String {
        let documents = sel
            .picked
            .iter()
            .map(|&i| {
                let i = i as usize;
                let d = &self.docs[i];
                OutDoc {
                    id: &d.id,
                    version: &d.version,
                    content: &d.content,
                    score: tokens::score(sel.matches[i], self.total_words[i]),
                    tokens: self.tokens[i],
                    why: Why {
                        query_terms: &sel.terms,
                        term_matches: sel.matches[i],
                        total_words: self.total_words[i],
                    },
                }
            })
            .collect();
        let considered = self.docs.len() as u64;
        let selected = sel.picked.len() as u64;
        let out = Out {
            documents,
            selection: Meta {
                query,
                budget,
                tokens_used: sel.tokens_used,
                documents_considered: considered,
                documents_selected: selected,
                documents_excluded_by_budget: considered - selected,
            },
        };
        serde_json::to_string(&out).expect("a selection always serialises")
    }
}

#[derive(Serialize)]
struct Out<'a> {
    documents: Vec<OutDoc<'a>>,
    selection: Meta<'a>,
}

#[derive(Serialize)]
struct OutDoc<'a> {
    id: &'a str,
    version: &'a str,
    content: &'a str,
    score: f32,
    tokens: u64,
    why: Why<'a>,
}

#[derive(Serialize)]
struct Why<'a> {
    query_terms: &'a [String],
    term_matches: u64,
    total_words: u64,
}

#[derive(Serialize)]
struct Meta<'a> {
    query: &'a str,
    budget: u64,
    tokens_used: u64,
    documents_considered: u64,
    documents_selected: u64,
    documents_excluded_by_budget: u64,
}

#[cfg(test)]
mod tests {
    use super::*;

    fn view(docs: &[(&str, &str)]) -> View {
        View::new(
            docs.iter()
                .map(|(id, content)| Doc {
                    id: id.to_string(),
                    version: format!("v-{id}"),
                    content: content.to_string(),
                })
                .collect(),
        )
    }

    fn resolve(v: &View, q: &str, budget: u64) -> serde_json::Value {
        serde_json::from_str(&v.to_json(q, budget, &v.select(q, budget))).unwrap()
    }

    #[test]
    fn orders_by_score_then_id_and_appends_zero_scores() {
        let v = view(&[
            ("c.md", "x y"),
            ("b.md", "deploy x"),
            ("a.md", "deploy deploy"),
            ("d.md", "deploy y"),
        ]);
        let out = resolve(&v, "Deploy", 100);
        let ids: Vec<_> = out["documents"]
            .as_array()
            .unwrap()
            .iter()
            .map(|d| d["id"].as_str().unwrap())
            .collect();
        assert_eq!(ids, ["a.md", "b.md", "d.md", "c.md"]);
        assert_eq!(out["documents"][0]["score"], 1.0);
        assert_eq!(out["documents"][3]["score"], 0.0);
    }

    #[test]
    fn budget_skips_what_does_not_fit_and_continues() {
        // tokens: big = 3, small = 1; budget 2 skips big and still takes small.
        let v = view(&[("big.md", "deploy deploy"), ("small.md", "x")]);
        let out = resolve(&v, "deploy", 2);
        assert_eq!(out["documents"].as_array().unwrap().len(), 1);
        assert_eq!(out["documents"][0]["id"], "small.md");
        assert_eq!(out["selection"]["tokens_used"], 1);
        assert_eq!(out["selection"]["documents_excluded_by_budget"], 1);
    }

    #[test]
    fn repeated_terms_count_a_word_once() {
        let v = view(&[("a.md", "a b")]);
        let out = resolve(&v, "a A a", 10);
        assert_eq!(out["documents"][0]["why"]["term_matches"], 1);
        assert_eq!(
            out["documents"][0]["why"]["query_terms"],
            serde_json::json!(["a", "a", "a"])
        );
        assert_eq!(out["documents"][0]["score"], 0.5);
    }

    #[test]
    fn floats_print_in_shortest_f32_form() {
        let v = view(&[("s.md", "security hardening guide.")]);
        let json = v.to_json("security", 10, &v.select("security", 10));
        assert!(json.contains("\"score\":0.33333334,"), "{json}");
        let json = v.to_json("nothing", 10, &v.select("nothing", 10));
        assert!(json.contains("\"score\":0.0,"), "{json}");
    }

    #[test]
    fn zero_budget_and_empty_view() {
        let v = view(&[("a.md", ""), ("b.md", "x")]);
        // An empty document costs 0 tokens: budget 1 takes it, budget 0 takes nothing.
        assert_eq!(resolve(&v, "x", 1)["selection"]["documents_selected"], 2);
        assert_eq!(resolve(&v, "x", 0)["selection"]["documents_selected"], 0);
        assert_eq!(
            resolve(&v, "x", 0)["selection"]["documents_excluded_by_budget"],
            2
        );
        let empty = view(&[]);
        let out = empty.to_json("", 5, &empty.select("", 5));
        assert_eq!(
            out,
            r#"{"documents":[],"selection":{"query":"","budget":5,"tokens_used":0,"documents_considered":0,"documents_selected":0,"documents_excluded_by_budget":0}}"#
        );
    }
}
