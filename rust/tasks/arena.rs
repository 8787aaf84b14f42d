//! Many byte lists in one buffer (tasks/bm25.rs's posting lists and forward lists): a list is
//! a span of the buffer, so a load adopts a million lists by copying their bytes in, with no
//! allocation of their own (each of which cost its bytes again in allocator overhead and its
//! own call to the allocator). A list that outgrows its span moves to the buffer's end with
//! room to double (a build appends to every list in turn); the span it leaves is garbage, and
//! the buffer is compacted in place when garbage passes half of it, so an index edited for days
//! stays within a few times the size of its lists and an edit stays a copy of the lists it
//! touches.
//!
//! A load may spool the lists it adopts to a private file instead (tree/scratch.rs) and map
//! it once the saved index passed its checks (`map`): the lists then lie in that mapping,
//! which pages are resident only while read, and the buffer holds only the lists edited since
//! (a list in the mapping is never written: an edit moves it to the buffer first). Spans number
//! the mapping's bytes first and the buffer's after them. The mapping's bytes left behind by a
//! list that moved are not reclaimed: they cost disk, not memory.

use super::limits::MOST_BYTES;
use crate::tree::scratch::{Mapped, Spool};
use std::ops::Range;

#[derive(Default)]
pub struct Arena {
    /// The lists adopted from a saved index, when spooled and mapped.
    base: Mapped,
    bytes: Vec<u8>,
    spans: Vec<Span>,
    /// Bytes of `bytes` in no span.
    garbage: usize,
    /// Where adopted lists go until `map`.
    spool: Option<Spool>,
}

/// Where a list is: `len` bytes from `at`, with room for `cap` (12 bytes a list: there is one
/// a file for its terms and one for its names, and one a term).
#[derive(Clone, Copy, Default)]
struct Span {
    at: u32,
    len: u32,
    cap: u32,
}

impl Span {
    fn at(&self) -> usize {
        self.at as usize
    }
}

/// A list moved to the end gets room for at least this many bytes.
pub const MIN_CAP: usize = 8;

// (Against `MOST_BYTES`, which the core's tests lower: a growth not checked by `fits` first
// panics there as it would past 4 GiB.)
fn u32_len(n: usize) -> u32 {
    assert!(n <= MOST_BYTES, "a list under 4 GiB");
    n as u32
}

/// Where a list starts: the mapping (a saved index, under `MAX_SAVED_BYTES`) and the buffer
/// together stay under 4 GiB.
fn u32_at(n: usize) -> u32 {
    assert!(n <= MOST_BYTES, "lists under 4 GiB in all");
    n as u32
}

/// The room list `s` gets moved to the end at `len` bytes: its bytes and as many again as it had.
fn room(s: Span, len: usize) -> usize {
    len.max(2 * s.cap as usize).max(MIN_CAP)
}

impl Arena {
    /// Room for `lists` lists; those pushed go to `spool` when given, until `map`.
    pub fn with_capacity(lists: usize, spool: Option<Spool>) -> Arena {
        Arena {
            spans: Vec::with_capacity(lists),
            spool,
            ..Arena::default()
        }
    }

    /// The lists pushed to the spool read from its file, mapped, from now on.
    pub fn map(&mut self) -> Result<(), String> {
        if let Some(spool) = self.spool.take() {
            self.base = spool
                .map()
                .map_err(|e| format!("the lists' private file: {e}"))?;
        }
        Ok(())
    }

    /// Where the buffer's bytes start among the spans' numbers.
    fn heap(&self) -> usize {
        self.base.len()
    }

    /// One past the last byte of the buffer, as spans number it.
    fn end(&self) -> usize {
        self.heap() + self.bytes.len()
    }

    /// Whether a list of `len` bytes fits moved to the end (tasks/limits.rs).
    pub fn fits(&self, len: usize) -> bool {
        self.end() + len.max(MIN_CAP) <= MOST_BYTES
    }

    /// Whether list `i` must move to hold `len` bytes: it outgrows its room, or it is held in
    /// the mapping (which is never written).
    fn must_move(&self, i: usize, len: usize) -> bool {
        len > self.spans[i].cap as usize || self.spans[i].at() < self.heap()
    }

    /// Whether lists `lists` can each change, growing by up to `more` bytes, each that must move
    /// going to the end with its `room`, as `make_room` moves it: what a few documents put in or
    /// taken out one by one may ask (tasks/limits.rs).
    pub fn fits_changed(&self, lists: impl Iterator<Item = usize>, more: usize) -> bool {
        let mut end = self.end();
        for i in lists {
            let len = self.spans[i].len as usize + more;
            if self.must_move(i, len) {
                end += room(self.spans[i], len);
                if end > MOST_BYTES {
                    return false;
                }
            }
        }
        true
    }

    pub fn len(&self) -> usize {
        self.spans.len()
    }

    /// List `i` (none is read while lists are spooled).
    pub fn get(&self, i: usize) -> &[u8] {
        let s = self.spans[i];
        let (heap, len) = (self.heap(), s.len as usize);
        if s.at() < heap {
            &self.base[s.at()..s.at() + len]
        } else {
            &self.bytes[s.at() - heap..s.at() - heap + len]
        }
    }

    /// A new last list holding `b` and no room beyond it.
    pub fn push(&mut self, b: &[u8]) {
        let at = match &mut self.spool {
            Some(spool) => {
                let at = spool.len() as usize;
                spool.push(b);
                at
            }
            None => {
                let at = self.end();
                self.bytes.extend_from_slice(b);
                at
            }
        };
        let len = u32_len(b.len());
        self.spans.push(Span {
            at: u32_at(at),
            len,
            cap: len,
        });
    }

    /// Empty lists up to `n` (none taken away).
    pub fn grow_to(&mut self, n: usize) {
        if self.spans.len() < n {
            self.spans.resize(n, Span::default());
        }
    }

    /// Every list (all empty) laid out again one after another, list `i` with room for
    /// exactly `caps[i]` bytes: lists then filled to sizes known ahead never move. Only for an
    /// arena held on the heap alone (a build's, or the fresh one `make_postings` fills with an
    /// update's new postings): spans number the buffer from 0 only while nothing is mapped.
    pub fn lay_out(&mut self, caps: &[u32]) {
        debug_assert!(self.spans.iter().all(|s| s.len == 0) && caps.len() == self.spans.len());
        debug_assert!(self.base.is_empty() && self.spool.is_none());
        let mut at = 0;
        for (s, &cap) in self.spans.iter_mut().zip(caps) {
            *s = Span {
                at: u32_at(at),
                len: 0,
                cap,
            };
            at += cap as usize;
        }
        self.bytes = vec![0; at];
        self.garbage = 0;
    }

    /// Replace bytes `range` of list `i` with `new`.
    pub fn splice(&mut self, i: usize, range: Range<usize>, new: &[u8]) {
        if range.is_empty() && new.is_empty() {
            return; // nothing changes (a list in the mapping stays there)
        }
        let old = self.spans[i].len as usize;
        let len = old - range.len() + new.len();
        if self.must_move(i, len) {
            self.make_room(i, len);
        }
        let s = self.spans[i];
        let at = s.at() - self.heap();
        let b = &mut self.bytes[at..at + s.cap as usize];
        b.copy_within(range.end..old, range.start + new.len());
        b[range.start..range.start + new.len()].copy_from_slice(new);
        self.spans[i].len = u32_len(len);
    }

    /// Append `new` to list `i`.
    pub fn extend(&mut self, i: usize, new: &[u8]) {
        let len = self.spans[i].len as usize;
        self.splice(i, len..len, new);
    }

    /// List `i` is `new` from now on.
    pub fn set(&mut self, i: usize, new: &[u8]) {
        // Its bytes need not move with it, nor a mapped list's room double on the heap.
        if self.must_move(i, new.len()) {
            self.clear(i);
        }
        let len = self.spans[i].len as usize;
        self.splice(i, 0..len, new);
    }

    /// List `i` empty, its span given up.
    pub fn clear(&mut self, i: usize) {
        let s = self.spans[i];
        self.spans[i] = Span::default();
        self.give_up(s);
    }

    /// The bytes of span `s` are garbage (the buffer's: the mapping's stay as they are), and
    /// the buffer is compacted when garbage passes half of it.
    fn give_up(&mut self, s: Span) {
        if s.at() < self.heap() {
            return;
        }
        self.garbage += s.cap as usize;
        if 2 * self.garbage > self.bytes.len() {
            self.compact();
        }
    }

    /// List `i` moved to the end (or grown there, if it is the last span) with room for `len`
    /// bytes and as many again as it had.
    fn make_room(&mut self, i: usize, len: usize) {
        let (s, heap) = (self.spans[i], self.heap());
        let cap = room(s, len);
        if s.at() >= heap && s.at() + s.cap as usize == self.end() && s.cap > 0 {
            self.bytes.resize(s.at() - heap + cap, 0);
            self.spans[i].cap = u32_len(cap);
        } else {
            let at = self.bytes.len();
            if s.at() < heap {
                self.bytes
                    .extend_from_slice(&self.base[s.at()..s.at() + s.len as usize]);
            } else {
                self.bytes
                    .extend_from_within(s.at() - heap..s.at() - heap + s.len as usize);
            }
            self.bytes.resize(at + cap, 0);
            self.spans[i] = Span {
                at: u32_at(heap + at),
                len: s.len,
                cap: u32_len(cap),
            };
            self.give_up(s);
        }
    }

    /// The buffer's lists moved down over the garbage, in the order they lie, each keeping its
    /// room.
    fn compact(&mut self) {
        let heap = self.heap();
        // A list with no room is not moved, and where it pointed may be past the new end
        // (`lay_out` and `shrink` leave empty lists where they were): it points nowhere now.
        for s in self.spans.iter_mut().filter(|s| s.cap == 0) {
            *s = Span::default();
        }
        let mut order: Vec<u32> = (0..self.spans.len() as u32)
            .filter(|&i| self.spans[i as usize].cap > 0 && self.spans[i as usize].at() >= heap)
            .collect();
        order.sort_unstable_by_key(|&i| self.spans[i as usize].at);
        let mut to = 0;
        for i in order {
            let s = &mut self.spans[i as usize];
            let from = s.at() - heap;
            if from != to {
                self.bytes.copy_within(from..from + s.len as usize, to);
                s.at = u32_at(heap + to);
            }
            to += s.cap as usize;
        }
        self.bytes.truncate(to);
        self.garbage = 0;
    }

    /// Every list with no room beyond its bytes, and the spare capacity given back (after a
    /// bulk build).
    pub fn shrink(&mut self) {
        let heap = self.heap();
        for s in self.spans.iter_mut().filter(|s| s.at() >= heap) {
            self.garbage += (s.cap - s.len) as usize;
            s.cap = s.len;
        }
        if self.garbage > 0 {
            self.compact();
        }
        self.bytes.shrink_to_fit();
        self.spans.shrink_to_fit();
    }

    /// Bytes of the lists read in place from a private file.
    #[cfg(test)]
    pub fn mapped_bytes(&self) -> usize {
        self.base.len()
    }

    /// Bytes held on the heap: the buffer's and the spans' (not the mapping's).
    pub fn heap_bytes(&self) -> usize {
        self.bytes.capacity() + self.spans.capacity() * std::mem::size_of::<Span>()
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::testing::TempTree;

    /// Lists spliced, set, cleared and appended to in a random order say what plain vectors
    /// given the same edits say, and the buffer stays within a bound of the bytes held.
    fn follow_vectors(mut arena: Arena, mut model: Vec<Vec<u8>>) {
        let mut below = crate::testing::numbers(7);
        for step in 0..20_000u32 {
            let i = below(40) as usize;
            if i >= arena.len() {
                arena.grow_to(i + 1);
                model.resize(i + 1, Vec::new());
            }
            let new: Vec<u8> = (0..below(30)).map(|k| (step as u64 + k) as u8).collect();
            match below(5) {
                0 => {
                    arena.set(i, &new);
                    model[i] = new;
                }
                1 => {
                    arena.clear(i);
                    model[i].clear();
                }
                2 => {
                    arena.extend(i, &new);
                    model[i].extend_from_slice(&new);
                }
                _ => {
                    let len = model[i].len() as u64;
                    let a = below(len + 1) as usize;
                    let b = a + below(len - a as u64 + 1) as usize;
                    arena.splice(i, a..b, &new);
                    model[i].splice(a..b, new);
                }
            }
            if step == 10_000 {
                arena.shrink();
            }
            let heap = arena.heap();
            let spans: usize = (arena.spans.iter())
                .filter(|s| s.at() >= heap)
                .map(|s| s.cap as usize)
                .sum();
            assert_eq!(spans + arena.garbage, arena.bytes.len(), "step {step}");
            assert!(2 * arena.garbage <= arena.bytes.len(), "step {step}");
            if step % 97 == 0 {
                for (k, m) in model.iter().enumerate() {
                    assert_eq!(arena.get(k), &m[..], "list {k} at step {step}");
                }
            }
        }
    }

    /// Three spans a file at 100,000 files (its terms, its names, about one term): 12 bytes
    /// each rather than 16.
    #[test]
    fn a_span_is_12_bytes() {
        assert_eq!(std::mem::size_of::<Span>(), 12);
    }

    #[test]
    fn lists_follow_vectors_through_any_edits_and_garbage_stays_bounded() {
        follow_vectors(Arena::default(), Vec::new());
    }

    /// Lists laid out at sizes known ahead (an update's new postings, `make_postings`), the last
    /// with no room: once the others are emptied and compacted away it reads empty and grows,
    /// rather than pointing past the buffer (an update on TanStack/query's history panicked so).
    #[test]
    fn an_empty_list_laid_out_last_reads_empty_after_a_compaction() {
        let mut arena = Arena::default();
        arena.grow_to(3);
        arena.lay_out(&[4, 4, 0]);
        arena.extend(0, &[1; 4]);
        arena.extend(1, &[2; 4]);
        arena.clear(0);
        arena.clear(1);
        assert!(arena.get(2).is_empty());
        arena.extend(2, &[3; 5]);
        assert_eq!(arena.get(2), &[3; 5][..]);
    }

    /// A mapped list set anew takes room on the heap for its new bytes only: not a copy of
    /// its old bytes with room to double (a load where many files changed sets most lists).
    #[test]
    fn a_mapped_list_set_anew_takes_room_for_its_new_bytes_only() {
        let t = TempTree::new("arena-set");
        let dir = cap_std::fs::Dir::open_ambient_dir(t.path(), cap_std::ambient_authority());
        let mut arena = Arena::with_capacity(3, Some(Spool::create(&dir.unwrap()).unwrap()));
        for i in 0..3u8 {
            arena.push(&[i; 100]);
        }
        arena.map().unwrap();
        arena.set(0, &[]);
        arena.set(1, &[7; 10]);
        arena.set(2, &[8; 300]);
        assert_eq!(arena.bytes.len(), 10 + 300);
        assert_eq!(
            (arena.get(0), arena.get(1), arena.get(2)),
            (&[][..], &[7; 10][..], &[8; 300][..])
        );
    }

    /// The same with lists adopted through a private file and mapped: each reads back, and
    /// edits move them to the buffer as they come.
    #[test]
    fn mapped_lists_follow_vectors_through_any_edits() {
        let t = TempTree::new("arena");
        let dir = cap_std::fs::Dir::open_ambient_dir(t.path(), cap_std::ambient_authority());
        let spool = Spool::create(&dir.unwrap()).unwrap();
        let mut arena = Arena::with_capacity(30, Some(spool));
        let model: Vec<Vec<u8>> = (0..30u8).map(|i| vec![i; i as usize % 7]).collect();
        for m in &model {
            arena.push(m);
        }
        arena.map().unwrap();
        assert_eq!((arena.heap(), arena.bytes.len()), (model.concat().len(), 0));
        for (k, m) in model.iter().enumerate() {
            assert_eq!(arena.get(k), &m[..]);
        }
        follow_vectors(arena, model);
    }
}
