//! How many files define each number of names, kept as files come and go, so the median a
//! question weighs a file's names by (tasks/rank.rs) is read from a few hundred counts rather
//! than from every file's names: that pass read every page of the names a load maps
//! (tasks/arena.rs), all 7 MiB of them resident after the first question at 100,000 files.

use std::collections::BTreeMap;

#[derive(Default)]
pub struct Median {
    /// Files by how many names they define (files defining none are not counted).
    files: BTreeMap<u32, u32>,
    /// Files counted.
    any: u32,
}

impl Median {
    /// A file defining `n` names came.
    pub fn add(&mut self, n: usize) {
        if n > 0 {
            *self.files.entry(n as u32).or_default() += 1;
            self.any += 1;
        }
    }

    /// A file defining `n` names went (one that came).
    pub fn remove(&mut self, n: usize) {
        if n == 0 {
            return;
        }
        if let Some(k) = self.files.get_mut(&(n as u32)) {
            *k -= 1;
            if *k == 0 {
                self.files.remove(&(n as u32));
            }
            self.any -= 1;
        }
    }

    /// The count at place `any / 2` of the files' counts in order (the upper median); 1 when no
    /// file defines a name.
    pub fn get(&self) -> usize {
        let mut seen = 0;
        for (&n, &k) in &self.files {
            seen += k;
            if seen > self.any / 2 {
                return n as usize;
            }
        }
        1
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Counts come and go; the median is the one a sort of the counts held gives.
    #[test]
    fn is_the_median_of_the_counts_held() {
        let mut m = Median::default();
        let mut held: Vec<usize> = Vec::new();
        let mut next = crate::testing::numbers(3);
        assert_eq!(m.get(), 1);
        for _ in 0..3000 {
            if !held.is_empty() && next(3) == 0 {
                let n = held.swap_remove(next(held.len() as u64) as usize);
                m.remove(n);
            } else {
                let n = next(40) as usize;
                held.push(n);
                m.add(n);
            }
            let mut any: Vec<usize> = held.iter().copied().filter(|&n| n > 0).collect();
            any.sort_unstable();
            assert_eq!(m.get(), any.get(any.len() / 2).copied().unwrap_or(1));
        }
    }
}
