//! BM25 (Robertson's, k1 = 1.2, b = 0.75, the IDF that never goes negative) over an
//! inverted index that takes documents in and out one at a time, so an edited file is
//! re-counted alone (the files of a tree; the notes of its written context). A file's
//! regions are scored with the same `tf_weight` and the file index's IDF (tasks/rank.rs).

use std::collections::HashMap;

pub const K1: f32 = 1.2;
pub const B: f32 = 0.75;

/// How rare a term is among `n` documents when `df` of them hold it.
pub fn idf(n: u32, df: u32) -> f32 {
    let (n, df) = (n as f32, df as f32);
    ((n - df + 0.5) / (df + 0.5) + 1.0).ln()
}

/// The saturated weight of `tf` occurrences in a document of `len` terms, `avg` on average.
pub fn tf_weight(tf: f32, len: f32, avg: f32) -> f32 {
    let norm = 1.0 - B + B * len / avg.max(1.0);
    tf * (K1 + 1.0) / (tf + K1 * norm)
}

/// Packed to 6 bytes (8 with the padding of a u32 beside a u16): postings are most of what the
/// index holds, one per distinct term of every file. Fields are read by value only.
#[derive(Clone, Copy, Debug, PartialEq)]
#[repr(C, packed(2))]
pub struct Posting {
    pub doc: u32,
    pub tf: u16,
}

/// Terms to documents. Documents are numbered by the caller; each posting list stays sorted
/// by document, so one document goes in or out with a binary search per term.
#[derive(Default)]
pub struct Inverted {
    vocab: HashMap<Box<str>, u32>,
    postings: Vec<Vec<Posting>>,
    lens: Vec<u32>,
    pub docs: u32,
    total_len: u64,
}

impl Inverted {
    /// The id of a term, if any document ever held it.
    pub fn id(&self, term: &str) -> Option<u32> {
        self.vocab.get(term).copied()
    }

    /// The id of a term, made if no document held it yet.
    pub fn intern(&mut self, term: &str) -> u32 {
        if let Some(&id) = self.vocab.get(term) {
            return id;
        }
        let id = self.postings.len() as u32;
        self.vocab.insert(term.into(), id);
        self.postings.push(Vec::new());
        id
    }

    /// Put document `doc` in with its (term, count) pairs and length; returns the term ids
    /// (kept by the caller to take it out again).
    pub fn add(&mut self, doc: u32, counts: &[(String, u32)], len: u32) -> Vec<u32> {
        let ids: Vec<(u32, u32)> = counts
            .iter()
            .map(|(term, tf)| (self.intern(term), *tf))
            .collect();
        self.add_ids(doc, &ids, len)
    }

    /// `add` with the terms already interned: (term id, count) pairs.
    pub fn add_ids(&mut self, doc: u32, counts: &[(u32, u32)], len: u32) -> Vec<u32> {
        let mut ids = Vec::with_capacity(counts.len());
        for &(id, tf) in counts {
            let list = &mut self.postings[id as usize];
            let p = Posting {
                doc,
                tf: tf.min(u16::MAX as u32) as u16,
            };
            match list.last() {
                Some(last) if last.doc >= doc => {
                    let at = list.partition_point(|q| q.doc < doc);
                    if list.get(at).is_some_and(|q| q.doc == doc) {
                        list[at] = p;
                    } else {
                        list.insert(at, p);
                    }
                }
                _ => list.push(p),
            }
            ids.push(id);
        }
        if self.lens.len() <= doc as usize {
            self.lens.resize(doc as usize + 1, 0);
        }
        self.lens[doc as usize] = len;
        self.docs += 1;
        self.total_len += len as u64;
        ids
    }

    /// Take document `doc` out, given the term ids `add` returned for it.
    pub fn remove(&mut self, doc: u32, ids: &[u32]) {
        for &id in ids {
            let list = &mut self.postings[id as usize];
            let at = list.partition_point(|q| q.doc < doc);
            if list.get(at).is_some_and(|q| q.doc == doc) {
                list.remove(at);
            }
        }
        if let Some(len) = self.lens.get_mut(doc as usize) {
            self.total_len -= *len as u64;
            *len = 0;
        }
        self.docs = self.docs.saturating_sub(1);
    }

    /// Every term by its id (the index of the vector).
    pub fn term_names(&self) -> Vec<&str> {
        let mut out = vec![""; self.postings.len()];
        for (t, &id) in &self.vocab {
            out[id as usize] = t;
        }
        out
    }

    /// The number of terms counted in `doc` (0 for a number not in use).
    pub fn doc_len(&self, doc: u32) -> u32 {
        self.lens.get(doc as usize).copied().unwrap_or(0)
    }

    pub fn df(&self, id: u32) -> u32 {
        self.postings[id as usize].len() as u32
    }

    pub fn idf(&self, id: u32) -> f32 {
        idf(self.docs, self.df(id))
    }

    pub fn avg_len(&self) -> f32 {
        if self.docs == 0 {
            1.0
        } else {
            self.total_len as f32 / self.docs as f32
        }
    }

    /// How often term `id` occurs in `doc`.
    pub fn tf(&self, id: u32, doc: u32) -> u32 {
        let list = &self.postings[id as usize];
        let at = list.partition_point(|q| q.doc < doc);
        list.get(at)
            .filter(|q| q.doc == doc)
            .map_or(0, |q| q.tf as u32)
    }

    /// BM25 of every document for the query terms (id, weight of the term in the query):
    /// a dense vector over document numbers, zero where nothing matched.
    pub fn score(&self, query: &[(u32, f32)], slots: usize) -> Vec<f32> {
        let mut out = vec![0f32; slots.max(self.lens.len())];
        let avg = self.avg_len();
        for &(id, qw) in query {
            let idf = self.idf(id) * qw;
            for p in &self.postings[id as usize] {
                let len = self.lens[p.doc as usize] as f32;
                out[p.doc as usize] += idf * tf_weight(p.tf as f32, len, avg);
            }
        }
        out
    }

    /// Give back the spare capacity of the posting lists (after a bulk build).
    pub fn shrink(&mut self) {
        for l in &mut self.postings {
            l.shrink_to_fit();
        }
        self.lens.shrink_to_fit();
    }

    /// Bytes held, roughly: the postings, the vocabulary and the lengths.
    pub fn heap_bytes(&self) -> usize {
        let postings: usize = self
            .postings
            .iter()
            .map(|l| l.capacity() * std::mem::size_of::<Posting>() + 24)
            .sum();
        let vocab: usize = self.vocab.keys().map(|k| k.len() + 16 + 4 + 8).sum();
        postings + vocab + self.lens.capacity() * 4
    }
}

/// (term, count) pairs of a list of terms.
pub fn counts(terms: impl IntoIterator<Item = String>) -> (Vec<(String, u32)>, u32) {
    let mut map: HashMap<String, u32> = HashMap::new();
    let mut len = 0;
    for t in terms {
        *map.entry(t).or_default() += 1;
        len += 1;
    }
    let mut v: Vec<(String, u32)> = map.into_iter().collect();
    v.sort_unstable();
    (v, len)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_posting_takes_six_bytes() {
        assert_eq!(std::mem::size_of::<Posting>(), 6);
    }

    fn doc(words: &str) -> (Vec<(String, u32)>, u32) {
        counts(words.split_whitespace().map(String::from))
    }

    #[test]
    fn rare_terms_weigh_more_and_idf_is_never_negative() {
        assert!(idf(100, 1) > idf(100, 50));
        assert!(idf(100, 100) > 0.0);
        // Saturation: ten occurrences are worth less than ten times one.
        assert!(tf_weight(10.0, 100.0, 100.0) < 10.0 * tf_weight(1.0, 100.0, 100.0));
        // A longer document is worth less for the same count.
        assert!(tf_weight(2.0, 400.0, 100.0) < tf_weight(2.0, 50.0, 100.0));
    }

    #[test]
    fn ranking_follows_the_formula() {
        let mut ix = Inverted::default();
        for (i, text) in [
            "parse config file",
            "render page page page",
            "config loader parse parse",
            "unrelated words here",
        ]
        .iter()
        .enumerate()
        {
            let (c, len) = doc(text);
            ix.add(i as u32, &c, len);
        }
        let q: Vec<(u32, f32)> = ["parse", "config"]
            .iter()
            .map(|t| (ix.id(t).unwrap(), 1.0))
            .collect();
        let s = ix.score(&q, 4);
        assert!(s[0] > 0.0 && s[2] > 0.0 && s[1] == 0.0 && s[3] == 0.0);
        // By hand for document 0: both terms in 2 of 4 documents, length 3, average 3.5.
        let w = idf(4, 2) * tf_weight(1.0, 3.0, 3.5) * 2.0;
        assert!((s[0] - w).abs() < 1e-5, "{} vs {}", s[0], w);
        assert!(
            s[2] > s[0],
            "two parses and a config beat one of each in a short document"
        );
    }

    #[test]
    fn a_document_goes_out_and_back_in() {
        let mut ix = Inverted::default();
        let (a, la) = doc("alpha beta");
        let (b, lb) = doc("beta gamma");
        let ids_a = ix.add(0, &a, la);
        ix.add(1, &b, lb);
        let beta = ix.id("beta").unwrap();
        assert_eq!(ix.df(beta), 2);
        ix.remove(0, &ids_a);
        assert_eq!((ix.df(beta), ix.docs, ix.avg_len()), (1, 1, 2.0));
        let (a2, la2) = doc("alpha alpha delta");
        ix.add(0, &a2, la2);
        assert_eq!(ix.tf(ix.id("alpha").unwrap(), 0), 2);
        assert_eq!(ix.tf(beta, 0), 0);
        // Lists stay sorted when a lower number comes back after a higher one.
        let delta = ix.id("delta").unwrap();
        let (b2, lb2) = doc("delta");
        ix.add(1, &b2, lb2);
        assert_eq!(
            ix.postings[delta as usize]
                .iter()
                .map(|p| p.doc)
                .collect::<Vec<_>>(),
            [0, 1]
        );
    }
}
