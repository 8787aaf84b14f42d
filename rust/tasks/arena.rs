//! Many byte lists in one buffer (tasks/bm25.rs's posting lists and forward lists): a list is
//! a span of the buffer, so a load adopts a million lists by copying their bytes in, with no
//! allocation of their own (each of which cost its bytes again in allocator overhead and its
//! own call to the allocator). A list that outgrows its span moves to the buffer's end with
//! room to double (a build appends to every list in turn); the span it leaves is garbage, and
//! the buffer is compacted in place when garbage passes half of it, so an index edited for days
//! stays within a few times the size of its lists and an edit stays a copy of the lists it
//! touches.

use std::ops::Range;

#[derive(Default)]
pub struct Arena {
    bytes: Vec<u8>,
    spans: Vec<Span>,
    /// Bytes of `bytes` in no span.
    garbage: usize,
}

/// Where a list is: `len` bytes from `at`, with room for `cap`.
#[derive(Clone, Copy, Default)]
struct Span {
    at: usize,
    len: u32,
    cap: u32,
}

/// A list moved to the end gets room for at least this many bytes.
const MIN_CAP: usize = 8;

fn u32_len(n: usize) -> u32 {
    u32::try_from(n).expect("a list under 4 GiB")
}

impl Arena {
    /// Room for `lists` lists.
    pub fn with_capacity(lists: usize) -> Arena {
        Arena {
            spans: Vec::with_capacity(lists),
            ..Arena::default()
        }
    }

    pub fn len(&self) -> usize {
        self.spans.len()
    }

    /// List `i`.
    pub fn get(&self, i: usize) -> &[u8] {
        let s = self.spans[i];
        &self.bytes[s.at..s.at + s.len as usize]
    }

    /// A new last list holding `b` and no room beyond it.
    pub fn push(&mut self, b: &[u8]) {
        self.spans.push(Span {
            at: self.bytes.len(),
            len: u32_len(b.len()),
            cap: u32_len(b.len()),
        });
        self.bytes.extend_from_slice(b);
    }

    /// Empty lists up to `n` (none taken away).
    pub fn grow_to(&mut self, n: usize) {
        if self.spans.len() < n {
            self.spans.resize(n, Span::default());
        }
    }

    /// Every list (all empty) laid out again one after another, list `i` with room for
    /// exactly `caps[i]` bytes: lists then filled to sizes known ahead never move.
    pub fn lay_out(&mut self, caps: &[u32]) {
        debug_assert!(self.spans.iter().all(|s| s.len == 0) && caps.len() == self.spans.len());
        let mut at = 0;
        for (s, &cap) in self.spans.iter_mut().zip(caps) {
            *s = Span { at, len: 0, cap };
            at += cap as usize;
        }
        self.bytes = vec![0; at];
        self.garbage = 0;
    }

    /// Replace bytes `range` of list `i` with `new`.
    pub fn splice(&mut self, i: usize, range: Range<usize>, new: &[u8]) {
        let old = self.spans[i].len as usize;
        let len = old - range.len() + new.len();
        if len > self.spans[i].cap as usize {
            self.make_room(i, len);
        }
        let s = self.spans[i];
        let b = &mut self.bytes[s.at..s.at + s.cap as usize];
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
        if new.len() > self.spans[i].cap as usize {
            self.clear(i); // its bytes need not move with it
        }
        let len = self.spans[i].len as usize;
        self.splice(i, 0..len, new);
    }

    /// List `i` empty, its span given up.
    pub fn clear(&mut self, i: usize) {
        let cap = self.spans[i].cap as usize;
        self.spans[i] = Span::default();
        self.give_up(cap);
    }

    /// `n` more bytes of garbage: compacted when it passes half of the buffer.
    fn give_up(&mut self, n: usize) {
        self.garbage += n;
        if 2 * self.garbage > self.bytes.len() {
            self.compact();
        }
    }

    /// List `i` moved to the end (or grown there, if it is the last span) with room for `len`
    /// bytes and as many again as it had.
    fn make_room(&mut self, i: usize, len: usize) {
        let s = self.spans[i];
        let cap = len.max(2 * s.cap as usize).max(MIN_CAP);
        if s.at + s.cap as usize == self.bytes.len() && s.cap > 0 {
            self.bytes.resize(s.at + cap, 0);
            self.spans[i].cap = u32_len(cap);
        } else {
            let at = self.bytes.len();
            self.bytes.extend_from_within(s.at..s.at + s.len as usize);
            self.bytes.resize(at + cap, 0);
            self.spans[i] = Span {
                at,
                len: s.len,
                cap: u32_len(cap),
            };
            self.give_up(s.cap as usize);
        }
    }

    /// The lists moved down over the garbage, in the order they lie, each keeping its room.
    fn compact(&mut self) {
        let mut order: Vec<u32> = (0..self.spans.len() as u32)
            .filter(|&i| self.spans[i as usize].cap > 0)
            .collect();
        order.sort_unstable_by_key(|&i| self.spans[i as usize].at);
        let mut to = 0;
        for i in order {
            let s = &mut self.spans[i as usize];
            if s.at != to {
                self.bytes.copy_within(s.at..s.at + s.len as usize, to);
                s.at = to;
            }
            to += s.cap as usize;
        }
        self.bytes.truncate(to);
        self.garbage = 0;
    }

    /// Every list with no room beyond its bytes, and the spare capacity given back (after a
    /// bulk build).
    pub fn shrink(&mut self) {
        for s in &mut self.spans {
            self.garbage += (s.cap - s.len) as usize;
            s.cap = s.len;
        }
        if self.garbage > 0 {
            self.compact();
        }
        self.bytes.shrink_to_fit();
        self.spans.shrink_to_fit();
    }

    /// Bytes held: the buffer's and the spans'.
    pub fn heap_bytes(&self) -> usize {
        self.bytes.capacity() + self.spans.capacity() * std::mem::size_of::<Span>()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Lists spliced, set, cleared and appended to in a random order say what plain vectors
    /// given the same edits say, and the buffer stays within a bound of the bytes held.
    #[test]
    fn lists_follow_vectors_through_any_edits_and_garbage_stays_bounded() {
        let mut below = crate::testing::numbers(7);
        let mut arena = Arena::default();
        let mut model: Vec<Vec<u8>> = Vec::new();
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
            let spans: usize = arena.spans.iter().map(|s| s.cap as usize).sum();
            assert_eq!(spans + arena.garbage, arena.bytes.len(), "step {step}");
            assert!(2 * arena.garbage <= arena.bytes.len(), "step {step}");
            if step % 97 == 0 {
                for (k, m) in model.iter().enumerate() {
                    assert_eq!(arena.get(k), &m[..], "list {k} at step {step}");
                }
            }
        }
    }
}
