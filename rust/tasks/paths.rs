//! The index's paths: every file's path in one buffer by its number (`Paths`), and the table
//! from a path to its number (`PathTable`). The table holds the numbers only: a number's path
//! is read from the buffer, so each path is kept once rather than again as a map's key (about
//! 60 bytes a file, and one allocation, at 100,000 files). One buffer rather than a `String`
//! a file: 16 bytes less a record, and no 100,000 small blocks in the heap of the thread that
//! loaded them, which pinned the load's freed scratch between them.
//!
//! Hashes are foldhash's (cheaper than std's SipHash, a million at a load), seeded per process
//! as tasks/vocab.rs's are: a repository cannot choose paths that collide.

use super::limits::MOST_BYTES;
use foldhash::fast::RandomState;
use hashbrown::hash_table::Entry;
use hashbrown::HashTable;
use std::hash::BuildHasher;

#[derive(Default)]
pub struct Paths {
    text: String,
    /// Where path `i` lies in `text`: its start and its length (both 0 for no file).
    spans: Vec<(u32, u32)>,
    /// Bytes of `text` in no span.
    garbage: usize,
}

/// (Against `MOST_BYTES`, which the core's tests lower: see tasks/arena.rs.)
fn u32_len(n: usize) -> u32 {
    assert!(n <= MOST_BYTES, "paths under 4 GiB");
    n as u32
}

impl Paths {
    /// The path of file `id` ("" for a number with no file).
    pub fn get(&self, id: u32) -> &str {
        self.spans.get(id as usize).map_or("", |&(at, len)| {
            &self.text[at as usize..at as usize + len as usize]
        })
    }

    /// File `id`'s path is `path` from now on.
    pub fn set(&mut self, id: u32, path: &str) {
        self.clear(id);
        let i = id as usize;
        if self.spans.len() <= i {
            self.spans.resize(i + 1, (0, 0));
        }
        self.spans[i] = (u32_len(self.text.len()), u32_len(path.len()));
        self.text.push_str(path);
    }

    /// File `id` has no path; the buffer is compacted when garbage passes half of it.
    pub fn clear(&mut self, id: u32) {
        let Some(s) = self.spans.get_mut(id as usize) else {
            return;
        };
        self.garbage += s.1 as usize;
        *s = (0, 0);
        if self.garbage > self.text.len() / 2 {
            let mut text = String::with_capacity(self.text.len() - self.garbage);
            for s in &mut self.spans {
                let (at, len) = (s.0 as usize, s.1 as usize);
                s.0 = u32_len(text.len());
                text.push_str(&self.text[at..at + len]);
            }
            self.text = text;
            self.garbage = 0;
        }
    }

    /// Whether a path of `len` bytes fits past the end (tasks/limits.rs).
    pub fn fits(&self, len: usize) -> bool {
        self.text.len() + len <= MOST_BYTES
    }

    /// Room for `n` more paths' spans.
    pub fn reserve(&mut self, n: usize) {
        self.spans.reserve_exact(n);
    }

    pub fn shrink_to_fit(&mut self) {
        self.text.shrink_to_fit();
        self.spans.shrink_to_fit();
    }

    pub fn heap_bytes(&self) -> usize {
        self.text.capacity() + self.spans.capacity() * 8
    }
}

#[derive(Default)]
pub struct PathTable {
    ids: HashTable<u32>,
    keys: RandomState,
}

impl PathTable {
    /// The number of the file at `path`; `path_of` reads a held number's path.
    pub fn get<'p>(&self, path: &str, path_of: impl Fn(u32) -> &'p str) -> Option<u32> {
        let hash = self.keys.hash_one(path);
        self.ids.find(hash, |&id| path_of(id) == path).copied()
    }

    /// Hold `id` for `path` (not held yet).
    pub fn insert<'p>(&mut self, path: &str, id: u32, path_of: impl Fn(u32) -> &'p str) {
        let hash = self.keys.hash_one(path);
        let keys = &self.keys;
        self.ids
            .insert_unique(hash, id, |&held| keys.hash_one(path_of(held)));
    }

    /// Hold `id` for `path` unless a number is held for it already (then false), hashing the
    /// path once; `path_of` is asked only for the numbers held before.
    pub fn insert_new<'p>(
        &mut self,
        path: &str,
        id: u32,
        path_of: impl Fn(u32) -> &'p str,
    ) -> bool {
        let hash = self.keys.hash_one(path);
        let keys = &self.keys;
        match self.ids.entry(
            hash,
            |&held| path_of(held) == path,
            |&held| keys.hash_one(path_of(held)),
        ) {
            Entry::Occupied(_) => false,
            Entry::Vacant(v) => {
                v.insert(id);
                true
            }
        }
    }

    /// Room for `n` more paths.
    pub fn reserve<'p>(&mut self, n: usize, path_of: impl Fn(u32) -> &'p str) {
        let keys = &self.keys;
        self.ids.reserve(n, |&held| keys.hash_one(path_of(held)));
    }

    /// Let go of `id`, held for `path`.
    pub fn remove(&mut self, path: &str, id: u32) {
        let hash = self.keys.hash_one(path);
        if let Ok(entry) = self.ids.find_entry(hash, |&held| held == id) {
            entry.remove();
        }
    }

    pub fn len(&self) -> usize {
        self.ids.len()
    }

    pub fn is_empty(&self) -> bool {
        self.ids.is_empty()
    }

    /// The numbers held, in no order.
    pub fn ids(&self) -> impl Iterator<Item = u32> + '_ {
        self.ids.iter().copied()
    }

    pub fn heap_bytes(&self) -> usize {
        self.ids.allocation_size()
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::collections::HashMap;

    /// Paths set again and again (files edited, taken out, put back) keep the buffer within
    /// twice the bytes of the paths held: a removed path's bytes are garbage until they pass
    /// half of it, and each path still reads back.
    #[test]
    fn garbage_stays_under_half() {
        let mut paths = Paths::default();
        paths.set(0, "kept/for/good.rs");
        for round in 0..1000u32 {
            paths.set(1 + round % 7, &format!("src/f{round}.rs"));
            paths.clear(1 + (round + 3) % 7);
            let held: usize = (0..8).map(|i| paths.get(i).len()).sum();
            assert!(
                paths.text.len() <= 2 * held,
                "{} > 2 * {held}",
                paths.text.len()
            );
            assert_eq!(paths.get(0), "kept/for/good.rs");
            assert_eq!(paths.get(1 + round % 7), format!("src/f{round}.rs"));
        }
        assert_eq!(paths.get(9), "");
    }

    /// Seeded, not fixed: two tables hash the same path apart (a fixed hasher's collisions
    /// could be chosen by a repository once and would hold in every process).
    #[test]
    fn each_table_has_its_own_seed() {
        assert!(crate::testing::seeded(|| PathTable::default()
            .keys
            .hash_one("src/lib.rs")));
    }

    /// Paths come and go (numbers reused, as the index reuses them); the table answers as a
    /// map from each path to its number would, and the buffer as a vector of paths would,
    /// through growth, removals and compaction.
    #[test]
    fn answers_as_a_map_of_paths_would() {
        let mut paths: Vec<Option<String>> = Vec::new();
        let mut buffer = Paths::default();
        let mut table = PathTable::default();
        let mut model: HashMap<String, u32> = HashMap::new();
        let mut free: Vec<u32> = Vec::new();
        let mut next = crate::testing::numbers(7);
        for step in 0..5000 {
            let p = format!("d{}/f{}.rs", next(20), next(300));
            match model.get(&p).copied() {
                Some(id) if next(2) == 0 => {
                    table.remove(&p, id);
                    model.remove(&p);
                    paths[id as usize] = None;
                    buffer.clear(id);
                    free.push(id);
                }
                Some(_) => {}
                None => {
                    let id = free.pop().unwrap_or_else(|| {
                        paths.push(None);
                        paths.len() as u32 - 1
                    });
                    let held = &paths;
                    table.insert(&p, id, |i| held[i as usize].as_deref().unwrap_or(""));
                    paths[id as usize] = Some(p.clone());
                    buffer.set(id, &p);
                    model.insert(p, id);
                }
            }
            if step % 500 == 0 {
                let of = |i: u32| paths[i as usize].as_deref().unwrap_or("");
                assert_eq!(table.len(), model.len());
                for (id, p) in paths.iter().enumerate() {
                    assert_eq!(buffer.get(id as u32), p.as_deref().unwrap_or(""));
                }
                for (p, &id) in &model {
                    assert_eq!(table.get(p, of), Some(id), "{p}");
                }
                assert_eq!(table.get("d0/nowhere.rs", of), None);
                let mut ids: Vec<u32> = table.ids().collect();
                ids.sort_unstable();
                let mut want: Vec<u32> = model.values().copied().collect();
                want.sort_unstable();
                assert_eq!(ids, want);
            }
        }
    }
}
