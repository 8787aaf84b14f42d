//! BM25 (Robertson's, b = 0.75, the IDF that never goes negative; k1 = 1.2 unless the caller
//! says otherwise) over an inverted index that takes documents in and out one at a time, so an
//! edited file is re-counted alone (the files of a tree; the notes of its written context). A
//! file's regions are scored with the same `tf_weight` and the file index's IDF (tasks/rank.rs).

use super::arena::{Arena, MIN_CAP};
use super::limits::{TooBig, MOST_BYTES};
use super::varint::{get, put, put_rising, rising};
use super::vocab::Vocab;
use crate::tree::scratch::Spool;
use std::collections::HashMap;

pub const K1: f32 = 1.2;
pub const B: f32 = 0.75;

/// The most bytes one document's posting adds to a list: its gap, its count and the next
/// posting's gap, varints of at most 5 bytes.
const POSTING_MAX: usize = 15;

/// How rare a term is among `n` documents when `df` of them hold it.
pub fn idf(n: u32, df: u32) -> f32 {
    let (n, df) = (n as f32, df as f32);
    ((n - df + 0.5) / (df + 0.5) + 1.0).ln()
}

/// The saturated weight of `tf` occurrences in a document of `len` terms, `avg` on average.
pub fn tf_weight(tf: f32, len: f32, avg: f32) -> f32 {
    tf_weight_k1(tf, len, avg, K1)
}

/// `tf_weight` saturating at `k1`: the higher, the more each further occurrence counts.
fn tf_weight_k1(tf: f32, len: f32, avg: f32, k1: f32) -> f32 {
    let norm = 1.0 - B + B * len / avg.max(1.0);
    tf * (k1 + 1.0) / (tf + k1 * norm)
}

/// Terms to documents and back, packed: each term's posting list is one byte buffer of
/// (gap from the document before, count) varints, sorted by document, and each document's
/// terms are kept too as gaps from the term before (the forward index: to take the document
/// out again, and to tell whether it holds a term without walking a posting list; the counts
/// are the posting lists' alone). A posting takes 2 to 4 bytes rather than the 6 of a
/// (u32, u16), and a file's term 1 to 3 rather than a u32 beside it. Documents are numbered by
/// the caller: one numbered past every other in a list is appended to it (a build), any other
/// goes in or out by decoding the list up to its place (an edit). The lists lie in two
/// buffers (tasks/arena.rs), the terms' names in a third (tasks/vocab.rs).
#[derive(Default)]
pub struct Inverted {
    vocab: Vocab,
    /// Each term's posting list, by term id.
    lists: Arena,
    terms: Vec<Term>,
    /// Each document's terms, by document number.
    forward: Arena,
    lens: Vec<u32>,
    pub docs: u32,
    total_len: u64,
    /// Documents put in whose postings wait for `make_postings` (`defer_postings`).
    deferred: Option<Deferred>,
}

/// Documents put in without their postings: each one's number with where its counts start in
/// `counts` (a count for each term of its forward list, terms rising); and documents taken out
/// whose postings are still in the lists (`gone`, by number), with the terms they held.
#[derive(Default)]
struct Deferred {
    docs: Vec<(u32, usize)>,
    counts: Vec<u8>,
    gone: Vec<bool>,
    touched: Vec<bool>,
}

/// What one term's posting list holds beyond its bytes.
#[derive(Clone, Copy, Default)]
struct Term {
    df: u32,
    /// The last document of the list (when `df` > 0), so a build appends without decoding.
    last: u32,
}

/// (gap, count) pairs as (key, count), keys rising: a posting list or a document's terms.
fn pairs(b: &[u8]) -> impl Iterator<Item = (u32, u32)> + '_ {
    let (mut at, mut key) = (0, 0u32);
    std::iter::from_fn(move || {
        if at >= b.len() {
            return None;
        }
        key += get(b, &mut at);
        Some((key, get(b, &mut at)))
    })
}

/// Append (key, count) pairs, keys rising, as `pairs` reads them back.
pub fn put_pairs(out: &mut Vec<u8>, pairs: impl IntoIterator<Item = (u32, u32)>) {
    let mut prev = 0;
    for (key, count) in pairs {
        put(out, key - prev);
        put(out, count);
        prev = key;
    }
}

/// Two lists of (key, count) pairs, keys rising and in one of them only, as one.
fn merge(
    a: impl Iterator<Item = (u32, u32)>,
    b: impl Iterator<Item = (u32, u32)>,
) -> impl Iterator<Item = (u32, u32)> {
    let (mut a, mut b) = (a.peekable(), b.peekable());
    std::iter::from_fn(move || match (a.peek(), b.peek()) {
        (Some(x), Some(y)) if x.0 > y.0 => b.next(),
        (Some(_), _) => a.next(),
        (None, _) => b.next(),
    })
}

/// Where a posting list reaches `doc`: (the offset of the first posting at or after it, the
/// document before that posting, that posting's document if any).
fn seek(b: &[u8], doc: u32) -> (usize, u32, Option<u32>) {
    let (mut at, mut prev) = (0, 0u32);
    while at < b.len() {
        let mut next = at;
        let d = prev + get(b, &mut next);
        if d >= doc {
            return (at, prev, Some(d));
        }
        get(b, &mut next);
        (at, prev) = (next, d);
    }
    (at, prev, None)
}

impl Inverted {
    /// The id of a term, if any document ever held it.
    pub fn id(&self, term: &str) -> Option<u32> {
        self.vocab.get(term)
    }

    /// The id of a term, made if no document held it yet.
    pub fn intern(&mut self, term: &str) -> u32 {
        if let Some(id) = self.vocab.get(term) {
            return id;
        }
        self.lists.push(&[]);
        self.terms.push(Term::default());
        self.vocab.push(term)
    }

    /// Put document `doc` (not held) in with its (term, count) pairs and length.
    pub fn add(&mut self, doc: u32, counts: &[(String, u32)], len: u32) {
        let ids: Vec<(u32, u32)> = counts
            .iter()
            .map(|(term, tf)| (self.intern(term), *tf))
            .collect();
        self.add_ids(doc, &ids, len)
    }

    /// `add` with the terms already interned: (term id, count) pairs, each term once.
    pub fn add_ids(&mut self, doc: u32, counts: &[(u32, u32)], len: u32) {
        let mut sorted: Vec<(u32, u32)> = counts
            .iter()
            .map(|&(id, tf)| (id, tf.min(u16::MAX as u32)))
            .collect();
        sorted.sort_unstable();
        let mut fwd = Vec::with_capacity(sorted.len() * 3);
        put_rising(&mut fwd, sorted.iter().map(|&(id, _)| id));
        let mut new = Vec::with_capacity(POSTING_MAX);
        if let Some(d) = &mut self.deferred {
            d.docs.push((doc, d.counts.len()));
            for &(id, tf) in &sorted {
                put(&mut d.counts, tf);
                self.terms[id as usize].df += 1;
            }
            sorted.clear(); // their postings wait for `make_postings`
        }
        for &(id, tf) in &sorted {
            let (i, term) = (id as usize, &mut self.terms[id as usize]);
            new.clear();
            if term.df == 0 || doc > term.last {
                put(&mut new, doc - if term.df == 0 { 0 } else { term.last });
                put(&mut new, tf);
                self.lists.extend(i, &new);
                term.last = doc;
            } else {
                // Before the posting of `next`: its gap is now from `doc`.
                let list = self.lists.get(i);
                let (at, before, next) = seek(list, doc);
                let next = next.expect("a document below the last has a posting after it");
                let mut end = at;
                get(list, &mut end);
                put(&mut new, doc - before);
                put(&mut new, tf);
                put(&mut new, next - doc);
                self.lists.splice(i, at..end, &new);
            }
            term.df += 1;
        }
        if self.lens.len() <= doc as usize {
            self.lens.resize(doc as usize + 1, 0);
            self.forward.grow_to(doc as usize + 1);
        }
        self.lens[doc as usize] = len;
        self.forward.set(doc as usize, &fwd);
        self.docs += 1;
        self.total_len += len as u64;
    }

    /// Whether a document of `terms` terms fits in the forward lists (its list moved to their
    /// end, an id at most 5 bytes).
    pub fn fits_doc(&self, terms: usize) -> bool {
        self.forward.fits(5 * terms)
    }

    /// Whether terms of `bytes` in all can be numbered.
    pub fn fits_terms(&self, bytes: usize) -> bool {
        self.vocab.fits(bytes)
    }

    /// Whether a document with terms `ids` (interned) can go in: each posting list it adds to
    /// may move to the end with room to grow. Documents put in while postings are deferred
    /// touch no list (`make_postings` checks what it makes).
    pub fn fits_added(&self, ids: impl Iterator<Item = u32>) -> bool {
        self.deferred.is_some()
            || self
                .lists
                .fits_changed(ids.map(|t| t as usize), POSTING_MAX)
    }

    /// Whether document `doc` can be taken out: a posting list held in the mapping moves to the
    /// buffer's end when its bytes change.
    pub fn fits_removed(&self, doc: u32) -> bool {
        self.lists
            .fits_changed(self.terms_of(doc).map(|t| t as usize), 0)
    }

    /// From now on documents go in without their postings (none of them is taken out before)
    /// `make_postings` makes each list they touch once. A build from nothing's lists, appended
    /// to as documents came, moved to the arena's end each time they outgrew their room,
    /// doubling it (the room and the spans they left were up to three times the lists at a
    /// build's peak); many documents put back at once (a load where many files changed) each
    /// sought its place in every list it is in and moved the list's tail, once per document:
    /// quadratic in a common term's list.
    pub fn defer_postings(&mut self) {
        self.deferred.get_or_insert_default();
    }

    /// The posting lists of the documents put in since `defer_postings`, made from their
    /// forward lists and counts: each list's new postings counted, laid out at their size and
    /// filled in document order (the bytes appending each posting makes); then each list they
    /// or the documents dropped (`drop_postings`) touched is rewritten once, its kept postings
    /// merged with the new, or, when no list keeps any (a build from nothing, or every document
    /// put back), the lists made are the lists.
    /// Refused, and the documents' postings left unmade, when the lists would pass what an
    /// arena holds (tasks/limits.rs).
    pub fn make_postings(&mut self) -> Result<(), TooBig> {
        let Some(Deferred {
            mut docs,
            counts,
            gone,
            mut touched,
        }) = self.deferred.take()
        else {
            return Ok(());
        };
        docs.sort_unstable();
        let n = self.terms.len();
        let (mut last, mut sizes, mut added) = (vec![0u32; n], vec![0u32; n], vec![0u32; n]);
        let mut total = 0;
        Self::each_posting(&self.forward, &docs, &counts, &mut last, |t, p| {
            sizes[t] += p.len() as u32;
            added[t] += 1;
            total += p.len();
        });
        let whole = self.terms.iter().zip(&added).all(|(t, &a)| t.df == a);
        touched.resize(n, false);
        // Merged, each list rewritten may move to the end with its kept postings and the new.
        let fit = if whole {
            total <= MOST_BYTES
        } else {
            let kept: usize = (0..n)
                .filter(|&t| touched[t] || added[t] > 0)
                .map(|t| self.lists.get(t).len() + MIN_CAP)
                .sum();
            self.lists.fits(total + kept)
        };
        if !fit {
            return Err(TooBig("lists"));
        }
        let mut made = Arena::default();
        made.grow_to(n);
        made.lay_out(&sizes);
        drop(sizes);
        last.fill(0);
        Self::each_posting(&self.forward, &docs, &counts, &mut last, |t, p| {
            made.extend(t, p)
        });
        drop(counts);
        if whole {
            self.lists = made;
            for (term, last) in self.terms.iter_mut().zip(last) {
                term.last = last;
            }
            return Ok(());
        }
        let mut merged = Vec::new();
        for t in (0..n).filter(|&t| touched[t] || added[t] > 0) {
            merged.clear();
            let kept = pairs(self.lists.get(t))
                .filter(|&(d, _)| !gone.get(d as usize).copied().unwrap_or(false));
            let mut end = 0;
            put_pairs(
                &mut merged,
                merge(kept, pairs(made.get(t))).inspect(|p| end = p.0),
            );
            self.lists.set(t, &merged);
            self.terms[t].last = end;
        }
        Ok(())
    }

    /// Each posting of the deferred documents `docs` (rising, with where their counts start in
    /// `counts`) as its term's list holds it (the gap from the term's document in `last`, then
    /// the count), documents rising and each one's terms rising; `last` is left holding each
    /// term's last document.
    fn each_posting(
        forward: &Arena,
        docs: &[(u32, usize)],
        counts: &[u8],
        last: &mut [u32],
        mut f: impl FnMut(usize, &[u8]),
    ) {
        let mut new = Vec::with_capacity(15);
        for &(doc, mut at) in docs {
            for id in rising(forward.get(doc as usize)) {
                let t = id as usize;
                new.clear();
                put(&mut new, doc - last[t]);
                put(&mut new, get(counts, &mut at));
                last[t] = doc;
                f(t, &new);
            }
        }
    }

    /// Take document `doc` out.
    pub fn remove(&mut self, doc: u32) {
        if doc as usize >= self.forward.len() {
            return;
        }
        let fwd: Vec<u32> = rising(self.forward.get(doc as usize)).collect();
        self.forward.clear(doc as usize);
        let mut new = Vec::with_capacity(5);
        for id in fwd {
            let (i, term) = (id as usize, &mut self.terms[id as usize]);
            let list = self.lists.get(i);
            let (at, before, found) = seek(list, doc);
            if found != Some(doc) {
                continue;
            }
            let mut end = at;
            get(list, &mut end);
            get(list, &mut end);
            if end == list.len() {
                self.lists.splice(i, at..end, &[]);
                term.last = before;
            } else {
                // The next posting's gap is now from `before`.
                let mut after = end;
                let gap = get(list, &mut after);
                new.clear();
                put(&mut new, doc - before + gap);
                self.lists.splice(i, at..after, &new);
            }
            term.df -= 1;
        }
        if let Some(len) = self.lens.get_mut(doc as usize) {
            self.total_len -= *len as u64;
            *len = 0;
        }
        self.docs = self.docs.saturating_sub(1);
    }

    /// An empty index to adopt `terms` terms' saved lists into (`adopting_docs`, `adopt_doc`,
    /// `adopt_term`; tasks/store.rs checked them: each posting list's documents
    /// rising and below the documents', and the forward lists saying the same postings). The
    /// posting lists go to `spool` when given, the forward lists to `adopting_docs`'s, until
    /// `map`.
    pub fn adopting(terms: usize, spool: Option<Spool>) -> Inverted {
        Inverted {
            vocab: Vocab::with_capacity(terms),
            lists: Arena::with_capacity(terms, spool),
            terms: Vec::with_capacity(terms),
            ..Inverted::default()
        }
    }

    /// Room for the `docs` documents to adopt.
    pub fn adopting_docs(&mut self, docs: usize, spool: Option<Spool>) {
        self.forward = Arena::with_capacity(docs, spool);
        self.lens.reserve_exact(docs);
    }

    /// The adopted lists read in place from their spools' files from now on (the saved index
    /// passed every check).
    pub fn map(&mut self) -> Result<(), String> {
        self.lists.map()?;
        self.forward.map()
    }

    /// Bytes of the posting and forward lists read in place from private files.
    #[cfg(test)]
    pub fn mapped_bytes(&self) -> usize {
        self.lists.mapped_bytes() + self.forward.mapped_bytes()
    }

    /// Adopt the next document (numbered from 0 in order): its forward list as kept, its length.
    pub fn adopt_doc(&mut self, forward: &[u8], len: u32) {
        self.forward.push(forward);
        self.lens.push(len);
        self.docs += 1;
        self.total_len += len as u64;
    }

    /// Adopt the next term (numbered from 0 in order): its posting list as kept, how many
    /// documents hold it and the last of them.
    pub fn adopt_term(&mut self, term: &str, postings: &[u8], df: u32, last: u32) {
        self.vocab.push(term);
        self.lists.push(postings);
        self.terms.push(Term { df, last });
    }

    /// Take many documents out at once: their postings leave each list they are in when
    /// `make_postings` rewrites it (once, with the postings put in meanwhile), not once per
    /// document; `remove` then finishes each. Documents put in meanwhile wait as after
    /// `defer_postings`.
    pub fn drop_postings(&mut self, docs: &[u32]) {
        let d = self.deferred.get_or_insert_default();
        d.gone.resize(self.forward.len(), false);
        d.touched.resize(self.terms.len(), false);
        let held = self.forward.len();
        for &doc in docs.iter().filter(|&&doc| (doc as usize) < held) {
            for t in rising(self.forward.get(doc as usize)) {
                self.terms[t as usize].df -= 1;
                d.touched[t as usize] = true;
            }
            self.forward.clear(doc as usize);
            d.gone[doc as usize] = true;
        }
    }

    /// The posting list of term `id` as it is kept: (file gap, count) varints.
    pub fn list_bytes(&self, id: u32) -> &[u8] {
        self.lists.get(id as usize)
    }

    /// How many terms are numbered (some may be held by no document now).
    pub fn term_count(&self) -> usize {
        self.vocab.len()
    }

    /// Term `id`'s name.
    pub fn term_name(&self, id: u32) -> &str {
        self.vocab.name(id)
    }

    /// The term ids of `doc`, rising (none for a number not in use).
    pub fn terms_of(&self, doc: u32) -> impl Iterator<Item = u32> + '_ {
        let doc = doc as usize;
        rising(if doc < self.forward.len() {
            self.forward.get(doc)
        } else {
            &[]
        })
    }

    /// The number of terms counted in `doc` (0 for a number not in use).
    pub fn doc_len(&self, doc: u32) -> u32 {
        self.lens.get(doc as usize).copied().unwrap_or(0)
    }

    pub fn df(&self, id: u32) -> u32 {
        self.terms[id as usize].df
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

    /// Whether `doc` holds term `id`.
    pub fn holds(&self, id: u32, doc: u32) -> bool {
        self.terms_of(doc).take_while(|&t| t <= id).any(|t| t == id)
    }

    /// The (document, count) postings of term `id`, documents rising.
    pub fn postings(&self, id: u32) -> impl Iterator<Item = (u32, u32)> + '_ {
        pairs(self.lists.get(id as usize))
    }

    /// BM25 of every document for the query terms (id, weight of the term in the query),
    /// saturating at `k1`: a dense vector over document numbers, zero where nothing matched.
    pub fn score(&self, query: &[(u32, f32)], slots: usize, k1: f32) -> Vec<f32> {
        let mut out = vec![0f32; slots.max(self.lens.len())];
        self.each_score(query, k1, |doc, v| out[doc as usize] += v);
        out
    }

    /// `score`'s terms one at a time, (document, what one query term adds to it), term by
    /// term in the query's order and documents rising: summed in that order, they are
    /// `score`'s sums to the last bit.
    pub fn each_score(&self, query: &[(u32, f32)], k1: f32, mut add: impl FnMut(u32, f32)) {
        let avg = self.avg_len();
        for &(id, qw) in query {
            let idf = self.idf(id) * qw;
            for (doc, tf) in self.postings(id) {
                let len = self.lens[doc as usize] as f32;
                add(doc, idf * tf_weight_k1(tf as f32, len, avg, k1));
            }
        }
    }

    /// Give back the spare capacity of the posting lists (after a bulk build).
    pub fn shrink(&mut self) {
        self.lists.shrink();
        self.terms.shrink_to_fit();
        self.forward.shrink();
        self.vocab.shrink();
        self.lens.shrink_to_fit();
    }

    /// Bytes held, roughly: the postings, the vocabulary and the lengths.
    pub fn heap_bytes(&self) -> usize {
        self.heap_parts().iter().map(|(_, n)| n).sum()
    }

    /// `heap_bytes` by part: the posting lists, the forward index, the term dictionary, the
    /// documents' lengths.
    pub fn heap_parts(&self) -> [(&'static str, usize); 4] {
        let postings =
            self.lists.heap_bytes() + self.terms.capacity() * std::mem::size_of::<Term>();
        [
            ("postings", postings),
            (
                "forward index (each file's terms)",
                self.forward.heap_bytes(),
            ),
            ("term dictionary", self.vocab.heap_bytes()),
            ("document lengths", self.lens.capacity() * 4),
        ]
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
        let s = ix.score(&q, 4, K1);
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
        ix.add(0, &a, la);
        ix.add(1, &b, lb);
        let beta = ix.id("beta").unwrap();
        assert_eq!(ix.df(beta), 2);
        ix.remove(0);
        assert_eq!((ix.df(beta), ix.docs, ix.avg_len()), (1, 1, 2.0));
        let (a2, la2) = doc("alpha alpha delta");
        ix.add(0, &a2, la2);
        assert_eq!(
            ix.postings(ix.id("alpha").unwrap()).collect::<Vec<_>>(),
            [(0, 2)]
        );
        assert!(ix.holds(ix.id("alpha").unwrap(), 0) && !ix.holds(beta, 0));
        // Lists stay sorted when a lower number comes back after a higher one.
        let delta = ix.id("delta").unwrap();
        let (b2, lb2) = doc("delta");
        ix.remove(1);
        ix.add(1, &b2, lb2);
        assert_eq!(ix.postings(delta).collect::<Vec<_>>(), [(0, 1), (1, 1)]);
    }

    /// Documents go in and out in a random order, numbers reused, large and small gaps and
    /// counts (a count past u16 is held as u16::MAX): the packed lists always say what a plain
    /// map of the same documents says.
    #[test]
    fn packed_lists_follow_any_order_of_adds_and_removes() {
        use std::collections::BTreeMap;
        let mut seed = 0x2545_f491_4f6c_dd1du64;
        let mut next = |n: u64| {
            seed ^= seed << 13;
            seed ^= seed >> 7;
            seed ^= seed << 17;
            seed % n
        };
        let mut ix = Inverted::default();
        let mut model: BTreeMap<u32, Vec<(u32, u32)>> = BTreeMap::new();
        let terms: Vec<u32> = (0..40).map(|t| ix.intern(&format!("t{t}"))).collect();
        for step in 0..3000 {
            let doc = match next(4) {
                0 => next(50),
                1 => 100 + next(50),
                2 => 20_000 + next(50),
                _ => 3_000_000 + next(5),
            } as u32;
            if model.remove(&doc).is_some() {
                ix.remove(doc);
            } else {
                let mut counts: Vec<(u32, u32)> = terms
                    .iter()
                    .filter_map(|&t| (next(4) == 0).then_some(t))
                    .collect::<Vec<u32>>()
                    .into_iter()
                    .map(|t| (t, [1, 2, 200, 70_000][next(4) as usize]))
                    .collect();
                counts.reverse(); // any order in
                ix.add_ids(doc, &counts, counts.len() as u32);
                counts.sort_unstable();
                model.insert(doc, counts);
            }
            if step % 50 != 0 {
                continue;
            }
            assert_eq!(ix.docs as usize, model.len());
            for &t in &terms {
                let want: Vec<(u32, u32)> = model
                    .iter()
                    .filter_map(|(&d, c)| c.iter().find(|x| x.0 == t).map(|x| (d, x.1.min(65_535))))
                    .collect();
                assert_eq!(ix.postings(t).collect::<Vec<_>>(), want, "term {t}");
                assert_eq!(ix.df(t) as usize, want.len());
            }
            for (&d, c) in &model {
                let want: Vec<u32> = c.iter().map(|&(t, _)| t).collect();
                assert_eq!(ix.terms_of(d).collect::<Vec<_>>(), want);
                for &t in &terms {
                    assert_eq!(ix.holds(t, d), want.contains(&t));
                }
            }
        }
    }

    /// A build from nothing whose postings wait (`defer_postings`) holds what appending each
    /// document's postings holds (the lists' bytes, each term's count and last document, the
    /// forward lists), and edits after it leave the same in both.
    /// Up to 40 words of document `d` drawn by `next`, with large gaps and counts too: rare
    /// terms, and one word many times.
    fn doc_words(d: u64, next: &mut dyn FnMut(u64) -> u64) -> Vec<String> {
        let (n, many) = (next(40), next(2) as usize * 300);
        let mut words: Vec<String> = (0..n)
            .map(|k| {
                format!(
                    "w{}",
                    (d * 31 + k * next(9)) % [7, 60, 5000][(k % 3) as usize]
                )
            })
            .collect();
        words.extend(std::iter::repeat_n("many".to_string(), many));
        words
    }

    #[test]
    fn deferred_postings_are_the_appended_ones() {
        let mut next = crate::testing::numbers(11);
        let (mut plain, mut deferred) = (Inverted::default(), Inverted::default());
        deferred.defer_postings();
        for d in 0..600u32 {
            let (c, len) = counts(doc_words(d as u64, &mut next));
            plain.add(d, &c, len);
            deferred.add(d, &c, len);
        }
        deferred.make_postings().unwrap();
        let same = |a: &Inverted, b: &Inverted| {
            assert_eq!(
                (a.docs, a.total_len, &a.lens),
                (b.docs, b.total_len, &b.lens)
            );
            assert_eq!(a.terms.len(), b.terms.len());
            for t in 0..a.terms.len() {
                assert_eq!(a.list_bytes(t as u32), b.list_bytes(t as u32), "term {t}");
                assert_eq!(
                    (a.terms[t].df, a.terms[t].last),
                    (b.terms[t].df, b.terms[t].last)
                );
            }
            for d in 0..a.lens.len() as u32 {
                assert!(a.terms_of(d).eq(b.terms_of(d)), "document {d}");
            }
        };
        same(&plain, &deferred);
        for ix in [&mut plain, &mut deferred] {
            ix.remove(7);
            ix.remove(599);
            let (c, len) = counts(["w1".to_string(), "fresh".to_string()]);
            ix.add(7, &c, len);
            ix.add(650, &c, len);
            ix.shrink();
        }
        same(&plain, &deferred);
    }

    /// Many documents taken out (at once) and put back in any order while their postings wait
    /// (`defer_postings`), some numbers reused, some new past the end, or every document put back:
    /// `make_postings` leaves the lists' bytes, each term's count and last document and the
    /// forward lists that putting each back alone leaves, and edits after it go on alike.
    #[test]
    fn documents_put_back_at_once_leave_what_putting_each_back_leaves() {
        let mut next = crate::testing::numbers(29);
        for round in 0..12u64 {
            let (mut one, mut batch) = (Inverted::default(), Inverted::default());
            let docs = 50 + next(300) as u32;
            for d in 0..docs {
                let (c, len) = counts(doc_words(d as u64, &mut next));
                one.add(d, &c, len);
                batch.add(d, &c, len);
            }
            // Every document in the last rounds: no list keeps a posting.
            let share = if round >= 10 { 1 } else { 1 + next(4) };
            let mut back: Vec<u32> = (0..docs).filter(|_| next(share) == 0).collect();
            for &d in &back {
                one.remove(d);
            }
            batch.drop_postings(&back);
            for &d in &back {
                batch.remove(d);
            }
            back.extend(docs + 5..docs + 5 + next(20) as u32);
            for i in (1..back.len()).rev() {
                back.swap(i, next(i as u64 + 1) as usize); // any order
            }
            batch.defer_postings();
            for &d in &back {
                let (c, len) = counts(doc_words(d as u64 + 1000 * round, &mut next));
                one.add(d, &c, len);
                batch.add(d, &c, len);
            }
            batch.make_postings().unwrap();
            for step in 0..2 {
                assert_eq!((one.docs, one.total_len), (batch.docs, batch.total_len));
                assert_eq!(one.terms.len(), batch.terms.len());
                for t in 0..one.terms.len() {
                    let (a, b) = (&one.terms[t], &batch.terms[t]);
                    assert_eq!(
                        one.lists.get(t),
                        batch.lists.get(t),
                        "round {round} term {t}"
                    );
                    assert_eq!((a.df, a.df > 0 && a.last != b.last), (b.df, false));
                }
                for d in 0..one.lens.len() as u32 {
                    assert!(one.terms_of(d).eq(batch.terms_of(d)), "document {d}");
                }
                if step == 0 {
                    let (c, len) = counts(["w1".to_string(), "many".to_string()]);
                    for ix in [&mut one, &mut batch] {
                        ix.remove(back[0]);
                        ix.add(back[0], &c, len);
                        ix.add(docs + 40, &c, len);
                    }
                }
            }
        }
    }

    #[test]
    fn postings_dropped_at_once_leave_what_removing_each_leaves() {
        let build = || {
            let mut ix = Inverted::default();
            for d in 0..200u32 {
                let words: Vec<String> = (0..6)
                    .map(|k| format!("w{}", (d * 7 + k * 13) % 23))
                    .collect();
                let (c, len) = counts(words);
                ix.add(d, &c, len);
            }
            ix
        };
        let gone: Vec<u32> = (0..200).filter(|d| d % 3 == 0 || *d > 180).collect();
        let (mut one, mut batch) = (build(), build());
        for &d in &gone {
            one.remove(d);
        }
        batch.drop_postings(&gone);
        for &d in &gone {
            batch.remove(d);
        }
        let (c, len) = counts(["w1".to_string(), "w5".to_string()]);
        one.add(3, &c, len);
        batch.add(3, &c, len);
        batch.make_postings().unwrap();
        assert_eq!(one.docs, batch.docs);
        for t in 0..one.terms.len() as u32 {
            assert_eq!(
                one.postings(t).collect::<Vec<_>>(),
                batch.postings(t).collect::<Vec<_>>()
            );
            assert_eq!(one.df(t), batch.df(t));
        }
        let q: Vec<(u32, f32)> = (0..one.terms.len() as u32).map(|t| (t, 1.0)).collect();
        assert_eq!(one.score(&q, 200, K1), batch.score(&q, 200, K1));
    }
}
