//! The index's table from a path to its file's number. It holds the numbers only: a number's
//! path is read from the file's record (tasks/index.rs), so each path is kept once rather than
//! again as a map's key (about 60 bytes a file, and one allocation, at 100,000 files).
//!
//! Hashes are keyed per process (`RandomState`): a repository cannot choose paths that collide.

use hashbrown::HashTable;
use std::hash::{BuildHasher, RandomState};

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
