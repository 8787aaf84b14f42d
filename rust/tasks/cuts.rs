//! A file's regions (tasks/regions.rs) and the words of each, kept between questions: cutting
//! a large file and counting its words was most of a warm question's cost (ruff's top files
//! are 20–150 KB, and ten or more are cut per question), and the same files come back question
//! after question. Kept by file number and the index's stat key of the file, so an edit is cut
//! again once the index has followed it; at most `MAX_BYTES` (counted roughly), the least
//! recently used forgotten first.

use super::bundle::Text;
use super::files::StatKey;
use super::regions::{self, Region};
use super::terms;
use std::collections::HashMap;
use std::sync::{Arc, Mutex};

/// The most held, roughly: the texts and their words.
pub const MAX_BYTES: usize = 32 << 20;

/// A region's distinct terms with their counts: (the term's place in `Cut::terms`, count), by
/// term.
pub type Words = Vec<(u32, u32)>;

pub struct Cut {
    pub text: String,
    pub regions: Vec<Region>,
    /// The file's distinct terms, sorted: regions name theirs by place, so a question looks up
    /// each term of a file once, not once per region holding it (and a term is held once).
    pub terms: Vec<Box<str>>,
    /// Per region: how many terms it holds, and its words.
    pub counts: Vec<(u32, Words)>,
    /// Per region: the names its code refers to (lang/symbols.rs).
    pub refs: Refs,
}

/// The names each region of a file refers to, by place among the file's: a question looks
/// each of the file's names up once (tasks/focus.rs), not once per region referring to it
/// (thousands of regions in the top files, dozens of names each).
#[derive(Default)]
pub struct Refs {
    /// The file's names, distinct and sorted.
    pub names: Vec<Box<str>>,
    /// Per region: its names' places in `names`, ascending.
    pub of: Vec<Vec<u32>>,
}

/// The names of a file not cut.
pub static NO_REFS: Refs = Refs {
    names: Vec::new(),
    of: Vec::new(),
};

impl Refs {
    /// From each region's names, sorted and distinct (as lang/symbols.rs gives them).
    pub fn new(refs: Vec<Vec<Box<str>>>) -> Refs {
        // Numbered as met, then renumbered in name order: a region's names stay ascending.
        let mut first: terms::WordMap<u32> = terms::WordMap::default();
        for name in refs.iter().flatten() {
            let next = first.len() as u32;
            first.entry(name).or_insert(next);
        }
        let mut names: Vec<(&str, u32)> = first.iter().map(|(&n, &i)| (n, i)).collect();
        names.sort_unstable_by(|a, b| a.0.cmp(b.0));
        let mut place = vec![0u32; names.len()];
        for (at, (_, i)) in names.iter().enumerate() {
            place[*i as usize] = at as u32;
        }
        let of = refs
            .iter()
            .map(|r| r.iter().map(|n| place[first[&**n] as usize]).collect())
            .collect();
        Refs {
            names: names.into_iter().map(|(n, _)| Box::from(n)).collect(),
            of,
        }
    }

    /// Region `i`'s names by place (none when not known).
    pub fn region(&self, i: usize) -> &[u32] {
        self.of.get(i).map_or(&[], Vec::as_slice)
    }
}

impl Cut {
    pub fn new(path: &str, text: String) -> Cut {
        let (regions, refs) = regions::regions_and_references(path, &text);
        let refs = Refs::new(refs);
        let t = Text::new(&text);
        // Each term by the order it first came in, then renumbered in term order; each distinct
        // word's terms made once (a file says the same words again and again), kept as a run
        // of `of_words` (std's hasher for both: the text is untrusted).
        let mut first: HashMap<Box<str>, u32> = HashMap::new();
        let mut by_word: HashMap<&str, (u32, u32)> = HashMap::new();
        let mut of_words: Vec<u32> = Vec::new();
        let mut bufs = terms::TermBufs::default();
        let mut said: Vec<u32> = Vec::new();
        let mut counts: Vec<(u32, Words)> = regions
            .iter()
            .map(|r| {
                said.clear();
                for (_, w) in terms::words(t.slice(r.start, r.end.min(t.lines()))) {
                    let (from, to) = *by_word.entry(w).or_insert_with(|| {
                        let from = of_words.len() as u32;
                        terms::word_terms(w, &mut bufs, |term| {
                            let next = first.len() as u32;
                            of_words.push(match first.get(term) {
                                Some(&n) => n,
                                None => *first.entry(term.into()).or_insert(next),
                            });
                        });
                        (from, of_words.len() as u32)
                    });
                    said.extend_from_slice(&of_words[from as usize..to as usize]);
                }
                said.sort_unstable();
                let mut words: Words = Vec::new();
                for &n in &said {
                    match words.last_mut() {
                        Some((last, tf)) if *last == n => *tf += 1,
                        _ => words.push((n, 1)),
                    }
                }
                (said.len() as u32, words)
            })
            .collect();
        let mut terms: Vec<(Box<str>, u32)> = first.into_iter().collect();
        terms.sort_unstable_by(|a, b| a.0.cmp(&b.0));
        let mut place = vec![0u32; terms.len()];
        for (at, (_, n)) in terms.iter().enumerate() {
            place[*n as usize] = at as u32;
        }
        for (_, words) in &mut counts {
            for w in words.iter_mut() {
                w.0 = place[w.0 as usize];
            }
            words.sort_unstable_by_key(|w| w.0);
        }
        Cut {
            text,
            regions,
            terms: terms.into_iter().map(|t| t.0).collect(),
            counts,
            refs,
        }
    }

    fn bytes(&self) -> usize {
        let terms: usize = self.terms.iter().map(|t| t.len() + 16).sum();
        let words: usize = self.counts.iter().map(|c| c.1.len() * 8 + 32).sum();
        let names: usize = self.refs.names.iter().map(|r| r.len() + 16).sum();
        let refs = names + self.refs.of.iter().map(|r| r.len() * 4 + 24).sum::<usize>();
        self.text.len() + terms + words + refs + self.regions.len() * 88
    }
}

#[derive(Default)]
pub struct Cuts {
    held: Mutex<Held>,
}

#[derive(Default)]
struct Held {
    by_file: HashMap<u32, (StatKey, Arc<Cut>, u64)>,
    bytes: usize,
    clock: u64,
}

impl Cuts {
    /// The cut of file `id` whose stat key is `key`, made by `make` when none is held for it.
    pub fn get(
        &self,
        id: u32,
        key: StatKey,
        make: impl FnOnce() -> Option<Cut>,
    ) -> Option<Arc<Cut>> {
        {
            let mut h = self.held.lock().unwrap_or_else(|e| e.into_inner());
            h.clock += 1;
            let now = h.clock;
            if let Some((k, cut, used)) = h.by_file.get_mut(&id) {
                if *k == key {
                    *used = now;
                    return Some(cut.clone());
                }
            }
        }
        let cut = Arc::new(make()?);
        let size = cut.bytes();
        let mut h = self.held.lock().unwrap_or_else(|e| e.into_inner());
        if let Some((_, old, _)) = h.by_file.remove(&id) {
            h.bytes -= old.bytes();
        }
        while h.bytes + size > MAX_BYTES && !h.by_file.is_empty() {
            let oldest = h.by_file.iter().min_by_key(|(_, v)| v.2).map(|(&k, _)| k);
            if let Some((_, old, _)) = oldest.and_then(|k| h.by_file.remove(&k)) {
                h.bytes -= old.bytes();
            }
        }
        if size <= MAX_BYTES {
            h.bytes += size;
            let now = h.clock;
            h.by_file.insert(id, (key, cut.clone(), now));
        }
        Some(cut)
    }

    pub fn heap_bytes(&self) -> usize {
        self.held.lock().unwrap_or_else(|e| e.into_inner()).bytes
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn key(n: u64) -> crate::tree::os::Key {
        crate::tree::os::Key {
            size: n,
            ino: n,
            ..Default::default()
        }
    }

    #[test]
    fn held_by_key_and_counted_by_region() {
        let cuts = Cuts::default();
        let text =
            "def parse_url(u):\n    return u\n\n\ndef other():\n    parse_url(1)\n".to_string();
        let a = cuts
            .get(1, key(1), || Some(Cut::new("a.py", text.clone())))
            .unwrap();
        assert_eq!(a.regions.len(), a.counts.len());
        assert!(a.terms.windows(2).all(|w| w[0] < w[1]));
        assert!(a
            .counts
            .iter()
            .all(|(len, words)| words.windows(2).all(|w| w[0].0 < w[1].0)
                && words.iter().map(|w| w.1).sum::<u32>() == *len));
        let t = Text::new(&text);
        for (r, (_, words)) in a.regions.iter().zip(&a.counts) {
            let mut want: Vec<(String, u32)> = Vec::new();
            for term in terms::terms(t.slice(r.start, r.end)) {
                match want.iter_mut().find(|w| w.0 == term) {
                    Some(w) => w.1 += 1,
                    None => want.push((term, 1)),
                }
            }
            want.sort();
            let got: Vec<(String, u32)> = words
                .iter()
                .map(|&(at, tf)| (a.terms[at as usize].to_string(), tf))
                .collect();
            assert_eq!(got, want, "lines {}-{}", r.start, r.end);
        }
        let again = cuts.get(1, key(1), || panic!("held")).unwrap();
        assert!(Arc::ptr_eq(&a, &again));
        let edited = cuts
            .get(1, key(2), || Some(Cut::new("a.py", "x = 1\n".into())))
            .unwrap();
        assert_eq!(edited.text, "x = 1\n", "another stat key: cut again");
        assert_eq!(cuts.heap_bytes(), edited.bytes());
    }
}
