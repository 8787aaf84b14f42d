//! What people and agents wrote about the code, as notes the task is matched against:
//! `.context.yaml` scopes (a directory's summary, exports and interfaces count for the files
//! directly in it; a file's purpose for that file), `.contextia/` specs, decisions and norms
//! (they lift the files and lines annotated with their id, and the files their `paths`
//! name), and `.repoctx/project.yaml` modules (description, patterns and rules lift the
//! module's key files, and a little its other files). Every file is read by the one
//! bounded YAML reader (rust/formats/yamlread.rs); notes are kept in a BM25 index of their
//! own, each source re-read only when a file of it changes. The context files' notes are saved
//! with the index (tasks/store.rs), so a load reads again only the ones whose stat key changed.

use super::bm25::{counts, Inverted, K1};
use super::files::{stat_key, StatKey};
use super::store::{self, NoteOut, SavedScope};
use super::terms;
use crate::formats::yamlread;
use crate::tree::fs::{Kind, Root};
use rayon::prelude::*;
use serde_json::Value;
use std::collections::{HashMap, HashSet};
use std::path::{Path, PathBuf};

pub const CONTEXT_FILE: &str = ".context.yaml";
pub const PROJECT_FILE: &str = ".repoctx/project.yaml";
const MAX_NOTE_FILE: u64 = 1 << 20;
/// A note holding this many of a task's distinct terms (or all, for a shorter task) counts whole.
const COVER_TERMS: usize = 4;
/// The artifact folders under `.contextia/` whose documents describe the code.
const ARTIFACT_DIRS: &[&str] = &["system/specs", "system/rationale", "system/norms"];

#[derive(Clone, Copy, PartialEq, Eq, Debug)]
pub enum Source {
    Scope,
    Artifact,
    Module,
}

#[derive(Debug, Clone)]
pub enum Target {
    /// The files directly in a directory.
    Dir(String),
    File(String),
    /// A module of project.yaml: its directory and key files.
    Module {
        path: String,
        key_files: Vec<String>,
    },
    /// An artifact: its id (annotations name it) and its `paths` globs.
    Artifact {
        id: String,
        paths: Vec<String>,
    },
}

#[derive(Debug, Clone)]
pub struct Note {
    pub source: Source,
    /// How the why line names it: "scope src/core", "SPEC-001 (Login flow)", "module core".
    pub label: String,
    pub target: Target,
}

#[derive(Default)]
pub struct Written {
    ix: Inverted,
    notes: Vec<Option<Note>>,
    free: Vec<u32>,
    scopes: HashMap<String, Scope>,
    /// The context files' notes a load adopted, each with the stat key of its file, until the
    /// first `scopes` puts in those whose file is as it was (and forgets the others): their
    /// checked bytes as saved (tasks/store.rs `saved_scopes`), 5.7 MB at a million files;
    /// decoded from the load on (a `String` a term), the cold call's peak was 20 MB higher.
    saved: Vec<u8>,
    project: Option<(StatKey, Vec<u32>)>,
    artifacts: (Vec<(PathBuf, StatKey)>, Vec<u32>),
}

/// What was read of a directory's context file.
struct Scope {
    key: StatKey,
    /// Its notes.
    ids: Vec<u32>,
    /// Changed within the racy window of the listing that found it (tree/os.rs `racy`): not
    /// saved, so the next process reads it again.
    racy: bool,
}

fn text_of(v: &Value, out: &mut String) {
    match v {
        Value::String(s) => {
            out.push_str(s);
            out.push('\n');
        }
        Value::Array(items) => items.iter().for_each(|i| text_of(i, out)),
        Value::Object(map) => map.values().for_each(|i| text_of(i, out)),
        _ => {}
    }
}

fn field_text(v: &Value, fields: &[&str]) -> String {
    let mut out = String::new();
    for f in fields {
        if let Some(x) = v.get(*f) {
            text_of(x, &mut out);
        }
    }
    out
}

/// The stat key of the regular file `rel`, stat'ed through the confined root (a directory on
/// the way that leaves the root, or a link at `rel`, is no file); None when there is none.
fn file_key(root: &Root, rel: &str) -> Option<StatKey> {
    root.stat(Path::new(rel), false)
        .ok()
        .flatten()
        .filter(|m| m.is_file())
        .map(|m| stat_key(&m))
}

fn parse_yaml(bytes: &[u8]) -> Option<Value> {
    serde_json::from_str(&yamlread::to_json(bytes).ok()?).ok()
}

/// A note and its words counted (`counts`), ready to be put in.
struct Counted {
    note: Note,
    counts: Vec<(String, u32)>,
    len: u32,
}

impl Counted {
    fn new(note: Note, text: &str) -> Counted {
        let (counts, len) = counts(terms::terms(text));
        Counted { note, counts, len }
    }
}

/// The notes of a saved context file, to be put in.
fn counted(s: SavedScope<'_>) -> Vec<Counted> {
    let notes = s.notes.into_iter().map(|n| Counted {
        note: scope_note(s.dir, n.file.map(String::from)),
        counts: n
            .counts
            .into_iter()
            .map(|(t, c)| (t.to_string(), c))
            .collect(),
        len: n.len,
    });
    notes.collect()
}

/// A note of the context file of `dir`: for the files directly in it, or for one `file`.
fn scope_note(dir: &str, file: Option<String>) -> Note {
    Note {
        source: Source::Scope,
        label: format!("scope {dir}"),
        target: file.map_or_else(|| Target::Dir(dir.to_string()), Target::File),
    }
}

/// What a directory's context file holds now against what was read of it (`Written::scopes`).
enum ScopeRead {
    /// The stat key read before (or none there, as before).
    Same,
    Gone,
    /// Its stat key and notes (none when it cannot be read or parsed).
    Read(StatKey, Vec<Counted>),
}

/// The context file of `dir`, read and made into notes unless its stat key is `had`; `seen`:
/// its stat key as the walk listed it (`Some(None)`: none there), else it is stat'ed here.
fn scope_notes(
    root: &Root,
    dir: &str,
    had: Option<StatKey>,
    seen: Option<Option<StatKey>>,
) -> ScopeRead {
    let rel = crate::tree::walk::child_scope(dir, CONTEXT_FILE);
    let key = seen.unwrap_or_else(|| file_key(root, &rel));
    let key = match (key, had) {
        (Some(k), Some(had)) if had == k => return ScopeRead::Same,
        (None, None) => return ScopeRead::Same,
        (None, Some(_)) => return ScopeRead::Gone,
        (Some(k), _) => k,
    };
    let mut notes = Vec::new();
    if let Some(v) = root
        .read(Path::new(&rel), MAX_NOTE_FILE)
        .ok()
        .and_then(|b| parse_yaml(&b))
    {
        let text = field_text(&v, &["summary", "exports", "interfaces", "data_models"]);
        notes.push(Counted::new(scope_note(dir, None), &text));
        for f in v
            .get("files")
            .and_then(Value::as_array)
            .into_iter()
            .flatten()
        {
            let (Some(name), Some(purpose)) = (
                f.get("name").and_then(Value::as_str),
                f.get("purpose").and_then(Value::as_str),
            ) else {
                continue;
            };
            let path = crate::tree::walk::child_scope(dir, name);
            notes.push(Counted::new(scope_note(dir, Some(path)), purpose));
        }
    }
    ScopeRead::Read(key, notes)
}

impl Written {
    fn add(&mut self, note: Note, text: &str) -> Option<u32> {
        self.put(Counted::new(note, text))
    }

    /// A note whose words were counted (possibly on another thread); None when it has none.
    fn put(&mut self, n: Counted) -> Option<u32> {
        if n.len == 0 {
            return None;
        }
        let id = match self.free.pop() {
            Some(id) => id,
            None => {
                self.notes.push(None);
                self.notes.len() as u32 - 1
            }
        };
        self.ix.add(id, &n.counts, n.len);
        self.notes[id as usize] = Some(n.note);
        Some(id)
    }

    fn drop_all(&mut self, ids: &[u32]) {
        for &id in ids {
            self.ix.remove(id);
            self.notes[id as usize] = None;
            self.free.push(id);
        }
    }

    /// Read (or drop) the context file of each of `dirs` whose stat changed since it was read
    /// (or saved, after a load): the files are read, parsed and split into words in parallel
    /// (one in every other directory of the synthetic trees, 45,000 at a million files), their
    /// notes (or the saved ones) put in in `dirs`' order, so notes are numbered as one by one
    /// and a load numbers them as a build. `seen`, one for each of `dirs`: the stat key of its
    /// context file as the walk listed it, when it did (not stat'ed again); `at`: when the
    /// first listing began, for the racy window. Returns how many differ from what was held.
    pub fn scopes(
        &mut self,
        root: &Root,
        dirs: &[String],
        seen: &[Option<Option<StatKey>>],
        at: i64,
    ) -> usize {
        debug_assert_eq!(
            dirs.len(),
            seen.len(),
            "one walk's stat (or none) a directory"
        );
        let bytes = std::mem::take(&mut self.saved);
        let mut saved: HashMap<&str, SavedScope<'_>> =
            store::saved_scopes(&bytes).map(|s| (s.dir, s)).collect();
        let read: Vec<ScopeRead> = dirs
            .par_iter()
            .zip(seen)
            .map(|(dir, seen)| {
                let had = self.scopes.get(dir.as_str()).map(|s| s.key);
                let had = had.or_else(|| saved.get(dir.as_str()).map(|s| s.key));
                scope_notes(root, dir, had, *seen)
            })
            .collect();
        let mut changed = 0;
        for (dir, read) in dirs.iter().zip(read) {
            let (key, notes, racy) = match read {
                ScopeRead::Same => match saved.remove(dir.as_str()) {
                    Some(s) => (s.key, counted(s), false),
                    None => continue,
                },
                ScopeRead::Gone => {
                    self.forget_scope(dir);
                    changed += 1;
                    continue;
                }
                ScopeRead::Read(key, notes) => {
                    changed += 1;
                    (key, notes, key.racy(at))
                }
            };
            self.forget_scope(dir);
            let ids = notes.into_iter().filter_map(|n| self.put(n)).collect();
            self.scopes.insert(dir.clone(), Scope { key, ids, racy });
        }
        changed
    }

    /// Forget the scopes of directories that are gone.
    pub fn forget_scope(&mut self, dir: &str) {
        if let Some(s) = self.scopes.remove(dir) {
            self.drop_all(&s.ids);
        }
    }

    /// The notes of a context file as a load found them saved (the part's checked bytes,
    /// tasks/store.rs), put in by the next `scopes` if the file is as it was.
    pub fn adopt(&mut self, part: &[u8]) {
        self.saved.extend_from_slice(part);
    }

    /// The notes of every context file read out of the racy window, for a later `adopt`:
    /// directories in byte order, each note's terms in byte order with their counts.
    pub fn save_scopes(&self, out: &mut Vec<u8>) {
        let mut counts: Vec<Vec<(&str, u32)>> = vec![Vec::new(); self.notes.len()];
        for t in 0..self.ix.term_count() as u32 {
            for (note, tf) in self.ix.postings(t) {
                counts[note as usize].push((self.ix.term_name(t), tf));
            }
        }
        let mut dirs: Vec<(&String, &Scope)> =
            self.scopes.iter().filter(|(_, s)| !s.racy).collect();
        dirs.sort_unstable_by_key(|(d, _)| d.as_str());
        store::encode_scope_count(out, dirs.len());
        for (dir, s) in dirs {
            let notes: Vec<NoteOut<'_>> = s
                .ids
                .iter()
                .map(|&id| {
                    let mut c = std::mem::take(&mut counts[id as usize]);
                    c.sort_unstable();
                    let file = match &self.notes[id as usize]
                        .as_ref()
                        .expect("a held note")
                        .target
                    {
                        Target::File(p) => Some(p.as_str()),
                        _ => None,
                    };
                    NoteOut {
                        file,
                        len: self.ix.doc_len(id),
                        counts: c,
                    }
                })
                .collect();
            store::encode_scope(out, dir, &s.key, &notes);
        }
    }

    /// Re-read project.yaml when its stat changed.
    pub fn project(&mut self, root: &Path) {
        let confined = Root::open(root).ok();
        let key = confined.as_ref().and_then(|r| file_key(r, PROJECT_FILE));
        if key == self.project.as_ref().map(|p| p.0) {
            return;
        }
        if let Some((_, ids)) = self.project.take() {
            self.drop_all(&ids);
        }
        let Some(key) = key else { return };
        let mut ids = Vec::new();
        let data = confined
            .and_then(|r| r.read(Path::new(PROJECT_FILE), MAX_NOTE_FILE).ok())
            .and_then(|b| parse_yaml(&b));
        if let Some(modules) = data
            .as_ref()
            .and_then(|v| v.get("modules"))
            .and_then(Value::as_object)
        {
            for (name, m) in modules {
                let path = m
                    .get("path")
                    .and_then(Value::as_str)
                    .unwrap_or("")
                    .trim_start_matches("./")
                    .trim_end_matches('/')
                    .to_string();
                let key_files = m
                    .get("key_files")
                    .and_then(Value::as_array)
                    .into_iter()
                    .flatten()
                    .filter_map(|k| k.get("path").and_then(Value::as_str).or_else(|| k.as_str()))
                    .map(|p| p.trim_start_matches("./").to_string())
                    .collect();
                let mut text = format!("{name}\n");
                text.push_str(&field_text(
                    m,
                    &[
                        "description",
                        "patterns",
                        "business_rules",
                        "decisions",
                        "known_issues",
                    ],
                ));
                let note = Note {
                    source: Source::Module,
                    label: format!("module {name}"),
                    target: Target::Module { path, key_files },
                };
                ids.extend(self.add(note, &text));
            }
        }
        self.project = Some((key, ids));
    }

    /// Re-read the artifacts of `.contextia/` (at `dir`) when any of their files changed.
    /// Listed and read beneath a handle of the folder holding `.contextia/`, so a folder or
    /// document that is a link out of it is never followed.
    pub fn artifacts(&mut self, dir: Option<&Path>) {
        let confined =
            dir.and_then(|d| Some((Root::open(d.parent()?).ok()?, PathBuf::from(d.file_name()?))));
        let mut now: Vec<(PathBuf, StatKey)> = Vec::new();
        for (root, sub) in confined
            .iter()
            .flat_map(|(r, c)| ARTIFACT_DIRS.iter().map(move |s| (r, c.join(s))))
        {
            let Ok(entries) = root.list(&sub) else {
                continue;
            };
            for (name, kind) in entries {
                let is_md = name
                    .to_str()
                    .is_some_and(|n| n.ends_with(".md") && !n.starts_with('.'));
                let path = sub.join(name);
                if let (true, Kind::File, Ok(Some(m))) = (is_md, kind, root.stat(&path, false)) {
                    if m.is_file() && m.len() <= MAX_NOTE_FILE {
                        now.push((path, stat_key(&m)));
                    }
                }
            }
        }
        now.sort();
        if now == self.artifacts.0 {
            return;
        }
        let old = std::mem::take(&mut self.artifacts.1);
        self.drop_all(&old);
        let mut ids = Vec::new();
        for (path, _) in &now {
            let Some(text) = confined
                .as_ref()
                .and_then(|(r, _)| r.read(path, MAX_NOTE_FILE).ok())
                .and_then(|b| String::from_utf8(b).ok())
            else {
                continue;
            };
            let Some((head, body)) = frontmatter(&text) else {
                continue;
            };
            let Some(meta) = parse_yaml(head.as_bytes()) else {
                continue;
            };
            let Some(id) = meta.get("id").and_then(Value::as_str) else {
                continue;
            };
            let title = meta.get("title").and_then(Value::as_str).unwrap_or("");
            let paths = meta
                .get("paths")
                .and_then(Value::as_array)
                .into_iter()
                .flatten()
                .filter_map(Value::as_str)
                .map(String::from)
                .collect();
            let tags = field_text(&meta, &["tags"]);
            let note = Note {
                source: Source::Artifact,
                label: if title.is_empty() {
                    id.to_string()
                } else {
                    format!("{id} ({title})")
                },
                target: Target::Artifact {
                    id: id.to_string(),
                    paths,
                },
            };
            ids.extend(self.add(note, &format!("{title}\n{title}\n{tags}\n{body}")));
        }
        self.artifacts = (now, ids);
    }

    /// Each note matching the query terms: (note, score scaled so the best of its source is 1,
    /// times the share of the task's distinct terms it holds, counted up to `COVER_TERMS`): a
    /// note that shares one word with a long task (a spec that says "comment") lifts its files
    /// a little, not as much as one that says what the task says.
    pub fn matches(&self, query: &[String]) -> Vec<(&Note, f32)> {
        let distinct: HashSet<&str> = query.iter().map(String::as_str).collect();
        let known: Vec<u32> = distinct.iter().filter_map(|t| self.ix.id(t)).collect();
        let wanted = distinct.len().clamp(1, COVER_TERMS) as f32;
        let q: Vec<(u32, f32)> = query
            .iter()
            .filter_map(|t| self.ix.id(t))
            .map(|id| (id, 1.0))
            .collect();
        let scores = self.ix.score(&q, self.notes.len(), K1);
        let mut best: HashMap<u8, f32> = HashMap::new();
        let mut out = Vec::new();
        for (i, s) in scores.iter().enumerate() {
            if *s <= 0.0 {
                continue;
            }
            if let Some(n) = &self.notes[i] {
                let b = best.entry(n.source as u8).or_default();
                *b = b.max(*s);
                let held = known
                    .iter()
                    .filter(|&&t| self.ix.holds(t, i as u32))
                    .count() as f32;
                out.push((n, *s, (held / wanted).min(1.0)));
            }
        }
        let mut out: Vec<(&Note, f32)> = out
            .into_iter()
            .map(|(n, s, cover)| (n, s / best[&(n.source as u8)] * cover))
            .collect();
        // In an order of their own, not of their numbers (which edits reuse).
        out.sort_by(|a, b| {
            a.0.label
                .cmp(&b.0.label)
                .then_with(|| format!("{:?}", a.0.target).cmp(&format!("{:?}", b.0.target)))
        });
        out
    }

    pub fn heap_bytes(&self) -> usize {
        self.ix.heap_bytes() + self.notes.len() * 96
    }
}

/// (frontmatter, body) of a markdown document that starts with a `---` line.
pub fn frontmatter(text: &str) -> Option<(&str, &str)> {
    let text = text.strip_prefix('\u{feff}').unwrap_or(text);
    let rest = text
        .strip_prefix("---\n")
        .or_else(|| text.strip_prefix("---\r\n"))?;
    let mut at = 0;
    for line in rest.split_inclusive('\n') {
        if line.trim_end() == "---" {
            return Some((&rest[..at], &rest[at + line.len()..]));
        }
        at += line.len();
    }
    None
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::testing::TempTree;
    use crate::tree::os::now_ns;

    #[test]
    fn notes_from_scopes_project_and_artifacts() {
        let t = TempTree::with(
            "task-written",
            &[
                ("src/auth/.context.yaml", "version: 1\nsummary: \"OAuth login and session tokens.\"\nfiles:\n  - name: refresh.py\n    purpose: \"Rotates refresh tokens.\"\nexports: [\"login(user)\"]\n"),
                (".repoctx/project.yaml", "version: 1\nmodules:\n  billing:\n    description: Invoices and payment providers.\n    path: ./src/billing/\n    key_files:\n      - path: src/billing/invoice.py\n        role: core\n"),
                (".contextia/system/specs/SPEC-001.md", "---\nid: SPEC-001\ntitle: Token refresh\npaths: [src/auth/*]\n---\nRefresh tokens are single use.\n"),
                (".contextia/system/specs/broken.md", "no frontmatter\n"),
            ],
        );
        let root = crate::tree::fs::Root::open(t.path()).unwrap();
        let mut w = Written::default();
        w.scopes(&root, &["src/auth".to_string()], &[None], now_ns());
        w.project(t.path());
        w.artifacts(Some(&t.path().join(".contextia")));
        fn labels(w: &Written, q: &str) -> Vec<(String, String)> {
            let mut v: Vec<(String, String)> = w
                .matches(&terms::terms(q))
                .into_iter()
                .map(|(n, _)| (n.label.clone(), format!("{:?}", n.target)))
                .collect();
            v.sort();
            v
        }
        let refresh = labels(&w, "refresh token");
        assert!(
            refresh.contains(&(
                "scope src/auth".into(),
                "File(\"src/auth/refresh.py\")".into()
            )),
            "{refresh:?}"
        );
        assert!(refresh.contains(&("scope src/auth".into(), "Dir(\"src/auth\")".into())));
        assert!(refresh
            .iter()
            .any(|(l, t)| l == "SPEC-001 (Token refresh)" && t.contains("src/auth/*")));
        let billing = labels(&w, "invoice payments");
        assert_eq!(billing.len(), 1);
        assert!(
            billing[0].1.contains("path: \"src/billing\"")
                && billing[0].1.contains("src/billing/invoice.py"),
            "{billing:?}"
        );
        // Scores are scaled per source: the best note of each is 1.
        assert!(w
            .matches(&terms::terms("refresh token"))
            .iter()
            .any(|(_, s)| *s == 1.0));
        // A note sharing one word with a long task counts a quarter: "token" alone does not
        // make the spec a match for a task about something else.
        let long = w.matches(&terms::terms(
            "token budget of the bundle, counted per piece and merged",
        ));
        let spec = long
            .iter()
            .find(|(n, _)| n.label.starts_with("SPEC-001"))
            .expect("the spec shares a word");
        assert!((spec.1 - 0.25).abs() < 1e-6, "{}", spec.1);
        // A change is seen; a removed file takes its notes with it.
        std::fs::remove_file(t.path().join("src/auth/.context.yaml")).unwrap();
        w.scopes(&root, &["src/auth".to_string()], &[None], now_ns());
        assert!(labels(&w, "refresh token")
            .iter()
            .all(|(l, _)| !l.starts_with("scope")));
        std::fs::write(
            t.path().join(".contextia/system/specs/SPEC-001.md"),
            "---\nid: SPEC-001\ntitle: Billing cycles\n---\n",
        )
        .unwrap();
        w.artifacts(Some(&t.path().join(".contextia")));
        assert!(labels(&w, "refresh token").is_empty());
    }

    #[test]
    #[cfg_attr(
        windows,
        ignore = "wine 8 makes no link: CreateSymbolicLinkW is a stub that returns success"
    )]
    fn a_scope_behind_a_link_out_of_the_root_is_not_stat_ed() {
        let t = TempTree::with(
            "task-written-link",
            &[("out/.context.yaml", "version: 1\nsummary: \"Secret.\"\n")],
        );
        t.mkdir("root");
        crate::tree::os::symlink(t.join("out"), t.join("root/away")).unwrap();
        crate::tree::os::symlink("../out/.context.yaml", t.join("root/.context.yaml")).unwrap();
        let root = Root::open(&t.join("root")).unwrap();
        let mut w = Written::default();
        w.scopes(
            &root,
            &[".".to_string(), "away".to_string()],
            &[None, None],
            now_ns(),
        );
        // Nothing outside the root is stat'ed, so no key is kept to be compared later.
        assert!(w.scopes.is_empty(), "{:?}", w.scopes.keys());
        assert!(w.matches(&terms::terms("secret")).is_empty());
    }

    #[test]
    fn frontmatter_split() {
        assert_eq!(
            frontmatter("---\nid: X\n---\nbody\n"),
            Some(("id: X\n", "body\n"))
        );
        assert_eq!(frontmatter("---\nid: X\n"), None);
        assert_eq!(frontmatter("body"), None);
    }
}
