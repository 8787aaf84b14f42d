//! The annotation index of a tree: every file that is not ignored, the annotations
//! of those with a known comment syntax, and stamps that tell cheaply whether the
//! index still describes the tree.
//!
//! The walk honours `.gitignore` files (nested, without needing a git repository),
//! `.git/info/exclude`, hidden names and the fixed skip list; symlinks are never
//! followed. Validity: any file added, removed or renamed changes its directory's
//! mtime and change time, so stamping every directory (and every `.gitignore`) detects
//! changes to the file list without touching the files. Edits in place don't show there,
//! so annotation queries stat the files they read and rescan the ones that changed (a
//! stamp holds the change time and inode too: an edit whose mtime was put back shows).
//! A stamp written less than a second before the scan is "racy" (the clock tick
//! may hide a later change) and never counts as current.

use crate::artifacts::annotate::{self, Annotation};
use crate::tree::ignore::{self as ignore_rules, Tree};
use crate::tree::walk::SKIP_DIRS;
use aho_corasick::AhoCorasick;
use globset::{Candidate, GlobBuilder, GlobSet, GlobSetBuilder};
use ignore::WalkState;
use rayon::prelude::*;
use std::fs;
use std::io::Read;
use std::path::{Path, PathBuf};
use std::sync::{mpsc, Mutex};

/// Files larger than this are listed but not scanned for annotations.
pub const MAX_FILE_BYTES: u64 = 2 << 20;

// --- globs -------------------------------------------------------------------

/// A list of glob patterns compiled once. `*` and `?` stay within a path segment,
/// `**` crosses them; a trailing `/` means everything below; `./` is dropped.
pub struct Globs {
    set: GlobSet,
    /// The literal leading directories every pattern shares ("src/auth/" for "src/auth/*.py"):
    /// only paths starting with it can match, so a sorted file list is searched, not scanned.
    prefix: String,
    /// For each glob in `set`, the index of its pattern.
    index: Vec<usize>,
    pub len: usize,
    /// Indices of patterns that are not valid globs (they never match).
    pub invalid: Vec<usize>,
}

pub fn normalize_pattern(p: &str) -> String {
    let mut s = p.replace('\\', "/");
    while let Some(rest) = s.strip_prefix("./") {
        s = rest.to_string();
    }
    if s.ends_with('/') {
        s.push_str("**");
    }
    s
}

/// The leading directories of a pattern before its first glob character ("a/b/" of "a/b/c*.py").
fn literal_dirs(pattern: &str) -> &str {
    let literal = pattern
        .find(['*', '?', '[', '{', '\\'])
        .map_or(pattern, |i| &pattern[..i]);
    literal.rfind('/').map_or("", |i| &literal[..=i])
}

fn common_prefix<'a>(mut items: impl Iterator<Item = &'a str>) -> String {
    let Some(first) = items.next() else {
        return String::new();
    };
    let mut prefix = first;
    for p in items {
        let n = prefix
            .bytes()
            .zip(p.bytes())
            .take_while(|(a, b)| a == b)
            .count();
        prefix = &prefix[..prefix[..n].rfind('/').map_or(0, |i| i + 1)];
    }
    prefix.to_string()
}

impl Globs {
    pub fn new(patterns: &[String]) -> Globs {
        let mut builder = GlobSetBuilder::new();
        let mut index = Vec::new();
        let mut invalid = Vec::new();
        for (i, p) in patterns.iter().enumerate() {
            match GlobBuilder::new(&normalize_pattern(p))
                .literal_separator(true)
                .build()
            {
                Ok(g) => {
                    builder.add(g);
                    index.push(i);
                }
                Err(_) => invalid.push(i),
            }
        }
        let set = builder.build().unwrap_or_else(|_| GlobSet::empty());
        let valid: Vec<String> = index
            .iter()
            .map(|&i| normalize_pattern(&patterns[i]))
            .collect();
        let prefix = common_prefix(valid.iter().map(|p| literal_dirs(p)));
        Globs {
            set,
            prefix,
            index,
            len: patterns.len(),
            invalid,
        }
    }

    fn matches_candidate(&self, c: &Candidate<'_>, into: &mut Vec<usize>) {
        self.set.matches_candidate_into(c, into);
        for m in into.iter_mut() {
            *m = self.index[*m];
        }
    }

    /// Indices of the patterns that match `path`, ascending.
    pub fn matches(&self, path: &str) -> Vec<usize> {
        let mut out = Vec::new();
        self.matches_candidate(&Candidate::new(path), &mut out);
        out.sort_unstable();
        out
    }
}

// --- the index ---------------------------------------------------------------

use crate::tree::os::now_ns;
/// What a file's metadata says of its content: the one stat key (tree/os.rs), whose change
/// time tells an edit whose mtime was put back and whose inode a file replaced by a rename.
pub use crate::tree::os::Key as Stamp;

/// Whether a write in the clock tick of a scan that started at `started` could keep this stamp:
/// its mtime is that recent (the rule of workspace.is_racy, over the one window of tree/os.rs).
fn racy(stamp: &Stamp, started: i64) -> bool {
    stamp.mtime >= started - crate::tree::os::RACY_NS
}

fn stamp_of(meta: &fs::Metadata) -> Stamp {
    Stamp::of(meta)
}

fn stat(path: &Path) -> Option<Stamp> {
    fs::symlink_metadata(path).ok().map(|m| stamp_of(&m))
}

struct FileState {
    stamp: Option<Stamp>,
    racy: bool,
    annotations: Vec<Annotation>,
}

pub struct FileRec {
    pub path: String,
    /// None for files without a known comment syntax: listed, never scanned.
    state: Option<Mutex<FileState>>,
}

/// A directory walked: its stamp, whether that was racy, and its `.gitignore`'s stamp if it had one
/// (a `.gitignore` created or deleted later changes the directory's own stamp).
struct DirStamp {
    rel: String,
    stamp: Stamp,
    racy: bool,
    gitignore: Option<Stamp>,
}

impl DirStamp {
    fn holds(&self, root: &Path) -> bool {
        let abs = root.join(&self.rel);
        !self.racy
            && stat(&abs) == Some(self.stamp)
            && self
                .gitignore
                .is_none_or(|g| stat(&abs.join(".gitignore")) == Some(g))
    }
}

pub struct Index {
    root: PathBuf,
    prefix: String,
    finder: AhoCorasick,
    pub files: Vec<FileRec>,
    /// Every directory walked ("" for the root), sorted by path.
    dirs: Vec<DirStamp>,
    /// `.git/info/exclude` (None: absent).
    exclude: Option<Stamp>,
}

/// Read and scan one file: (stamp, annotations). Binary and oversized files have none.
pub fn scan_path(
    abs: &Path,
    rel: &str,
    prefix: &str,
    finder: &AhoCorasick,
) -> (Option<Stamp>, Vec<Annotation>) {
    let Some(lang) = crate::lang::lang_of(rel) else {
        return (stat(abs), Vec::new());
    };
    let Ok(mut file) = fs::File::open(abs) else {
        return (None, Vec::new());
    };
    let Ok(meta) = file.metadata() else {
        return (None, Vec::new());
    };
    let stamp = Some(stamp_of(&meta));
    if !meta.is_file() || meta.len() > MAX_FILE_BYTES {
        return (stamp, Vec::new());
    }
    let mut bytes = Vec::with_capacity(meta.len() as usize);
    if file.read_to_end(&mut bytes).is_err() || bytes[..bytes.len().min(8192)].contains(&0) {
        return (stamp, Vec::new());
    }
    (stamp, annotate::scan(&bytes, lang, prefix, finder))
}

/// Whether a relative path lies in (or leads to) one of the scan paths.
fn wanted(rel: &str, is_dir: bool, scan_paths: &[String]) -> bool {
    scan_paths.iter().any(|sp| {
        sp.is_empty()
            || sp == "."
            || rel == sp
            || rel
                .strip_prefix(sp.as_str())
                .is_some_and(|r| r.starts_with('/'))
            || (is_dir && sp.strip_prefix(rel).is_some_and(|r| r.starts_with('/')))
    })
}

enum Item {
    Dir(String, Stamp, Option<Stamp>),
    File(String, Option<(Option<Stamp>, Vec<Annotation>)>),
}

impl Index {
    /// Walk `root` (only below `scan_paths`, relative; "." for everything) and scan every source file.
    pub fn build(root: &Path, prefix: &str, scan_paths: &[String]) -> std::io::Result<Index> {
        fs::read_dir(root)?;
        let started = now_ns();
        let finder = annotate::finder(prefix);
        let scan_paths: Vec<String> = scan_paths
            .iter()
            .map(|p| {
                let p = p.replace('\\', "/");
                p.trim_start_matches("./").trim_end_matches('/').to_string()
            })
            .collect();
        let root_buf = root.to_path_buf();
        let filter_root = root_buf.clone();
        let filter_paths = scan_paths.clone();
        // The ignore rules come from tree/ignore.rs (as git matches them), not from the walker.
        let rules = Tree::new(root);
        let walker = ignore_rules::lister(root)
            .filter_entry(move |e| {
                let is_dir = e.file_type().is_some_and(|t| t.is_dir());
                if e.depth() == 0 {
                    return true;
                }
                if is_dir && SKIP_DIRS.contains(&e.file_name().to_string_lossy().as_ref()) {
                    return false;
                }
                let rel = e
                    .path()
                    .strip_prefix(&filter_root)
                    .map(|p| p.to_string_lossy().replace('\\', "/"));
                rel.is_ok_and(|rel| wanted(&rel, is_dir, &filter_paths))
                    && !rules.ignores(e.path(), is_dir)
            })
            .build_parallel();
        let (tx, rx) = mpsc::channel::<Item>();
        walker.run(|| {
            let tx = tx.clone();
            let root = root_buf.clone();
            let prefix = prefix.to_string();
            let finder = finder.clone();
            Box::new(move |entry| {
                let Ok(entry) = entry else {
                    return WalkState::Continue;
                };
                let Some(ft) = entry.file_type() else {
                    return WalkState::Continue;
                };
                let path = entry.path();
                let Ok(rel) = path
                    .strip_prefix(&root)
                    .map(|p| p.to_string_lossy().replace('\\', "/"))
                else {
                    return WalkState::Continue;
                };
                if ft.is_dir() {
                    if let Some(s) = stat(path) {
                        let _ = tx.send(Item::Dir(rel, s, stat(&path.join(".gitignore"))));
                    }
                } else if ft.is_file() {
                    {
                        let scanned = crate::lang::lang_of(&rel)
                            .map(|_| scan_path(path, &rel, &prefix, &finder));
                        let _ = tx.send(Item::File(rel, scanned));
                    }
                }
                WalkState::Continue
            })
        });
        drop(tx);
        let mut files = Vec::new();
        let mut dirs = Vec::new();
        let exclude = stat(&root.join(".git/info/exclude"));
        for item in rx {
            match item {
                Item::Dir(rel, stamp, gitignore) => {
                    dirs.push(DirStamp {
                        rel,
                        stamp,
                        racy: racy(&stamp, started),
                        gitignore,
                    });
                }
                Item::File(path, scanned) => {
                    let state = scanned.map(|(stamp, annotations)| {
                        let racy = stamp.is_none_or(|s| racy(&s, started));
                        Mutex::new(FileState {
                            stamp,
                            racy,
                            annotations,
                        })
                    });
                    files.push(FileRec { path, state });
                }
            }
        }
        files.sort_unstable_by(|a, b| a.path.cmp(&b.path));
        dirs.sort_unstable_by(|a, b| a.rel.cmp(&b.rel));
        Ok(Index {
            root: root.to_path_buf(),
            prefix: prefix.to_string(),
            finder,
            files,
            dirs,
            exclude,
        })
    }

    /// Whether the files a query can match (every file when None), and the ignore rules behind
    /// them, are unchanged since the walk: the directories under the query's literal directories
    /// and the ones above them are stamped again, and nothing else.
    pub fn is_current(&self, query: Option<&Globs>) -> bool {
        stat(&self.root.join(".git/info/exclude")) == self.exclude
            && self
                .relevant_dirs(query)
                .par_iter()
                .all(|d| d.holds(&self.root))
    }

    fn relevant_dirs(&self, query: Option<&Globs>) -> Vec<&DirStamp> {
        let prefix = query.map_or("", |q| q.prefix.as_str());
        if prefix.is_empty() {
            return self.dirs.iter().collect();
        }
        let dir = prefix.trim_end_matches('/');
        let ancestors = std::iter::once("")
            .chain(dir.match_indices('/').map(|(i, _)| &dir[..i]))
            .chain([dir]);
        let mut out: Vec<&DirStamp> = ancestors
            .filter_map(|a| {
                self.dirs
                    .binary_search_by(|d| d.rel.as_str().cmp(a))
                    .ok()
                    .map(|i| &self.dirs[i])
            })
            .collect();
        let start = self.dirs.partition_point(|d| d.rel.as_str() < prefix);
        let len = self.dirs[start..].partition_point(|d| d.rel.starts_with(prefix));
        out.extend(&self.dirs[start..start + len]);
        out
    }

    /// The files whose paths start with the query's literal directories (all when None).
    fn candidates(&self, query: Option<&Globs>) -> &[FileRec] {
        let Some(prefix) = query.map(|q| q.prefix.as_str()).filter(|p| !p.is_empty()) else {
            return &self.files;
        };
        let start = self.files.partition_point(|f| f.path.as_str() < prefix);
        let len = self.files[start..].partition_point(|f| f.path.starts_with(prefix));
        &self.files[start..start + len]
    }

    /// Annotations of the scannable files matching `query` (all when None), ordered by
    /// path and line. Each of those files is stat'ed and rescanned if it changed.
    pub fn annotations(&self, query: Option<&Globs>) -> Vec<(String, Annotation)> {
        self.candidates(query)
            .par_iter()
            .filter(|f| f.state.is_some() && query.is_none_or(|g| g.set.is_match(&f.path)))
            .flat_map_iter(|f| {
                let mut st = f
                    .state
                    .as_ref()
                    .expect("filtered")
                    .lock()
                    .unwrap_or_else(|e| e.into_inner());
                let abs = self.root.join(&f.path);
                let now = stat(&abs);
                if st.racy || now != st.stamp {
                    let started = now_ns();
                    let (stamp, annotations) = scan_path(&abs, &f.path, &self.prefix, &self.finder);
                    st.racy = stamp.is_none_or(|s| racy(&s, started));
                    st.stamp = stamp;
                    st.annotations = annotations;
                }
                st.annotations
                    .iter()
                    .map(|a| (f.path.clone(), a.clone()))
                    .collect::<Vec<_>>()
            })
            .collect()
    }

    /// For each pattern, how many files it matches.
    pub fn match_counts(&self, globs: &Globs) -> Vec<u64> {
        self.files
            .par_iter()
            .fold(
                || (vec![0u64; globs.len], Vec::new()),
                |(mut acc, mut buf), f| {
                    globs.matches_candidate(&Candidate::new(&f.path), &mut buf);
                    for &i in &buf {
                        acc[i] += 1;
                    }
                    (acc, buf)
                },
            )
            .map(|(acc, _)| acc)
            .reduce(
                || vec![0u64; globs.len],
                |a, b| a.iter().zip(&b).map(|(x, y)| x + y).collect(),
            )
    }

    /// For each pattern, whether some file matches both it and `query`.
    pub fn overlaps(&self, query: &Globs, globs: &Globs) -> Vec<bool> {
        self.candidates(Some(query))
            .par_iter()
            .fold(
                || (vec![false; globs.len], Vec::new()),
                |(mut acc, mut buf), f| {
                    let c = Candidate::new(&f.path);
                    if query.set.is_match_candidate(&c) {
                        globs.matches_candidate(&c, &mut buf);
                        for &i in &buf {
                            acc[i] = true;
                        }
                    }
                    (acc, buf)
                },
            )
            .map(|(acc, _)| acc)
            .reduce(
                || vec![false; globs.len],
                |a, b| a.iter().zip(&b).map(|(x, y)| *x || *y).collect(),
            )
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::testing::TempTree;

    fn tree(files: &[(&str, &str)]) -> TempTree {
        TempTree::with("srcindex", files)
    }

    fn targets(idx: &Index, q: Option<&Globs>) -> Vec<String> {
        idx.annotations(q)
            .into_iter()
            .map(|(p, a)| format!("{p}:{} {}", a.line, a.target))
            .collect()
    }

    #[test]
    fn walk_honours_gitignore_hidden_and_scan_paths() {
        let d = tree(&[
            (".gitignore", "gen/\n*.log\n"),
            ("src/a.py", "# @spec SPEC-1\n"),
            ("src/gen/b.py", "# @spec SPEC-2\n"),
            ("src/c.log", "# @spec SPEC-3\n"),
            (".hidden/d.py", "# @spec SPEC-4\n"),
            ("node_modules/e.js", "// @spec SPEC-5\n"),
            ("tests/t.go", "// @test SPEC-1/x\n"),
            ("README", "no extension\n"),
        ]);
        let idx = Index::build(d.path(), "@", &[".".into()]).unwrap();
        let paths: Vec<_> = idx.files.iter().map(|f| f.path.as_str()).collect();
        assert_eq!(paths, ["README", "src/a.py", "tests/t.go"]);
        assert_eq!(
            targets(&idx, None),
            ["src/a.py:1 SPEC-1", "tests/t.go:1 SPEC-1/x"]
        );
        let only_src = Index::build(d.path(), "@", &["src/".into()]).unwrap();
        assert_eq!(targets(&only_src, None), ["src/a.py:1 SPEC-1"]);
    }

    #[test]
    #[cfg_attr(
        windows,
        ignore = "sets a directory's mtime through File::open, which Windows refuses for a directory"
    )]
    fn in_place_edits_are_seen_and_new_files_invalidate() {
        let d = tree(&[("a.py", "# @spec SPEC-1\n"), ("b.py", "x = 1\n")]);
        let idx = Index::build(d.path(), "@", &[".".into()]).unwrap();
        fs::write(d.path().join("b.py"), "# @norm NORM-1\nx = 2\n").unwrap();
        assert_eq!(targets(&idx, None), ["a.py:1 SPEC-1", "b.py:1 NORM-1"]);
        let q = Globs::new(&["a.*".into()]);
        assert_eq!(targets(&idx, Some(&q)), ["a.py:1 SPEC-1"]);
        let under_a = Globs::new(&["a/*.py".into()]);
        fs::create_dir(d.path().join("a")).unwrap();
        assert!(!idx.is_current(None) && !idx.is_current(Some(&under_a)));
        let idx = Index::build(d.path(), "@", &[".".into()]).unwrap();
        let old = std::time::SystemTime::now() - std::time::Duration::from_secs(60);
        for p in ["a", ""] {
            fs::File::open(d.path().join(p))
                .unwrap()
                .set_modified(old)
                .unwrap();
        }
        let idx = Index {
            dirs: idx
                .dirs
                .into_iter()
                .map(|x| DirStamp {
                    racy: false,
                    stamp: stat(&d.path().join(&x.rel)).unwrap(),
                    ..x
                })
                .collect(),
            ..idx
        };
        assert!(idx.is_current(None) && idx.is_current(Some(&under_a)));
        fs::write(d.path().join("a/new.py"), "").unwrap();
        assert!(!idx.is_current(Some(&under_a)));
        assert!(
            idx.is_current(Some(&Globs::new(&["b/*.py".into()]))),
            "a change under a/ is not a change under b/"
        );
        assert!(!idx.is_current(None));
    }

    #[test]
    #[cfg_attr(
        windows,
        ignore = "sets a directory's mtime through File::open, which Windows refuses for a directory"
    )]
    fn an_edit_of_the_same_size_with_its_mtime_put_back_is_seen() {
        let d = tree(&[("a.py", "# @spec SPEC-1\n")]);
        let old = std::time::SystemTime::now() - std::time::Duration::from_secs(60);
        for p in ["a.py", ""] {
            fs::File::open(d.path().join(p))
                .unwrap()
                .set_modified(old)
                .unwrap();
        }
        let idx = Index::build(d.path(), "@", &[".".into()]).unwrap();
        let f = idx.files[0].state.as_ref().unwrap();
        f.lock().unwrap().racy = false; // as if the scan were long after the last change
        let before = fs::metadata(d.path().join("a.py"))
            .unwrap()
            .modified()
            .unwrap();
        fs::write(d.path().join("a.py"), "# @spec SPEC-2\n").unwrap();
        fs::File::options()
            .write(true)
            .open(d.path().join("a.py"))
            .unwrap()
            .set_modified(before)
            .unwrap();
        assert_eq!(targets(&idx, None), ["a.py:1 SPEC-2"]);
    }

    #[test]
    fn globs_counts_and_overlaps() {
        let d = tree(&[
            ("src/auth/login.py", ""),
            ("src/auth/api_keys.py", ""),
            ("src/db/x.rs", ""),
            ("docs/a.md", ""),
        ]);
        let idx = Index::build(d.path(), "@", &[".".into()]).unwrap();
        let g = Globs::new(&[
            "src/auth/*".into(),
            "src/**".into(),
            "./docs/".into(),
            "[bad".into(),
            "src/*".into(),
        ]);
        assert_eq!(g.invalid, [3]);
        assert_eq!(idx.match_counts(&g), [2, 3, 1, 0, 0]);
        assert_eq!(g.matches("src/auth/login.py"), [0, 1]);
        let q = Globs::new(&["src/*/login.py".into()]);
        assert_eq!(idx.overlaps(&q, &g), [true, true, false, false, false]);
        assert_eq!(
            Globs::new(&["src/auth/*.py".into(), "src/db/**".into()]).prefix,
            "src/"
        );
        assert_eq!(Globs::new(&["./src/auth/".into()]).prefix, "src/auth/");
        assert_eq!(Globs::new(&["src/a.py".into()]).prefix, "src/");
        assert_eq!(Globs::new(&["**/*.rs".into(), "src/x".into()]).prefix, "");
        let only_auth = Globs::new(&["src/auth/*".into()]);
        assert_eq!(idx.candidates(Some(&only_auth)).len(), 2);
    }
}
