//! A file record's stat key packed (`Packed`, 32 bytes rather than `StatKey`'s 48): the inode
//! and both times whole, the size's low half, and one number for what files of a tree share
//! (the device, the mode, the size's high half), looked up in a table (`Shared`) holding each
//! such triple once; the record's `code` flag rides in that number's top bit. Nothing is lost:
//! the key unpacked is the key packed, so a comparison is exactly as strict as on `StatKey`.

use super::files::StatKey;
use std::collections::HashMap;
use std::num::NonZeroU32;

/// The record's `code` flag in `Packed::shared`.
const CODE: u32 = 1 << 31;

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Packed {
    ino: u64,
    mtime: i64,
    ctime: i64,
    size: u32,
    /// `Shared`'s number of its (dev, mode, size >> 32), plus one, and `CODE`; never 0, so an
    /// `Option` of a record costs nothing.
    shared: NonZeroU32,
}

impl Packed {
    /// Code and not a test (files::is_code_not_test), as given to `Shared::pack`.
    pub fn code(&self) -> bool {
        self.shared.get() & CODE != 0
    }
}

/// Each (dev, mode, size >> 32) of the keys packed, once, by number.
#[derive(Default)]
pub struct Shared {
    list: Vec<(u64, u32, u32)>,
    by: HashMap<(u64, u32, u32), u32>,
}

impl Shared {
    pub fn pack(&mut self, k: StatKey, code: bool) -> Packed {
        let triple = (k.dev, k.mode, (k.size >> 32) as u32);
        // The files of a tree mostly share one triple: the last one is tried before hashing.
        let n = match self.list.last() {
            Some(last) if *last == triple => self.list.len() as u32 - 1,
            _ => *self.by.entry(triple).or_insert_with(|| {
                self.list.push(triple);
                self.list.len() as u32 - 1
            }),
        };
        assert!(n + 1 < CODE, "under 2^31 devices and modes");
        let shared = (n + 1) | if code { CODE } else { 0 };
        Packed {
            ino: k.ino,
            mtime: k.mtime,
            ctime: k.ctime,
            size: k.size as u32,
            shared: NonZeroU32::new(shared).expect("not 0"),
        }
    }

    pub fn unpack(&self, p: &Packed) -> StatKey {
        let (dev, mode, high) = self.list[((p.shared.get() & !CODE) - 1) as usize];
        StatKey {
            dev,
            ino: p.ino,
            size: (u64::from(high) << 32) | u64::from(p.size),
            mode,
            mtime: p.mtime,
            ctime: p.ctime,
        }
    }

    pub fn heap_bytes(&self) -> usize {
        self.list.capacity() * 16 + self.by.capacity() * 24
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Keys of every field's extremes and of random fields (a few devices and modes, sizes
    /// over 4 GiB among them) unpack to themselves with their flag, each triple held once.
    #[test]
    fn a_key_unpacks_to_itself_whatever_its_fields() {
        let mut below = crate::testing::numbers(29);
        let mut any = move |n: u64| below(n) | below(n) << 32;
        let mut keys = vec![
            StatKey::default(),
            StatKey {
                dev: u64::MAX,
                ino: u64::MAX,
                size: u64::MAX,
                mode: u32::MAX,
                mtime: i64::MIN,
                ctime: i64::MAX,
            },
        ];
        for _ in 0..2000 {
            keys.push(StatKey {
                dev: any(3),
                ino: any(1 << 31),
                size: any(4) << 30 | any(1 << 20),
                mode: 0o100644 | any(2) as u32,
                mtime: any(1 << 31) as i64 - (1 << 40),
                ctime: any(1 << 31) as i64,
            });
        }
        let mut shared = Shared::default();
        let packed: Vec<(Packed, bool)> = (keys.iter().enumerate())
            .map(|(i, &k)| (shared.pack(k, i % 3 == 0), i % 3 == 0))
            .collect();
        for (k, (p, code)) in keys.iter().zip(&packed) {
            assert_eq!((shared.unpack(p), p.code()), (*k, *code));
        }
        let triples: std::collections::HashSet<_> = (keys.iter())
            .map(|k| (k.dev, k.mode, k.size >> 32))
            .collect();
        assert_eq!(shared.list.len(), triples.len(), "each triple once");
    }

    /// What packing is for: a record of 40 bytes (64 with a `StatKey` and a flag), an
    /// `Option` of one no more.
    #[test]
    fn a_record_is_40_bytes_with_or_without_an_option() {
        assert_eq!(std::mem::size_of::<Packed>(), 32);
        assert_eq!(std::mem::size_of::<Option<super::super::index::File>>(), 40);
    }
}
