//! The task index on disk: the index's own structures as they are in memory (tasks/index.rs,
//! tasks/bm25.rs), so a later process (a cold CLI call, a server warming up, the prompt hook)
//! checks the bytes in one pass and adopts them (`Index::build_from`) instead of putting every
//! file in again: each term's posting list, each file's forward list of terms, the names each
//! file defines, its imports as written and as resolved to files, its annotations, its path and
//! stat key. Files whose stat key changed since are then taken out and read again by the
//! ordinary path of an update. What is cheap to make again from these (the name and path
//! tables, the reverse graph, the modules) is made again. So are the notes read of each
//! `.context.yaml` (tasks/written.rs), each with the stat key of its file, so a load reads
//! again only the context files that changed; the rest of the written context (project.yaml,
//! `.contextia/`: a few files) is read again, and git's history has a file of its own.
//!
//! The bytes are untrusted (a repository can commit any file at the place they are kept), so
//! the format is small and hand-written, read by a decoder that checks everything in one linear
//! pass: a magic, the format's version, the core's build identity (build.rs: structures made by
//! other code are never read back) and the options and root the index was built with must
//! match; every count and length is checked against the bytes left before anything is
//! allocated for it (each element takes one byte at least), every string must be UTF-8, every
//! varint fits its type, every id falls in its table, ids of a list rise strictly, paths are
//! unique, each term's posting list and the files' forward lists say the same postings (see
//! `PairSet`), a file imports no file twice nor itself, and the bytes end where the last term
//! does. Any failure is an `Err` (the caller builds from scratch): no panic, no allocation
//! larger than the input. A file taken from it is trusted only while its stat key (mtime and
//! ctime in ns, size, inode) is the one the file has now.
//!
//! The pass reads the file a piece at a time (`Pieces`: 1 MiB, more only for one part larger
//! than that), so a load holds the index it makes and one piece, not also every byte of the
//! file (436 MB at a million files). The checksum is summed as the pieces go and compared at
//! the end; what was adopted before then is thrown away by the caller when it is not the sum.
//! The file is read, not mapped: a repository's process can shrink a mapped file under us,
//! and a read of a page gone is a SIGBUS; a read that comes short is an `Err`. What the index
//! reads in place is a private copy of the checked lists instead (tasks/arena.rs).
//!
//! Layout: integers are LEB128 varints (signed ones zigzag), strings and byte lists a varint
//! length and the bytes; the last 8 bytes are a checksum (SipHash, little-endian) of all before
//! them, so a file cut short or damaged is refused whole. The checksum is no defence (anyone can
//! compute it): the checks of the decoder are. Files are numbered 0.. in the order they are
//! written (the index's own order, holes closed up); terms and names by their place in their
//! tables, each in byte order.
//!
//! ```text
//! magic "RCTXTIDX", version (u32 LE), build identity, root, ignore patterns (count, strings),
//! annotation prefix, contextia (0, or 1 and the path)
//! resolved: 1 when every file's resolved imports below are current, else 0
//! terms: count (the table itself comes last)
//! names: count, strings in byte order, unique
//! files: count, then each: path, mtime, ctime, size, inode, device, mode, length in terms,
//!        forward list (bytes: term id gaps from 0, rising; the counts are the postings'),
//!        names (bytes: name id gaps from 0, rising), resolved imports (count, file id gaps),
//!        imports (count, then a tag 0 Python (dots, module) 1 Js 2 Rust (count, segments) 3 Go),
//!        annotations (count, then (line, artifact id))
//! terms: each a string, then its posting list (bytes: (file gap, count) varint pairs,
//!        files rising)
//! context files: count, then each (directories in byte order): its directory, mtime, ctime,
//!        size, inode, device, mode, notes (count, then each: 0 for the directory's files or
//!        1 and a file's path, length in terms, (term, count) pairs: count, terms in byte order)
//! ```
//!
//! The lists are the index's own packed varints (tasks/varint.rs), so a save copies them and a
//! load copies them out of the piece after the check, without decoding a posting into anything. Why
//! hand-written rather than serde with postcard or bincode: the packed lists are already bytes,
//! the checks that matter (ids within their tables, rising ids, unique paths, lists that agree)
//! are the decoder's own anyway, and it needs no new crate.

use super::files::StatKey;
use super::options::Options;
use super::varint;
use crate::lang::imports::Import;
use std::hash::{BuildHasher, DefaultHasher, Hasher, RandomState};
use std::io::{self, Write};
use std::path::Path;

pub const MAGIC: &[u8; 8] = b"RCTXTIDX";
/// Raised whenever the layout changes.
pub const VERSION: u32 = 5;
/// The core's build identity (build.rs).
pub const BUILD_ID: &str = env!("REPOCTX_BUILD_ID");
/// An import's leading dots beyond this are no Python a file holds.
const MAX_DOTS: u64 = 1 << 20;

/// What a saved index is read up to: about 1 KB per file of real code (250 bytes on the
/// synthetic tree), so this holds a tree of a million files; a larger save is not written.
pub const MOST_SAVED_BYTES: u64 = 1 << 30;
/// And never more than this per file of the tree, plus the tables: the bytes are untrusted, so
/// a crafted file (a sparse 1 GiB one in a tree of ten files) is refused by its size, unread.
const SAVED_BYTES_PER_FILE: u64 = 16 << 10;
const SAVED_BYTES_BASE: u64 = 4 << 20;

/// The most bytes a saved index of a tree of `files` files is read up to.
pub fn saved_cap(files: u64) -> u64 {
    MOST_SAVED_BYTES
        .min(SAVED_BYTES_BASE.saturating_add(files.saturating_mul(SAVED_BYTES_PER_FILE)))
}

/// The fewest files of a tree whose `saved_cap` is `len` bytes or more (None: no tree's is).
pub fn files_for(len: u64) -> Option<u64> {
    (len <= MOST_SAVED_BYTES).then(|| {
        len.saturating_sub(SAVED_BYTES_BASE)
            .div_ceil(SAVED_BYTES_PER_FILE)
    })
}

/// What the check of saved bytes hands on as it goes, in the file's order: the index adopts
/// each part as it is checked (tasks/index.rs), so neither the file's bytes nor a decoded copy
/// of every file is held beside the index; a part borrows the window it was checked in and
/// lives for the call only. A part is handed on only when it passed its checks; when `decode`
/// then fails (the checksum is checked last), what was handed on must be thrown away.
pub trait Sink {
    /// The header's flag (each file's `out` is what resolving its imports gives now), and how
    /// many defined names and terms there are.
    fn start(&mut self, resolved: bool, names: usize, terms: usize);
    /// Defined name `id` (numbered from 0, in byte order).
    fn name(&mut self, id: u32, name: &str);
    /// How many files follow.
    fn files(&mut self, files: usize);
    /// File `id` (numbered from 0, in order); false when a file handed on before has its path.
    fn file(&mut self, id: u32, file: SavedFile<'_>) -> bool;
    /// Term `id` (numbered from 0, in byte order).
    fn term(&mut self, id: u32, term: SavedTerm<'_>);
    /// The bytes of one directory's context file's notes, checked (directories in byte order;
    /// `saved_scopes` reads them).
    fn scope(&mut self, part: &[u8]);
    /// Every file is in: `adopt` checks the terms and hands each to the function it is given.
    /// A sink may do work of its own beside it, on another thread, that the terms do not change.
    fn beside_terms(&mut self, adopt: AdoptTerms<'_>) -> Result<(), String> {
        adopt(&mut |id, t| self.term(id, t))
    }
}

/// The check of the terms, handing each that passed to the function it is given.
pub type AdoptTerms<'a> =
    &'a mut dyn FnMut(&mut dyn FnMut(u32, SavedTerm<'_>)) -> Result<(), String>;

#[derive(Debug)]
pub struct SavedTerm<'b> {
    pub term: &'b str,
    /// (file gap, count) pairs, as tasks/bm25.rs keeps a posting list.
    pub postings: &'b [u8],
    /// How many files hold it, and the last of them.
    pub df: u32,
    pub last: u32,
}

/// One file as saved: its terms and names by their ids in `Saved`'s tables.
#[derive(Debug)]
pub struct SavedFile<'b> {
    pub path: &'b str,
    pub key: StatKey,
    pub len: u32,
    /// Term id gaps from 0, rising, as tasks/bm25.rs keeps a forward list.
    pub forward: &'b [u8],
    /// Name id gaps from 0, rising (tasks/index.rs `packed_ids`).
    pub defs: &'b [u8],
    /// The files its imports resolve to, rising.
    pub out: Vec<u32>,
    pub imports: Vec<Import>,
    pub annotations: Vec<(u32, Box<str>)>,
}

/// The notes of one directory's context file as saved (tasks/written.rs), with the stat key
/// of the file they were read from.
#[derive(Debug)]
pub struct SavedScope<'b> {
    pub dir: &'b str,
    pub key: StatKey,
    pub notes: Vec<NoteOut<'b>>,
}

/// One note of a context file: its words counted, for the directory's files (`file` None) or
/// for one file.
#[derive(Debug)]
pub struct NoteOut<'b> {
    pub file: Option<&'b str>,
    pub len: u32,
    /// Terms in byte order, unique, each counted once at least.
    pub counts: Vec<(&'b str, u32)>,
}

/// One file to write, its terms and names by their ids in the tables given to `encode`.
pub struct FileOut<'a> {
    pub path: &'a str,
    pub key: StatKey,
    pub len: u32,
    pub forward: &'a [u8],
    pub defs: &'a [u8],
    /// Rising.
    pub out: &'a [u32],
    pub imports: &'a [Import],
    pub annotations: &'a [(u32, Box<str>)],
}

// --- writing --------------------------------------------------------------------------------

fn put_i(out: &mut Vec<u8>, v: i64) {
    varint::put(out, ((v << 1) ^ (v >> 63)) as u64);
}

fn put_s(out: &mut Vec<u8>, s: &[u8]) {
    varint::put(out, s.len() as u64);
    out.extend_from_slice(s);
}

fn header(out: &mut Vec<u8>, root: &Path, opts: &Options) {
    out.extend_from_slice(MAGIC);
    out.extend_from_slice(&VERSION.to_le_bytes());
    put_s(out, BUILD_ID.as_bytes());
    put_s(out, root.as_os_str().as_encoded_bytes());
    varint::put(out, opts.extra_ignore.len() as u64);
    for p in &opts.extra_ignore {
        put_s(out, p.as_bytes());
    }
    put_s(out, opts.prefix.as_bytes());
    match &opts.contextia {
        None => out.push(0),
        Some(p) => {
            out.push(1);
            put_s(out, p.as_os_str().as_encoded_bytes());
        }
    }
}

fn put_key(out: &mut Vec<u8>, key: &StatKey) {
    put_i(out, key.mtime);
    put_i(out, key.ctime);
    varint::put(out, key.size);
    varint::put(out, key.ino);
    varint::put(out, key.dev);
    varint::put(out, u64::from(key.mode));
}

/// Append one file.
pub fn encode_file(out: &mut Vec<u8>, f: &FileOut) {
    put_s(out, f.path.as_bytes());
    put_key(out, &f.key);
    varint::put(out, f.len);
    put_s(out, f.forward);
    put_s(out, f.defs);
    varint::put(out, f.out.len() as u64);
    varint::put_rising(out, f.out.iter().copied());
    varint::put(out, f.imports.len() as u64);
    for i in f.imports {
        match i {
            Import::Python(dots, m) => {
                out.push(0);
                varint::put(out, *dots as u64);
                put_s(out, m.as_bytes());
            }
            Import::Js(s) => {
                out.push(1);
                put_s(out, s.as_bytes());
            }
            Import::Rust(segs) => {
                out.push(2);
                varint::put(out, segs.len() as u64);
                for s in segs {
                    put_s(out, s.as_bytes());
                }
            }
            Import::Go(s) => {
                out.push(3);
                put_s(out, s.as_bytes());
            }
        }
    }
    varint::put(out, f.annotations.len() as u64);
    for (line, id) in f.annotations {
        varint::put(out, *line);
        put_s(out, id.as_bytes());
    }
}

fn checksum(b: &[u8]) -> [u8; 8] {
    let mut h = DefaultHasher::new(); // fixed keys: the same bytes give the same sum in every process
    h.write(b);
    h.finish().to_le_bytes()
}

/// Ends a saved file (this one, or tasks/history_store.rs's): the checksum of all before it.
pub(super) fn seal(out: &mut Vec<u8>) {
    let sum = checksum(out);
    out.extend_from_slice(&sum);
}

/// The bytes of a saved file before its checksum, when the checksum is theirs; else why not
/// (`not_sealed`).
pub(super) fn unseal<'b>(bytes: &'b [u8], magic: &[u8], what: &str) -> Result<&'b [u8], String> {
    match bytes.len().checked_sub(8).map(|n| bytes.split_at(n)) {
        Some((body, sum)) if checksum(body) == sum => Ok(body),
        _ => Err(not_sealed(bytes, magic, what)),
    }
}

/// Why a saved file whose checksum is not its bytes' (`head`, its first bytes) is refused:
/// damaged or cut short when it starts with `magic`, else not a `what` at all.
fn not_sealed(head: &[u8], magic: &[u8], what: &str) -> String {
    if head.starts_with(magic) {
        "damaged or cut short (its checksum is not its bytes')".into()
    } else {
        format!("not a {what}")
    }
}

/// A saved index written as it is encoded (`Index::save_into`), so its bytes are never all
/// held: the header and the names (`start`), then the files (`encode_file`) and the terms
/// (`encode_term`) in any number of pieces (`put`), then the checksum (`finish`), summed as
/// the bytes go. It holds at most `most` bytes: past them a write is refused (`TooLarge`).
pub struct Encoder<W> {
    out: W,
    sum: DefaultHasher,
    left: u64,
}

impl<W: Write> Encoder<W> {
    /// The header, the names (in byte order, unique) and how many terms (in byte order,
    /// unique, each with its posting list) and files follow.
    #[allow(clippy::too_many_arguments)]
    pub fn start(
        out: W,
        most: u64,
        root: &Path,
        opts: &Options,
        resolved: bool,
        names: &[&str],
        terms: usize,
        files: usize,
    ) -> io::Result<Encoder<W>> {
        let mut head = Vec::with_capacity(256 + names.iter().map(|n| n.len() + 2).sum::<usize>());
        header(&mut head, root, opts);
        head.push(resolved as u8);
        varint::put(&mut head, terms as u64);
        varint::put(&mut head, names.len() as u64);
        for s in names {
            put_s(&mut head, s.as_bytes());
        }
        varint::put(&mut head, files as u64);
        let mut e = Encoder {
            out,
            sum: DefaultHasher::new(), // fixed keys, as `checksum`
            left: most,
        };
        e.put(&head)?;
        Ok(e)
    }

    /// Append encoded parts.
    pub fn put(&mut self, b: &[u8]) -> io::Result<()> {
        self.left = self
            .left
            .checked_sub(b.len() as u64)
            .ok_or_else(|| io::Error::other(TooLarge))?;
        self.sum.write(b);
        self.out.write_all(b)
    }

    /// The checksum after all that was put.
    pub fn finish(mut self) -> io::Result<W> {
        let sum = self.sum.finish().to_le_bytes();
        self.put(&sum)?;
        Ok(self.out)
    }
}

/// Why `Encoder::put` refused bytes: the file would pass its `most` (not the system's EFBIG,
/// which is a write that failed).
#[derive(Debug)]
pub struct TooLarge;

impl std::fmt::Display for TooLarge {
    fn fmt(&self, f: &mut std::fmt::Formatter) -> std::fmt::Result {
        f.write_str("a saved index larger than its cap")
    }
}

impl std::error::Error for TooLarge {}

impl TooLarge {
    /// Whether `e` is this refusal.
    pub fn is(e: &io::Error) -> bool {
        e.get_ref().is_some_and(|e| e.is::<TooLarge>())
    }
}

/// Append one term and its posting list.
pub fn encode_term(out: &mut Vec<u8>, term: &str, postings: &[u8]) {
    put_s(out, term.as_bytes());
    put_s(out, postings);
}

/// The context files' notes of parts a `Sink` was given (`scope`), one after another: each
/// read as it was checked (what does not read is no part so given, and ends them).
pub fn saved_scopes(b: &[u8]) -> impl Iterator<Item = SavedScope<'_>> {
    let mut r = Reader::new(b);
    std::iter::from_fn(move || r.scope().ok())
}

/// Append how many context files' notes follow (after the last term).
pub fn encode_scope_count(out: &mut Vec<u8>, n: usize) {
    varint::put(out, n as u64);
}

/// Append the notes read of one directory's context file (directories in byte order, each
/// note's terms in byte order), with the stat key of the file they were read from.
pub fn encode_scope(out: &mut Vec<u8>, dir: &str, key: &StatKey, notes: &[NoteOut<'_>]) {
    put_s(out, dir.as_bytes());
    put_key(out, key);
    varint::put(out, notes.len() as u64);
    for n in notes {
        match n.file {
            None => out.push(0),
            Some(p) => {
                out.push(1);
                put_s(out, p.as_bytes());
            }
        }
        varint::put(out, n.len);
        varint::put(out, n.counts.len() as u64);
        for (term, count) in &n.counts {
            put_s(out, term.as_bytes());
            varint::put(out, *count);
        }
    }
}

// --- reading --------------------------------------------------------------------------------

/// The Mersenne prime 2^61 - 1: products below are taken modulo it.
const P: u64 = (1 << 61) - 1;

fn mul_mod(a: u64, b: u64) -> u64 {
    let m = a as u128 * b as u128;
    let s = (m as u64 & P) + (m >> 61) as u64;
    if s >= P {
        s - P
    } else {
        s
    }
}

/// A set of (term, file) pairs, kept as the product of (r - pair) modulo `P` at a point r drawn
/// in each process. The posting lists and the forward lists are each read once in their own
/// order (an earlier check met each posting in its file's forward list, and those reads out of
/// order, one cache miss a posting, were a fifth of a load); two different sets of n pairs give
/// the same product at at most n of the P points (two polynomials of degree n), so a file made
/// to pass must guess r: at most n / 2^61 for one try, about 1 in 10^9 for a saved index of 10^9
/// bytes. Both sides are sets (ids rise within every list), so equal products say equal sets.
/// The product is kept in `LANES` parts, the pairs dealt to them in turn: one chain of
/// multiplications waits on each before it (about 7 cycles a pair, 2 × 140 million pairs at a
/// million files), where several chains run at once; their product is the same.
#[derive(Clone, Copy)]
struct PairSet {
    r: u64,
    files: u64,
    lanes: [u64; LANES],
    /// Pairs added: the next goes to lane `added % LANES`.
    added: usize,
}

const LANES: usize = 4;

impl PairSet {
    /// For `terms` × `files` pairs; None when their numbers do not fit below `P`.
    fn new(r: u64, terms: usize, files: usize) -> Option<PairSet> {
        let pairs = (terms as u128).checked_mul(files as u128)?;
        (pairs < P as u128).then_some(PairSet {
            r,
            files: files as u64,
            lanes: [1; LANES],
            added: 0,
        })
    }

    #[inline]
    fn add(&mut self, term: u32, file: u32) {
        let x = u64::from(term) * self.files + u64::from(file);
        let d = self.r + P - x;
        let lane = &mut self.lanes[self.added % LANES];
        *lane = mul_mod(*lane, if d >= P { d - P } else { d });
        self.added += 1;
    }

    /// The product of (r - pair) over the pairs added.
    fn product(&self) -> u64 {
        self.lanes.iter().fold(1, |p, &l| mul_mod(p, l))
    }
}

/// A reader of the bytes of one part, held in a window of the file (`Pieces`) or in a list of
/// the part.
struct Reader<'a> {
    b: &'a [u8],
    at: usize,
    /// Where `b` starts in the file, for the errors' byte numbers.
    base: u64,
    /// Bytes of the file after `b` not read yet: a count is checked against them too, and a
    /// part that runs past `b` into them is `starved` (read again in a larger window), not cut.
    more: u64,
    starved: bool,
}

type Res<T> = Result<T, String>;

impl<'a> Reader<'a> {
    fn new(b: &'a [u8]) -> Reader<'a> {
        Reader {
            b,
            at: 0,
            base: 0,
            more: 0,
            starved: false,
        }
    }

    /// Where the reader is in the file.
    fn pos(&self) -> u64 {
        self.base + self.at as u64
    }

    /// The bytes left to the end of the file's body, read or not.
    fn left(&self) -> u64 {
        (self.b.len() - self.at) as u64 + self.more
    }

    fn bytes(&mut self, n: usize) -> Res<&'a [u8]> {
        if n > self.b.len() - self.at {
            self.starved = n as u64 <= self.left();
            return Err(format!("truncated at byte {}", self.pos()));
        }
        let s = &self.b[self.at..self.at + n];
        self.at += n;
        Ok(s)
    }

    fn byte(&mut self) -> Res<u8> {
        Ok(self.bytes(1)?[0])
    }

    #[inline]
    fn u(&mut self) -> Res<u64> {
        // Most numbers of a saved index are gaps and counts of one byte.
        match self.b.get(self.at) {
            Some(&b) if b < 0x80 => {
                self.at += 1;
                Ok(b as u64)
            }
            _ => self.u_long(),
        }
    }

    /// `u` past its one-byte case, out of line so the case is inlined where lists are read.
    #[inline(never)]
    fn u_long(&mut self) -> Res<u64> {
        let mut v = 0u64;
        for i in 0..10 {
            let b = self.byte()?;
            if i == 9 && b > 1 {
                break;
            }
            v |= ((b & 0x7f) as u64) << (7 * i);
            if b < 0x80 {
                return Ok(v);
            }
        }
        Err(format!("a varint too long at byte {}", self.pos()))
    }

    /// A varint that fits a u32 in at most five bytes (what tasks/varint.rs `get` reads).
    #[inline]
    fn u32(&mut self) -> Res<u32> {
        // Inlined for the lists' gaps and counts: one or two bytes nearly always.
        match self.b.get(self.at..self.at + 2) {
            Some(&[b, _]) if b < 0x80 => {
                self.at += 1;
                Ok(b as u32)
            }
            Some(&[b, c]) if c < 0x80 => {
                self.at += 2;
                Ok((b & 0x7f) as u32 | (c as u32) << 7)
            }
            _ => self.u32_long(),
        }
    }

    #[inline(never)]
    fn u32_long(&mut self) -> Res<u32> {
        let start = self.at;
        let v = self.u()?;
        if self.at - start > 5 {
            return Err(format!(
                "a varint too long at byte {}",
                self.base + start as u64
            ));
        }
        u32::try_from(v).map_err(|_| format!("{v} is out of range at byte {}", self.pos()))
    }

    fn i(&mut self) -> Res<i64> {
        let v = self.u()?;
        Ok((v >> 1) as i64 ^ -((v & 1) as i64))
    }

    /// A count of elements that take `min` bytes each at least: never more than the bytes left can hold.
    fn count(&mut self, min: usize) -> Res<usize> {
        let n = self.u()?;
        if n > self.left() / min as u64 {
            return Err(format!(
                "a count of {n} with {} bytes left, at byte {}",
                self.left(),
                self.pos()
            ));
        }
        Ok(n as usize)
    }

    /// Bytes preceded by their length.
    fn run(&mut self) -> Res<&'a [u8]> {
        let n = self.count(1)?;
        self.bytes(n)
    }

    fn s(&mut self) -> Res<&'a str> {
        std::str::from_utf8(self.run()?)
            .map_err(|_| format!("a string that is not UTF-8 before byte {}", self.pos()))
    }

    /// The next id of a rising list below `bound`: the first as it is, then each the gap from
    /// the one before, never 0.
    #[inline]
    fn next_id(&mut self, prev: Option<u32>, bound: usize) -> Res<u32> {
        let d = self.u32()?;
        let id = match prev {
            None => Some(d),
            Some(p) if d > 0 => p.checked_add(d),
            Some(_) => None,
        };
        match id {
            Some(id) if (id as usize) < bound => Ok(id),
            _ => Err(self.not_next(prev, d, bound)),
        }
    }

    /// Why gap `d` after `prev` gives no next id below `bound`.
    #[cold]
    fn not_next(&self, prev: Option<u32>, d: u32, bound: usize) -> String {
        match prev.map(|p| (d, p.checked_add(d))) {
            Some((0, _)) => format!("ids not rising at byte {}", self.pos()),
            Some((_, None)) => "an id overflows".into(),
            _ => format!(
                "id {} outside its table of {bound} at byte {}",
                prev.unwrap_or(0) + d,
                self.pos()
            ),
        }
    }

    fn import(&mut self) -> Res<Import> {
        Ok(match self.byte()? {
            0 => {
                let dots = self.u()?;
                if dots > MAX_DOTS {
                    return Err(format!("{dots} leading dots at byte {}", self.pos()));
                }
                Import::Python(dots as usize, self.s()?.to_string())
            }
            1 => Import::Js(self.s()?.to_string()),
            2 => {
                let n = self.count(1)?;
                let mut segs = Vec::with_capacity(n);
                for _ in 0..n {
                    segs.push(self.s()?.to_string());
                }
                Import::Rust(segs)
            }
            3 => Import::Go(self.s()?.to_string()),
            t => return Err(format!("import tag {t} at byte {}", self.pos())),
        })
    }

    fn key(&mut self) -> Res<StatKey> {
        let (mtime, ctime, size, ino, dev, mode) = (
            self.i()?,
            self.i()?,
            self.u()?,
            self.u()?,
            self.u()?,
            self.u32()?,
        );
        Ok(StatKey {
            dev,
            ino,
            size,
            mode,
            mtime,
            ctime,
        })
    }

    /// The notes of one context file: each note's terms unique and rising, each counted once
    /// at least, its length at least the sum of its counts.
    fn scope(&mut self) -> Res<SavedScope<'a>> {
        let dir = self.s()?;
        let key = self.key()?;
        // A note takes 3 bytes at least: its tag, its length and its count of terms.
        let n = self.count(3)?;
        let mut notes = Vec::with_capacity(n);
        for _ in 0..n {
            let file = match self.byte()? {
                0 => None,
                1 => Some(self.s()?),
                t => return Err(format!("a note's tag {t} at byte {}", self.pos())),
            };
            let len = self.u32()?;
            let terms = self.count(2)?;
            let mut counts: Vec<(&str, u32)> = Vec::with_capacity(terms);
            let mut sum = 0u64;
            for _ in 0..terms {
                let (term, count) = (self.s()?, self.u32()?);
                if counts.last().is_some_and(|(t, _)| *t >= term) || count == 0 {
                    return Err(format!(
                        "a note's terms out of order at byte {}",
                        self.pos()
                    ));
                }
                sum += u64::from(count);
                counts.push((term, count));
            }
            if sum > u64::from(len) {
                return Err(format!(
                    "a note's terms past its length at byte {}",
                    self.pos()
                ));
            }
            notes.push(NoteOut { file, len, counts });
        }
        Ok(SavedScope { dir, key, notes })
    }

    /// File `id` of `files`; its forward list's pairs go to `held`, to be checked against the
    /// posting lists' later.
    fn file(
        &mut self,
        id: u32,
        (files, terms, names): (usize, usize, usize),
        held: &mut PairSet,
    ) -> Res<SavedFile<'a>> {
        let path = self.s()?;
        let key = self.key()?;
        let len = self.u32()?;
        let forward = self.run()?;
        let mut r = Reader::new(forward);
        let mut prev = None;
        while r.left() > 0 {
            let term = r
                .next_id(prev, terms)
                .map_err(|e| format!("the forward list of {path}: {e}"))?;
            held.add(term, id);
            prev = Some(term);
        }
        let defs = self.run()?;
        let mut r = Reader::new(defs);
        let mut prev = None;
        while r.left() > 0 {
            prev = Some(
                r.next_id(prev, names)
                    .map_err(|e| format!("names of {path}: {e}"))?,
            );
        }
        let n = self.count(1)?;
        let mut out = Vec::with_capacity(n);
        let mut prev = None;
        for _ in 0..n {
            let o = self.next_id(prev, files)?;
            if o == id {
                return Err(format!("{path} imports itself"));
            }
            out.push(o);
            prev = Some(o);
        }
        let n = self.count(2)?;
        let mut imports = Vec::with_capacity(n);
        for _ in 0..n {
            imports.push(self.import()?);
        }
        let n = self.count(2)?;
        let mut annotations = Vec::with_capacity(n);
        for _ in 0..n {
            annotations.push((self.u32()?, self.s()?.into()));
        }
        Ok(SavedFile {
            path,
            key,
            len,
            forward,
            defs,
            out,
            imports,
            annotations,
        })
    }
}

/// How many bytes of a saved file are read at a time: the window a part is checked in grows
/// past it only for a part that is larger.
const PIECE: usize = 1 << 20;

/// The body of a saved file (all before its checksum) read a piece at a time, so its bytes are
/// never all held at once: a window of what is read and not yet checked, and the checksum of
/// what is. Each part (the header, a name, a file, a term) is checked in the window; a part
/// that runs past it is checked again in a larger one (`part`).
struct Pieces<R> {
    read: R,
    buf: Vec<u8>,
    /// `buf[..start]` is checked; its bytes are summed when the window moves on.
    start: usize,
    /// Where `buf` starts in the file.
    base: u64,
    /// Bytes of the body not read into `buf` yet.
    unread: u64,
    /// How many bytes are read at a time (`PIECE`; tests use a few).
    piece: usize,
    sum: DefaultHasher,
    /// The file's first bytes (up to the magic's length), to tell a damaged file from another.
    head: Vec<u8>,
}

impl<R: std::io::Read> Pieces<R> {
    fn new(read: R, body: u64, piece: usize) -> Pieces<R> {
        Pieces {
            read,
            buf: Vec::new(),
            start: 0,
            base: 0,
            unread: body,
            piece,
            sum: DefaultHasher::new(), // fixed keys, as `checksum`
            head: Vec::new(),
        }
    }

    /// Bytes of the body not checked yet.
    fn left(&self) -> u64 {
        (self.buf.len() - self.start) as u64 + self.unread
    }

    /// Read `n` more bytes of the file after `buf`.
    fn read_more(&mut self, n: usize) -> Res<()> {
        let old = self.buf.len();
        self.buf.resize(old + n, 0);
        self.read
            .read_exact(&mut self.buf[old..])
            .map_err(|e| format!("could not be read whole: {e}"))?;
        if self.head.len() < MAGIC.len() {
            let more = (MAGIC.len() - self.head.len()).min(n);
            self.head.extend_from_slice(&self.buf[old..old + more]);
        }
        Ok(())
    }

    /// Drop the checked bytes (summed first) and read the next piece, or as many bytes again
    /// as the window holds when one part fills it.
    fn fill(&mut self) -> Res<()> {
        self.sum.write(&self.buf[..self.start]);
        self.buf.drain(..self.start);
        self.base += self.start as u64;
        self.start = 0;
        let n = self.buf.len().max(self.piece).min(self.unread as usize);
        if n == 0 {
            return Err(format!("truncated at byte {}", self.base));
        }
        self.unread -= n as u64;
        self.read_more(n)
    }

    /// Check the next part with `check`, which hands it on once it passed: run again on a
    /// larger window while it ran out of bytes the file still holds (so it must leave nothing
    /// behind before it passed).
    fn part<T>(&mut self, mut check: impl FnMut(&mut Reader<'_>) -> Res<T>) -> Res<T> {
        loop {
            let mut r = Reader {
                b: &self.buf[self.start..],
                at: 0,
                base: self.base + self.start as u64,
                more: self.unread,
                starved: false,
            };
            match check(&mut r) {
                Ok(v) => {
                    self.start += r.at;
                    return Ok(v);
                }
                Err(_) if r.starved => self.fill()?,
                Err(e) => return Err(e),
            }
        }
    }

    /// Whether the checksum after the body is the sum of the body, reading (and summing) the
    /// rest of the body first when the check stopped short of it.
    fn summed(mut self) -> Res<bool> {
        self.sum.write(&self.buf);
        while self.unread > 0 {
            let n = (self.unread as usize).min(self.piece);
            self.buf.clear();
            self.unread -= n as u64;
            self.read_more(n)?;
            self.sum.write(&self.buf);
        }
        self.buf.clear();
        self.read_more(8)?;
        Ok(self.sum.finish().to_le_bytes()[..] == self.buf[..])
    }
}

/// Check a saved index of `len` bytes, read from `read` a piece at a time, for an index of
/// `root` built with `opts`, handing each part to `sink` as it passes; Err says why it cannot
/// be used (the caller then builds from scratch, throwing away what was handed on: the
/// checksum is known only at the end).
pub fn decode(
    read: impl std::io::Read,
    len: u64,
    root: &Path,
    opts: &Options,
    sink: &mut impl Sink,
) -> Result<(), String> {
    decode_in(read, len, PIECE, root, opts, sink)
}

/// `decode`, reading `piece` bytes at a time.
fn decode_in(
    read: impl std::io::Read,
    len: u64,
    piece: usize,
    root: &Path,
    opts: &Options,
    sink: &mut impl Sink,
) -> Result<(), String> {
    let Some(body) = len.checked_sub(8) else {
        return Err("not a saved task index".into());
    };
    let mut pieces = Pieces::new(read, body, piece);
    let checked = parse(&mut pieces, root, opts, sink);
    // The checksum is read whatever the check found: a damaged file is called damaged.
    let head = std::mem::take(&mut pieces.head);
    match pieces.summed()? {
        true => checked,
        false => Err(not_sealed(&head, MAGIC, "saved task index")),
    }
}

/// The check of `decode`, part by part.
fn parse<R: std::io::Read>(
    pieces: &mut Pieces<R>,
    root: &Path,
    opts: &Options,
    sink: &mut impl Sink,
) -> Result<(), String> {
    let mut expect = Vec::new();
    header(&mut expect, root, opts);
    let (resolved, term_count, name_count) = pieces.part(|r| {
        if r.bytes(MAGIC.len()).ok() != Some(&MAGIC[..]) {
            return Err("not a saved task index".into());
        }
        let version = u32::from_le_bytes(r.bytes(4)?.try_into().map_err(|_| "truncated")?);
        if version != VERSION {
            return Err(format!(
                "format version {version}, this build reads {VERSION}"
            ));
        }
        if r.s()? != BUILD_ID {
            return Err("saved by another build of the core".into());
        }
        r.at = 0;
        if r.bytes(expect.len()).ok() != Some(&expect[..]) {
            return Err("saved for another root or other options".into());
        }
        let resolved = match r.byte()? {
            0 => false,
            1 => true,
            b => return Err(format!("a flag of {b} at byte {}", r.pos())),
        };
        // A term takes 3 bytes at least (its string's length, a byte of it, its list's length).
        Ok((resolved, r.count(3)?, r.count(1)?))
    })?;
    sink.start(resolved, name_count, term_count);
    let mut before: Vec<u8> = Vec::new();
    for id in 0..name_count as u32 {
        pieces.part(|r| {
            let s = r.s()?;
            if id > 0 && before[..] >= *s.as_bytes() {
                return Err(format!("names out of order at byte {}", r.pos()));
            }
            before.clear();
            before.extend_from_slice(s.as_bytes());
            sink.name(id, s);
            Ok(())
        })?;
    }
    // A file takes 10 bytes at least: a path, six stat numbers, a length and lists.
    let n = pieces.part(|r| r.count(10))?;
    let r_point = RandomState::new().hash_one(0u64) % P;
    let too_many = || "too many terms and files to check".to_string();
    let mut held = PairSet::new(r_point, term_count, n).ok_or_else(too_many)?;
    let mut posted = PairSet::new(r_point, term_count, n).ok_or_else(too_many)?;
    sink.files(n);
    for id in 0..n as u32 {
        pieces.part(|r| {
            let was = held;
            let f = r
                .file(id, (n, term_count, name_count), &mut held)
                .inspect_err(|_| held = was)?;
            let path = f.path;
            if !sink.file(id, f) {
                return Err(format!("{path} saved twice, before byte {}", r.pos()));
            }
            Ok(())
        })?;
    }
    sink.beside_terms(&mut |to_sink| {
        for id in 0..term_count as u32 {
            pieces.part(|r| {
                let term = r.s()?;
                if id > 0 && before[..] >= *term.as_bytes() {
                    return Err(format!("terms out of order at byte {}", r.pos()));
                }
                // (nothing after the list can run out of bytes: its pairs are counted once)
                let postings = r.run()?;
                let mut p = Reader::new(postings);
                let (mut df, mut last) = (0u32, None);
                while p.left() > 0 {
                    let doc = p.next_id(last, n)?;
                    p.u32()?; // its count
                    posted.add(id, doc);
                    df += 1;
                    last = Some(doc);
                }
                let Some(last) = last else {
                    return Err(format!("{term:?} is held by no file"));
                };
                before.clear();
                before.extend_from_slice(term.as_bytes());
                to_sink(
                    id,
                    SavedTerm {
                        term,
                        postings,
                        df,
                        last,
                    },
                );
                Ok(())
            })?;
        }
        Ok(())
    })?;
    if held.product() != posted.product() {
        return Err("the posting lists and the forward lists hold other (term, file) pairs".into());
    }
    // A context file's notes take 9 bytes at least: a directory, six stat numbers, a count.
    let scopes = pieces.part(|r| r.count(9))?;
    for i in 0..scopes {
        pieces.part(|r| {
            let start = r.at;
            let s = r.scope()?;
            if i > 0 && before[..] >= *s.dir.as_bytes() {
                return Err(format!("context files out of order at byte {}", r.pos()));
            }
            before.clear();
            before.extend_from_slice(s.dir.as_bytes());
            sink.scope(&r.b[start..r.at]);
            Ok(())
        })?;
    }
    if pieces.left() != 0 {
        return Err(format!(
            "{} bytes after the last context file",
            pieces.left()
        ));
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::path::PathBuf;

    /// Bytes with the checksum `encode` gives them: what a hostile file would hold.
    fn seal(body: &[u8]) -> Vec<u8> {
        let mut v = body.to_vec();
        v.extend_from_slice(&checksum(body));
        v
    }

    #[test]
    fn files_for_a_size_is_the_fewest_whose_cap_holds_it() {
        let edges = [0, 1, 4 << 20, (4 << 20) + 1, 442_000_000, MOST_SAVED_BYTES];
        let near = edges.iter().flat_map(|&e| [e.saturating_sub(1), e, e + 1]);
        for len in near.chain((0..2000).map(|i: u64| i.wrapping_mul(0x9E37_79B9_7F4A_7C15) >> 33)) {
            match files_for(len) {
                Some(n) => {
                    assert!(saved_cap(n) >= len, "{len}: {n} files");
                    assert!(n == 0 || saved_cap(n - 1) < len, "{len}: {n} files");
                }
                None => assert!(len > saved_cap(u64::MAX), "{len}"),
            }
        }
    }

    fn opts() -> Options {
        Options {
            extra_ignore: vec!["vendor/".into()],
            prefix: "@".into(),
            contextia: Some(PathBuf::from("/r/.contextia")),
        }
    }

    fn pairs(p: &[(u32, u32)]) -> Vec<u8> {
        let mut out = Vec::new();
        super::super::bm25::put_pairs(&mut out, p.iter().copied());
        out
    }

    /// A forward list: term ids, rising.
    fn ids(p: &[u32]) -> Vec<u8> {
        let mut out = Vec::new();
        varint::put_rising(&mut out, p.iter().copied());
        out
    }

    /// Two files, three terms: "alpha" in both, "beta" in the first, "gamma" in the second;
    /// `postings` and `forward` given to lie as a hostile file would.
    fn sample_with(postings: [Vec<u8>; 3], forward: [Vec<u8>; 2], out: &[u32]) -> Vec<u8> {
        sample_scoped(postings, forward, out, &scopes())
    }

    /// Two context files' notes: one for `src`'s files and one for a file, and none.
    fn scopes() -> Vec<(&'static str, Vec<NoteOut<'static>>)> {
        vec![
            (
                "src",
                vec![
                    NoteOut {
                        file: None,
                        len: 3,
                        counts: vec![("login", 2), ("token", 1)],
                    },
                    NoteOut {
                        file: Some("src/a.py"),
                        len: 1,
                        counts: vec![("refresh", 1)],
                    },
                ],
            ),
            ("src/b", vec![]),
        ]
    }

    /// `sample_with` and the context files' notes given.
    fn sample_scoped(
        postings: [Vec<u8>; 3],
        forward: [Vec<u8>; 2],
        out: &[u32],
        scopes: &[(&str, Vec<NoteOut<'_>>)],
    ) -> Vec<u8> {
        let imports = [
            Import::Python(2, "pkg.util".into()),
            Import::Js("./cart".into()),
            Import::Rust(vec!["crate".into(), "a".into()]),
            Import::Go("x/y".into()),
        ];
        let annotations: [(u32, Box<str>); 1] = [(7, "SPEC-001".into())];
        let key = StatKey {
            mtime: -5,
            ctime: 1 << 40,
            size: 300,
            ino: 77,
            dev: 9,
            mode: 0o100644,
        };
        let mut a = Vec::new();
        encode_file(
            &mut a,
            &FileOut {
                path: "src/a.py",
                key,
                len: 9,
                forward: &forward[0],
                defs: &[1],
                out,
                imports: &imports,
                annotations: &annotations,
            },
        );
        encode_file(
            &mut a,
            &FileOut {
                path: "b.rs",
                key: StatKey::default(),
                len: 2,
                forward: &forward[1],
                defs: &[0, 1],
                out: &[],
                imports: &[],
                annotations: &[],
            },
        );
        for (term, list) in ["alpha", "beta", "gamma"].into_iter().zip(&postings) {
            encode_term(&mut a, term, list);
        }
        encode_scope_count(&mut a, scopes.len());
        for (dir, notes) in scopes {
            encode_scope(&mut a, dir, &key, notes);
        }
        let names = ["load", "save"];
        let mut e = Encoder::start(
            Vec::new(),
            u64::MAX,
            Path::new("/r"),
            &opts(),
            true,
            &names,
            3,
            2,
        )
        .unwrap();
        e.put(&a).unwrap();
        e.finish().unwrap()
    }

    fn sample() -> Vec<u8> {
        sample_with(
            [pairs(&[(0, 3), (1, 1)]), pairs(&[(0, 6)]), pairs(&[(1, 1)])],
            [ids(&[0, 1]), ids(&[0, 2])],
            &[1],
        )
    }

    /// Every part handed on, as a test reads them back (kept for the test's life: a part
    /// borrows the window it was checked in for the call only).
    #[derive(Debug, Default)]
    struct Saved {
        resolved: bool,
        names: Vec<&'static str>,
        files: Vec<SavedFile<'static>>,
        terms: Vec<SavedTerm<'static>>,
        scopes: Vec<SavedScope<'static>>,
    }

    fn kept(b: &[u8]) -> &'static [u8] {
        Box::leak(b.into())
    }

    fn kept_str(s: &str) -> &'static str {
        Box::leak(s.into())
    }

    impl Sink for Saved {
        fn start(&mut self, resolved: bool, _: usize, _: usize) {
            self.resolved = resolved;
        }

        fn name(&mut self, id: u32, name: &str) {
            assert_eq!(id as usize, self.names.len());
            self.names.push(kept_str(name));
        }

        fn files(&mut self, _: usize) {}

        fn file(&mut self, id: u32, f: SavedFile<'_>) -> bool {
            assert_eq!(id as usize, self.files.len());
            let fresh = self.files.iter().all(|g| g.path != f.path);
            self.files.push(SavedFile {
                path: kept_str(f.path),
                forward: kept(f.forward),
                defs: kept(f.defs),
                ..f
            });
            fresh
        }

        fn term(&mut self, id: u32, t: SavedTerm<'_>) {
            assert_eq!(id as usize, self.terms.len());
            self.terms.push(SavedTerm {
                term: kept_str(t.term),
                postings: kept(t.postings),
                ..t
            });
        }

        fn scope(&mut self, part: &[u8]) {
            let mut each = saved_scopes(part);
            let s = each.next().expect("one part");
            assert!(each.next().is_none());
            let notes = s.notes.into_iter().map(|n| NoteOut {
                file: n.file.map(kept_str),
                counts: n
                    .counts
                    .into_iter()
                    .map(|(t, c)| (kept_str(t), c))
                    .collect(),
                ..n
            });
            self.scopes.push(SavedScope {
                dir: kept_str(s.dir),
                notes: notes.collect(),
                ..s
            });
        }
    }

    fn decode_piecewise(b: &[u8], len: u64, piece: usize) -> Result<Saved, String> {
        let mut s = Saved::default();
        decode_in(b, len, piece, Path::new("/r"), &opts(), &mut s).map(|()| s)
    }

    /// `decode` read whole, and a byte and five bytes at a time (every part then runs out of
    /// its window and is checked again in a larger one): the same parts, or the same refusal.
    fn decode_r(b: &[u8]) -> Result<Saved, String> {
        let whole = decode_piecewise(b, b.len() as u64, PIECE);
        for piece in [1, 5] {
            let got = decode_piecewise(b, b.len() as u64, piece);
            assert_eq!(
                format!("{got:?}"),
                format!("{whole:?}"),
                "read {piece} at a time"
            );
        }
        whole
    }

    #[test]
    fn a_file_whose_length_is_not_what_it_said_is_refused() {
        let b = sample();
        let len = b.len() as u64;
        assert!(decode_piecewise(&b, len, 7).is_ok());
        // Shrunk while read: the bytes end before the length said.
        for cut in [1, 8, b.len() / 2] {
            let err = decode_piecewise(&b[..b.len() - cut], len, 7).unwrap_err();
            assert!(err.contains("read whole"), "{err}");
        }
        // Grown, or said shorter: what is read is not the file.
        let mut grown = b.clone();
        grown.extend_from_slice(&[0; 16]);
        assert!(decode_piecewise(&grown, len + 16, 7).is_err());
        assert!(decode_piecewise(&b, len - 1, 7).is_err());
        assert!(decode_piecewise(&b, len - 9, 7).is_err());
    }

    #[test]
    fn the_running_checksum_is_the_checksum_of_the_whole() {
        let b = sample();
        let body = &b[..b.len() - 8];
        for piece in 1..20 {
            let mut p = Pieces::new(body, body.len() as u64, piece);
            while p.unread > 0 {
                p.start = p.buf.len();
                p.fill().unwrap();
            }
            p.start = p.buf.len();
            p.sum.write(&p.buf[..p.start]);
            assert_eq!(
                p.sum.finish().to_le_bytes(),
                checksum(body),
                "piece {piece}"
            );
        }
    }

    #[test]
    fn round_trip() {
        let bytes = sample();
        let s = decode_r(&bytes).unwrap();
        assert!(s.resolved);
        assert_eq!(s.names, ["load", "save"]);
        let t: Vec<(&str, u32, u32)> = s.terms.iter().map(|t| (t.term, t.df, t.last)).collect();
        assert_eq!(t, [("alpha", 2, 1), ("beta", 1, 0), ("gamma", 1, 1)]);
        let a = &s.files[0];
        assert_eq!((a.path, a.key.ctime, a.len), ("src/a.py", 1 << 40, 9));
        assert_eq!(a.forward, &ids(&[0, 1])[..]);
        assert_eq!((a.defs, &a.out[..]), (&[1u8][..], &[1u32][..]));
        assert_eq!(a.imports[0], Import::Python(2, "pkg.util".into()));
        assert_eq!(a.imports[2], Import::Rust(vec!["crate".into(), "a".into()]));
        assert_eq!(&*a.annotations[0].1, "SPEC-001");
        assert_eq!(s.files[1].path, "b.rs");
        assert_eq!(
            format!(
                "{:?}",
                s.scopes
                    .iter()
                    .map(|s| (s.dir, &s.notes))
                    .collect::<Vec<_>>()
            ),
            format!(
                "{:?}",
                scopes().iter().map(|(d, n)| (*d, n)).collect::<Vec<_>>()
            )
        );
        assert_eq!(s.scopes[1].key.ino, 77);
    }

    #[test]
    fn notes_out_of_order_or_past_their_length_are_refused() {
        let ok = [pairs(&[(0, 3), (1, 1)]), pairs(&[(0, 6)]), pairs(&[(1, 1)])];
        let fwd = [ids(&[0, 1]), ids(&[0, 2])];
        let note = |counts: Vec<(&'static str, u32)>, len| NoteOut {
            file: None,
            len,
            counts,
        };
        let cases = [
            // Terms not rising, a term twice, a term counted 0 times, more terms than its length.
            (
                vec![("b", vec![note(vec![("y", 1), ("x", 1)], 2)])],
                "out of order",
            ),
            (
                vec![("b", vec![note(vec![("x", 1), ("x", 1)], 2)])],
                "out of order",
            ),
            (vec![("b", vec![note(vec![("x", 0)], 2)])], "out of order"),
            (
                vec![("b", vec![note(vec![("x", 2), ("y", 1)], 2)])],
                "past its length",
            ),
            // Directories not rising, or one twice.
            (
                vec![("b", vec![]), ("a", vec![])],
                "context files out of order",
            ),
            (
                vec![("b", vec![]), ("b", vec![])],
                "context files out of order",
            ),
        ];
        for (i, (scopes, why)) in cases.into_iter().enumerate() {
            let err = decode_r(&sample_scoped(ok.clone(), fwd.clone(), &[1], &scopes)).unwrap_err();
            assert!(err.contains(why), "case {i}: {err}");
        }
        // A note's tag past 1.
        let mut v = sample_scoped(
            ok.clone(),
            fwd.clone(),
            &[1],
            &[("b", vec![note(vec![], 0)])],
        );
        v.truncate(v.len() - 8);
        let at = v.len() - 3; // the tag, its length (0) and its count of terms (0) end the file
        assert_eq!(v[at..], [0, 0, 0]);
        v[at] = 2;
        assert!(decode_r(&seal(&v)).unwrap_err().contains("tag 2"));
    }

    /// Posting lists, forward lists, one file's resolved imports, the refusal expected.
    type Case = ([Vec<u8>; 3], [Vec<u8>; 2], &'static [u32], &'static str);

    #[test]
    fn lists_that_do_not_agree_are_refused() {
        let ok = [pairs(&[(0, 3), (1, 1)]), pairs(&[(0, 6)]), pairs(&[(1, 1)])];
        let fwd = [ids(&[0, 1]), ids(&[0, 2])];
        let cases: [Case; 10] = [
            // The same number of pairs per term and per file, and the same sum of pairs, but
            // beta and gamma swapped between the files.
            (
                [ok[0].clone(), pairs(&[(1, 6)]), pairs(&[(0, 1)])],
                fwd.clone(),
                &[1],
                "forward",
            ),
            // A posting naming a file past the table.
            (
                [pairs(&[(0, 3), (2, 1)]), ok[1].clone(), ok[2].clone()],
                fwd.clone(),
                &[1],
                "outside",
            ),
            // A posting no forward list holds.
            (
                [ok[0].clone(), pairs(&[(0, 6), (1, 1)]), ok[2].clone()],
                fwd.clone(),
                &[1],
                "forward",
            ),
            // A forward list naming a term no posting list holds it under.
            (
                ok.clone(),
                [ids(&[0, 1, 2]), fwd[1].clone()],
                &[1],
                "forward",
            ),
            // A forward list of version 3, its terms with their counts.
            (
                ok.clone(),
                [pairs(&[(0, 3), (1, 6)]), fwd[1].clone()],
                &[1],
                "forward",
            ),
            // Files not rising in a list (a gap of 0 after the first).
            (
                [pairs(&[(1, 1), (1, 3)]), ok[1].clone(), ok[2].clone()],
                fwd.clone(),
                &[1],
                "rising",
            ),
            // A list cut short in a pair, and a term held by no file.
            (
                [
                    ok[0][..ok[0].len() - 1].to_vec(),
                    ok[1].clone(),
                    ok[2].clone(),
                ],
                fwd.clone(),
                &[1],
                "truncated",
            ),
            (
                [ok[0].clone(), Vec::new(), ok[2].clone()],
                fwd.clone(),
                &[1],
                "no file",
            ),
            // A file importing itself, or a file past the table.
            (ok.clone(), fwd.clone(), &[0], "itself"),
            (ok.clone(), fwd.clone(), &[2], "outside"),
        ];
        for (i, (p, f, out, why)) in cases.into_iter().enumerate() {
            let err = decode_r(&sample_with(p, f, out)).unwrap_err();
            assert!(err.contains(why), "case {i}: {err}");
        }
        // A varint of six bytes where a list holds u32s.
        let long = vec![0x80, 0x80, 0x80, 0x80, 0x80, 0x00, 3, 1, 1];
        assert!(decode_r(&sample_with(
            [long, ok[1].clone(), ok[2].clone()],
            fwd,
            &[1]
        ))
        .is_err());
    }

    #[test]
    fn pair_sets_are_equal_whatever_the_order_and_differ_when_one_pair_does() {
        let r = RandomState::new().hash_one(1u64) % P;
        let product = |pairs: &[(u32, u32)]| {
            let mut s = PairSet::new(r, 50, 40).unwrap();
            for &(t, f) in pairs {
                s.add(t, f);
            }
            s.product()
        };
        let pairs: Vec<(u32, u32)> = (0..400).map(|i| (i * 7 % 50, i * 13 % 40)).collect();
        let mut by_file = pairs.clone();
        by_file.sort_by_key(|&(t, f)| (f, t));
        assert_eq!(product(&pairs), product(&by_file));
        for i in [0, 199, 399] {
            let mut other = pairs.clone();
            other[i].1 = (other[i].1 + 1) % 40;
            assert_ne!(product(&pairs), product(&other), "pair {i} moved");
            other.remove(i);
            assert_ne!(product(&pairs), product(&other), "pair {i} left out");
        }
        // Numbers of pairs that do not fit below P are refused, not wrapped.
        assert!(PairSet::new(r, 1 << 31, 1 << 30).is_none());
        assert!(PairSet::new(r, usize::MAX, 2).is_none());
    }

    #[test]
    fn another_root_options_version_or_build_is_refused() {
        let b = sample();
        assert!(decode(
            &b[..],
            b.len() as u64,
            Path::new("/other"),
            &opts(),
            &mut Saved::default()
        )
        .unwrap_err()
        .contains("another root"));
        for o in [
            Options {
                prefix: "#".into(),
                ..opts()
            },
            Options {
                extra_ignore: vec![],
                ..opts()
            },
            Options {
                contextia: None,
                ..opts()
            },
        ] {
            assert!(decode(
                &b[..],
                b.len() as u64,
                Path::new("/r"),
                &o,
                &mut Saved::default()
            )
            .is_err());
        }
        let body = &b[..b.len() - 8];
        let mut v = body.to_vec();
        v[8] = VERSION as u8 + 1;
        assert!(decode_r(&seal(&v)).unwrap_err().contains("version"));
        let mut v = body.to_vec();
        v[14] ^= 1; // a byte of the build identity
        assert!(decode_r(&seal(&v)).unwrap_err().contains("another build"));
        assert!(decode_r(b"RCTX").is_err());
        assert!(decode_r(b"").is_err());
    }

    #[test]
    fn every_truncation_and_every_byte_flip_is_an_error_or_a_checked_index() {
        let sealed = sample();
        let b = &sealed[..sealed.len() - 8];
        for n in 0..sealed.len() {
            assert!(decode_r(&sealed[..n]).is_err(), "cut to {n}");
            assert!(
                decode_r(&seal(&b[..n.min(b.len() - 1)])).is_err(),
                "truncated to {n}"
            );
        }
        let mut extra = b.to_vec();
        extra.push(0);
        assert!(decode_r(&seal(&extra))
            .unwrap_err()
            .contains("after the last context file"));
        for i in 0..sealed.len() {
            for x in [0x01, 0x80, 0xff] {
                let mut v = sealed.clone();
                v[i] ^= x;
                assert!(decode_r(&v).is_err(), "a damaged byte is refused whole");
                if i >= b.len() {
                    continue;
                }
                let mut v = b.to_vec();
                v[i] ^= x;
                if let Ok(s) = decode_r(&seal(&v)) {
                    // What is adopted reads back within its tables (bm25's own reader).
                    let n = s.files.len() as u32;
                    for t in &s.terms {
                        let (mut at, mut doc) = (0, 0u32);
                        while at < t.postings.len() {
                            doc += varint::get(t.postings, &mut at);
                            varint::get(t.postings, &mut at);
                            assert!(doc < n && doc <= t.last);
                        }
                    }
                }
            }
        }
    }

    /// A plain reading of a varint that fits a u32 in at most five bytes, and its length.
    fn plain_u32(b: &[u8]) -> Option<(u32, usize)> {
        let mut v = 0u64;
        for (i, &x) in b.iter().enumerate().take(5) {
            v |= u64::from(x & 0x7f) << (7 * i);
            if x < 0x80 {
                return u32::try_from(v).ok().map(|v| (v, i + 1));
            }
        }
        None
    }

    #[test]
    fn the_readers_short_cases_read_as_a_plain_reading() {
        let mut cases: Vec<Vec<u8>> = (0..=0xffffu32)
            .flat_map(|x| [vec![x as u8], vec![x as u8, (x >> 8) as u8]])
            .collect();
        let bytes = [0x00, 0x01, 0x7f, 0x80, 0x81, 0x8f, 0xff];
        for len in 3..=6 {
            for i in 0..bytes.len().pow(len) {
                let at = |k: u32| bytes[i / bytes.len().pow(k) % bytes.len()];
                cases.push((0..len).map(at).collect());
            }
        }
        for b in &cases {
            let mut r = Reader::new(b);
            let read = r.u32().ok().map(|v| (v, r.at));
            assert_eq!(read, plain_u32(b), "{b:x?}");
        }
    }

    #[test]
    fn huge_counts_fail_before_allocating() {
        let mut b = Vec::new();
        header(&mut b, Path::new("/r"), &opts());
        b.push(1);
        let head = b.len();
        for count in [u64::MAX, u32::MAX as u64, 1 << 40] {
            for at in 0..3 {
                // A huge count for the terms, the names or the files, with nothing after it.
                let mut v = b[..head].to_vec();
                for _ in 0..at {
                    varint::put(&mut v, 0u64);
                }
                varint::put(&mut v, count);
                assert!(decode_r(&seal(&v)).unwrap_err().contains("count"));
            }
        }
        // A file whose forward list is huge.
        let mut v = b[..head].to_vec();
        for n in [0u64, 0, 1] {
            varint::put(&mut v, n);
        }
        put_s(&mut v, b"a.py");
        for _ in 0..7 {
            varint::put(&mut v, 1u64);
        }
        varint::put(&mut v, u64::MAX >> 1);
        v.extend_from_slice(&[0; 32]);
        assert!(decode_r(&seal(&v)).unwrap_err().contains("count"));
        // A varint of eleven bytes.
        let mut v = b[..head].to_vec();
        v.extend_from_slice(&[0xff; 11]);
        assert!(decode_r(&seal(&v)).unwrap_err().contains("varint"));
    }
}
