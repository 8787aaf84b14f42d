//! Strings by number (the terms of tasks/bm25.rs, the defined names of tasks/index.rs): the
//! strings one after another in one buffer, and a table of the numbers keyed by their hashes,
//! so a string costs its bytes and a dozen more rather than an allocation of its own and a
//! map's key beside it. None is taken out: a number stays its string's while the index lives.
//!
//! Hashes are foldhash's, seeded per process: the strings are a repository's words, and a fixed
//! hasher would let a repository choose words that collide.

use super::limits::MOST_BYTES;
use foldhash::fast::RandomState;
use hashbrown::HashTable;
use std::hash::BuildHasher;

#[derive(Default)]
pub struct Vocab {
    names: String,
    /// Where each term's name ends in `names` (it starts where the one before ends): 4 bytes a
    /// term, the names staying under 4 GiB (25 MB of them at a million files).
    ends: Vec<u32>,
    ids: HashTable<u32>,
    keys: RandomState,
}

impl Vocab {
    /// Room for `terms` terms.
    pub fn with_capacity(terms: usize) -> Vocab {
        Vocab {
            ends: Vec::with_capacity(terms),
            ids: HashTable::with_capacity(terms),
            ..Vocab::default()
        }
    }

    pub fn len(&self) -> usize {
        self.ends.len()
    }

    /// The name of term `id`.
    pub fn name(&self, id: u32) -> &str {
        name(&self.names, &self.ends, id)
    }

    /// The number of `term`, if held.
    pub fn get(&self, term: &str) -> Option<u32> {
        let hash = self.keys.hash_one(term);
        self.ids.find(hash, |&id| self.name(id) == term).copied()
    }

    /// Whether `bytes` more of names fit (tasks/limits.rs): a repository of long made-up words
    /// or names passes 4 GiB of them before its lists do.
    pub fn fits(&self, bytes: usize) -> bool {
        self.names.len() + bytes <= MOST_BYTES
    }

    /// `term` (not held) numbered next.
    pub fn push(&mut self, term: &str) -> u32 {
        let id = self.ends.len() as u32;
        self.names.push_str(term);
        self.ends
            .push(u32::try_from(self.names.len()).expect("names under 4 GiB"));
        let (names, ends, keys) = (&self.names, &self.ends, &self.keys);
        self.ids.insert_unique(keys.hash_one(term), id, |&held| {
            keys.hash_one(name(names, ends, held))
        });
        id
    }

    pub fn shrink(&mut self) {
        self.names.shrink_to_fit();
        self.ends.shrink_to_fit();
        let (names, ends, keys) = (&self.names, &self.ends, &self.keys);
        self.ids
            .shrink_to_fit(|&held| keys.hash_one(name(names, ends, held)));
    }

    /// Bytes held: the names, where they end, and the table.
    pub fn heap_bytes(&self) -> usize {
        self.names.capacity() + self.ends.capacity() * 4 + self.ids.capacity() * 5
    }
}

fn name<'a>(names: &'a str, ends: &[u32], id: u32) -> &'a str {
    let id = id as usize;
    let start = if id == 0 { 0 } else { ends[id - 1] };
    &names[start as usize..ends[id] as usize]
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn each_term_keeps_its_number_and_name() {
        let mut v = Vocab::default();
        let words: Vec<String> = (0..5000).map(|i| format!("w{}", i * 7919 % 5003)).collect();
        for (i, w) in words.iter().enumerate() {
            assert_eq!(v.get(w), None);
            assert_eq!(v.push(w), i as u32);
        }
        v.shrink();
        for (i, w) in words.iter().enumerate() {
            assert_eq!((v.get(w), v.name(i as u32)), (Some(i as u32), &w[..]));
        }
        assert_eq!((v.get(""), v.get("w")), (None, None));
        // 4 bytes a term where each name ends, not a `usize`'s 8.
        assert_eq!(std::mem::size_of_val(&v.ends[..]), 4 * v.len());
        assert_eq!(v.push(""), 5000);
        assert_eq!(v.get(""), Some(5000));
    }

    /// Seeded, not fixed: two tables hash the same word apart (a fixed hasher's collisions
    /// could be chosen by a repository once and would hold in every process).
    #[test]
    fn each_table_has_its_own_seed() {
        assert!(crate::testing::seeded(|| Vocab::default()
            .keys
            .hash_one("word")));
    }
}
