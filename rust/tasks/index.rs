//! The task index of a tree: every file the walk reaches that the index reads
//! (tasks/files.rs), in a BM25 index of its terms, with the names it defines, its imports
//! resolved to files, its annotations; the written context of the tree (tasks/written.rs)
//! and git's history (tasks/history.rs).
//!
//! It is built from the directories of the walk table (rust/tree/walk.rs: the same ignore
//! policy and depth) and kept true by `update`, given the directories whose rows changed
//! (a serving process has them from the live index's change feed): each is listed again
//! and only its files whose stat key changed are read again. Directories gone take their
//! files with them.
//!
//! `save` writes the index's own structures for a later process and `build_from` adopts them
//! part by part as tasks/store.rs checks the bytes: the posting lists, forward lists, names
//! defined and resolved imports are taken as they are, the tables over them made again, and
//! then every directory's listing is compared with them as an update compares it (the walk's
//! own listing when it kept one, so a cold call lists the tree once; else listed on a thread of
//! its own from the moment the saved file's header passes): files whose stat key changed since
//! are taken out and read again, files gone are dropped, files new are read.

use super::arena::Arena;
use super::bm25::{self, Inverted};
use super::cuts::{Cut, Cuts};
use super::files::{self, DirFilter, Facts, Ignore, StatKey};
use super::graph::Modules;
use super::history::History;
use super::keys::{Packed, Shared};
use super::limits::TooBig;
use super::median::Median;
use super::options::Options;
use super::paths::{PathTable, Paths};
use super::recent::Recent;
use super::store::{self, SavedFile, SavedTerm};
use super::varint;
use super::vocab::Vocab;
use super::written::Written;
use crate::artifacts::annotate;
use crate::lang::imports::Import;
use crate::tree::count::FileCount;
use crate::tree::fs::{Error as FsError, Root};
use crate::tree::listing::DirFiles;
use crate::tree::os::PlainDir;
use crate::tree::scratch::Spool;
use crate::tree::walk::{Kept, KeptDir};
use aho_corasick::AhoCorasick;
use rayon::prelude::*;
use std::collections::{HashMap, HashSet};
use std::io::{self, Write};
use std::path::{Path, PathBuf};
use std::sync::Arc;

/// A file's record (its path is the index's `paths`, by its number).
pub struct File {
    /// Its stat key, and whether it is code and not a test (files::is_code_not_test); the
    /// key is read whole through `Index::key`.
    key: Packed,
    /// None for a file with no imports and no annotations (docs, data, most tests): one
    /// pointer in every record rather than three slices (48 bytes a file).
    links: Option<Box<Links>>,
}

struct Links {
    imports: Box<[Import]>,
    /// The files its imports resolve to.
    out: Box<[u32]>,
    annotations: Box<[(u32, Box<str>)]>,
}

impl File {
    /// Code and not a test (files::is_code_not_test).
    pub fn code(&self) -> bool {
        self.key.code()
    }

    /// Its imports as written.
    pub fn imports(&self) -> &[Import] {
        self.links.as_ref().map_or(&[], |l| &l.imports)
    }

    /// The files its imports resolve to.
    pub fn out(&self) -> &[u32] {
        self.links.as_ref().map_or(&[], |l| &l.out)
    }

    pub fn annotations(&self) -> &[(u32, Box<str>)] {
        self.links.as_ref().map_or(&[], |l| &l.annotations)
    }
}

/// The links of a file, none when it has none.
fn links(
    imports: Vec<Import>,
    out: Vec<u32>,
    annotations: Vec<(u32, Box<str>)>,
) -> Option<Box<Links>> {
    (!(imports.is_empty() && out.is_empty() && annotations.is_empty())).then(|| {
        Box::new(Links {
            imports: imports.into_boxed_slice(),
            out: out.into_boxed_slice(),
            annotations: annotations.into_boxed_slice(),
        })
    })
}

/// A set of numbers as a file keeps them (the names it defines, `Index::defs`): rising, each
/// the varint of its gap from the one before (1 or 2 bytes a name rather than 4).
fn packed_ids(mut ids: Vec<u32>) -> Vec<u8> {
    ids.sort_unstable();
    ids.dedup();
    let mut out = Vec::with_capacity(ids.len() * 2);
    varint::put_rising(&mut out, ids);
    out
}

/// A save's pieces, each encoded by one thread: this many files, or terms whose posting lists
/// hold about this many bytes (a list may hold a few bytes or megabytes); a batch of pieces is
/// encoded at once.
const SAVE_FILES: usize = 1024;
const SAVE_BYTES: usize = 256 << 10;
const SAVE_BATCH: usize = 16;

/// `ids` cut into runs of at least `SAVE_BYTES` as `size` counts them (the last may hold fewer).
fn runs(ids: &[u32], size: impl Fn(u32) -> usize) -> Vec<&[u32]> {
    let mut out = Vec::new();
    let (mut start, mut bytes) = (0, 0);
    for (i, &id) in ids.iter().enumerate() {
        bytes += size(id);
        if bytes >= SAVE_BYTES {
            out.push(&ids[start..=i]);
            (start, bytes) = (i + 1, 0);
        }
    }
    if start < ids.len() {
        out.push(&ids[start..]);
    }
    out
}

/// `pieces` encoded by `piece` a batch at a time, in parallel, each batch written to `e` in
/// order and freed before the next is made.
fn put_batches<W: Write>(
    e: &mut store::Encoder<W>,
    pieces: &[&[u32]],
    piece: impl Fn(&[u32]) -> Vec<u8> + Sync,
) -> io::Result<()> {
    for batch in pieces.chunks(SAVE_BATCH) {
        let encoded: Vec<Vec<u8>> = batch.par_iter().map(|ids| piece(ids)).collect();
        for b in encoded {
            e.put(&b)?;
        }
    }
    Ok(())
}

pub struct Index {
    pub root: PathBuf,
    pub opts: Options,
    finder: AhoCorasick,
    pub files: Vec<Option<File>>,
    free: Vec<u32>,
    /// Each file's path by its number, and its number by its path (tasks/paths.rs).
    paths: Paths,
    by_path: PathTable,
    /// What the files' stat keys share, which their records hold by number (tasks/keys.rs).
    keys: Shared,
    /// The files of each directory, by path (not by number: an answer must not depend on the
    /// order files were seen).
    pub by_dir: HashMap<String, Vec<u32>>,
    dirs: HashSet<String>,
    pub lex: Inverted,
    /// Defined names by number, and the files defining each (a name defined in more than
    /// `COMMON` files is only counted from then on: it says nothing of a task).
    def_ids: Vocab,
    defined: Vec<Defined>,
    /// The names each file defines by their numbers (`packed_ids`), by file number: one
    /// buffer, read from a private mapped file after a load as the lists are.
    defs: Arena,
    /// Common names whose count fell back to `COMMON` or below: their files are found again by
    /// `prepare`, so the index holds what a build of the same files holds.
    recount: HashSet<u32>,
    /// Artifact id -> (file, line) of each annotation naming it.
    pub annotated: HashMap<Box<str>, Vec<(u32, u32)>>,
    /// Made when an import is first resolved (none is, after a load, until a file changes):
    /// a load hashed every file's module path into it, an eighth of adopting a file.
    modules: Option<Modules>,
    /// Files whose imports must be resolved again (all of them when files came or went).
    unresolved: HashSet<u32>,
    resolve_all: bool,
    reverse: Importers,
    reverse_stale: bool,
    pub written: Written,
    pub history: History,
    /// History's recency and churn of each file by number, made again when HEAD moves or files
    /// come or go.
    recency: Vec<f32>,
    churn: Vec<f32>,
    recency_stale: bool,
    /// How many names each file defines, for their median (kept as files come and go).
    defines: Median,
    /// The regions of the files questions ranked high, and their words (tasks/cuts.rs).
    cuts: Cuts,
    /// Which lines of the top files changed lately, by HEAD (tasks/recent.rs; not saved).
    pub recent: Recent,
    /// Files the build put in from saved facts rather than by reading them.
    pub loaded: usize,
    /// Why saved bytes given to the build were not used, if they were not.
    pub refused: Option<String>,
    /// Files read when they were changed within tree/os.rs's racy window of the listing that
    /// found them (`Key::racy`): a write in the same clock tick could leave the stat key as it
    /// was, so `save` leaves them out and the next process reads them again (git's "racily
    /// clean" entries).
    racy: HashSet<u32>,
    /// How many files differ from the last saved bytes (read, dropped, or saved but gone or
    /// changed); every file held after a build from nothing. `save` makes it 0.
    pub changed: usize,
    /// The directories a load lists when it knows the walk's (`load`'s `ahead`); their
    /// listing, under way on a thread of its own from the moment the saved file is open; and
    /// that listing (or the walk's, `settle`'s `kept`) compared with the files (on another
    /// thread while the terms are adopted).
    to_list: Option<Vec<String>>,
    ahead: Option<Ahead>,
    /// The walk's listing, when `settle` reads the saved file itself: compared with the files
    /// while the terms are adopted, as `ahead`'s is.
    kept: Option<Kept>,
    listed: Option<Listing>,
    /// Where a load spools the posting and forward lists it adopts, to read them mapped
    /// (tree/scratch.rs): the saved file's directory, while the load runs.
    scratch: Option<cap_std::fs::Dir>,
}

use crate::tree::os::now_ns;

/// Files read and put in the index at a time.
const CHUNK: usize = 4096;

/// Files taken out (or read) at once beyond which their postings go out (or in) in one pass
/// over the lists.
const BATCH: usize = 64;

/// A name defined in more files than this is common: its files are no longer kept.
pub const COMMON: usize = 64;

#[derive(Default)]
struct Defined {
    files: Vec<u32>,
    count: u32,
    common: bool,
}

/// A saved index adopted as it was saved, part by part as tasks/store.rs checks it (its files
/// numbered as there, its lists as they are): the files' records and the tables over them made
/// as each file comes, the posting lists as each term does.
impl store::Sink for Index {
    /// The header passed (a file saved by this build for this root): the walk's directories,
    /// when the load was given them, are listed from now on.
    fn start(&mut self, resolved: bool, names: usize, terms: usize) {
        if let Some(dirs) = self.to_list.take() {
            self.ahead = Some(Ahead::start(&self.root, &self.opts, dirs));
        }
        self.def_ids = Vocab::with_capacity(names);
        self.defined = Vec::with_capacity(names);
        self.lex = Inverted::adopting(terms, self.spool());
        self.resolve_all = !resolved;
    }

    fn name(&mut self, _: u32, name: &str) {
        self.def_ids.push(name); // numbered in order, as saved
        self.defined.push(Defined::default());
    }

    fn files(&mut self, files: usize) {
        self.files.reserve_exact(files);
        self.paths.reserve(files);
        self.by_path.reserve(files, |i| self.paths.get(i));
        self.lex.adopting_docs(files, self.spool());
        self.defs = Arena::with_capacity(files, self.spool());
    }

    fn file(&mut self, id: u32, f: SavedFile<'_>) -> bool {
        // Numbered before its path is kept: only the files before it are read.
        if !self.by_path.insert_new(f.path, id, |i| self.paths.get(i)) {
            return false;
        }
        self.paths.set(id, f.path);
        self.lex.adopt_doc(f.forward, f.len);
        self.count_defs(id, varint::rising(f.defs));
        self.defs.push(f.defs);
        for (line, target) in &f.annotations {
            self.annotated
                .entry(target.clone())
                .or_default()
                .push((id, *line));
        }
        // A directory's name is allocated once, for its first file (the saved files come
        // directory by directory in path order, but any order is taken).
        let dir = parent_dir(f.path);
        match self.by_dir.get_mut(dir) {
            Some(ids) => ids.push(id),
            None => {
                self.by_dir.insert(dir.to_string(), vec![id]);
                self.dirs.insert(dir.to_string());
            }
        }
        self.files.push(Some(File {
            key: self.keys.pack(f.key, files::is_code_not_test(f.path)),
            links: links(f.imports, f.out, f.annotations),
        }));
        true
    }

    fn term(&mut self, _: u32, t: SavedTerm<'_>) {
        self.lex.adopt_term(t.term, t.postings, t.df, t.last);
    }

    fn scope(&mut self, part: &[u8]) {
        self.written.adopt(part);
    }

    /// Every file is in: each directory's files are put in path order (a listing is compared
    /// with them in that order). The terms go to the posting lists while another thread
    /// compares a listing with the files, which the terms do not change: the one made ahead
    /// (when the load was given the walk's directories), or the walk's own (when `settle` reads
    /// the saved file, after the walk). A load that runs beside the walk has neither: the walk
    /// hands its listing to `settle`.
    fn beside_terms(&mut self, adopt: store::AdoptTerms<'_>) -> Result<(), String> {
        let paths = &self.paths;
        for list in self.by_dir.values_mut() {
            list.sort_unstable_by(|&a, &b| paths.get(a).cmp(paths.get(b)));
        }
        let lex = &mut self.lex;
        let (ahead, kept) = (self.ahead.take(), self.kept.take());
        if ahead.is_none() && kept.is_none() {
            return adopt(&mut |_, t| lex.adopt_term(t.term, t.postings, t.df, t.last));
        }
        let (root, held): (&Path, Held<'_>) = (&self.root, held!(self));
        let (adopted, listing) = std::thread::scope(|s| {
            let lister = s.spawn(move || match (ahead, kept) {
                (Some(ahead), _) => ahead.compare(held),
                (None, kept) => kept.map(|kept| compare_kept(root, kept, held)),
            });
            let adopted = adopt(&mut |_, t| lex.adopt_term(t.term, t.postings, t.df, t.last));
            (adopted, lister.join().ok().flatten())
        });
        self.listed = listing;
        adopted
    }
}

/// Where a build finds what an earlier `save` wrote.
pub enum Saved<'a> {
    /// Its bytes, held by the caller.
    Bytes(&'a [u8]),
    /// A file beneath the root (by its path from the root), read a piece at a time, refused
    /// unread when it holds more than the bytes given.
    File(&'a Path, u64),
    /// `File`, read once the walk beside the load has counted a tree whose `store::saved_cap`
    /// holds its size; left for `settle` when the walk ends short of it (or fails).
    Counted(&'a Path, &'a FileCount),
}

/// A saved index adopted before the tree was listed (`Index::load`), for `settle` to finish.
pub struct Loaded {
    ix: Index,
    /// Files adopted.
    adopted: usize,
    size: SavedSize,
}

/// The saved file's size, checked by `settle` against the cap of the tree the walk found.
enum SavedSize {
    /// No file given (bytes or none).
    None,
    /// The file adopted (or none there) held this many bytes.
    Read(u64),
    /// Larger than the cap `load` was given (or than the walk's count allowed): read by
    /// `settle`, if the tree's cap allows it.
    Later(PathBuf),
}

impl Loaded {
    /// `dirs` (the scopes of the walk table) listed and brought up to date: the files whose
    /// stat key is the one saved are not read. `cap` is the most bytes the saved file may hold
    /// for this tree: a larger one is refused (unread, when `load` left it) and every file read.
    /// `kept`: the walk's listing of `dirs` (`walk_keeping`), so they are not listed again.
    pub fn settle(
        self,
        dirs: &[String],
        cap: u64,
        mut kept: Option<Kept>,
    ) -> Result<Index, TooBig> {
        let Loaded {
            mut ix,
            mut adopted,
            size,
        } = self;
        match size {
            SavedSize::Read(len) if len > cap => {
                adopted = ix.refuse(format!("larger than {cap} bytes; refused"));
            }
            SavedSize::Later(rel) => {
                ix.kept = kept.take(); // compared beside the terms
                adopted = match Root::open(&ix.root.clone()) {
                    Ok(confined) => match ix.adopt_file(&confined, &rel, cap, |_| true) {
                        Some((adopted, _)) => adopted,
                        None => ix.refuse(format!("larger than {cap} bytes; refused unread")),
                    },
                    Err(_) => 0,
                };
            }
            _ => {}
        }
        if let Some(kept) = kept.or_else(|| ix.kept.take()) {
            ix.listed = Some(compare_kept(&ix.root, kept, held!(ix)));
        }
        let (loaded, scopes) = ix.update_from(dirs, Some(dirs))?;
        ix.loaded = loaded;
        // Files read (new or changed since), files saved that were not used (changed or gone),
        // and context files read (new or changed since) or gone.
        ix.changed = (ix.file_count() - loaded) + (adopted - loaded) + scopes;
        Ok(ix)
    }
}

/// What the listing of one directory found that differs from the index (`update_from`).
#[derive(Default)]
struct Listed {
    /// When the listing began (the racy window is counted from it).
    at: i64,
    /// Files held there that it no longer lists.
    vanished: Vec<u32>,
    /// Files held whose stat key changed (read again, after they are taken out).
    out: Vec<u32>,
    /// Files to read: changed or new, with their stat keys now.
    to_read: Vec<(String, StatKey)>,
    /// Files held with the same stat key.
    same: usize,
    /// The stat key of its context file as the walk listed it (`Some(None)`: none there);
    /// None when the listing did not look (`Written::scopes` stats it).
    context: Option<Option<StatKey>>,
}

/// The files importing each file, in one list for all (file `i`'s are `ids[at[i]..at[i + 1]]`,
/// rising), not a vector a file: 24 bytes a file, most of them empty.
#[derive(Default)]
struct Importers {
    at: Vec<u32>,
    ids: Vec<u32>,
}

impl Importers {
    fn of(files: &[Option<File>]) -> Importers {
        let mut at = vec![0u32; files.len() + 1];
        for &o in files.iter().flatten().flat_map(File::out) {
            at[o as usize + 1] += 1;
        }
        for i in 1..at.len() {
            at[i] += at[i - 1];
        }
        let mut next = at.clone();
        let mut ids = vec![0; at[files.len()] as usize];
        for (id, f) in files.iter().enumerate() {
            for &o in f.iter().flat_map(File::out) {
                ids[next[o as usize] as usize] = id as u32;
                next[o as usize] += 1;
            }
        }
        Importers { at, ids }
    }

    fn of_file(&self, id: u32) -> &[u32] {
        match (self.at.get(id as usize), self.at.get(id as usize + 1)) {
            (Some(&a), Some(&b)) => &self.ids[a as usize..b as usize],
            _ => &[],
        }
    }

    fn heap_bytes(&self) -> usize {
        (self.at.capacity() + self.ids.capacity()) * 4
    }
}

/// The ids of the files held (the table's holes are files taken out).
fn held_ids(files: &[Option<File>]) -> impl Iterator<Item = u32> + '_ {
    (0..files.len() as u32).filter(|&i| files[i as usize].is_some())
}

fn parent_dir(path: &str) -> &str {
    path.rsplit_once('/').map_or(".", |(d, _)| d)
}

/// The paths, the records, the files by directory (in path order) and what their stat keys
/// share, which a listing is compared with.
type Held<'a> = (
    &'a Paths,
    &'a [Option<File>],
    &'a HashMap<String, Vec<u32>>,
    &'a Shared,
);

/// An index's `Held`, borrowed field by field (its terms may be adopted beside it).
macro_rules! held {
    ($ix:expr) => {
        (&$ix.paths, &$ix.files[..], &$ix.by_dir, &$ix.keys)
    };
}
use held;

/// Directory `dir` listed (`files::list`).
fn list_raw(top: &PlainDir, root: &Path, dir: &str, ignore: &Ignore) -> DirFiles {
    let mut raw = DirFiles::default();
    files::list(top, root, dir, ignore, |name, k| raw.push(name, k));
    raw.shrink();
    raw
}

/// Directory `d`'s files the index reads, as listed from `at` (`files`: name and stat key),
/// compared with the files `held`, so only what differs is kept. Both sides are walked in name
/// order (the directory's files are kept in path order, and a path is `d/` and its name), so a
/// name is matched with no lookup of its path.
fn compare<'n>(
    d: &str,
    files: impl Iterator<Item = (&'n str, StatKey)>,
    at: i64,
    (paths, held, by_dir, keys): Held<'_>,
) -> Listed {
    let mut l = Listed {
        at,
        ..Listed::default()
    };
    let mut listed: Vec<(&str, StatKey)> = files.collect();
    listed.sort_unstable_by(|a, b| a.0.cmp(b.0));
    let prefix = if d == "." { 0 } else { d.len() + 1 };
    let had = by_dir.get(d).map_or(&[][..], Vec::as_slice);
    let mut had = had
        .iter()
        .map(|&id| (id, &paths.get(id)[prefix..]))
        .peekable();
    let path = |name: &str| match d {
        "." => name.to_string(),
        _ => format!("{d}/{name}"),
    };
    for (name, k) in listed {
        // Files held before this name that the listing did not find: gone.
        while let Some((id, _)) = had.next_if(|&(_, p)| p < name) {
            l.vanished.push(id);
        }
        match had.next_if(|&(_, p)| p == name) {
            Some((id, _)) => match held.get(id as usize).and_then(Option::as_ref) {
                Some(f) if keys.unpack(&f.key) == k => l.same += 1,
                _ => {
                    l.out.push(id);
                    l.to_read.push((path(name), k));
                }
            },
            None => l.to_read.push((path(name), k)),
        }
    }
    l.vanished.extend(had.map(|(id, _)| id));
    l
}

/// Each directory of `dirs` listed and compared with the files `held` where it is listed, in
/// parallel, so only what differs is kept: not a record of every file of the tree at once
/// beside the index.
fn list_dirs(
    root: &Path,
    ignore: &Ignore,
    dirs: &[String],
    at: i64,
    held: Held<'_>,
) -> Vec<Listed> {
    let Some(top) = PlainDir::top(root) else {
        return Vec::new();
    };
    dirs.par_iter()
        .map(|d| compare(d, list_raw(&top, root, d, ignore).iter(), at, held))
        .collect()
}

/// The walk's directories listed (sorted, `raw` in their order) on a thread of their own
/// beside a load's check of the saved files, from `at`: the kernel's listing and stat of every
/// file, most of a cold call's system time, on the other core while this one checks the bytes.
struct Ahead {
    at: i64,
    raw: std::thread::JoinHandle<(Vec<String>, Vec<DirFiles>)>,
}

impl Ahead {
    fn start(root: &Path, opts: &Options, dirs: Vec<String>) -> Ahead {
        let (root, extra) = (root.to_path_buf(), opts.extra_ignore.clone());
        let at = now_ns(); // on this thread: a test's pinned clock is this thread's
        let raw = std::thread::spawn(move || {
            let ignore = Ignore::new(&root, &extra);
            let raw = match PlainDir::top(&root) {
                Some(top) => dirs
                    .par_iter()
                    .map(|d| list_raw(&top, &root, d, &ignore))
                    .collect(),
                None => Vec::new(),
            };
            (dirs, raw)
        });
        Ahead { at, raw }
    }

    /// The listing, once done, compared with the files `held` (all adopted by then).
    fn compare(self, held: Held<'_>) -> Option<Listing> {
        let (dirs, raw) = self.raw.join().ok()?;
        let listed = dirs
            .par_iter()
            .zip(&raw)
            .map(|(d, r)| compare(d, r.iter(), self.at, held))
            .collect();
        Some(Listing { dirs, listed })
    }
}

/// The walk's listing (`walk_keeping`) of the files the index of `root` reads compared with
/// the files `held`, in parallel, where a load would list the tree again.
fn compare_kept(root: &Path, kept: Kept, held: Held<'_>) -> Listing {
    let priority = kept.priority.as_deref();
    let (dirs, listed) = kept
        .dirs
        .into_par_iter()
        .map(
            |KeptDir {
                 scope,
                 files,
                 chain,
             }| {
                let mut filter = DirFilter::walked(priority, root, &scope, chain);
                let read = files
                    .iter()
                    .filter(|(name, key)| files::wanted(name) && filter.admits(name, key.size));
                let mut listed = compare(&scope, read, kept.at, held);
                listed.context = Some(files.context());
                (scope, listed)
            },
        )
        .unzip();
    Listing { dirs, listed }
}

/// The listing of `list_dirs` made ahead (while a load adopted the terms, or by the walk), for
/// `update_from`.
struct Listing {
    /// Sorted, as `listed` is.
    dirs: Vec<String>,
    listed: Vec<Listed>,
}

impl Index {
    /// Index the files of `dirs` (the scopes of the walk table) beneath `root`.
    #[cfg(test)]
    pub fn build(root: &Path, opts: Options, dirs: &[String]) -> std::io::Result<Index> {
        Index::build_from(root, opts, dirs, None, None)
    }

    /// `build`, starting from the bytes an earlier `save` wrote (if any): the index saved is
    /// adopted and brought up to date, so the files whose stat key is the one saved are not
    /// read. Bytes that cannot be used (`refused` says why) are as none: the build reads every
    /// file; so is a saved file that cannot be opened as a regular file beneath the root.
    /// `kept`: the walk's listing of `dirs` (`walk_keeping`), which is then not listed again.
    pub fn build_from(
        root: &Path,
        opts: Options,
        dirs: &[String],
        saved: Option<Saved>,
        kept: Option<Kept>,
    ) -> std::io::Result<Index> {
        let cap = match saved {
            Some(Saved::File(_, cap)) => cap,
            _ => u64::MAX,
        };
        let ahead = kept.is_none().then_some(dirs);
        Ok(Index::load(root, opts, saved, ahead)?.settle(dirs, cap, kept)?)
    }

    /// The first half of `build_from`, before the tree is listed (so it can run beside the walk
    /// that finds `dirs`): the saved index adopted. A saved file larger than its cap (or than
    /// the cap of the files the walk counts, `Saved::Counted`, which it waits for) is left for
    /// `settle`, which is given the tree's. `ahead`: the directories `settle` will list, when
    /// they are known already, listed while the saved file is checked (without them nothing is
    /// listed: `settle` takes the walk's listing, or lists what it is not given).
    pub fn load(
        root: &Path,
        opts: Options,
        saved: Option<Saved>,
        ahead: Option<&[String]>,
    ) -> std::io::Result<Loaded> {
        let confined = Root::open(root)?; // the root must be readable
        let mut ix = Index::empty(root, opts);
        ix.to_list = ahead.map(|dirs| {
            let mut dirs = dirs.to_vec();
            dirs.sort_unstable();
            dirs.dedup();
            dirs
        });
        let (adopted, size) = match saved {
            None => (0, SavedSize::None),
            Some(Saved::Bytes(b)) => {
                let checked = store::decode(b, b.len() as u64, root, &ix.opts.clone(), &mut ix);
                (ix.took(checked), SavedSize::None)
            }
            Some(Saved::File(rel, cap)) => ix.adopt_early(&confined, rel, cap, |_| true),
            Some(Saved::Counted(rel, count)) => {
                let counted = |len| store::files_for(len).is_some_and(|n| count.reaches(n));
                ix.adopt_early(&confined, rel, store::MOST_SAVED_BYTES, counted)
            }
        };
        ix.to_list = None; // not listed ahead when nothing was adopted
        Ok(Loaded { ix, adopted, size })
    }

    /// `adopt_file` for `load`: a file larger than `cap`, or whose size `admits` refuses, is
    /// left for `settle`.
    fn adopt_early(
        &mut self,
        confined: &Root,
        rel: &Path,
        cap: u64,
        admits: impl FnOnce(u64) -> bool,
    ) -> (usize, SavedSize) {
        match self.adopt_file(confined, rel, cap, admits) {
            Some((adopted, len)) => (adopted, SavedSize::Read(len)),
            None => (0, SavedSize::Later(rel.to_path_buf())),
        }
    }

    /// The saved index of file `rel` adopted (a file that cannot be opened as a regular file
    /// beneath the root is as none); files adopted and the file's size, or None when it is
    /// larger than `cap` or `admits` refuses its size (called before a byte is read).
    fn adopt_file(
        &mut self,
        confined: &Root,
        rel: &Path,
        cap: u64,
        admits: impl FnOnce(u64) -> bool,
    ) -> Option<(usize, u64)> {
        match confined.open_read(rel, cap) {
            Ok((_, len)) if !admits(len) => None,
            Ok((file, len)) => {
                let (root, opts) = (self.root.clone(), self.opts.clone());
                self.scratch = confined
                    .open_dir(rel.parent().unwrap_or(Path::new("")))
                    .ok();
                let checked = store::decode(file, len, &root, &opts, self);
                self.scratch = None;
                Some((self.took(checked), len))
            }
            Err(FsError::TooLarge(..)) => None,
            Err(_) => Some((0, 0)), // none there, not a regular file, or a link out of the root
        }
    }

    /// How many files the saved bytes just decoded gave, their lists mapped when spooled; none
    /// when they were refused or their spool failed (what was adopted before the failure is
    /// thrown away, `refused` says why).
    fn took(&mut self, checked: Result<(), String>) -> usize {
        match (checked.and_then(|()| self.lex.map())).and_then(|()| self.defs.map()) {
            Ok(()) => self.adopted(),
            Err(why) => self.refuse(why),
        }
    }

    fn refuse(&mut self, why: String) -> usize {
        if let Some(a) = self.ahead.take() {
            let _ = a.raw.join(); // not left listing beside the build that follows
        }
        let kept = self.kept.take(); // the walk's listing, when no term came to compare it
        *self = Index::empty(&self.root.clone(), self.opts.clone());
        self.kept = kept;
        self.refused = Some(why);
        0
    }

    /// A private file for adopted lists, when the load has a directory for it (else they are
    /// held on the heap).
    fn spool(&self) -> Option<Spool> {
        Spool::create(self.scratch.as_ref()?).ok()
    }

    /// An index of no file.
    fn empty(root: &Path, opts: Options) -> Index {
        let finder = annotate::finder(&opts.prefix);
        Index {
            root: root.to_path_buf(),
            opts,
            finder,
            files: Vec::new(),
            free: Vec::new(),
            paths: Paths::default(),
            by_path: PathTable::default(),
            keys: Shared::default(),
            by_dir: HashMap::new(),
            dirs: HashSet::new(),
            lex: Inverted::default(),
            def_ids: Vocab::default(),
            defined: Vec::new(),
            defs: Arena::default(),
            recount: HashSet::new(),
            annotated: HashMap::new(),
            modules: None,
            unresolved: HashSet::new(),
            resolve_all: true,
            reverse: Importers::default(),
            reverse_stale: true,
            written: Written::default(),
            history: History::default(),
            recency: Vec::new(),
            churn: Vec::new(),
            recency_stale: true,
            defines: Median::default(),
            cuts: Cuts::default(),
            recent: Recent::default(),
            loaded: 0,
            refused: None,
            racy: HashSet::new(),
            changed: 0,
            to_list: None,
            ahead: None,
            kept: None,
            listed: None,
            scratch: None,
        }
    }

    /// Follow changes: list again the directories in `changed` (their rows moved) and read
    /// the files whose stat key changed; with `all` (every directory of the table now),
    /// also drop the directories that are gone and index the ones that are new.
    pub fn update(&mut self, changed: &[String], all: Option<&[String]>) -> Result<(), TooBig> {
        self.changed += self.update_from(changed, all)?.1;
        Ok(())
    }

    /// The saved index adopted whole (tasks/store.rs handed every part to the `Sink` below,
    /// which put each directory's files in path order); returns how many files it holds.
    fn adopted(&mut self) -> usize {
        self.paths.shrink_to_fit();
        self.lex.shrink(); // the buffers' room beyond the saved lists
        self.files.len()
    }

    /// `update`; returns how many of the files listed the index held with the same stat key,
    /// and how many context files were read or dropped.
    fn update_from(
        &mut self,
        changed: &[String],
        all: Option<&[String]>,
    ) -> Result<(usize, usize), TooBig> {
        let Ok(confined) = Root::open(&self.root) else {
            return Ok((0, 0));
        };
        let ignore = Ignore::new(&self.root, &self.opts.extra_ignore);
        let mut dirs: Vec<String> = changed
            .iter()
            .filter(|d| all.is_some() || self.dirs.contains(*d))
            .cloned()
            .collect();
        let mut gone: Vec<String> = Vec::new();
        if let Some(all) = all {
            let now: HashSet<&str> = all.iter().map(String::as_str).collect();
            gone = self
                .dirs
                .iter()
                .filter(|d| !now.contains(d.as_str()))
                .cloned()
                .collect();
            dirs.extend(all.iter().filter(|d| !self.dirs.contains(*d)).cloned());
        }
        dirs.sort_unstable();
        dirs.dedup();
        let listed = self.listing(&ignore, &dirs);
        // Files of directories gone, files gone, and files whose stat key changed (with
        // whether they changed within the racy window of the listing that found them).
        let mut out: Vec<u32> = gone
            .iter()
            .flat_map(|d| self.by_dir.get(d).into_iter().flatten().copied())
            .collect();
        let mut to_read: Vec<(String, StatKey, bool)> = Vec::new();
        let mut vanished: Vec<u32> = Vec::new();
        let mut same = 0;
        let mut contexts = Vec::with_capacity(dirs.len());
        let listed_at = listed.iter().map(|l| l.at).min().unwrap_or_else(now_ns);
        for l in listed {
            contexts.push(l.context);
            vanished.extend(l.vanished);
            out.extend(l.out);
            to_read.extend(l.to_read.into_iter().map(|(p, k)| (p, k, k.racy(l.at))));
            same += l.same;
        }
        out.extend(&vanished);
        // Many at once (a load after a checkout): out of the posting lists in one pass over
        // each, with the files put back (bm25's `make_postings`).
        if out.len() > BATCH {
            self.lex.drop_postings(&out);
        }
        for d in gone {
            for id in self.by_dir.remove(&d).unwrap_or_default() {
                self.remove(id, true)?;
            }
            self.written.forget_scope(&d);
            self.dirs.remove(&d);
        }
        for id in vanished {
            self.remove(id, true)?;
        }
        for dir in &dirs {
            self.dirs.insert(dir.clone());
        }
        // In chunks: what is read of a chunk is in the index before the next is read, so a
        // first build never holds every file's words at once.
        // A first build, or many files at once, leaves the posting lists with the spare
        // capacity of their growth (up to half of each list): it is given back after.
        let bulk = to_read.len() > CHUNK || self.by_path.is_empty();
        // From nothing, or many files at once: the posting lists they touch are made once all
        // are in (bm25's `defer_postings`; none is taken out meanwhile: a file is read once).
        if self.files.is_empty() || to_read.len() > BATCH {
            self.lex.defer_postings();
        }
        for chunk in to_read.chunks_mut(CHUNK) {
            let (prefix, finder) = (&self.opts.prefix, &self.finder);
            // Each path moves from the listing into the file's record: not copied, so not held
            // twice while the tree is read (64 MB at a million files).
            let mut read: Vec<(String, StatKey, bool, Option<Facts>)> = chunk
                .par_iter_mut()
                .map(|(p, k, racy)| {
                    let text = files::read_text(&confined, p);
                    let facts = text.map(|t| files::facts(p, &t, prefix, finder));
                    (std::mem::take(p), *k, *racy, facts)
                })
                .collect();
            for (p, k, racy, f) in &mut read {
                let had = self.id_of(p);
                // An edit keeps the file's number and its module: only its own imports move.
                if let Some(id) = had {
                    self.remove(id, f.is_none())?;
                }
                let Some(f) = f else { continue };
                let id = self.insert(std::mem::take(p), *k, f, had.is_none())?;
                if *racy {
                    self.racy.insert(id);
                }
                self.unresolved.insert(id);
            }
            // The facts are freed by the readers that made them, not here: glibc's per-thread
            // cache of freed blocks serves the thread's next allocations, so blocks of the
            // readers' heaps freed here would take this thread's kept parts (paths, lists)
            // and leave them among the readers' freed scratch, pages that stay resident for
            // the index's life (a 100,000-file build held 40 MiB more than a load).
            read.into_par_iter().for_each(drop);
        }
        drop(to_read); // (80 bytes a file) given back before the posting lists are laid out
        self.lex.make_postings()?;
        if bulk {
            self.files.shrink_to_fit();
            self.paths.shrink_to_fit();
            self.lex.shrink();
            for d in &mut self.defined {
                d.files.shrink_to_fit();
            }
        }
        Ok((
            same,
            self.written.scopes(&confined, &dirs, &contexts, listed_at),
        ))
    }

    /// `dirs` (sorted) listed and compared with the index, in their order: a load compared its
    /// directories' listing already (made ahead, or the walk's), so only the others are listed now.
    fn listing(&mut self, ignore: &Ignore, dirs: &[String]) -> Vec<Listed> {
        let mut ahead = self.listed.take().map_or_else(Vec::new, |l| {
            l.dirs
                .into_iter()
                .zip(l.listed.into_iter().map(Some))
                .collect()
        });
        let mut mine: Vec<Option<Listed>> = Vec::with_capacity(dirs.len());
        let mut rest: Vec<String> = Vec::new();
        for d in dirs {
            match ahead.binary_search_by(|(a, _)| a.as_str().cmp(d)) {
                Ok(i) => mine.push(ahead[i].1.take()),
                Err(_) => {
                    mine.push(None);
                    rest.push(d.clone());
                }
            }
        }
        let held: Held<'_> = held!(self);
        let mut now = list_dirs(&self.root, ignore, &rest, now_ns(), held).into_iter();
        mine.into_iter()
            .map(|l| l.or_else(|| now.next()).unwrap_or_default())
            .collect()
    }

    /// Put a file in (`reshaped`: a path the index did not hold); returns its number, or
    /// refuses it when its path or lists would not fit (tasks/limits.rs).
    /// What is kept of `f` is copied, made by this thread (see `update_from`).
    fn insert(
        &mut self,
        path: String,
        key: StatKey,
        f: &Facts,
        reshaped: bool,
    ) -> Result<u32, TooBig> {
        if !self.paths.fits(path.len()) {
            return Err(TooBig("paths"));
        }
        if !self.lex.fits_doc(f.counts.len()) {
            return Err(TooBig("lists"));
        }
        // Counted whole, held or not: the names' room matters only near 4 GiB.
        if !self
            .lex
            .fits_terms(f.counts.iter().map(|(t, _)| t.len()).sum())
            || !self.def_ids.fits(f.defs.iter().map(String::len).sum())
        {
            return Err(TooBig("names"));
        }
        let terms: Vec<(u32, u32)> = f
            .counts
            .iter()
            .map(|(t, n)| (self.lex.intern(t), *n))
            .collect();
        // A packed name number is at most 5 bytes.
        if !self.lex.fits_added(terms.iter().map(|t| t.0)) || !self.defs.fits(5 * f.defs.len()) {
            return Err(TooBig("lists"));
        }
        let defs: Vec<u32> = f.defs.iter().map(|d| self.def_number(d)).collect();
        let annotations = f
            .annotations
            .iter()
            .map(|(l, t)| (*l, t.as_str().into()))
            .collect();
        self.changed += 1;
        Ok(self.insert_ids(
            path,
            key,
            &terms,
            f.len,
            defs,
            f.imports.clone(),
            annotations,
            reshaped,
        ))
    }

    /// The number of a defined name, made if no file defined it yet.
    fn def_number(&mut self, name: &str) -> u32 {
        match self.def_ids.get(name) {
            Some(n) => n,
            None => {
                self.defined.push(Defined::default());
                self.def_ids.push(name)
            }
        }
    }

    /// Put a file in with its terms interned ((term id, count)) and its names numbered.
    #[allow(clippy::too_many_arguments)]
    fn insert_ids(
        &mut self,
        path: String,
        key: StatKey,
        counts: &[(u32, u32)],
        len: u32,
        def_numbers: Vec<u32>,
        imports: Vec<Import>,
        annotations: Vec<(u32, Box<str>)>,
        reshaped: bool,
    ) -> u32 {
        let id = match self.free.pop() {
            Some(id) => id,
            None => {
                self.files.push(None);
                self.files.len() as u32 - 1
            }
        };
        self.lex.add_ids(id, counts, len);
        self.count_defs(id, def_numbers.iter().copied());
        self.defs.grow_to(id as usize + 1);
        self.defs.set(id as usize, &packed_ids(def_numbers));
        for (line, target) in &annotations {
            self.annotated
                .entry(target.clone())
                .or_default()
                .push((id, *line));
        }
        if let Some(m) = &mut self.modules {
            m.add(id, &path, |i| self.paths.get(i));
        }
        self.by_path.insert(&path, id, |i| self.paths.get(i));
        let paths = &self.paths;
        let in_dir = self
            .by_dir
            .entry(parent_dir(&path).to_string())
            .or_default();
        let at = in_dir.partition_point(|&x| paths.get(x) < path.as_str());
        in_dir.insert(at, id);
        self.paths.set(id, &path);
        self.files[id as usize] = Some(File {
            key: self.keys.pack(key, files::is_code_not_test(&path)),
            links: links(imports, Vec::new(), annotations),
        });
        // A new module may answer imports of other files.
        self.resolve_all |= reshaped;
        self.recency_stale |= reshaped;
        id
    }

    /// File `id` defines the names numbered `defs`.
    fn count_defs(&mut self, id: u32, defs: impl Iterator<Item = u32>) {
        let mut count = 0;
        for n in defs {
            count += 1;
            let e = &mut self.defined[n as usize];
            e.count += 1;
            if !e.common {
                e.files.push(id);
                if e.files.len() > COMMON {
                    e.common = true;
                    e.files = Vec::new();
                }
            }
        }
        self.defines.add(count);
    }

    /// Take a file out (`reshaped`: for good, not to put it back in after an edit); refused,
    /// the file left in, when its lists could not move (tasks/limits.rs).
    fn remove(&mut self, id: u32, reshaped: bool) -> Result<(), TooBig> {
        if !self.lex.fits_removed(id) {
            return Err(TooBig("lists"));
        }
        let Some(f) = self.files.get_mut(id as usize).and_then(Option::take) else {
            return Ok(());
        };
        self.changed += reshaped as usize;
        self.lex.remove(id);
        self.defines
            .remove(varint::count(self.defs.get(id as usize)));
        for d in varint::rising(self.defs.get(id as usize)) {
            let e = &mut self.defined[d as usize];
            e.count -= 1;
            e.files.retain(|&x| x != id);
            if e.common && e.count as usize <= COMMON {
                self.recount.insert(d);
            }
        }
        self.defs.clear(id as usize);
        for (_, t) in f.annotations() {
            if let Some(list) = self.annotated.get_mut(t) {
                list.retain(|&(x, _)| x != id);
                if list.is_empty() {
                    self.annotated.remove(t);
                }
            }
        }
        let path = self.paths.get(id);
        if let Some(m) = &mut self.modules {
            m.remove(id, path);
        }
        self.by_path.remove(path, id);
        if let Some(list) = self.by_dir.get_mut(parent_dir(path)) {
            list.retain(|&x| x != id);
        }
        self.paths.clear(id);
        self.racy.remove(&id);
        self.free.push(id);
        self.resolve_all |= reshaped;
        self.recency_stale |= reshaped;
        Ok(())
    }

    /// Make what a query reads current: imports resolved, the reverse graph, the written
    /// context of project.yaml and .contextia/, and (unless `history` is false) git's.
    pub fn prepare(&mut self, history: bool) {
        self.recount_common();
        if self.resolve_all || !self.unresolved.is_empty() {
            let ids: Vec<u32> = if self.resolve_all {
                held_ids(&self.files).collect()
            } else {
                self.unresolved.iter().copied().collect()
            };
            let (files, paths) = (&self.files, &self.paths);
            let modules = self.modules.get_or_insert_with(|| {
                let mut m = Modules::default();
                let path_of = |i| paths.get(i);
                m.reserve(files.len(), path_of);
                held_ids(files).for_each(|id| m.add(id, path_of(id), path_of));
                m
            });
            let resolved: Vec<(u32, Vec<u32>)> = {
                let path_of = |id: u32| {
                    files
                        .get(id as usize)
                        .and_then(|f| f.as_ref())
                        .map(|_| paths.get(id))
                };
                ids.par_iter()
                    .filter_map(|&id| {
                        let f = files[id as usize].as_ref()?;
                        let mut out: Vec<u32> = f
                            .imports()
                            .iter()
                            .flat_map(|i| modules.resolve(paths.get(id), i, &path_of))
                            .collect();
                        out.sort_unstable();
                        out.dedup();
                        out.retain(|&o| o != id);
                        Some((id, out))
                    })
                    .collect()
            };
            for (id, out) in resolved {
                if let Some(l) = self.files[id as usize]
                    .as_mut()
                    .and_then(|f| f.links.as_mut())
                {
                    l.out = out.into_boxed_slice();
                }
            }
            self.resolve_all = false;
            self.unresolved.clear();
            self.reverse_stale = true;
        }
        if self.reverse_stale {
            self.reverse = Importers::of(&self.files);
            self.reverse_stale = false;
        }
        self.written.project(&self.root);
        let contextia = self.opts.contextia.clone();
        self.written.artifacts(contextia.as_deref());
        if history {
            let head = self.history.head.clone();
            self.history.refresh(&self.root);
            if self.recency_stale || head != self.history.head {
                let (h, paths) = (&self.history, &self.paths);
                (self.recency, self.churn) = (0..self.files.len() as u32)
                    .into_par_iter()
                    .map(|id| match self.files[id as usize] {
                        Some(_) => {
                            let path = paths.get(id);
                            (h.recency(path), h.churn(path))
                        }
                        None => (0.0, 0.0),
                    })
                    .unzip();
                self.recency_stale = false;
            }
        }
    }

    /// Names no longer common (`recount`) get their files back: a build of the same files
    /// would hold them.
    fn recount_common(&mut self) {
        let names: Vec<u32> = self
            .recount
            .drain()
            .filter(|&d| self.defined[d as usize].count as usize <= COMMON)
            .collect();
        if names.is_empty() {
            return;
        }
        for &d in &names {
            let e = &mut self.defined[d as usize];
            e.common = false;
            e.files.clear();
        }
        let wanted: HashSet<u32> = names.into_iter().collect();
        for id in held_ids(&self.files) {
            for d in varint::rising(self.defs.get(id as usize)) {
                if wanted.contains(&d) {
                    self.defined[d as usize].files.push(id);
                }
            }
        }
    }

    /// How recently git's history changed a file (0 without history; see History::recency).
    pub fn recency(&self, id: u32) -> f32 {
        self.recency.get(id as usize).copied().unwrap_or(0.0)
    }

    /// How often git's history changed a file (0 without history; see History::churn).
    pub fn churn(&self, id: u32) -> f32 {
        self.churn.get(id as usize).copied().unwrap_or(0.0)
    }

    /// The files defining `name`; None when none does or too many do (`COMMON`).
    pub fn definers(&self, name: &str) -> Option<&[u32]> {
        let e = &self.defined[self.def_ids.get(name)? as usize];
        (!e.common && !e.files.is_empty()).then_some(e.files.as_slice())
    }

    /// How many names file `id` defines.
    pub fn defined_count(&self, id: u32) -> usize {
        self.file(id)
            .map_or(0, |_| varint::count(self.defs.get(id as usize)))
    }

    /// The median of `defined_count` over the files defining any name (1 when none does).
    pub fn defines_median(&self) -> usize {
        self.defines.get()
    }

    /// The files a file imports and the files that import it.
    pub fn neighbours(&self, id: u32) -> (Vec<u32>, Vec<u32>) {
        let out = self
            .files
            .get(id as usize)
            .and_then(|f| f.as_ref())
            .map_or(Vec::new(), |f| f.out().to_vec());
        let inc = self.reverse.of_file(id).to_vec();
        (out, inc)
    }

    /// File `id` cut into regions with the words of each (read through `confined`), kept
    /// between questions while the index holds the file unchanged.
    pub fn cut(&self, confined: &Root, id: u32) -> Option<Arc<Cut>> {
        let f = self.file(id)?;
        let path = self.paths.get(id);
        self.cuts.get(id, self.key(f), || {
            files::read_text(confined, path).map(|t| Cut::new(path, t))
        })
    }

    pub fn file(&self, id: u32) -> Option<&File> {
        self.files.get(id as usize).and_then(|f| f.as_ref())
    }

    /// The stat key of a file held.
    pub fn key(&self, f: &File) -> StatKey {
        self.keys.unpack(&f.key)
    }

    /// The path of file `id` ("" for a number with no file).
    pub fn path(&self, id: u32) -> &str {
        self.paths.get(id)
    }

    /// The path of file `id` when the index holds it.
    pub fn held_path(&self, id: u32) -> Option<&str> {
        self.file(id).map(|_| self.paths.get(id))
    }

    /// The number of the file at `path`, if the index holds one.
    pub fn id_of(&self, path: &str) -> Option<u32> {
        self.by_path.get(path, |id| self.paths.get(id))
    }

    /// The files a task's `name` may mean: the file at that path, else those whose path ends
    /// with it after a `/` (`rank.rs` is `rust/tasks/rank.rs`), else the files of the
    /// directory of that name.
    pub fn named(&self, name: &str) -> Vec<u32> {
        if let Some(id) = self.id_of(name) {
            return vec![id];
        }
        let mut ids: Vec<u32> = self
            .by_path
            .ids()
            .filter(|&id| {
                let p = self.paths.get(id);
                p.len() > name.len()
                    && p.ends_with(name)
                    && p.as_bytes()[p.len() - name.len() - 1] == b'/'
            })
            .collect();
        if ids.is_empty() {
            ids = self.by_dir.get(name).cloned().unwrap_or_default();
        }
        ids.sort_unstable();
        ids
    }

    /// The index as bytes for a later `build_from` (`save_into` a vector).
    pub fn save(&mut self) -> Vec<u8> {
        self.save_into(Vec::new(), u64::MAX)
            .expect("a vector takes any bytes")
    }

    /// The index written to `out` for a later `build_from` (tasks/store.rs), as it is encoded,
    /// but for the files changed as they were listed (`racy`, read again by the next process);
    /// refused past `most` bytes (`store::TooLarge`); `changed` is 0 from then on. Files are
    /// numbered as here with the holes closed up (the posting lists are copied as they are when
    /// there are none), terms and names in byte order. Encoded in parallel a batch at a time,
    /// each batch written and freed before the next is made: the save holds one batch beside
    /// the index, never all its bytes (436 MB at a million files).
    pub fn save_into<W: Write>(&mut self, out: W, most: u64) -> io::Result<W> {
        self.changed = 0;
        let mut doc_at = vec![u32::MAX; self.files.len()];
        let mut kept: Vec<u32> = Vec::with_capacity(self.files.len());
        for (id, f) in self.files.iter().enumerate() {
            if f.is_some() && !self.racy.contains(&(id as u32)) {
                doc_at[id] = kept.len() as u32;
                kept.push(id as u32);
            }
        }
        let renumber = kept.len() != self.files.len();
        // A list renumbered without the files left out: its postings in the order kept.
        let kept_postings = |t: u32| {
            self.lex
                .postings(t)
                .map(|(doc, tf)| (doc_at[doc as usize], tf))
                .filter(|&(d, _)| d != u32::MAX)
        };
        let (terms, name) = (self.lex.term_count(), |t| self.lex.term_name(t));
        let mut live: Vec<u32> = (0..terms as u32)
            .filter(|&t| self.lex.df(t) > 0 && (!renumber || kept_postings(t).next().is_some()))
            .collect();
        live.par_sort_unstable_by(|&a, &b| name(a).cmp(name(b)));
        let mut term_at = vec![u32::MAX; terms];
        for (i, &t) in live.iter().enumerate() {
            term_at[t as usize] = i as u32;
        }
        let mut defined: Vec<(&str, u32)> = (0..self.def_ids.len() as u32)
            .filter(|&n| self.defined[n as usize].count > 0)
            .map(|n| (self.def_ids.name(n), n))
            .collect();
        defined.sort_unstable();
        let mut name_at = vec![u32::MAX; self.defined.len()];
        for (i, &(_, n)) in defined.iter().enumerate() {
            name_at[n as usize] = i as u32;
        }
        let defined: Vec<&str> = defined.into_iter().map(|(k, _)| k).collect();
        // Racy files left out may answer imports of others: those are resolved again after a load.
        let resolved = !self.resolve_all && self.unresolved.is_empty() && self.racy.is_empty();
        let mut e = store::Encoder::start(
            out,
            most,
            &self.root,
            &self.opts,
            resolved,
            &defined,
            live.len(),
            kept.len(),
        )?;
        let file_piece = |chunk: &[u32]| {
            let mut out = Vec::with_capacity(chunk.len() * 512);
            let (mut ts, mut forward, mut os) = (Vec::new(), Vec::new(), Vec::new());
            for &doc in chunk {
                let f = self.files[doc as usize].as_ref().expect("a file kept");
                ts.clear();
                ts.extend(self.lex.terms_of(doc).map(|t| term_at[t as usize]));
                ts.sort_unstable();
                forward.clear();
                varint::put_rising(&mut forward, ts.iter().copied());
                let defs = varint::rising(self.defs.get(doc as usize));
                let defs = packed_ids(defs.map(|d| name_at[d as usize]).collect());
                os.clear();
                os.extend(
                    f.out()
                        .iter()
                        .map(|&o| doc_at[o as usize])
                        .filter(|&o| o != u32::MAX),
                );
                os.sort_unstable();
                store::encode_file(
                    &mut out,
                    &store::FileOut {
                        path: self.paths.get(doc),
                        key: self.key(f),
                        len: self.lex.doc_len(doc),
                        forward: &forward,
                        defs: &defs,
                        out: &os,
                        imports: f.imports(),
                        annotations: f.annotations(),
                    },
                );
            }
            out
        };
        let list_len = |t| self.lex.list_bytes(t).len();
        let term_piece = |chunk: &[u32]| {
            let room = chunk.iter().map(|&t| list_len(t) + name(t).len() + 10);
            let (mut out, mut list) = (Vec::with_capacity(room.sum()), Vec::new());
            for &t in chunk {
                let postings = if renumber {
                    list.clear();
                    bm25::put_pairs(&mut list, kept_postings(t));
                    &list[..]
                } else {
                    self.lex.list_bytes(t)
                };
                store::encode_term(&mut out, name(t), postings);
            }
            out
        };
        put_batches(
            &mut e,
            &kept.chunks(SAVE_FILES).collect::<Vec<_>>(),
            file_piece,
        )?;
        put_batches(&mut e, &runs(&live, list_len), term_piece)?;
        let mut scopes = Vec::new();
        self.written.save_scopes(&mut scopes);
        e.put(&scopes)?;
        e.finish()
    }

    pub fn file_count(&self) -> usize {
        self.by_path.len()
    }

    /// Bytes held by the index, roughly (its own accounting; the process's RSS says more).
    pub fn heap_bytes(&self) -> usize {
        self.heap_parts().iter().map(|(_, n)| n).sum()
    }

    /// `heap_bytes` by structure (benches/README.md's table of where the bytes go). A hash
    /// table's entry counts its key's bytes and box, its value, a control byte and slack.
    pub fn heap_parts(&self) -> Vec<(&'static str, usize)> {
        let live = || self.files.iter().flatten();
        let import = |i: &Import| {
            std::mem::size_of::<Import>()
                + match i {
                    Import::Python(_, s) | Import::Js(s) | Import::Go(s) => s.capacity(),
                    Import::Rust(v) => v.iter().map(|s| s.capacity() + 24).sum(),
                }
        };
        let mut parts = vec![
            (
                "file records",
                self.files.capacity() * std::mem::size_of::<Option<File>>()
                    + self.free.capacity() * 4
                    + self.keys.heap_bytes(),
            ),
            (
                "paths (their buffer, and the path table)",
                self.paths.heap_bytes() + self.by_path.heap_bytes(),
            ),
            (
                "directories",
                self.by_dir
                    .iter()
                    .map(|(d, v)| d.capacity() + 24 + 24 + v.capacity() * 4 + 8)
                    .sum::<usize>()
                    + self
                        .dirs
                        .iter()
                        .map(|d| d.capacity() + 24 + 8)
                        .sum::<usize>(),
            ),
        ];
        parts.extend(self.lex.heap_parts());
        parts.extend([
            (
                "names defined",
                self.defs.heap_bytes()
                    + self.def_ids.heap_bytes()
                    + self
                        .defined
                        .iter()
                        .map(|d| std::mem::size_of::<Defined>() + d.files.capacity() * 4)
                        .sum::<usize>(),
            ),
            (
                "imports as written",
                live()
                    .map(|f| f.imports().iter().map(import).sum::<usize>())
                    .sum(),
            ),
            (
                "import graph (resolved, reverse, modules)",
                live()
                    .flat_map(|f| &f.links)
                    .map(|l| std::mem::size_of::<Links>() + l.out.len() * 4)
                    .sum::<usize>()
                    + self.reverse.heap_bytes()
                    + self.modules.as_ref().map_or(0, Modules::heap_bytes),
            ),
            (
                "annotations",
                live()
                    .flat_map(|f| f.annotations())
                    .map(|(_, t)| 8 + 16 + t.len())
                    .sum::<usize>()
                    + self
                        .annotated
                        .iter()
                        .map(|(k, v)| k.len() + 16 + 24 + v.capacity() * 8 + 8)
                        .sum::<usize>(),
            ),
            ("written context", self.written.heap_bytes()),
            (
                "history",
                self.history.heap_bytes() + (self.recency.capacity() + self.churn.capacity()) * 4,
            ),
            ("cut cache", self.cuts.heap_bytes()),
        ]);
        parts
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::testing::TempTree;

    fn opts() -> Options {
        Options {
            extra_ignore: Vec::new(),
            prefix: "@".into(),
            contextia: None,
        }
    }

    /// A tree of `files` (path, text), made at run time.
    fn tree_of(name: &str, files: &[(String, String)]) -> TempTree {
        let refs: Vec<(&str, &str)> = files
            .iter()
            .map(|(p, t)| (p.as_str(), t.as_str()))
            .collect();
        TempTree::with(name, &refs)
    }

    #[test]
    fn a_saves_runs_hold_every_id_once_in_order_and_enough_bytes_each() {
        let ids: Vec<u32> = (0..500).collect();
        // Lists of a few bytes and, now and then, one larger than a whole run.
        let size = |t: u32| {
            if t.is_multiple_of(97) {
                3 * SAVE_BYTES
            } else {
                1 + (t as usize * 7919) % 4096
            }
        };
        let cut = runs(&ids, size);
        assert_eq!(cut.concat(), ids);
        for r in &cut[..cut.len() - 1] {
            let bytes: usize = r.iter().map(|&t| size(t)).sum();
            assert!(bytes >= SAVE_BYTES && bytes - size(*r.last().unwrap()) < SAVE_BYTES);
        }
        assert!(runs(&[], size).is_empty());
    }

    /// When each of `files` was last written: its mtime or ctime, the later.
    fn written<'a>(t: &'a TempTree, files: &'a [&str]) -> impl Iterator<Item = i64> + 'a {
        (files.iter())
            .map(|p| StatKey::lstat(&t.path().join(p)).unwrap())
            .map(|k| k.mtime.max(k.ctime))
    }

    /// This thread's clock pinned past the racy window of the files just written, so a save
    /// holds them.
    fn clock_past_racy(t: &TempTree, files: &[&str]) {
        let last = written(t, files).max().unwrap();
        crate::tree::os::pin_clock(Some(last + crate::tree::os::RACY_NS + 1));
    }

    #[test]
    fn context_files_are_saved_and_read_again_only_when_changed_or_racy() {
        let t = TempTree::with(
            "task-index-saved-scopes",
            &[
                ("app/main.py", "def checkout():\n    pass\n"),
                ("app/.context.yaml", "version: 1\nsummary: \"Order totals and discount rules.\"\nfiles:\n  - name: main.py\n    purpose: \"Checkout entry point.\"\n"),
                ("lib/round.py", "def round_total(x):\n    return x\n"),
                ("lib/.context.yaml", "version: 1\nsummary: \"Rounding helpers.\"\n"),
                ("web/cart.ts", "export function cart() { return 1; }\n"),
            ],
        );
        let dirs: Vec<String> = [".", "app", "lib", "web"].map(String::from).to_vec();
        let all = [
            "app/main.py",
            "app/.context.yaml",
            "lib/round.py",
            "lib/.context.yaml",
            "web/cart.ts",
        ];
        let task = "discount rules checkout rounding helpers summary";
        let notes = |ix: &Index| -> Vec<(String, String, u32)> {
            let q = crate::tasks::terms::terms(task);
            let m = ix.written.matches(&q).into_iter();
            m.map(|(n, s)| (n.label.clone(), format!("{:?}", n.target), s.to_bits()))
                .collect()
        };
        clock_past_racy(&t, &all);
        let mut built = Index::build(t.path(), opts(), &dirs).unwrap();
        let bytes = built.save();
        let loaded = |bytes: &[u8]| {
            Index::build_from(t.path(), opts(), &dirs, Some(Saved::Bytes(bytes)), None).unwrap()
        };
        // Nothing changed: no context file is read, and the notes are the build's.
        let mut again = loaded(&bytes);
        assert_eq!((again.loaded, again.changed), (3, 0));
        assert_eq!(notes(&again), notes(&built));
        assert_eq!(answer(&mut again, task), answer(&mut built, task));
        assert_eq!(
            again.save(),
            built.save(),
            "the notes saved as they were adopted"
        );
        // One changed, one gone, one new since the save: those three are read, the rest not.
        t.write(
            "app/.context.yaml",
            "version: 1\nsummary: \"Tax summary.\"\n",
        );
        std::fs::remove_file(t.path().join("lib/.context.yaml")).unwrap();
        t.write(
            "web/.context.yaml",
            "version: 1\nsummary: \"Cart discount rules.\"\n",
        );
        clock_past_racy(&t, &["app/.context.yaml", "web/.context.yaml"]);
        let mut changed = loaded(&bytes);
        let mut fresh = Index::build(t.path(), opts(), &dirs).unwrap();
        assert_eq!((changed.loaded, changed.changed), (3, 3));
        assert_eq!(notes(&changed), notes(&fresh));
        assert!(notes(&changed).iter().any(|n| n.0 == "scope web"));
        assert_eq!(answer(&mut changed, task), answer(&mut fresh, task));
        // A context file read as it changed (within the racy window) is not saved: the next
        // process reads it again, so a write in the same tick is seen.
        t.write(
            "web/.context.yaml",
            "version: 1\nsummary: \"Cart totals.\"\n",
        );
        // The clock at the first of the tree's files (however long ago a loaded machine wrote
        // them): every file was written within the window, its three source files and its two
        // context files, and all are read again.
        let now = [
            "app/main.py",
            "app/.context.yaml",
            "lib/round.py",
            "web/cart.ts",
            "web/.context.yaml",
        ];
        crate::tree::os::pin_clock(written(&t, &now).min());
        let racy = Index::build(t.path(), opts(), &dirs).unwrap().save();
        clock_past_racy(&t, &now);
        assert_eq!(loaded(&racy).changed, 3 + 2);
        assert_eq!(loaded(&loaded(&racy).save()).changed, 0);
    }

    /// `files` files that share 500 words, each a posting of 2 bytes in every file's lists.
    fn shared_words(files: usize) -> Vec<(String, String)> {
        let word = |i: u32| {
            let l = |k: u32| char::from(b'a' + (i / 26u32.pow(k) % 26) as u8);
            format!("zork{}{}{}", l(2), l(1), l(0))
        };
        let text: String = (0..500).map(|i| word(i) + "\n").collect();
        (0..files)
            .map(|f| (format!("f{f}.txt"), text.clone()))
            .collect()
    }

    #[test]
    fn a_tree_past_the_lists_limit_is_refused_by_name() {
        // (tests' limit: 256 KiB) 300 files' lists take 300 KB, 150 files' half of that.
        let small = tree_of("small", &shared_words(150));
        Index::build(small.path(), opts(), &[".".to_string()]).unwrap();
        let big = tree_of("big", &shared_words(300));
        let Err(e) = Index::build(big.path(), opts(), &[".".to_string()]) else {
            panic!("built past the limit");
        };
        assert_eq!(
            e.to_string(),
            "the task index is over 4 GiB of lists: this tree is too big for task context"
        );
        // So is an update that would take a held index past it.
        let mut ix = Index::build(small.path(), opts(), &[".".to_string()]).unwrap();
        for (p, text) in shared_words(300).iter().skip(150) {
            std::fs::write(small.path().join(p), text).unwrap();
        }
        assert_eq!(ix.update(&[".".to_string()], None), Err(TooBig("lists")));
    }

    /// Names are checked as files are read too: long made-up names (300 KB of them here, the
    /// tests' limit 256 KiB) pass the limit before any list does.
    #[test]
    fn long_made_up_names_past_the_limit_are_refused_by_name() {
        let files: Vec<(String, String)> = (0..100)
            .map(|f| {
                let defs = (0..30).map(|d| format!("def n{:0>99}():\n    pass\n", f * 100 + d));
                (format!("m{f}.py"), defs.collect())
            })
            .collect();
        let Err(e) = Index::build(tree_of("names", &files).path(), opts(), &[".".to_string()])
        else {
            panic!("built past the limit");
        };
        assert_eq!(
            e.to_string(),
            "the task index is over 4 GiB of names: this tree is too big for task context"
        );
        Index::build(
            tree_of("fewer", &files[..50]).path(),
            opts(),
            &[".".to_string()],
        )
        .unwrap();
    }

    /// A file put in or taken out of an index near the limit moves each posting list it touches
    /// to the end with room to grow (a built index's lists have none; a loaded one's are in its
    /// file): refused by name when that could pass the limit, as a build is, not met by a panic.
    /// With room left the same changes go in.
    #[test]
    fn a_file_put_in_or_taken_out_near_the_lists_limit_is_refused_by_name() {
        let dot = [".".to_string()];
        let new_file =
            |t: &TempTree| std::fs::write(t.path().join("new.txt"), &shared_words(1)[0].1).unwrap();
        let near = tree_of("near", &shared_words(200));
        let mut ix = Index::build(near.path(), opts(), &dot).unwrap();
        new_file(&near);
        assert_eq!(ix.update(&dot, None), Err(TooBig("lists")));

        let roomy = tree_of("roomy", &shared_words(40));
        let mut ix = Index::build(roomy.path(), opts(), &dot).unwrap();
        new_file(&roomy);
        ix.update(&dot, None).unwrap();
        assert!(ix.id_of("new.txt").is_some());

        // Taken out of a loaded index: its lists move from the saved file to the buffer.
        let rel = Path::new(".repoctx/task-index.bin");
        for (t, refused) in [(&near, true), (&roomy, false)] {
            std::fs::remove_file(t.path().join("new.txt")).unwrap();
            let names: Vec<String> = std::fs::read_dir(t.path())
                .unwrap()
                .map(|e| e.unwrap().file_name().into_string().unwrap())
                .filter(|n| n.ends_with(".txt"))
                .collect();
            clock_past_racy(t, &names.iter().map(String::as_str).collect::<Vec<_>>()); // the saved lists adopted, not read again
            let bytes = Index::build(t.path(), opts(), &dot).unwrap().save();
            t.write(".repoctx/task-index.bin", &bytes);
            let saved = Some(Saved::File(rel, bytes.len() as u64));
            let mut ix = Index::build_from(t.path(), opts(), &dot, saved, None).unwrap();
            std::fs::remove_file(t.path().join("f1.txt")).unwrap();
            let taken_out = ix.update(&dot, None);
            assert_eq!(
                taken_out,
                if refused {
                    Err(TooBig("lists"))
                } else {
                    Ok(())
                }
            );
            assert_eq!(
                ix.id_of("f1.txt").is_none(),
                !refused,
                "refused: the file left in"
            );
        }
    }

    /// Each file's forward list and its path are checked before they are made, not only the
    /// posting lists made after every file is read: the forward lists pass the limit before
    /// the posting lists are made (600 files: 300 KB), and paths can pass it alone.
    #[test]
    fn a_file_whose_lists_or_path_would_not_fit_is_refused_as_it_is_read() {
        let refused = |name: &str, files: Vec<(String, String)>, what: &str| {
            let t = tree_of(name, &files);
            match Index::build(t.path(), opts(), &[".".to_string()]) {
                Err(e) => assert!(e.to_string().contains(&format!("4 GiB of {what}:")), "{e}"),
                Ok(_) => panic!("{name}: built past the limit"),
            }
        };
        refused("forward", shared_words(600), "lists");
        let long = "p".repeat(190);
        refused(
            "paths",
            (0..1400)
                .map(|f| (format!("{long}{f}.txt"), "x".into()))
                .collect(),
            "paths",
        );
    }

    #[test]
    fn builds_resolves_and_follows_edits() {
        let t = TempTree::with(
            "task-index",
            &[
                (
                    "app/main.py",
                    "from app.store import save_order\n\ndef run():\n    save_order()\n",
                ),
                ("app/store.py", "def save_order():\n    pass\n"),
                ("lib/other.py", "x = 1\n"),
            ],
        );
        let dirs: Vec<String> = [".", "app", "lib"].iter().map(|s| s.to_string()).collect();
        let mut ix = Index::build(t.path(), opts(), &dirs).unwrap();
        ix.prepare(false);
        assert_eq!(ix.file_count(), 3);
        let main = ix.id_of("app/main.py").unwrap();
        let store = ix.id_of("app/store.py").unwrap();
        assert_eq!(ix.neighbours(main).0, [store]);
        assert_eq!(ix.neighbours(store).1, [main]);
        assert_eq!(ix.definers("save_order"), Some(&[store][..]));
        // An edit re-reads that file only; a new file and a removed one are followed.
        std::thread::sleep(std::time::Duration::from_millis(10));
        std::fs::write(
            t.path().join("app/store.py"),
            "def persist_order():\n    pass\n",
        )
        .unwrap();
        std::fs::write(t.path().join("lib/new.py"), "def save_order():\n    pass\n").unwrap();
        std::fs::remove_file(t.path().join("lib/other.py")).unwrap();
        ix.update(&["app".to_string(), "lib".to_string()], None)
            .unwrap();
        ix.prepare(false);
        assert!(ix.definers("persist_order").is_some());
        assert_eq!(
            ix.definers("save_order")
                .unwrap()
                .iter()
                .map(|&i| ix.path(i).to_string())
                .collect::<Vec<_>>(),
            ["lib/new.py"]
        );
        assert!(ix.id_of("lib/other.py").is_none());
        assert_eq!(ix.lex.docs, 3);
        // A directory gone from the table takes its files with it.
        ix.update(&[], Some(&[".".to_string(), "app".to_string()]))
            .unwrap();
        assert_eq!(ix.file_count(), 2);
        assert!(ix.heap_bytes() > 0);
    }

    #[test]
    fn packed_ids_give_back_the_set_rising() {
        let ids = vec![300_000, 0, 5, 127, 128, 5, u32::MAX, 16_384];
        assert_eq!(
            varint::rising(&packed_ids(ids)).collect::<Vec<_>>(),
            [0, 5, 127, 128, 16_384, 300_000, u32::MAX]
        );
        // Gaps under 128 take one byte each.
        assert_eq!(packed_ids((0..100).collect()).len(), 100);
        assert!(packed_ids(Vec::new()).is_empty());
    }

    fn answer(ix: &mut Index, task: &str) -> crate::tasks::rank::Answer {
        let ask = crate::tasks::rank::Ask {
            task,
            budget: 400,
            paths: &[],
            off: &[],
            limit: 10,
            outline: false,
        };
        crate::tasks::query(ix, &ask, "bytes4").unwrap()
    }

    /// A file added to a directory after its others is numbered after them though its name
    /// comes first, and is saved in that order: a load compares the directory's listing with
    /// its files in path order, so it finds every file (none read again).
    #[test]
    fn files_saved_out_of_path_order_are_each_found_by_the_listing() {
        let t = TempTree::with("task-index-order", &[("z.py", "def late():\n    pass\n")]);
        let dirs = vec![".".to_string()];
        crate::tree::os::pin_clock(Some(
            crate::tree::os::now_ns() + 60 * crate::tree::os::RACY_NS,
        ));
        let mut ix = Index::build(t.path(), opts(), &dirs).unwrap();
        t.write("a.py", "def early():\n    pass\n");
        ix.update(&dirs, Some(&dirs)).unwrap();
        let bytes = ix.save();
        let loaded =
            Index::build_from(t.path(), opts(), &dirs, Some(Saved::Bytes(&bytes)), None).unwrap();
        crate::tree::os::pin_clock(None);
        assert_eq!((loaded.loaded, loaded.changed), (2, 0));
    }

    #[test]
    fn saved_facts_give_the_index_a_build_gives_and_only_changed_files_are_read() {
        let t = TempTree::with(
            "task-index-saved",
            &[
                ("app/main.py", "from app.store import save_order\n\n# @spec SPEC-001\ndef run():\n    save_order()\n"),
                ("app/store.py", "def save_order():\n    \"\"\"Persist the order.\"\"\"\n    pass\n"),
                ("web/cart.ts", "import { total } from './total';\nexport function renderCart() { return total(); }\n"),
                ("web/total.ts", "export function total() { return 1; }\n"),
                ("src/lib.rs", "use crate::util::helper;\npub fn entry() { helper() }\n"),
                ("src/util.rs", "pub fn helper() {}\n"),
            ],
        );
        let dirs: Vec<String> = [".", "app", "web", "src"]
            .iter()
            .map(|s| s.to_string())
            .collect();
        // The clock is pinned rather than slept on, so no load on the machine moves a file in
        // or out of the racy window: (first, last) change to a file of the tree.
        let changes = || {
            let times: Vec<i64> = ["app", "web", "src"]
                .iter()
                .flat_map(|d| std::fs::read_dir(t.path().join(d)).unwrap())
                .map(|e| StatKey::lstat(&e.unwrap().path()).unwrap())
                .map(|k| k.mtime.max(k.ctime))
                .collect();
            (*times.iter().min().unwrap(), *times.iter().max().unwrap())
        };
        let settle =
            || crate::tree::os::pin_clock(Some(changes().1 + crate::tree::os::RACY_NS + 1));
        // Files written as they are listed are not saved: they could change in the same tick.
        crate::tree::os::pin_clock(Some(changes().0));
        let mut racy = Index::build(t.path(), opts(), &dirs).unwrap();
        let bytes = racy.save();
        assert_eq!(
            Index::build_from(t.path(), opts(), &dirs, Some(Saved::Bytes(&bytes)), None)
                .unwrap()
                .loaded,
            0
        );
        settle();
        let mut first = Index::build(t.path(), opts(), &dirs).unwrap();
        assert_eq!((first.changed, first.loaded), (6, 0));
        let bytes = first.save();
        assert_eq!(first.changed, 0);
        let task = "save_order persists the order; renderCart total helper entry";
        let fresh = answer(&mut first, task);
        let mut again =
            Index::build_from(t.path(), opts(), &dirs, Some(Saved::Bytes(&bytes)), None).unwrap();
        assert_eq!(
            (again.loaded, again.changed, again.refused.as_deref()),
            (6, 0, None)
        );
        assert_eq!(answer(&mut again, task), fresh);
        assert_eq!(
            again.save(),
            first.save(),
            "saving what was loaded gives the same bytes"
        );

        // An edit, a file gone and a file new while no process ran: those are read, the rest loaded.
        t.write(
            "app/store.py",
            "def save_order():\n    \"\"\"Write the order to the entry table.\"\"\"\n",
        );
        std::fs::remove_file(t.path().join("web/total.ts")).unwrap();
        t.write(
            "web/checkout.ts",
            "export function checkout() { return renderCart(); }\n",
        );
        settle();
        let mut loaded =
            Index::build_from(t.path(), opts(), &dirs, Some(Saved::Bytes(&bytes)), None).unwrap();
        assert_eq!(loaded.loaded, 4);
        assert_eq!(
            loaded.changed,
            2 + 2,
            "two files read, two saved ones unused"
        );
        let mut built = Index::build(t.path(), opts(), &dirs).unwrap();
        let want = answer(&mut built, task);
        assert_eq!(answer(&mut loaded, task), want);
        // Saved again after the edits (numbers with holes closed up), loaded again: the same.
        let mut twice = Index::build_from(
            t.path(),
            opts(),
            &dirs,
            Some(Saved::Bytes(&loaded.save())),
            None,
        )
        .unwrap();
        assert_eq!((twice.loaded, twice.refused.as_deref()), (6, None));
        assert_eq!(answer(&mut twice, task), want);

        // Bytes of another root, other options, cut short or no save at all: refused, every file read.
        let other = TempTree::with("task-index-saved-other", &[("a.py", "x = 1\n")]);
        for (root, o, b) in [
            (
                t.path(),
                Options {
                    prefix: "#".into(),
                    ..opts()
                },
                bytes.clone(),
            ),
            (
                t.path(),
                Options {
                    extra_ignore: vec!["x/".into()],
                    ..opts()
                },
                bytes.clone(),
            ),
            (
                t.path(),
                Options {
                    contextia: Some(t.path().join(".contextia")),
                    ..opts()
                },
                bytes.clone(),
            ),
            (other.path(), opts(), bytes.clone()),
            (t.path(), opts(), bytes[..bytes.len() / 2].to_vec()),
            (t.path(), opts(), b"random bytes".to_vec()),
        ] {
            let ix = Index::build_from(root, o, &dirs, Some(Saved::Bytes(&b)), None).unwrap();
            assert!(ix.refused.is_some());
            assert_eq!((ix.loaded, ix.changed), (0, ix.file_count()));
        }
    }

    #[test]
    fn bytes_refused_after_files_were_adopted_leave_nothing_of_them() {
        let t = TempTree::with(
            "task-index-refused-late",
            &[
                ("a/x.py", "def save_order():\n    pass\n"),
                (
                    "a/y.py",
                    "from a.x import save_order\n\ndef run():\n    save_order()\n",
                ),
            ],
        );
        let dirs: Vec<String> = [".", "a"].iter().map(|s| s.to_string()).collect();
        let settle = || crate::tree::os::pin_clock(Some(now_ns() + crate::tree::os::RACY_NS + 1));
        settle();
        let mut built = Index::build(t.path(), opts(), &dirs).unwrap();
        let task = "save_order run";
        let want = answer(&mut built, task);
        let good = built.save();
        let body = &good[..good.len() - 8];
        let at = body.windows(6).position(|w| w == b"a/y.py").unwrap();
        // The second file saved under the first's path (refused at its record), and a byte after
        // the last context file (refused once every part was handed on).
        let mut twice = body.to_vec();
        twice[at..at + 6].copy_from_slice(b"a/x.py");
        let mut after = body.to_vec();
        after.push(0);
        for (mut bytes, why) in [
            (twice, "saved twice"),
            (after, "after the last context file"),
        ] {
            store::seal(&mut bytes);
            let mut ix =
                Index::build_from(t.path(), opts(), &dirs, Some(Saved::Bytes(&bytes)), None)
                    .unwrap();
            assert!(
                ix.refused.as_deref().unwrap().contains(why),
                "{:?}",
                ix.refused
            );
            assert_eq!((ix.loaded, ix.changed, ix.file_count()), (0, 2, 2));
            assert_eq!(ix.lex.docs, 2);
            assert_eq!(answer(&mut ix, task), want);
            assert_eq!(ix.save(), good, "the same index a build makes");
        }
        crate::tree::os::pin_clock(None);
    }

    /// The median of names defined, kept as files are adopted, edited, added and removed, is
    /// the one counted over every file held; and the files importing each are the ones whose
    /// imports resolve to it.
    #[test]
    fn the_median_of_names_and_the_importers_follow_edits_and_loads() {
        let defs = |n: usize| {
            (0..n)
                .map(|i| format!("def f{i}():\n    pass\n"))
                .collect::<String>()
        };
        let files: Vec<(String, String)> = (0..30)
            .map(|i| {
                (
                    format!("a/m{i}.py"),
                    format!("from a.m{} import f0\n{}", (i + 1) % 30, defs(i % 7)),
                )
            })
            .collect();
        let t = tree_of("task-index-median", &files);
        let dirs: Vec<String> = [".", "a"].map(String::from).to_vec();
        let check = |ix: &mut Index| {
            ix.prepare(false);
            let mut counts: Vec<usize> = held_ids(&ix.files)
                .map(|i| ix.defined_count(i))
                .filter(|&n| n > 0)
                .collect();
            counts.sort_unstable();
            assert_eq!(
                ix.defines_median(),
                counts.get(counts.len() / 2).copied().unwrap_or(1)
            );
            for id in held_ids(&ix.files) {
                let mut want: Vec<u32> = held_ids(&ix.files)
                    .filter(|&o| ix.file(o).unwrap().out().contains(&id))
                    .collect();
                want.sort_unstable();
                assert_eq!(ix.neighbours(id).1, want);
            }
        };
        let mut ix = Index::build(t.path(), opts(), &dirs).unwrap();
        check(&mut ix);
        let bytes = ix.save();
        for i in 0..12 {
            t.write(format!("a/m{i}.py"), defs(9 + i));
        }
        for i in 20..26 {
            std::fs::remove_file(t.path().join(format!("a/m{i}.py"))).unwrap();
        }
        t.write("a/new.py", format!("from a.m3 import f0\n{}", defs(40)));
        ix.update(&["a".to_string()], None).unwrap();
        check(&mut ix);
        let mut loaded =
            Index::build_from(t.path(), opts(), &dirs, Some(Saved::Bytes(&bytes)), None).unwrap();
        check(&mut loaded);
        assert_eq!(loaded.defines_median(), ix.defines_median());
    }

    #[test]
    fn a_load_after_many_changes_answers_as_a_build() {
        let text = |i: usize, v: &str| {
            format!(
                "def func_{i}_{v}():\n    return 'word{} order total {v}'\n",
                i % 7
            )
        };
        let files: Vec<(String, String)> = (0..100)
            .map(|i| (format!("a/f{i}.py"), text(i, "one")))
            .collect();
        let t = tree_of("task-index-many", &files);
        let dirs: Vec<String> = [".", "a"].iter().map(|s| s.to_string()).collect();
        let mut first = Index::build(t.path(), opts(), &dirs).unwrap();
        answer(&mut first, "order");
        let bytes = first.save();
        // More than `BATCH` files changed (each a size of its own), some gone, some new.
        for i in 0..70 {
            t.write(format!("a/f{i}.py"), text(i, "second edit"));
        }
        for i in 90..95 {
            std::fs::remove_file(t.path().join(format!("a/f{i}.py"))).unwrap();
        }
        for i in 100..103 {
            t.write(format!("a/f{i}.py"), text(i, "new"));
        }
        let mut loaded =
            Index::build_from(t.path(), opts(), &dirs, Some(Saved::Bytes(&bytes)), None).unwrap();
        let mut built = Index::build(t.path(), opts(), &dirs).unwrap();
        assert_eq!((loaded.file_count(), loaded.refused.as_deref()), (98, None));
        assert!(loaded.loaded <= 25);
        for task in [
            "func_3_second word3 order",
            "total new word5",
            "edit func_95_one",
        ] {
            assert_eq!(answer(&mut loaded, task), answer(&mut built, task));
        }
    }

    /// Most files changed here and there among those kept (their postings go back in one pass
    /// over each list, merged with the kept ones), some gone and their numbers taken by new
    /// files: every term's postings are a build's, file by file, and so are the answers.
    #[test]
    fn a_load_after_most_files_changed_holds_a_builds_postings() {
        let text = |i: usize, v: &str| {
            format!(
                "def func_{i}_{v}():\n    return 'word{} order total {v} {}'\n",
                i % 7,
                "many ".repeat(i % 4)
            )
        };
        let path = |i: usize| format!("{}/f{i}.py", ["a", "b", "a/c"][i % 3]);
        let files: Vec<(String, String)> = (0..300).map(|i| (path(i), text(i, "one"))).collect();
        let refs: Vec<(&str, &str)> = files
            .iter()
            .map(|(p, t)| (p.as_str(), t.as_str()))
            .collect();
        let t = TempTree::with("task-index-most", &refs);
        let dirs: Vec<String> = [".", "a", "b", "a/c"].map(String::from).to_vec();
        let bytes = Index::build(t.path(), opts(), &dirs).unwrap().save();
        for i in (0..300).filter(|i| i % 5 != 2) {
            t.write(
                path(i),
                text(i, if i % 2 == 0 { "two" } else { "one edit" }),
            );
        }
        for i in (7..300).step_by(23) {
            std::fs::remove_file(t.path().join(path(i))).unwrap();
        }
        for i in 300..320 {
            t.write(path(i), text(i, "new"));
        }
        let mut loaded =
            Index::build_from(t.path(), opts(), &dirs, Some(Saved::Bytes(&bytes)), None).unwrap();
        let mut built = Index::build(t.path(), opts(), &dirs).unwrap();
        assert_eq!(
            (loaded.file_count(), loaded.refused.as_deref()),
            (307, None)
        );
        assert!(loaded.loaded <= 60);
        let by_path = |ix: &Index| -> Vec<(String, Vec<(String, u32)>)> {
            let mut terms: Vec<(String, Vec<(String, u32)>)> = (0..ix.lex.term_count() as u32)
                .map(|id| {
                    let mut p: Vec<(String, u32)> = (ix.lex.postings(id))
                        .map(|(d, n)| (ix.path(d).to_string(), n))
                        .collect();
                    p.sort_unstable();
                    (ix.lex.term_name(id).to_string(), p)
                })
                .filter(|(_, p)| !p.is_empty())
                .collect();
            terms.sort_unstable();
            terms
        };
        assert_eq!(by_path(&loaded), by_path(&built));
        for task in [
            "func_3_two word3 order many",
            "total new word5",
            "edit func_95_one",
        ] {
            assert_eq!(answer(&mut loaded, task), answer(&mut built, task));
        }
    }

    #[test]
    fn a_load_before_the_walk_settles_as_a_build_from_and_the_trees_cap_refuses_after() {
        let t = TempTree::with(
            "task-index-load-ahead",
            &[
                (
                    "app/orders.py",
                    "from app.tax import rate\n\ndef total(order):\n    return order * rate()\n",
                ),
                ("app/tax.py", "def rate():\n    return 1.2\n"),
            ],
        );
        let dirs: Vec<String> = [".", "app"].iter().map(|s| s.to_string()).collect();
        clock_past_racy(&t, &["app/orders.py", "app/tax.py"]);
        let mut first = Index::build(t.path(), opts(), &dirs).unwrap();
        first.prepare(false); // imports resolved before the save, as after a question
        let bytes = first.save();
        let len = bytes.len() as u64;
        t.write(".repoctx/task-index.bin", &bytes);
        let rel = Path::new(".repoctx/task-index.bin");
        let task = "the order total forgets the tax rate";
        let mut whole =
            Index::build_from(t.path(), opts(), &dirs, Some(Saved::File(rel, len)), None).unwrap();
        let at = |early: u64, cap: u64| {
            let loaded =
                Index::load(t.path(), opts(), Some(Saved::File(rel, early)), None).unwrap();
            loaded.settle(&dirs, cap, None).unwrap()
        };
        // Read before the walk (within the early cap) or after it (past it): the same index.
        for early in [len, len - 1] {
            let mut ix = at(early, len);
            assert_eq!((ix.loaded, ix.changed, ix.refused.as_deref()), (2, 0, None));
            assert_eq!(answer(&mut ix, task), answer(&mut whole, task));
            // Nothing changed: the imports are resolved as saved, no modules table is made.
            assert!(ix.modules.is_none());
        }
        // Larger than the tree's cap: refused, read or not, and every file read instead.
        let refused = |early: u64| {
            let ix = at(early, len - 1);
            (ix.loaded, ix.changed, ix.file_count(), ix.refused)
        };
        let why = |how: &str| Some(format!("larger than {} bytes; refused{how}", len - 1));
        assert_eq!(refused(len), (0, 2, 2, why("")));
        assert_eq!(refused(len - 1), (0, 2, 2, why(" unread")));
        crate::tree::os::pin_clock(None);
    }

    #[test]
    fn a_load_beside_the_walk_reads_once_the_walks_count_holds_the_files_size() {
        let t = TempTree::with(
            "task-index-load-counted",
            &[("app/tax.py", "def rate():\n    return 1.2\n")],
        );
        let dirs: Vec<String> = [".", "app"].map(String::from).to_vec();
        clock_past_racy(&t, &["app/tax.py"]);
        let mut bytes = Index::build(t.path(), opts(), &dirs).unwrap().save();
        // Padded past the cap of a tree of no file (the checksum is then wrong: refused, but read).
        let len = store::saved_cap(0) + 1;
        bytes.resize(len as usize, 0);
        t.write(".repoctx/task-index.bin", &bytes);
        let rel = Path::new(".repoctx/task-index.bin");
        let wanted = store::files_for(len).unwrap();
        assert_eq!(wanted, 1);
        let load = |count: &FileCount, walk: &dyn Fn(&FileCount)| {
            std::thread::scope(|s| {
                let loading = s.spawn(|| {
                    let saved = Some(Saved::Counted(rel, count));
                    Index::load(t.path(), opts(), saved, None).unwrap()
                });
                std::thread::sleep(std::time::Duration::from_millis(100));
                let waited = !loading.is_finished();
                walk(count);
                (waited, loading.join().unwrap())
            })
        };
        // The count reaches the size while the walk runs: read then, before the walk is over.
        let (waited, loaded) = load(&FileCount::default(), &|c| c.add(wanted));
        assert!(waited, "no byte read before the count held the size");
        assert!(matches!(loaded.size, SavedSize::Read(n) if n == len));
        // The walk ends short of it, or fails: left for `settle`, which refuses it unread.
        for total in [Some(wanted - 1), None] {
            let (waited, loaded) = load(&FileCount::default(), &|c| c.close(total));
            assert!(
                waited && matches!(loaded.size, SavedSize::Later(_)),
                "{total:?}"
            );
            if total.is_some() {
                let ix = loaded
                    .settle(&dirs, store::saved_cap(wanted - 1), None)
                    .unwrap();
                assert_eq!(
                    ix.refused,
                    Some(format!("larger than {} bytes; refused unread", len - 1))
                );
            }
        }
        crate::tree::os::pin_clock(None);
    }

    #[test]
    fn a_load_beside_the_walk_lists_nothing_reads_its_lists_mapped_and_settles_on_the_walks_listing_as_a_build(
    ) {
        let t = TempTree::with(
            "task-index-load-walks-listing",
            &[
                (
                    "app/orders.py",
                    "from app.tax import rate\n\ndef total(order):\n    return order * rate()\n",
                ),
                ("app/tax.py", "def rate():\n    return 1.2\n"),
                (
                    "lib/round.py",
                    "def round_total(total):\n    return total\n",
                ),
            ],
        );
        let saved_dirs: Vec<String> = [".", "app", "lib"].map(String::from).to_vec();
        clock_past_racy(&t, &["app/orders.py", "app/tax.py", "lib/round.py"]);
        let bytes = Index::build(t.path(), opts(), &saved_dirs).unwrap().save();
        t.write(".repoctx/task-index.bin", &bytes);
        // Since the save: a file edited, a directory gone, one new, and files the walk lists
        // that the index does not read (ignored, not source, too large).
        t.write(
            "app/tax.py",
            "def rate(order):\n    return 1.25 if order else 1.2\n",
        );
        std::fs::remove_dir_all(t.path().join("lib")).unwrap();
        t.write(
            "new/discount.py",
            "def discount(total):\n    return total * 0.9\n",
        );
        t.write(".gitignore", "*.gen.py\n");
        t.write("app/tax.gen.py", "def rate():\n    return 2\n");
        t.write("app/Cargo.lock", "x");
        t.write("new/big.py", vec![b'#'; files::MAX_FILE_BYTES as usize + 1]);
        t.write(
            "new/.context.yaml",
            "version: 1\nsummary: \"Discount rules.\"\n",
        );
        let rel = Path::new(".repoctx/task-index.bin");
        let loaded = Index::load(t.path(), opts(), Some(Saved::File(rel, 1 << 20)), None).unwrap();
        assert!(loaded.ix.listed.is_none(), "nothing listed beside the walk");
        // The lists and the names defined read in place from private copies, which have no
        // name beside the saved file.
        assert!(loaded.ix.lex.mapped_bytes() > 0 && loaded.ix.defs.mapped_bytes() > 0);
        #[cfg(unix)] // (Windows removes a file deleted on close when it is closed)
        assert_eq!(
            std::fs::read_dir(t.path().join(".repoctx"))
                .unwrap()
                .count(),
            1
        );
        let walk_opts = crate::tree::walk::Options {
            extra_ignore: vec![],
            max_depth: 10,
            min_tokens: 0,
        };
        let (table, kept) = crate::tree::walk::walk_keeping(t.path(), &walk_opts, None).unwrap();
        let dirs: Vec<String> = table.rows.iter().map(|r| r.scope.clone()).collect();
        assert_eq!(dirs, [".", "app", "new"]);
        // The tree is listed once, by the walk: a file edited after it is the next call's.
        t.write("app/orders.py", "def total(order):\n    return order\n");
        t.write(
            "app/.context.yaml",
            "version: 1\nsummary: \"Tax summary.\"\n",
        );
        let mut ix = loaded.settle(&dirs, 1 << 20, Some(kept)).unwrap();
        // Changed: two files read, two saved not used, new's context file read.
        assert_eq!(
            (ix.loaded, ix.changed),
            (1, 2 + 2 + 1),
            "orders.py as saved"
        );
        // So is a context file: the walk's stat of each is the one the written context takes.
        let scopes = |ix: &Index, q: &str| -> Vec<String> {
            let q = crate::tasks::terms::terms(q);
            ix.written
                .matches(&q)
                .iter()
                .map(|(n, _)| n.label.clone())
                .collect()
        };
        assert_eq!(scopes(&ix, "discount rules"), ["scope new"]);
        assert!(scopes(&ix, "tax summary").is_empty());
        std::fs::remove_file(t.path().join("app/.context.yaml")).unwrap();
        let orders = ix.id_of("app/orders.py").unwrap();
        assert!(!ix.key(ix.file(orders).unwrap()).racy(now_ns()));
        // What the build of the walk's moment holds: the same files, the same answers.
        t.write(
            "app/orders.py",
            "from app.tax import rate\n\ndef total(order):\n    return order * rate()\n",
        );
        clock_past_racy(&t, &["app/orders.py"]);
        let mut built = Index::build(t.path(), opts(), &dirs).unwrap();
        let paths = |ix: &Index| {
            let mut p: Vec<String> = held_ids(&ix.files)
                .map(|i| ix.path(i).to_string())
                .collect();
            p.sort();
            p
        };
        assert_eq!(
            paths(&ix),
            ["app/orders.py", "app/tax.py", "new/discount.py"]
        );
        assert_eq!(paths(&ix), paths(&built));
        for task in [
            "the order total forgets the tax rate",
            "a discount on the total",
        ] {
            assert_eq!(answer(&mut ix, task), answer(&mut built, task));
        }
        crate::tree::os::pin_clock(None);
    }
}

#[cfg(test)]
mod profile {
    /// `REPOCTX_PROFILE_ROOT=… cargo test --release --lib tasks::index::profile -- --ignored --nocapture`
    #[test]
    #[ignore]
    fn phases() {
        use super::*;
        let Ok(root) = std::env::var("REPOCTX_PROFILE_ROOT") else {
            return;
        };
        let root = PathBuf::from(root);
        let t = std::time::Instant::now();
        let opts = crate::tree::walk::Options {
            extra_ignore: vec![],
            max_depth: 10,
            min_tokens: 0,
        };
        let table = crate::tree::walk::walk(&root, &opts, None).unwrap();
        let dirs: Vec<String> = table.rows.iter().map(|r| r.scope.clone()).collect();
        eprintln!("walk {:?}", t.elapsed());
        let ignore = Ignore::new(&root, &[]);
        let t = std::time::Instant::now();
        let top = PlainDir::top(&root).unwrap();
        let listed: Vec<(String, StatKey)> = dirs
            .par_iter()
            .flat_map_iter(|d| {
                let mut out = Vec::new();
                files::list(&top, &root, d, &ignore, |name, k| {
                    out.push((crate::tree::walk::child_scope(d, name), k))
                });
                out
            })
            .collect();
        eprintln!("list {} files {:?}", listed.len(), t.elapsed());
        let confined = Root::open(&root).unwrap();
        let t = std::time::Instant::now();
        let texts: Vec<(String, String)> = listed
            .par_iter()
            .filter_map(|(p, _)| files::read_text(&confined, p).map(|t| (p.clone(), t)))
            .collect();
        eprintln!("read {:?}", t.elapsed());
        let t = std::time::Instant::now();
        let n: usize = texts
            .par_iter()
            .map(|(_, t)| super::super::terms::terms(t).len())
            .sum();
        eprintln!("terms {n} {:?}", t.elapsed());
        let t = std::time::Instant::now();
        let n: usize = texts
            .par_iter()
            .map(|(p, t)| files::definitions(p, t).len())
            .sum();
        eprintln!("defs {n} {:?}", t.elapsed());
        let t = std::time::Instant::now();
        let finder = annotate::finder("@");
        let facts: Vec<Facts> = texts
            .par_iter()
            .map(|(p, t)| files::facts(p, t, "@", &finder))
            .collect();
        eprintln!("facts {:?}", t.elapsed());
        drop(facts);
        let t = std::time::Instant::now();
        let ix = Index::build(
            &root,
            Options {
                extra_ignore: vec![],
                prefix: "@".into(),
                contextia: None,
            },
            &dirs,
        )
        .unwrap();
        eprintln!(
            "build {} {:?} heap {}",
            ix.file_count(),
            t.elapsed(),
            ix.heap_bytes()
        );
        let mut ix = ix;
        let t = std::time::Instant::now();
        ix.prepare(true);
        eprintln!("prepare {:?}", t.elapsed());
        let t = std::time::Instant::now();
        let saved = ix.save();
        eprintln!("save {} bytes {:?}", saved.len(), t.elapsed());
        let t = std::time::Instant::now();
        let from = Index::build_from(
            &root,
            ix.opts.clone(),
            &dirs,
            Some(Saved::Bytes(&saved)),
            None,
        )
        .unwrap();
        eprintln!("build from saved {} loaded {:?}", from.loaded, t.elapsed());
        drop(from);
        let count = crate::tasks::bundle::counter("bytes4").unwrap();
        for task in [
            "func_12 returns the wrong value in module f4711",
            "Func3 should add one more",
            "fix the paragraph 7 of the documentation",
            "synthetic package regenerate module",
        ] {
            let t = std::time::Instant::now();
            let ask = crate::tasks::rank::Ask {
                task,
                budget: 8000,
                paths: &[],
                off: &[],
                limit: 10,
                outline: false,
            };
            let a = crate::tasks::rank::answer(&ix, &ask, &*count);
            eprintln!(
                "query {:?} {} files {} pieces: {task}",
                t.elapsed(),
                a.files.len(),
                a.bundle.len()
            );
        }
    }
}
