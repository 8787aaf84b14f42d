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

use super::bm25::Inverted;
use super::files::{self, Facts, Ignore, StatKey};
use super::graph::Modules;
use super::history::History;
use super::written::Written;
use crate::artifacts::annotate;
use crate::lang::imports::Import;
use crate::tree::fs::Root;
use aho_corasick::AhoCorasick;
use rayon::prelude::*;
use std::collections::{HashMap, HashSet};
use std::path::{Path, PathBuf};

#[derive(Clone)]
pub struct Options {
    /// The config's ignore patterns (`.context.config.yaml`), as the walk takes them.
    pub extra_ignore: Vec<String>,
    /// The annotation prefix of `.contextia/config.yaml` ("@").
    pub prefix: String,
    /// The `.contextia/` directory serving the root, if there is one.
    pub contextia: Option<PathBuf>,
}

pub struct File {
    pub path: String,
    key: StatKey,
    terms: Vec<u32>,
    pub defs: Vec<Box<str>>,
    pub imports: Vec<Import>,
    /// The files its imports resolve to.
    pub out: Vec<u32>,
    pub annotations: Vec<(u32, Box<str>)>,
}

pub struct Index {
    pub root: PathBuf,
    pub opts: Options,
    finder: AhoCorasick,
    pub files: Vec<Option<File>>,
    free: Vec<u32>,
    pub by_path: HashMap<String, u32>,
    pub by_dir: HashMap<String, Vec<u32>>,
    dirs: HashSet<String>,
    pub lex: Inverted,
    pub defs: HashMap<Box<str>, Vec<u32>>,
    /// Artifact id -> (file, line) of each annotation naming it.
    pub annotated: HashMap<Box<str>, Vec<(u32, u32)>>,
    modules: Modules,
    /// Files whose imports must be resolved again (all of them when files came or went).
    unresolved: HashSet<u32>,
    resolve_all: bool,
    reverse: Vec<Vec<u32>>,
    reverse_stale: bool,
    pub written: Written,
    pub history: History,
}

fn parent_dir(path: &str) -> &str {
    path.rsplit_once('/').map_or(".", |(d, _)| d)
}

impl Index {
    /// Index the files of `dirs` (the scopes of the walk table) beneath `root`.
    pub fn build(root: &Path, opts: Options, dirs: &[String]) -> std::io::Result<Index> {
        let finder = annotate::finder(&opts.prefix);
        let mut ix = Index {
            root: root.to_path_buf(),
            opts,
            finder,
            files: Vec::new(),
            free: Vec::new(),
            by_path: HashMap::new(),
            by_dir: HashMap::new(),
            dirs: HashSet::new(),
            lex: Inverted::default(),
            defs: HashMap::new(),
            annotated: HashMap::new(),
            modules: Modules::default(),
            unresolved: HashSet::new(),
            resolve_all: true,
            reverse: Vec::new(),
            reverse_stale: true,
            written: Written::default(),
            history: History::default(),
        };
        Root::open(root)?; // the root must be readable
        ix.update(dirs, Some(dirs));
        Ok(ix)
    }

    /// Follow changes: list again the directories in `changed` (their rows moved) and read
    /// the files whose stat key changed; with `all` (every directory of the table now),
    /// also drop the directories that are gone and index the ones that are new.
    pub fn update(&mut self, changed: &[String], all: Option<&[String]>) {
        let Ok(confined) = Root::open(&self.root) else { return };
        let ignore = Ignore::new(&self.root, &self.opts.extra_ignore);
        let mut dirs: Vec<String> = changed.iter().filter(|d| all.is_some() || self.dirs.contains(*d)).cloned().collect();
        if let Some(all) = all {
            let now: HashSet<&str> = all.iter().map(String::as_str).collect();
            let gone: Vec<String> = self.dirs.iter().filter(|d| !now.contains(d.as_str())).cloned().collect();
            for d in gone {
                for id in self.by_dir.remove(&d).unwrap_or_default() {
                    self.remove(id, true);
                }
                self.written.forget_scope(&d);
                self.dirs.remove(&d);
            }
            dirs.extend(all.iter().filter(|d| !self.dirs.contains(*d)).cloned());
        }
        dirs.sort_unstable();
        dirs.dedup();
        let root = self.root.clone();
        let listed: Vec<(String, Vec<(String, StatKey)>)> = dirs.par_iter().map(|d| (d.clone(), files::list(&root, d, &ignore))).collect();
        let mut to_read: Vec<(String, StatKey)> = Vec::new();
        for (dir, now) in &listed {
            let present: HashSet<&str> = now.iter().map(|(p, _)| p.as_str()).collect();
            for id in self.by_dir.get(dir).cloned().unwrap_or_default() {
                let path = self.path(id).unwrap_or_default();
                if !present.contains(path.as_str()) {
                    self.remove(id, true);
                }
            }
            for (p, k) in now {
                let same = self.by_path.get(p).and_then(|&id| self.files[id as usize].as_ref()).is_some_and(|f| f.key == *k);
                if !same {
                    to_read.push((p.clone(), *k));
                }
            }
            self.dirs.insert(dir.clone());
        }
        let (prefix, finder) = (&self.opts.prefix, &self.finder);
        let read: Vec<(String, StatKey, Option<Facts>)> = to_read
            .into_par_iter()
            .map(|(p, k)| {
                let f = files::read_text(&confined, &p).map(|t| files::facts(&p, &t, prefix, finder));
                (p, k, f)
            })
            .collect();
        for (p, k, f) in read {
            let had = self.by_path.get(&p).copied();
            // An edit keeps the file's number and its module: only its own imports move.
            if let Some(id) = had {
                self.remove(id, f.is_none());
            }
            if let Some(f) = f {
                let id = self.insert(p, k, f, had.is_none());
                self.unresolved.insert(id);
            }
        }
        for (dir, _) in &listed {
            self.written.scope(&root, &confined, dir);
        }
    }

    fn path(&self, id: u32) -> Option<String> {
        self.files.get(id as usize).and_then(|f| f.as_ref()).map(|f| f.path.clone())
    }

    /// Put a file in (`reshaped`: a path the index did not hold); returns its number.
    fn insert(&mut self, path: String, key: StatKey, f: Facts, reshaped: bool) -> u32 {
        let id = match self.free.pop() {
            Some(id) => id,
            None => {
                self.files.push(None);
                self.files.len() as u32 - 1
            }
        };
        let terms = self.lex.add(id, &f.counts, f.len);
        for d in &f.defs {
            self.defs.entry(d.as_str().into()).or_default().push(id);
        }
        for (line, target) in &f.annotations {
            self.annotated.entry(target.as_str().into()).or_default().push((id, *line));
        }
        self.modules.add(id, &path);
        self.by_path.insert(path.clone(), id);
        self.by_dir.entry(parent_dir(&path).to_string()).or_default().push(id);
        self.files[id as usize] = Some(File {
            path,
            key,
            terms,
            defs: f.defs.into_iter().map(Into::into).collect(),
            imports: f.imports,
            out: Vec::new(),
            annotations: f.annotations.into_iter().map(|(l, t)| (l, t.into())).collect(),
        });
        // A new module may answer imports of other files.
        self.resolve_all |= reshaped;
        id
    }

    /// Take a file out (`reshaped`: for good, not to put it back in after an edit).
    fn remove(&mut self, id: u32, reshaped: bool) {
        let Some(f) = self.files.get_mut(id as usize).and_then(Option::take) else { return };
        self.lex.remove(id, &f.terms);
        for d in &f.defs {
            if let Some(list) = self.defs.get_mut(d) {
                list.retain(|&x| x != id);
                if list.is_empty() {
                    self.defs.remove(d);
                }
            }
        }
        for (_, t) in &f.annotations {
            if let Some(list) = self.annotated.get_mut(t) {
                list.retain(|&(x, _)| x != id);
                if list.is_empty() {
                    self.annotated.remove(t);
                }
            }
        }
        self.modules.remove(id, &f.path);
        self.by_path.remove(&f.path);
        if let Some(list) = self.by_dir.get_mut(parent_dir(&f.path)) {
            list.retain(|&x| x != id);
        }
        self.free.push(id);
        self.resolve_all |= reshaped;
    }

    /// Make what a query reads current: imports resolved, the reverse graph, the written
    /// context of project.yaml and .contextia/, and (unless `history` is false) git's.
    pub fn prepare(&mut self, history: bool) {
        if self.resolve_all || !self.unresolved.is_empty() {
            let ids: Vec<u32> = if self.resolve_all {
                (0..self.files.len() as u32).filter(|&i| self.files[i as usize].is_some()).collect()
            } else {
                self.unresolved.iter().copied().collect()
            };
            let resolved: Vec<(u32, Vec<u32>)> = {
                let files = &self.files;
                let path_of = |id: u32| files.get(id as usize).and_then(|f| f.as_ref()).map(|f| f.path.clone());
                ids.par_iter()
                    .filter_map(|&id| {
                        let f = files[id as usize].as_ref()?;
                        let mut out: Vec<u32> = f.imports.iter().flat_map(|i| self.modules.resolve(&f.path, i, &path_of)).collect();
                        out.sort_unstable();
                        out.dedup();
                        out.retain(|&o| o != id);
                        Some((id, out))
                    })
                    .collect()
            };
            for (id, out) in resolved {
                if let Some(f) = self.files[id as usize].as_mut() {
                    f.out = out;
                }
            }
            self.resolve_all = false;
            self.unresolved.clear();
            self.reverse_stale = true;
        }
        if self.reverse_stale {
            let mut rev = vec![Vec::new(); self.files.len()];
            for (id, f) in self.files.iter().enumerate() {
                for &o in f.iter().flat_map(|f| &f.out) {
                    rev[o as usize].push(id as u32);
                }
            }
            self.reverse = rev;
            self.reverse_stale = false;
        }
        self.written.project(&self.root);
        let contextia = self.opts.contextia.clone();
        self.written.artifacts(contextia.as_deref());
        if history {
            self.history.refresh(&self.root);
        }
    }

    /// The files a file imports and the files that import it.
    pub fn neighbours(&self, id: u32) -> (Vec<u32>, Vec<u32>) {
        let out = self.files.get(id as usize).and_then(|f| f.as_ref()).map_or(Vec::new(), |f| f.out.clone());
        let inc = self.reverse.get(id as usize).cloned().unwrap_or_default();
        (out, inc)
    }

    pub fn file(&self, id: u32) -> Option<&File> {
        self.files.get(id as usize).and_then(|f| f.as_ref())
    }

    pub fn file_count(&self) -> usize {
        self.by_path.len()
    }

    /// Bytes held by the index, roughly (its own accounting; the process's RSS says more).
    pub fn heap_bytes(&self) -> usize {
        let files: usize = self
            .files
            .iter()
            .flatten()
            .map(|f| {
                std::mem::size_of::<File>()
                    + f.path.len() * 3 // the path, and its copies as keys of by_path and by_dir
                    + f.terms.capacity() * 4
                    + f.defs.iter().map(|d| d.len() + 16).sum::<usize>()
                    + f.imports.len() * 48
                    + f.out.capacity() * 4
                    + f.annotations.len() * 24
            })
            .sum();
        let defs: usize = self.defs.iter().map(|(k, v)| k.len() + 40 + v.capacity() * 4).sum();
        files + defs + self.lex.heap_bytes() + self.modules.heap_bytes() + self.written.heap_bytes() + self.history.heap_bytes()
            + self.reverse.iter().map(|r| r.capacity() * 4 + 24).sum::<usize>()
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::testing::TempTree;

    fn opts() -> Options {
        Options { extra_ignore: Vec::new(), prefix: "@".into(), contextia: None }
    }

    #[test]
    fn builds_resolves_and_follows_edits() {
        let t = TempTree::with(
            "task-index",
            &[
                ("app/main.py", "from app.store import save_order\n\ndef run():\n    save_order()\n"),
                ("app/store.py", "def save_order():\n    pass\n"),
                ("lib/other.py", "x = 1\n"),
            ],
        );
        let dirs: Vec<String> = [".", "app", "lib"].iter().map(|s| s.to_string()).collect();
        let mut ix = Index::build(t.path(), opts(), &dirs).unwrap();
        ix.prepare(false);
        assert_eq!(ix.file_count(), 3);
        let main = ix.by_path["app/main.py"];
        let store = ix.by_path["app/store.py"];
        assert_eq!(ix.neighbours(main).0, [store]);
        assert_eq!(ix.neighbours(store).1, [main]);
        assert_eq!(ix.defs["save_order"], [store]);
        // An edit re-reads that file only; a new file and a removed one are followed.
        std::thread::sleep(std::time::Duration::from_millis(10));
        std::fs::write(t.path().join("app/store.py"), "def persist_order():\n    pass\n").unwrap();
        std::fs::write(t.path().join("lib/new.py"), "def save_order():\n    pass\n").unwrap();
        std::fs::remove_file(t.path().join("lib/other.py")).unwrap();
        ix.update(&["app".to_string(), "lib".to_string()], None);
        ix.prepare(false);
        assert!(ix.defs.contains_key("persist_order"));
        assert_eq!(ix.defs["save_order"].iter().map(|&i| ix.file(i).unwrap().path.clone()).collect::<Vec<_>>(), ["lib/new.py"]);
        assert!(!ix.by_path.contains_key("lib/other.py"));
        assert_eq!(ix.lex.docs, 3);
        // A directory gone from the table takes its files with it.
        ix.update(&[], Some(&[".".to_string(), "app".to_string()]));
        assert_eq!(ix.file_count(), 2);
        assert!(ix.heap_bytes() > 0);
    }
}
