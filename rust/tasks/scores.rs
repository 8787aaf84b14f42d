//! One question's scores by file (tasks/rank.rs): a dense value a file, so a signal adds in
//! place, and the list of the files any signal touched, so that choosing the top files,
//! scaling and clearing walk those alone rather than every file of the tree. The dense
//! buffers (4 bytes a file each: a million files, 4 MB) are kept for the next question
//! rather than allocated and freed each time: at a million files the allocator's work on
//! them was half of a warm question (benches/README.md).

use super::index::Index;
use std::cmp::Reverse;
use std::collections::BinaryHeap;
use std::sync::Mutex;

/// The score buffers of the last question, all zero, its touched list empty: one set for
/// the process (a question on another index meanwhile makes its own).
static SPARE: Mutex<Option<Buffers>> = Mutex::new(None);

#[derive(Default)]
struct Buffers {
    score: Vec<f32>,
    /// The lexical signal: BM25 while summed, then its share of the best file's.
    lexical: Vec<f32>,
    /// The files whose score or lexical value is above zero, each once, in the order first
    /// touched (every value added is positive, so a file is new while both are zero).
    touched: Vec<u32>,
}

pub struct Scores {
    buf: Buffers,
    /// The distinct lines of why, and each contribution as (file, value, line): a note that
    /// speaks for thousands of files makes one line, not thousands.
    pub reasons: Vec<String>,
    pub contributions: Vec<(u32, f32, u32)>,
}

impl Scores {
    /// All zero over `files` files.
    pub fn new(files: usize) -> Scores {
        let mut buf = SPARE
            .lock()
            .map_or(None, |mut s| s.take())
            .unwrap_or_default();
        buf.score.resize(files, 0.0);
        buf.lexical.resize(files, 0.0);
        Scores {
            buf,
            reasons: Vec::new(),
            contributions: Vec::new(),
        }
    }

    /// File `id`'s score (0 for a number past the files).
    pub fn get(&self, id: u32) -> f32 {
        self.buf.score.get(id as usize).copied().unwrap_or(0.0)
    }

    /// File `id`'s lexical share of the best file's (after `lexical_done`).
    pub fn lexical(&self, id: u32) -> f32 {
        self.buf.lexical.get(id as usize).copied().unwrap_or(0.0)
    }

    /// The files touched so far, in the order first touched.
    pub fn touched(&self) -> &[u32] {
        &self.buf.touched
    }

    /// Whether no file scores.
    pub fn none(&self) -> bool {
        self.buf.touched.iter().all(|&i| self.get(i) <= 0.0)
    }

    pub fn reason(&mut self, text: String) -> u32 {
        self.reasons.push(text);
        self.reasons.len() as u32 - 1
    }

    /// Adds `v` to file `id`'s score, with a line of why.
    pub fn add(&mut self, id: u32, v: f32, reason: u32) {
        self.bump(id, v);
        self.explain(id, v, reason);
    }

    /// A line of why as strong as `v` that adds nothing to the score (what a file kept).
    pub fn explain(&mut self, id: u32, v: f32, reason: u32) {
        if v > 0.0 && (id as usize) < self.buf.score.len() {
            self.contributions.push((id, v, reason));
        }
    }

    /// A prior: no line of why.
    pub fn bump(&mut self, id: u32, v: f32) {
        if v > 0.0 && (id as usize) < self.buf.score.len() {
            self.raise(id, v);
        }
    }

    fn raise(&mut self, id: u32, v: f32) {
        let i = id as usize;
        self.note(i);
        self.buf.score[i] += v;
    }

    fn note(&mut self, i: usize) {
        if self.buf.score[i] == 0.0 && self.buf.lexical[i] == 0.0 {
            self.buf.touched.push(i as u32);
        }
    }

    /// Adds `v` to file `id`'s BM25 (before any other signal).
    pub fn add_lexical(&mut self, id: u32, v: f32) {
        let i = id as usize;
        if v > 0.0 && i < self.buf.lexical.len() {
            self.note(i);
            self.buf.lexical[i] += v;
        }
    }

    /// Divides each file's BM25 by the best file's and adds the share to its score.
    pub fn lexical_done(&mut self) {
        let b = &mut self.buf;
        let best = b
            .touched
            .iter()
            .map(|&i| b.lexical[i as usize])
            .fold(0f32, f32::max);
        if best > 0.0 {
            for &i in &b.touched {
                let i = i as usize;
                b.lexical[i] /= best;
                b.score[i] += b.lexical[i];
            }
        }
    }

    /// Multiplies the score of each file `which` says by `by` (> 0).
    pub fn scale(&mut self, by: f32, which: impl Fn(u32) -> bool) {
        let b = &mut self.buf;
        for &i in &b.touched {
            if which(i) {
                b.score[i as usize] *= by;
            }
        }
    }

    /// The `n` best files, best first (ties by path).
    pub fn top(&self, n: usize, index: &Index) -> Vec<u32> {
        self.top_by(n, |i| index.path(i))
    }

    fn top_by<'a>(&self, n: usize, path: impl Fn(u32) -> &'a str) -> Vec<u32> {
        // Only a file scoring at least the n-th best score can be among the n best: found over
        // the scores alone, it leaves the files to order by path few (a common word scores
        // most files of a large tree), and collects no list of every scored file.
        let floor = self.nth_best(n);
        let mut ids: Vec<u32> = self
            .buf
            .touched
            .iter()
            .copied()
            .filter(|&i| self.get(i) > 0.0 && self.get(i) >= floor)
            .collect();
        let order = |a: &u32, b: &u32| {
            self.get(*b)
                .total_cmp(&self.get(*a))
                .then_with(|| path(*a).cmp(path(*b)))
        };
        if ids.len() > n && n > 0 {
            ids.select_nth_unstable_by(n - 1, order);
            ids.truncate(n);
        }
        ids.sort_by(order);
        ids.truncate(n);
        ids
    }

    /// The `n`-th best score of the touched files (0 when fewer score; +inf for `n` 0).
    fn nth_best(&self, n: usize) -> f32 {
        // A positive f32's bits order as the number does.
        let mut best: BinaryHeap<Reverse<u32>> = BinaryHeap::with_capacity(n + 1);
        for &i in &self.buf.touched {
            let bits = self.get(i).to_bits();
            if best.len() < n {
                best.push(Reverse(bits));
            } else if best.peek().is_some_and(|low| bits > low.0) {
                best.pop();
                best.push(Reverse(bits));
            }
        }
        match best.peek() {
            _ if n == 0 => f32::INFINITY,
            Some(low) if best.len() == n => f32::from_bits(low.0),
            _ => 0.0,
        }
    }
}

impl Drop for Scores {
    /// Zeroes what this question touched and keeps the buffers for the next one.
    fn drop(&mut self) {
        let mut buf = std::mem::take(&mut self.buf);
        for &i in &buf.touched {
            buf.score[i as usize] = 0.0;
            buf.lexical[i as usize] = 0.0;
        }
        buf.touched.clear();
        if let Ok(mut spare) = SPARE.lock() {
            spare.get_or_insert(buf);
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn top_is_the_full_sort_s_first_n_ties_included() {
        let mut below = crate::testing::numbers(0x9e37_79b9_7f4a_7c15);
        for _ in 0..300 {
            let files = 1 + below(60) as usize;
            // Paths in another order than the numbers, so ties are broken by path, not id.
            let paths: Vec<String> = (0..files)
                .map(|i| format!("f{}", (i * 7919) % 1000))
                .collect();
            let mut sc = Scores::new(files);
            for _ in 0..below(120) {
                let id = below(files as u64 + 2) as u32; // some past the files
                let v = below(4) as f32 * 0.25; // zeros and many ties
                if below(3) == 0 {
                    sc.add_lexical(id, v);
                } else {
                    sc.add(id, v, 0);
                }
            }
            sc.lexical_done();
            if below(2) == 0 {
                sc.scale(0.1, |i| i % 3 == 0);
            }
            let mut all: Vec<u32> = (0..files as u32).filter(|&i| sc.get(i) > 0.0).collect();
            all.sort_by(|&a, &b| {
                sc.get(b)
                    .total_cmp(&sc.get(a))
                    .then_with(|| paths[a as usize].cmp(&paths[b as usize]))
            });
            let n = below(files as u64 + 3) as usize;
            all.truncate(n);
            assert_eq!(sc.top_by(n, |i| paths[i as usize].as_str()), all);
        }
    }

    #[test]
    fn the_next_question_starts_from_zero() {
        let mut sc = Scores::new(50);
        sc.add_lexical(3, 2.0);
        sc.add(7, 1.0, 0);
        sc.lexical_done();
        drop(sc);
        for files in [50, 20, 80] {
            let sc = Scores::new(files);
            assert!(sc.touched().is_empty());
            assert!((0..100).all(|i| sc.get(i) == 0.0 && sc.lexical(i) == 0.0));
        }
    }
}
