//! Cache files on disk: a build collects sources, reads and hashes them in
//! parallel and writes `documents/*.json`; a load reads those files back in
//! parallel and verifies each against the manifest.
//!
//! Paths are opened without following a final symlink and without blocking on
//! FIFOs; a non-regular file is never read. Errors are reported for the first
//! failing document in id order, so the same cache always fails the same way.

use crate::caches::fresh::{Keyed, StatKey};
use crate::caches::pool::io_pool;
use crate::caches::select::Doc;
use crate::tree::ignore::{lister, Tree};
use crate::tree::os;
use ignore::WalkBuilder;
use rayon::prelude::*;
use serde::Deserialize;
use sha2::{Digest, Sha256};
use std::collections::{BTreeMap, HashSet};
use std::fs::{self, File};
use std::io::{self, Read, Write};
use std::path::{Path, PathBuf};

/// Largest file a repository build takes as a document; bigger ones are data, not context.
pub const MAX_REPO_FILE: u64 = 1 << 20;

#[derive(Debug)]
pub enum Fail {
    Io(io::Error),
    /// An error code of the contract and a message without paths.
    Code(&'static str, &'static str),
}

impl From<io::Error> for Fail {
    fn from(e: io::Error) -> Self {
        Fail::Io(e)
    }
}

fn invalid(message: &'static str) -> Fail {
    Fail::Code("cache_invalid", message)
}

#[derive(Clone, Copy, PartialEq, Eq)]
pub enum Mode {
    /// The reference's build: every `*.md` file under the sources, hidden ones too.
    Markdown,
    /// A repository: its text files, honouring `.gitignore`, hidden and secret-looking files skipped.
    Repository,
}

/// One manifest entry of a built cache.
pub struct Entry {
    pub id: String,
    pub version: String,
    pub file: String,
}

pub struct Built {
    pub entries: Vec<Entry>, // sorted by id
    pub bytes: u64,          // content bytes of the documents kept
    /// Repository files left out, sorted by path.
    pub skipped: Skipped,
}

// Why a repository build leaves a file out: words for a person reading the list.
pub const SKIP_SECRET: &str = "secret-looking name";
pub const SKIP_PATH: &str = "path not UTF-8";
pub const SKIP_LARGE: &str = "over 1 MiB";
pub const SKIP_BINARY: &str = "binary (a NUL byte)";
pub const SKIP_TEXT: &str = "not UTF-8 text";
pub const SKIP_DUPLICATE: &str = "same content as another file";
pub const SKIP_NOT_FILE: &str = "no longer a regular file";

/// The directory of the document files in a cache.
const DOCUMENTS: &str = "documents";

/// Open a regular file for reading: no final symlink, no blocking on a FIFO.
fn open_regular(path: &Path) -> io::Result<(File, fs::Metadata)> {
    regular(os::open_path(path, false)?)
}

/// `open_regular` of a single name in `dir`, through the handle.
fn open_regular_in(dir: &cap_std::fs::Dir, name: &str) -> io::Result<(File, fs::Metadata)> {
    regular(os::open_in(dir, name)?)
}

fn regular(file: File) -> io::Result<(File, fs::Metadata)> {
    let meta = file.metadata()?;
    if !meta.is_file() {
        return Err(io::Error::new(
            io::ErrorKind::InvalidInput,
            "not a regular file",
        ));
    }
    Ok((file, meta))
}

fn read_all(mut file: File, size: u64) -> io::Result<Vec<u8>> {
    let mut buf = Vec::with_capacity(size as usize);
    file.read_to_end(&mut buf)?;
    Ok(buf)
}

pub fn sha256_version(bytes: &[u8]) -> String {
    let digest = Sha256::digest(bytes);
    let mut out = String::with_capacity(71);
    out.push_str("sha256:");
    for b in digest {
        out.push_str(&format!("{b:02x}"));
    }
    out
}

/// The document id of a source path: relative to the sources, forward slashes, lowercase.
pub fn document_id(rel: &str) -> String {
    rel.replace('\\', "/")
        .trim_start_matches("./")
        .to_lowercase()
}

fn is_secret(name: &str) -> bool {
    let lower = name.to_ascii_lowercase();
    const NAMES: &[&str] = &[
        "id_rsa",
        "id_dsa",
        "id_ecdsa",
        "id_ed25519",
        ".netrc",
        ".pypirc",
        ".npmrc",
    ];
    // Keys and certificates (with their keystores): private material or what identifies it.
    const SUFFIXES: &[&str] = &[
        ".pem",
        ".key",
        ".p12",
        ".pfx",
        ".crt",
        ".cer",
        ".der",
        ".jks",
        ".keystore",
    ];
    lower == ".env"
        || lower.starts_with(".env.")
        || NAMES.contains(&lower.as_str())
        || SUFFIXES.iter().any(|s| lower.ends_with(s))
}

struct Source {
    rel: String,
    path: PathBuf,
}

/// Files a build left out, each with why (`SKIP_*`).
pub type Skipped = Vec<(String, &'static str)>;

/// The source files of a build, in no particular order, and those left out with why.
fn collect(root: &Path, mode: Mode) -> Result<(Vec<Source>, Skipped), Fail> {
    let walker = match mode {
        // Every file, hidden ones included: the reference engine reads them.
        Mode::Markdown => {
            let mut w = WalkBuilder::new(root);
            w.standard_filters(false).follow_links(false);
            w
        }
        Mode::Repository => {
            // git's rules from the repository's top down, matched by tree/ignore.rs (the
            // walker's own compile a file into a regex set: a hostile one costs seconds and
            // gigabytes); no per-user global ignores, so the same sources give the same cache
            // on any machine.
            let rules = Tree::above(root);
            let mut w = lister(root);
            w.filter_entry(move |e| {
                e.depth() == 0
                    || !rules.ignores(e.path(), e.file_type().is_some_and(|t| t.is_dir()))
            });
            w
        }
    };
    let mut sources = Vec::new();
    let mut skipped = Vec::new();
    for entry in walker.build().filter_map(Result::ok) {
        if !entry.file_type().is_some_and(|t| t.is_file()) {
            continue; // directories, symlinks, sockets, FIFOs
        }
        let path = entry.path();
        let name = entry.file_name().to_string_lossy();
        let rel = path.strip_prefix(root).unwrap_or(path);
        match mode {
            Mode::Markdown if path.extension().is_none_or(|e| e != "md") => continue,
            Mode::Repository if is_secret(&name) => {
                skipped.push((slashed(&rel.to_string_lossy()), SKIP_SECRET));
                continue;
            }
            _ => {}
        }
        match rel.to_str() {
            Some(rel) => sources.push(Source {
                rel: slashed(rel),
                path: path.to_owned(),
            }),
            None if mode == Mode::Markdown => {
                return Err(Fail::Code(
                    "internal_error",
                    "A source path is not valid UTF-8",
                ))
            }
            None => skipped.push((slashed(&rel.to_string_lossy()), SKIP_PATH)),
        }
    }
    Ok((sources, skipped))
}

/// A path under the sources as answers name it (tree/paths.rs).
fn slashed(rel: &str) -> String {
    String::from_utf8_lossy(&crate::tree::paths::slashed(rel.as_bytes())).into_owned()
}

struct Read1 {
    id: String,
    source: String,
    version: String,
    content: String,
}

/// Read, validate and hash one source; Ok(Err(why)) when a repository build leaves it out.
fn ingest(s: &Source, mode: Mode) -> Result<Result<Read1, &'static str>, Fail> {
    let (file, meta) = match open_regular(&s.path) {
        Ok(x) => x,
        Err(e) if e.kind() == io::ErrorKind::InvalidInput => return Ok(Err(SKIP_NOT_FILE)), // swapped for a non-file
        Err(e) => return Err(e.into()),
    };
    if mode == Mode::Repository && meta.len() > MAX_REPO_FILE {
        return Ok(Err(SKIP_LARGE));
    }
    let bytes = read_all(file, meta.len())?;
    if mode == Mode::Repository && bytes.contains(&0) {
        return Ok(Err(SKIP_BINARY));
    }
    let content = match String::from_utf8(bytes) {
        Ok(c) => c,
        Err(_) if mode == Mode::Repository => return Ok(Err(SKIP_TEXT)),
        Err(_) => {
            return Err(Fail::Code(
                "internal_error",
                "A source document is not valid UTF-8",
            ))
        }
    };
    Ok(Ok(Read1 {
        id: document_id(&s.rel),
        source: s.rel.clone(),
        version: sha256_version(content.as_bytes()),
        content,
    }))
}

/// Append `s` as a JSON string with serde_json's escapes (`\"`, `\\`, `\b`, `\f`, `\n`,
/// `\r`, `\t`, other controls as `\u00xx`), copying clean runs eight bytes at a time.
fn push_json_str(out: &mut Vec<u8>, s: &str) {
    const HEX: &[u8; 16] = b"0123456789abcdef";
    let bytes = s.as_bytes();
    out.push(b'"');
    let mut start = 0;
    let mut i = 0;
    while i < bytes.len() {
        if i + 8 <= bytes.len() {
            let w = u64::from_le_bytes(bytes[i..i + 8].try_into().unwrap());
            // A byte < 0x20, '"' or '\\' in the word: SWAR has-less / has-byte tests.
            let ones = 0x0101_0101_0101_0101u64;
            let high = 0x8080_8080_8080_8080u64;
            let lt20 = w.wrapping_sub(ones * 0x20) & !w & high;
            let q = w ^ (ones * b'"' as u64);
            let bs = w ^ (ones * b'\\' as u64);
            let eq = (q.wrapping_sub(ones) & !q | bs.wrapping_sub(ones) & !bs) & high;
            if lt20 | eq == 0 {
                i += 8;
                continue;
            }
        }
        let b = bytes[i];
        let esc: &[u8] = match b {
            b'"' => b"\\\"",
            b'\\' => b"\\\\",
            0x08 => b"\\b",
            0x0c => b"\\f",
            b'\n' => b"\\n",
            b'\r' => b"\\r",
            b'\t' => b"\\t",
            0..=0x1f => &[
                b'\\',
                b'u',
                b'0',
                b'0',
                HEX[(b >> 4) as usize],
                HEX[(b & 15) as usize],
            ],
            _ => {
                i += 1;
                continue;
            }
        };
        out.extend_from_slice(&bytes[start..i]);
        out.extend_from_slice(esc);
        i += 1;
        start = i;
    }
    out.extend_from_slice(&bytes[start..]);
    out.push(b'"');
}

/// A document file: `{"id","version","source","content","metadata":{}}`, compact, as
/// serde_json writes the reference's documents.
fn document_json(d: &Read1) -> Vec<u8> {
    let mut out = Vec::with_capacity(d.content.len() + d.source.len() * 2 + 160);
    for (key, value) in [
        ("{\"id\":", &d.id),
        (",\"version\":", &d.version),
        (",\"source\":", &d.source),
        (",\"content\":", &d.content),
    ] {
        out.extend_from_slice(key.as_bytes());
        push_json_str(&mut out, value);
    }
    out.extend_from_slice(b",\"metadata\":{}}");
    out
}

fn write_document(docs: &cap_std::fs::Dir, d: &Read1) -> io::Result<()> {
    let mut f = docs.open_with(
        format!("{}.json", &d.version[7..19]),
        cap_std::fs::OpenOptions::new().write(true).create_new(true),
    )?;
    f.write_all(&document_json(d))?;
    #[cfg(not(target_os = "linux"))]
    f.sync_all()?;
    Ok(())
}

/// Build the documents of a cache into `documents/` of `out` (a handle of the temporary
/// cache directory the caller renames into place; the layer's, so nothing is written
/// anywhere else even if `documents` is swapped for a link).
pub fn build(sources: &Path, out: &cap_std::fs::Dir, mode: Mode) -> Result<Built, Fail> {
    let (found, mut skipped) = collect(sources, mode)?;
    let results: Vec<Result<Result<Read1, &'static str>, Fail>> =
        io_pool().install(|| found.par_iter().map(|s| ingest(s, mode)).collect());
    let mut docs = Vec::with_capacity(results.len());
    for (r, s) in results.into_iter().zip(&found) {
        match r? {
            Ok(d) => docs.push(d),
            Err(why) => skipped.push((s.rel.clone(), why)),
        }
    }
    docs.sort_by(|a, b| a.id.cmp(&b.id));
    if docs.windows(2).any(|w| w[0].id == w[1].id) {
        return Err(invalid("Two source files have the same document ID"));
    }
    if mode == Mode::Repository {
        // Identical files would share a document file name; keep the first id.
        let mut seen = HashSet::new();
        docs.retain(|d| {
            let first = seen.insert(d.version.clone());
            if !first {
                skipped.push((d.source.clone(), SKIP_DUPLICATE));
            }
            first
        });
    }
    skipped.sort();
    let mut stems = HashSet::new();
    for d in &docs {
        if !stems.insert(&d.version[7..19]) {
            return Err(Fail::Code(
                "internal_error",
                "Two documents share a file name (hash prefix collision)",
            ));
        }
    }
    out.create_dir(DOCUMENTS)?;
    let docs_dir = out.open_dir(DOCUMENTS)?;
    let written: Vec<io::Result<()>> = io_pool().install(|| {
        docs.par_iter()
            .map(|d| write_document(&docs_dir, d))
            .collect()
    });
    for w in written {
        w?;
    }
    crate::tree::fs::sync_filesystem(&docs_dir)?;
    Ok(Built {
        bytes: docs.iter().map(|d| d.content.len() as u64).sum(),
        entries: docs
            .into_iter()
            .map(|d| Entry {
                file: format!("{DOCUMENTS}/{}.json", &d.version[7..19]),
                id: d.id,
                version: d.version,
            })
            .collect(),
        skipped,
    })
}

#[derive(Deserialize)]
#[serde(untagged)]
#[allow(dead_code)] // only its shape is checked
enum MetaValue {
    Text(String),
    Number(i64),
}

#[derive(Deserialize)]
struct DocumentIn {
    id: String,
    version: String,
    #[allow(dead_code)] // required by the document's shape, never read
    source: String,
    content: String,
    #[allow(dead_code)] // required by the document's shape, never read
    metadata: BTreeMap<String, MetaValue>,
}

/// Read and verify the documents a manifest lists: (id, version, file name in
/// `docs`, a handle of the directory at `docs_dir`). Each file must parse as a document with
/// the entry's id and version, and its content must hash to that version. Returns the
/// documents with the stat key each file had when it was opened (by its path, which later
/// checks stat again).
pub fn load(
    docs: &cap_std::fs::Dir,
    docs_dir: &Path,
    entries: &[(String, String, String)],
) -> Result<(Vec<Doc>, Vec<Keyed>), Fail> {
    let results: Vec<Result<(Doc, Keyed), Fail>> = io_pool().install(|| {
        entries
            .par_iter()
            .map(|e| load_one(docs, docs_dir, e))
            .collect()
    });
    let mut docs = Vec::with_capacity(results.len());
    let mut keys = Vec::with_capacity(results.len());
    for r in results {
        let (d, k) = r?;
        docs.push(d);
        keys.push(k);
    }
    Ok((docs, keys))
}

fn load_one(
    docs: &cap_std::fs::Dir,
    docs_dir: &Path,
    (id, version, name): &(String, String, String),
) -> Result<(Doc, Keyed), Fail> {
    let path = docs_dir.join(name);
    let (file, meta) = open_regular_in(docs, name).map_err(|e| match e.kind() {
        io::ErrorKind::NotFound | io::ErrorKind::InvalidInput => invalid("missing document"),
        _ if os::is_link_refused(&e) => invalid("document is a symlink"),
        _ => Fail::Io(e),
    })?;
    let key = StatKey::of(&meta);
    let bytes = read_all(file, meta.len())?;
    let doc: DocumentIn =
        serde_json::from_slice(&bytes).map_err(|_| invalid("malformed document"))?;
    if &doc.id != id
        || &doc.version != version
        || &sha256_version(doc.content.as_bytes()) != version
    {
        return Err(invalid("document does not match the manifest"));
    }
    Ok((
        Doc {
            id: doc.id,
            version: doc.version,
            content: doc.content,
        },
        (path, key),
    ))
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::testing::TempTree;

    #[test]
    fn ids_are_normalised() {
        assert_eq!(document_id("./Docs/Deployment.md"), "docs/deployment.md");
        assert_eq!(document_id("a\\B.md"), "a/b.md");
    }

    #[test]
    fn version_is_sha256_of_content() {
        assert_eq!(
            sha256_version(b"Hello world"),
            "sha256:64ec88ca00b268e5ba1a35678a1b5316d212f4f366b2477232534a8aeca37f3c"
        );
    }

    #[test]
    fn documents_are_written_as_serde_json_writes_them() {
        let mut samples: Vec<String> =
            vec![String::new(), "plain".into(), "é🚀 \u{2028}\u{7f}".into()];
        samples.push((0u8..0x80).map(char::from).collect());
        for c in (0u8..0x20).chain([b'"', b'\\']) {
            for pad in 0..17 {
                samples.push(format!(
                    "{}{}{}",
                    "x".repeat(pad),
                    c as char,
                    "y".repeat(16 - pad)
                ));
            }
        }
        for s in samples {
            let d = Read1 {
                id: s.clone(),
                version: "sha256:0".into(),
                source: s.clone(),
                content: s.repeat(3),
            };
            let want = serde_json::json!({"id": d.id, "version": d.version, "source": d.source, "content": d.content, "metadata": {}});
            let want = format!(
                "{{\"id\":{},\"version\":{},\"source\":{},\"content\":{},\"metadata\":{{}}}}",
                want["id"], want["version"], want["source"], want["content"]
            );
            assert_eq!(String::from_utf8(document_json(&d)).unwrap(), want, "{s:?}");
        }
    }

    #[test]
    fn secrets_are_recognised() {
        for name in [
            ".env",
            ".env.local",
            "server.pem",
            "tls.KEY",
            "id_rsa",
            ".netrc",
            "client.crt",
            "ca.CER",
            "app.jks",
        ] {
            assert!(is_secret(name), "{name}");
        }
        for name in ["environment.md", "keys.py", "id_rsa.pub", "README.md"] {
            assert!(!is_secret(name), "{name}");
        }
    }

    fn out(dir: &Path) -> cap_std::fs::Dir {
        cap_std::fs::Dir::open_ambient_dir(dir, cap_std::ambient_authority()).unwrap()
    }

    #[test]
    fn build_then_load_round_trips() {
        let dir = TempTree::with(
            "cache-roundtrip",
            &[
                ("src/Sub/Guide.md", "Deploy \"it\"\n"),
                ("src/notes.txt", "not markdown"),
            ],
        );
        let src = dir.join("src");
        let built = build(&src, &out(&dir), Mode::Markdown).unwrap();
        assert_eq!(built.entries.len(), 1);
        assert_eq!(built.entries[0].id, "sub/guide.md");
        let e = &built.entries[0];
        let name = e.file.trim_start_matches("documents/").to_owned();
        let docs_dir = out(&dir.join("documents"));
        let (docs, keys) = load(
            &docs_dir,
            &dir.join("documents"),
            &[(e.id.clone(), e.version.clone(), name.clone())],
        )
        .unwrap();
        assert_eq!(docs[0].content, "Deploy \"it\"\n");
        assert_eq!(StatKey::lstat(&keys[0].0), Some(keys[0].1));
        // Tampering with the content is caught against the manifest's version.
        let path = dir.join("documents").join(&name);
        let text = fs::read_to_string(&path)
            .unwrap()
            .replace("Deploy", "Delete");
        fs::write(&path, text).unwrap();
        let err = load(
            &docs_dir,
            &dir.join("documents"),
            &[(e.id.clone(), e.version.clone(), name)],
        )
        .err()
        .unwrap();
        assert!(matches!(err, Fail::Code("cache_invalid", _)));
    }

    #[test]
    fn repository_builds_skip_binaries_secrets_and_duplicates() {
        let dir = TempTree::with(
            "cache-repo",
            &[
                ("src/.gitignore", "ignored.txt\n"),
                ("src/ignored.txt", "x"),
                ("src/a.py", "print(1)\n"),
                ("src/b.py", "print(1)\n"), // same content as a.py
                ("src/blob.bin", "\x00\x01"),
                ("src/server.pem", "-----BEGIN-----"),
            ],
        );
        let src = dir.join("src");
        let built = build(&src, &out(&dir), Mode::Repository).unwrap();
        let ids: Vec<_> = built.entries.iter().map(|e| e.id.as_str()).collect();
        assert_eq!(ids, ["a.py"]);
        let skipped: Vec<_> = built
            .skipped
            .iter()
            .map(|(p, why)| (p.as_str(), *why))
            .collect();
        assert_eq!(
            skipped,
            [
                ("b.py", SKIP_DUPLICATE),
                ("blob.bin", SKIP_BINARY),
                ("server.pem", SKIP_SECRET)
            ]
        );
    }
}
