//! The task index on disk: what it keeps of each file (tasks/files.rs `Facts`: terms with
//! their counts, defined names, imports, annotations) with the file's path and stat key, so a
//! later process (a cold CLI call, a server warming up) reads again only the files whose stat
//! key changed since (tasks/index.rs `Index::build_from`). Everything derived from the facts
//! (the inverted index, imports resolved to files, the reverse graph) and the written context
//! and history are made again after a load, as a build makes them.
//!
//! The bytes are untrusted (a repository can commit any file at the place they are kept), so
//! the format is small and hand-written, read by a decoder that checks everything: a magic, the
//! format's version, the core's build identity (build.rs: facts extracted by other code are
//! never read back) and the options and root the index was built with must match; every count
//! is checked against the bytes left before anything is allocated for it (each element takes
//! one byte at least), every string must be UTF-8, every id must fall in its table, ids of a
//! file must rise strictly, paths must be unique, and the bytes must end where the last file
//! does. Any failure is an `Err` (the caller builds from scratch): no panic, no allocation
//! larger than the input. A file taken from it is trusted only while its stat key (mtime and
//! ctime in ns, size, inode) is the one the file has now.
//!
//! Layout: integers are LEB128 varints (signed ones zigzag), strings a varint length and UTF-8
//! bytes; the last 8 bytes are a checksum (SipHash, little-endian) of all before them, so a
//! file cut short or damaged is refused whole. The checksum is no defence (anyone can compute
//! it): the checks of the decoder are.
//!
//! ```text
//! magic "RCTXTIDX", version (u32 LE), build identity, root, ignore patterns (count, strings),
//! annotation prefix, contextia (0, or 1 and the path)
//! terms: count, strings in byte order, unique
//! names: count, strings in byte order, unique
//! files: count, then each: path, mtime, ctime, size, inode, device, mode, length in terms,
//!        terms (count, then (term id delta, count) pairs), names (count, id deltas),
//!        imports (count, then a tag 0 Python (dots, module) 1 Js 2 Rust (count, segments) 3 Go),
//!        annotations (count, then (line, artifact id))
//! ```
//!
//! Why hand-written rather than serde with postcard or bincode: the tables and id deltas keep it
//! small (a term is written once, not once per file), the checks that matter (ids within their
//! tables, rising ids, unique paths) are the decoder's own anyway, and it needs no new crate.

use super::files::StatKey;
use super::options::Options;
use super::varint;
use crate::lang::imports::Import;
use std::collections::HashMap;
use std::hash::{DefaultHasher, Hasher};
use std::path::Path;

pub const MAGIC: &[u8; 8] = b"RCTXTIDX";
/// Raised whenever the layout changes.
pub const VERSION: u32 = 2;
/// The core's build identity (build.rs).
pub const BUILD_ID: &str = env!("REPOCTX_BUILD_ID");
/// An import's leading dots beyond this are no Python a file holds.
const MAX_DOTS: u64 = 1 << 20;

/// A saved index, checked whole: its tables, and where each file's facts start in the bytes.
/// A file's facts are decoded again when they are used (`get`), so a load never holds every
/// file's facts decoded beside the index made from them (the peak of a cold call).
#[derive(Debug, Default)]
pub struct Saved<'b> {
    /// Terms and defined names by id, each table in byte order.
    pub terms: Vec<&'b str>,
    pub names: Vec<&'b str>,
    /// Each path, and the offset in `bytes` of what follows it.
    pub files: HashMap<&'b str, usize>,
    bytes: &'b [u8],
}

impl Saved<'_> {
    /// The facts saved for `path`. The bytes were checked by `decode`, so this decodes them
    /// as it did; an Err (none can come) is as no facts.
    pub fn get(&self, path: &str) -> Option<SavedFile> {
        let at = *self.files.get(path)?;
        let mut r = Reader { b: self.bytes, at };
        r.facts(self.terms.len(), self.names.len()).ok()
    }
}

/// One file's facts as saved: its terms and names by their ids in `Saved`'s tables.
#[derive(Debug, PartialEq)]
pub struct SavedFile {
    pub key: StatKey,
    pub len: u32,
    /// (term id, count), ids rising.
    pub terms: Vec<(u32, u32)>,
    /// Name ids, rising.
    pub defs: Vec<u32>,
    pub imports: Vec<Import>,
    pub annotations: Vec<(u32, Box<str>)>,
}

/// One file to write, its terms and names by their ids in the tables given to `encode`.
pub struct Entry<'a> {
    pub path: &'a str,
    pub key: StatKey,
    pub len: u32,
    pub terms: &'a [(u32, u32)],
    pub defs: &'a [u32],
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

fn put_rising(out: &mut Vec<u8>, ids: impl ExactSizeIterator<Item = u32>) {
    varint::put(out, ids.len() as u64);
    let mut prev: Option<u32> = None;
    for id in ids {
        varint::put(out, prev.map_or(id, |p| id - p) as u64);
        prev = Some(id);
    }
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

/// Append one file's entry (ids rising, as `Entry` says).
pub fn encode_entry(out: &mut Vec<u8>, e: &Entry) {
    put_s(out, e.path.as_bytes());
    put_i(out, e.key.mtime);
    put_i(out, e.key.ctime);
    varint::put(out, e.key.size);
    varint::put(out, e.key.ino);
    varint::put(out, e.key.dev);
    varint::put(out, u64::from(e.key.mode));
    varint::put(out, e.len as u64);
    varint::put(out, e.terms.len() as u64);
    let mut prev: Option<u32> = None;
    for &(id, n) in e.terms {
        varint::put(out, prev.map_or(id, |p| id - p) as u64);
        varint::put(out, n as u64);
        prev = Some(id);
    }
    put_rising(out, e.defs.iter().copied());
    varint::put(out, e.imports.len() as u64);
    for i in e.imports {
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
    varint::put(out, e.annotations.len() as u64);
    for (line, id) in e.annotations {
        varint::put(out, *line as u64);
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

/// The bytes of a saved file before its checksum, when the checksum is theirs; else why not:
/// damaged or cut short when they start with `magic`, else not a `what` at all.
pub(super) fn unseal<'b>(bytes: &'b [u8], magic: &[u8], what: &str) -> Result<&'b [u8], String> {
    match bytes.len().checked_sub(8).map(|n| bytes.split_at(n)) {
        Some((body, sum)) if checksum(body) == sum => Ok(body),
        _ if bytes.starts_with(magic) => {
            Err("damaged or cut short (its checksum is not its bytes')".into())
        }
        _ => Err(format!("not a {what}")),
    }
}

/// The whole file: the header, the tables (each in byte order, unique), the entries (`count`
/// of them, already encoded by `encode_entry`, in any number of pieces) and the checksum.
pub fn encode(
    root: &Path,
    opts: &Options,
    terms: &[&str],
    names: &[&str],
    count: usize,
    entries: &[Vec<u8>],
) -> Vec<u8> {
    let table: usize = terms.iter().chain(names).map(|t| t.len() + 2).sum();
    let mut out = Vec::with_capacity(256 + table + entries.iter().map(Vec::len).sum::<usize>());
    header(&mut out, root, opts);
    for t in [terms, names] {
        varint::put(&mut out, t.len() as u64);
        for s in t {
            put_s(&mut out, s.as_bytes());
        }
    }
    varint::put(&mut out, count as u64);
    for e in entries {
        out.extend_from_slice(e);
    }
    seal(&mut out);
    out
}

// --- reading --------------------------------------------------------------------------------

struct Reader<'a> {
    b: &'a [u8],
    at: usize,
}

type Res<T> = Result<T, String>;

impl<'a> Reader<'a> {
    fn left(&self) -> usize {
        self.b.len() - self.at
    }

    fn bytes(&mut self, n: usize) -> Res<&'a [u8]> {
        if n > self.left() {
            return Err(format!("truncated at byte {}", self.at));
        }
        let s = &self.b[self.at..self.at + n];
        self.at += n;
        Ok(s)
    }

    fn byte(&mut self) -> Res<u8> {
        Ok(self.bytes(1)?[0])
    }

    fn u(&mut self) -> Res<u64> {
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
        Err(format!("a varint too long at byte {}", self.at))
    }

    fn u32(&mut self) -> Res<u32> {
        let v = self.u()?;
        u32::try_from(v).map_err(|_| format!("{v} is out of range at byte {}", self.at))
    }

    fn i(&mut self) -> Res<i64> {
        let v = self.u()?;
        Ok((v >> 1) as i64 ^ -((v & 1) as i64))
    }

    /// A count of elements that take `min` bytes each at least: never more than the bytes left can hold.
    fn count(&mut self, min: usize) -> Res<usize> {
        let n = self.u()?;
        if n > (self.left() / min) as u64 {
            return Err(format!(
                "a count of {n} with {} bytes left, at byte {}",
                self.left(),
                self.at
            ));
        }
        Ok(n as usize)
    }

    fn s(&mut self) -> Res<&'a str> {
        let n = self.count(1)?;
        std::str::from_utf8(self.bytes(n)?)
            .map_err(|_| format!("a string that is not UTF-8 before byte {}", self.at))
    }

    /// A table of strings in byte order, unique.
    fn table(&mut self) -> Res<Vec<&'a str>> {
        let n = self.count(1)?;
        let mut out: Vec<&'a str> = Vec::with_capacity(n);
        for _ in 0..n {
            let s = self.s()?;
            if out.last().is_some_and(|p| *p >= s) {
                return Err(format!("a table out of order at byte {}", self.at));
            }
            out.push(s);
        }
        Ok(out)
    }

    /// A rising id below `bound` given the previous one.
    fn next_id(&mut self, prev: Option<u32>, bound: usize) -> Res<u32> {
        let d = self.u()?;
        let id = match prev {
            None => d,
            Some(_) if d == 0 => return Err(format!("ids not rising at byte {}", self.at)),
            Some(p) => (p as u64).checked_add(d).ok_or("an id overflows")?,
        };
        if id >= bound as u64 {
            return Err(format!(
                "id {id} outside its table of {bound} at byte {}",
                self.at
            ));
        }
        Ok(id as u32)
    }

    fn import(&mut self) -> Res<Import> {
        Ok(match self.byte()? {
            0 => {
                let dots = self.u()?;
                if dots > MAX_DOTS {
                    return Err(format!("{dots} leading dots at byte {}", self.at));
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
            t => return Err(format!("import tag {t} at byte {}", self.at)),
        })
    }

    /// One file's facts, after its path.
    fn facts(&mut self, terms: usize, names: usize) -> Res<SavedFile> {
        let (mtime, ctime, size, ino, dev, mode) = (
            self.i()?,
            self.i()?,
            self.u()?,
            self.u()?,
            self.u()?,
            self.u32()?,
        );
        let key = StatKey {
            dev,
            ino,
            size,
            mode,
            mtime,
            ctime,
        };
        let len = self.u32()?;
        let n = self.count(2)?;
        let mut ts = Vec::with_capacity(n);
        let mut prev = None;
        for _ in 0..n {
            let id = self.next_id(prev, terms)?;
            ts.push((id, self.u32()?));
            prev = Some(id);
        }
        let n = self.count(1)?;
        let mut defs = Vec::with_capacity(n);
        let mut prev = None;
        for _ in 0..n {
            let id = self.next_id(prev, names)?;
            defs.push(id);
            prev = Some(id);
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
            key,
            len,
            terms: ts,
            defs,
            imports,
            annotations,
        })
    }
}

/// Decode and check saved bytes for an index of `root` built with `opts`; Err says why they
/// cannot be used (the caller then builds from scratch).
pub fn decode<'b>(bytes: &'b [u8], root: &Path, opts: &Options) -> Result<Saved<'b>, String> {
    parse(unseal(bytes, MAGIC, "saved task index")?, root, opts)
}

/// `decode` of the bytes before the checksum.
fn parse<'b>(bytes: &'b [u8], root: &Path, opts: &Options) -> Result<Saved<'b>, String> {
    let mut expect = Vec::new();
    header(&mut expect, root, opts);
    let mut r = Reader { b: bytes, at: 0 };
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
    if bytes.get(..expect.len()) != Some(&expect[..]) {
        return Err("saved for another root or other options".into());
    }
    r.at = expect.len();
    let terms = r.table()?;
    let names = r.table()?;
    // A file takes 10 bytes at least: a path, four stat numbers, a length and four counts.
    let n = r.count(10)?;
    let mut files = HashMap::with_capacity(n);
    for _ in 0..n {
        let path = r.s()?;
        let at = r.at;
        r.facts(terms.len(), names.len())?;
        if files.insert(path, at).is_some() {
            return Err(format!("a path saved twice, before byte {}", r.at));
        }
    }
    if r.left() != 0 {
        return Err(format!("{} bytes after the last file", r.left()));
    }
    Ok(Saved {
        terms,
        names,
        files,
        bytes,
    })
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

    fn body(sealed: &[u8]) -> &[u8] {
        &sealed[..sealed.len() - 8]
    }

    fn opts() -> Options {
        Options {
            extra_ignore: vec!["vendor/".into()],
            prefix: "@".into(),
            contextia: Some(PathBuf::from("/r/.contextia")),
        }
    }

    fn sample() -> Vec<u8> {
        let imports = [
            Import::Python(2, "pkg.util".into()),
            Import::Js("./cart".into()),
            Import::Rust(vec!["crate".into(), "a".into()]),
            Import::Go("x/y".into()),
        ];
        let annotations: [(u32, Box<str>); 1] = [(7, "SPEC-001".into())];
        let a = Entry {
            path: "src/a.py",
            key: StatKey {
                mtime: -5,
                ctime: 1 << 40,
                size: 300,
                ino: 77,
                dev: 9,
                mode: 0o100644,
            },
            len: 9,
            terms: &[(0, 3), (2, 6)],
            defs: &[1],
            imports: &imports,
            annotations: &annotations,
        };
        let b = Entry {
            path: "b.rs",
            key: StatKey {
                mtime: 1,
                ctime: 2,
                size: 3,
                ino: 4,
                dev: 5,
                mode: 6,
            },
            len: 0,
            terms: &[],
            defs: &[],
            imports: &[],
            annotations: &[],
        };
        let mut one = Vec::new();
        encode_entry(&mut one, &a);
        let mut two = Vec::new();
        encode_entry(&mut two, &b);
        encode(
            Path::new("/r"),
            &opts(),
            &["alpha", "beta", "gamma"],
            &["load", "save"],
            2,
            &[one, two],
        )
    }

    #[test]
    fn round_trip() {
        let bytes = sample();
        let s = decode(&bytes, Path::new("/r"), &opts()).unwrap();
        assert_eq!(s.terms.len(), 3);
        assert_eq!(s.names[1], "save");
        let a = s.get("src/a.py").unwrap();
        assert_eq!(
            a.key,
            StatKey {
                mtime: -5,
                ctime: 1 << 40,
                size: 300,
                ino: 77,
                dev: 9,
                mode: 0o100644
            }
        );
        assert_eq!(
            (a.len, &a.terms[..], &a.defs[..]),
            (9, &[(0, 3), (2, 6)][..], &[1][..])
        );
        assert_eq!(a.imports[0], Import::Python(2, "pkg.util".into()));
        assert_eq!(a.imports[2], Import::Rust(vec!["crate".into(), "a".into()]));
        assert_eq!(&*a.annotations[0].1, "SPEC-001");
        assert!(s.get("b.rs").unwrap().terms.is_empty());
    }

    #[test]
    fn another_root_options_version_or_build_is_refused() {
        let b = sample();
        assert!(decode(&b, Path::new("/other"), &opts())
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
            assert!(decode(&b, Path::new("/r"), &o).is_err());
        }
        let mut v = body(&b).to_vec();
        v[8] = VERSION as u8 + 1;
        assert!(decode(&seal(&v), Path::new("/r"), &opts())
            .unwrap_err()
            .contains("version"));
        let mut v = body(&b).to_vec();
        v[14] ^= 1; // a byte of the build identity
        assert!(decode(&seal(&v), Path::new("/r"), &opts())
            .unwrap_err()
            .contains("another build"));
        assert!(decode(b"RCTX", Path::new("/r"), &opts()).is_err());
        assert!(decode(b"", Path::new("/r"), &opts()).is_err());
    }

    #[test]
    fn every_truncation_and_every_byte_flip_is_an_error_or_a_checked_index() {
        let sealed = sample();
        let b = body(&sealed);
        for n in 0..sealed.len() {
            assert!(
                decode(&sealed[..n], Path::new("/r"), &opts()).is_err(),
                "cut to {n}"
            );
            // Cut short with a checksum that fits: the decoder finds it out.
            assert!(
                decode(&seal(&b[..n.min(b.len() - 1)]), Path::new("/r"), &opts()).is_err(),
                "truncated to {n}"
            );
        }
        let mut extra = b.to_vec();
        extra.push(0);
        assert!(decode(&seal(&extra), Path::new("/r"), &opts())
            .unwrap_err()
            .contains("after the last file"));
        for i in 0..sealed.len() {
            for x in [0x01, 0x80, 0xff] {
                let mut v = sealed.clone();
                v[i] ^= x;
                assert!(
                    decode(&v, Path::new("/r"), &opts()).is_err(),
                    "a damaged byte is refused whole"
                );
                if i >= b.len() {
                    continue;
                }
                let mut v = b.to_vec();
                v[i] ^= x;
                if let Ok(s) = decode(&seal(&v), Path::new("/r"), &opts()) {
                    for f in s.files.keys().map(|p| s.get(p).unwrap()) {
                        assert!(f.terms.iter().all(|t| (t.0 as usize) < s.terms.len()));
                        assert!(f.defs.iter().all(|&d| (d as usize) < s.names.len()));
                        assert!(f.terms.windows(2).all(|w| w[0].0 < w[1].0));
                    }
                }
            }
        }
    }

    #[test]
    fn huge_counts_fail_before_allocating() {
        let mut b = Vec::new();
        header(&mut b, Path::new("/r"), &opts());
        let head = b.len();
        for count in [u64::MAX, u32::MAX as u64, 1 << 40] {
            for at in 0..3 {
                // A huge count for the terms, the names or the files, with nothing after it.
                let mut v = b[..head].to_vec();
                for _ in 0..at {
                    varint::put(&mut v, 0u64);
                }
                varint::put(&mut v, count);
                assert!(decode(&seal(&v), Path::new("/r"), &opts())
                    .unwrap_err()
                    .contains("count"));
            }
        }
        // A file whose term count is huge, and one whose string length is.
        let mut v = b[..head].to_vec();
        varint::put(&mut v, 0u64);
        varint::put(&mut v, 0u64);
        varint::put(&mut v, 1u64);
        put_s(&mut v, b"a.py");
        for _ in 0..7 {
            varint::put(&mut v, 1u64);
        }
        varint::put(&mut v, u64::MAX >> 1);
        v.extend_from_slice(&[0; 32]);
        assert!(decode(&seal(&v), Path::new("/r"), &opts())
            .unwrap_err()
            .contains("count"));
        let mut v = b[..head].to_vec();
        varint::put(&mut v, 1u64);
        varint::put(&mut v, 1u64 << 50);
        assert!(decode(&seal(&v), Path::new("/r"), &opts()).is_err());
        // A varint of eleven bytes, and one past 64 bits.
        let mut v = b[..head].to_vec();
        v.extend_from_slice(&[0xff; 11]);
        assert!(decode(&seal(&v), Path::new("/r"), &opts())
            .unwrap_err()
            .contains("varint"));
        let mut v = b[..head].to_vec();
        v.extend_from_slice(&[0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0x02]);
        assert!(decode(&seal(&v), Path::new("/r"), &opts())
            .unwrap_err()
            .contains("varint"));
    }

    #[test]
    fn ids_outside_their_tables_out_of_order_or_twice_are_refused() {
        let entry = |terms: &[(u32, u32)], defs: &[u32], path: &str| {
            let mut v = Vec::new();
            encode_entry(
                &mut v,
                &Entry {
                    path,
                    key: StatKey::default(),
                    len: 1,
                    terms,
                    defs,
                    imports: &[],
                    annotations: &[],
                },
            );
            v
        };
        let root = Path::new("/r");
        let ok = encode(
            root,
            &opts(),
            &["a", "b"],
            &["n"],
            1,
            &[entry(&[(0, 1), (1, 1)], &[0], "x.py")],
        );
        assert!(decode(&ok, root, &opts()).is_ok());
        let cases = [
            encode(
                root,
                &opts(),
                &["a", "b"],
                &["n"],
                1,
                &[entry(&[(2, 1)], &[], "x.py")],
            ),
            encode(
                root,
                &opts(),
                &["a", "b"],
                &["n"],
                1,
                &[entry(&[], &[1], "x.py")],
            ),
            encode(
                root,
                &opts(),
                &["b", "a"],
                &[],
                1,
                &[entry(&[], &[], "x.py")],
            ),
            encode(
                root,
                &opts(),
                &["a", "a"],
                &[],
                1,
                &[entry(&[], &[], "x.py")],
            ),
            encode(
                root,
                &opts(),
                &[],
                &[],
                2,
                &[entry(&[], &[], "x.py"), entry(&[], &[], "x.py")],
            ),
            encode(root, &opts(), &[], &[], 2, &[entry(&[], &[], "x.py")]),
        ];
        for (i, c) in cases.iter().enumerate() {
            assert!(decode(c, root, &opts()).is_err(), "case {i}");
        }
        // Equal ids in a row (a delta of 0 after the first) are not rising.
        let mut v = body(&encode(root, &opts(), &["a", "b"], &[], 0, &[])).to_vec();
        v.pop();
        varint::put(&mut v, 1u64);
        put_s(&mut v, b"x.py");
        for _ in 0..7 {
            varint::put(&mut v, 0u64);
        }
        varint::put(&mut v, 2u64);
        for x in [0u64, 1, 0, 1] {
            varint::put(&mut v, x);
        }
        for _ in 0..3 {
            varint::put(&mut v, 0u64);
        }
        assert!(decode(&seal(&v), root, &opts())
            .unwrap_err()
            .contains("rising"));
    }
}
