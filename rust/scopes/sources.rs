//! What a `.context.yaml` derives from the sources of a tree, read from many files in
//! parallel: each file's purpose and exports (lang/extract.rs), and imports resolved either
//! to directories of the same repository or to external package names. Results come back
//! per directory, never per file object.

use crate::formats::gomod;
use crate::lang::extract::{read_head_text, scan_one, FileScan, MAX_CODE_BYTES, MAX_TEXT_BYTES};
use crate::lang::imports::{self, Import};
use crate::lang::{is_code, is_test_name, kind_of, test_names, Lang};
use crate::tree::fs::{Kind, Root};
use crate::tree::ignore::{self, Budget, RootRules};
use crate::tree::walk::{child_scope, is_source_file, parent_scope};
use rayon::prelude::*;
use serde::Serialize;
use std::collections::{BTreeSet, HashMap, HashSet};
use std::path::{Path, PathBuf};
use std::sync::Arc;

const MAX_EXPORTS: usize = 50;
const MAX_INTERFACES: usize = 25;

fn quoted(s: &str) -> Option<String> {
    let start = s.find(['"', '\'', '`'])?;
    let q = s[start..].chars().next()?;
    let rest = &s[start + 1..];
    let end = rest.find(q)?;
    let v = &rest[..end];
    if v.is_empty() {
        None
    } else {
        Some(v.to_string())
    }
}

/// What is known of the whole tree before any scope is read: which directories exist,
/// and where the Python packages, npm packages, crates and Go modules of the repository are.
///
/// Every file is listed and read through the confined layer (tree/fs.rs): a link that leads
/// out of the root is not followed, and only regular files are read.
pub struct Index {
    root: PathBuf,
    /// None when the root cannot be opened: then nothing is listed or read.
    confined: Option<Root>,
    dirs: HashSet<String>,
    py_modules: HashMap<String, Vec<String>>,
    js_packages: HashMap<String, String>,
    crates: HashMap<String, String>,
    cargo_dirs: HashSet<String>,
    go_modules: Vec<(String, String)>,
    rules: Rules,
    /// The file names a scope's facts list as its manifests (the caller's: base/manifests.py).
    manifests: HashSet<String>,
    /// Files per language over every directory of the table, most first.
    pub languages: Vec<(String, u64)>,
}

/// The ignore rules the walk prunes directories by, applied here to files: a file
/// git or `.contextignore` ignores is never described in a context file.
struct Rules {
    /// `.contextignore` and the config's patterns: they win over everything.
    priority: Option<Arc<ignore::Rules>>,
    /// `.gitignore` by directory; the deepest one that says something decides.
    nested: HashMap<String, Arc<ignore::Rules>>,
    /// `.git/info/exclude`: consulted last.
    exclude: Option<Arc<ignore::Rules>>,
}

impl Rules {
    fn ignores(&self, scope: &str, path: &Path) -> bool {
        let verdict = |g: &Arc<ignore::Rules>| g.matched(path, false);
        if let Some(v) = self.priority.as_ref().and_then(verdict) {
            return v;
        }
        let mut cur = Some(scope.to_string());
        while let Some(d) = cur {
            if let Some(v) = self.nested.get(&d).and_then(verdict) {
                return v;
            }
            cur = parent(&d);
        }
        self.exclude.as_ref().and_then(verdict).unwrap_or(false)
    }
}

struct DirInfo {
    dir: String,
    py_files: bool,
    py_project: bool,
    package_name: Option<String>,
    crate_name: Option<String>,
    go_module: Option<String>,
    gitignore: Option<Arc<ignore::Rules>>,
    languages: HashMap<&'static str, u64>,
}

/// The scope above `dir`; None above the root.
fn parent(dir: &str) -> Option<String> {
    (dir != ".").then(|| parent_scope(dir).to_string())
}

/// A Cargo.toml's `[package] name` as a TOML reader reads it (Python's manifest reader,
/// base/manifests.py, parses the whole file; this reads what import resolution needs, by
/// lines): the `name` key under a `[package]` header (spaces and a comment allowed), or a
/// dotted `package.name` key before any header, its value a one-line string in either quote.
/// `name.workspace = true` names nothing, as for TOML.
fn cargo_package_name(text: &str) -> Option<String> {
    let mut table = Some(String::new()); // None inside an array of tables
    for line in text.lines() {
        let t = line.trim();
        if let Some(rest) = t.strip_prefix('[') {
            table = (!rest.starts_with('['))
                .then(|| rest.split(']').next().map(|h| h.trim().to_string()))
                .flatten();
            continue;
        }
        let Some((key, value)) = t.split_once('=') else {
            continue;
        };
        let key: String = key
            .split('.')
            .map(|p| p.trim().trim_matches('"'))
            .collect::<Vec<_>>()
            .join(".");
        let wanted = match table.as_deref() {
            Some("package") => key == "name",
            Some("") => key == "package.name",
            _ => false,
        };
        if wanted {
            return quoted(value.trim_start())
                .filter(|_| value.trim_start().starts_with(['"', '\'']));
        }
    }
    None
}

/// The first `cap` bytes of a line-based file, less a last line the cap cut (as Python's
/// manifest reader reads go.mod).
fn head_lines(root: &Root, rel: &Path, cap: u64) -> Option<String> {
    let mut buf = root.read_head(rel, cap + 1).ok()?;
    if buf.len() as u64 > cap {
        let keep = buf[..cap as usize]
            .iter()
            .rposition(|&b| b == b'\n')
            .map_or(0, |i| i + 1);
        buf.truncate(keep);
    }
    Some(
        String::from_utf8(buf)
            .unwrap_or_else(|e| String::from_utf8_lossy(e.as_bytes()).into_owned()),
    )
}

/// The package name of a package.json (as Python's reader: a string, stripped, not blank).
fn package_json_name(root: &Root, rel: &Path) -> Option<String> {
    let raw = root.read(rel, MAX_CODE_BYTES).ok()?;
    let value = serde_json::from_slice::<serde_json::Value>(&raw).ok()?;
    Some(value.get("name")?.as_str()?.trim().to_string()).filter(|n| !n.is_empty())
}

fn dir_info(root: &Path, confined: Option<&Root>, dir: &str, budget: &Budget) -> DirInfo {
    let mut info = DirInfo {
        dir: dir.to_string(),
        py_files: false,
        py_project: false,
        package_name: None,
        crate_name: None,
        go_module: None,
        gitignore: None,
        languages: HashMap::new(),
    };
    let Some(confined) = confined else {
        return info;
    };
    let abs = root.join(dir);
    let Ok(entries) = confined.list(Path::new(dir)) else {
        return info;
    };
    for (name, kind) in entries {
        let name = name.to_string_lossy();
        let rel = PathBuf::from(child_scope(dir, &name));
        // A manifest may be a link to one (followed only inside the root, as Python's reader
        // does); every other name counts only as a regular file.
        let manifest = matches!(
            name.as_ref(),
            "pyproject.toml" | "setup.py" | "setup.cfg" | "package.json" | "Cargo.toml" | "go.mod"
        );
        match kind {
            Kind::File => {}
            Kind::Link if manifest => {}
            _ => continue,
        }
        match name.as_ref() {
            "pyproject.toml" | "setup.py" | "setup.cfg" => {
                info.py_project |= kind == Kind::File
                    || confined
                        .stat(&rel, true)
                        .is_ok_and(|m| m.is_some_and(|m| m.is_file()));
            }
            ".gitignore" => {
                info.gitignore = ignore::from_file(&abs, &abs.join(".gitignore"), budget)
            }
            "package.json" => info.package_name = package_json_name(confined, &rel),
            "Cargo.toml" => {
                // Read as absent when it cannot be read; a crate without a name is still a crate.
                info.crate_name = read_head_text(confined, &rel, MAX_TEXT_BYTES * 4)
                    .map(|t| cargo_package_name(&t).unwrap_or_default());
            }
            "go.mod" => {
                info.go_module =
                    head_lines(confined, &rel, MAX_TEXT_BYTES).and_then(|t| gomod::module_path(&t))
            }
            _ => {}
        }
        if kind != Kind::File || name.starts_with('.') || !is_source_file(&name) {
            continue;
        }
        let file_kind = kind_of(&name);
        if file_kind.lang == Lang::Python {
            info.py_files = true;
        }
        if file_kind.code {
            *info.languages.entry(file_kind.language).or_default() += 1;
        }
    }
    info
}

impl Index {
    pub fn build(
        root: &Path,
        dirs: Vec<String>,
        extra_ignore: &[String],
        manifests: Vec<String>,
    ) -> Index {
        let budget = Budget::new();
        let RootRules { priority, exclude } = ignore::root_rules(root, extra_ignore, &budget);
        let confined = Root::open(root).ok();
        let mut infos: Vec<DirInfo> = dirs
            .par_iter()
            .map(|d| dir_info(root, confined.as_ref(), d, &budget))
            .collect();
        let nested = infos
            .iter_mut()
            .filter_map(|i| i.gitignore.take().map(|g| (i.dir.clone(), g)))
            .collect();
        let rules = Rules {
            priority,
            nested,
            exclude,
        };
        let dir_set: HashSet<String> = dirs.into_iter().collect();
        let mut languages: HashMap<&str, u64> = HashMap::new();
        let mut py_roots: HashSet<String> = HashSet::from([".".to_string()]);
        let mut js_packages = HashMap::new();
        let mut crates = HashMap::new();
        let mut cargo_dirs = HashSet::new();
        let mut go_modules = Vec::new();
        for info in &infos {
            for (l, n) in &info.languages {
                *languages.entry(l).or_default() += n;
            }
            if info.py_project || info.dir == "." {
                py_roots.insert(info.dir.clone());
                for sub in ["src", "python", "lib"] {
                    let d = child_scope(&info.dir, sub);
                    if dir_set.contains(&d) {
                        py_roots.insert(d);
                    }
                }
            }
            if let Some(n) = &info.package_name {
                js_packages.insert(n.clone(), info.dir.clone());
            }
            if let Some(n) = &info.crate_name {
                cargo_dirs.insert(info.dir.clone());
                if !n.is_empty() {
                    crates.insert(n.replace('-', "_"), info.dir.clone());
                }
            }
            if let Some(m) = &info.go_module {
                go_modules.push((m.clone(), info.dir.clone()));
            }
        }
        go_modules.sort_by(|a, b| b.0.len().cmp(&a.0.len()).then(a.0.cmp(&b.0)));
        // Dotted module names of directories holding Python files, from each source root above them.
        let mut py_modules: HashMap<String, Vec<String>> = HashMap::new();
        for info in infos.iter().filter(|i| i.py_files && i.dir != ".") {
            let mut anc = parent(&info.dir);
            while let Some(a) = anc {
                if py_roots.contains(&a) {
                    let rel = if a == "." {
                        info.dir.as_str()
                    } else {
                        &info.dir[a.len() + 1..]
                    };
                    let dotted = rel.replace('/', ".");
                    if imports::is_dotted(&dotted) {
                        py_modules.entry(dotted).or_default().push(info.dir.clone());
                    }
                }
                anc = parent(&a);
            }
        }
        let mut languages: Vec<(String, u64)> = languages
            .into_iter()
            .map(|(k, v)| (k.to_string(), v))
            .collect();
        languages.sort_by(|a, b| b.1.cmp(&a.1).then(a.0.cmp(&b.0)));
        Index {
            root: root.to_path_buf(),
            confined,
            dirs: dir_set,
            py_modules,
            js_packages,
            crates,
            cargo_dirs,
            go_modules,
            rules,
            manifests: manifests.into_iter().collect(),
            languages,
        }
    }

    fn longest_dir(&self, base: &str, segs: &[&str]) -> String {
        for n in (1..=segs.len()).rev() {
            let cand = child_scope(base, &segs[..n].join("/"));
            if self.dirs.contains(&cand) {
                return cand;
            }
        }
        base.to_string()
    }

    fn nearest_with(&self, dir: &str, set: &HashSet<String>) -> Option<String> {
        let mut cur = Some(dir.to_string());
        while let Some(d) = cur {
            if set.contains(&d) {
                return Some(d);
            }
            cur = parent(&d);
        }
        None
    }

    /// An import seen in `file` of `dir`: Some(Ok(internal dir)) or Some(Err((ecosystem, package))).
    fn resolve(
        &self,
        dir: &str,
        file: &str,
        import: &Import,
    ) -> Option<Result<String, (&'static str, String)>> {
        match import {
            Import::Python(level, module) => {
                let segs: Vec<&str> = if module.is_empty() {
                    vec![]
                } else {
                    module.split('.').collect()
                };
                if *level > 0 {
                    let mut base = dir.to_string();
                    for _ in 1..*level {
                        base = parent(&base)?;
                    }
                    return Some(Ok(self.longest_dir(&base, &segs)));
                }
                for n in (1..=segs.len()).rev() {
                    if let Some(cands) = self.py_modules.get(&segs[..n].join(".")) {
                        return Some(Ok(nearest(cands, dir)));
                    }
                }
                segs.first().map(|s| Err(("python", s.to_string())))
            }
            Import::Js(spec) => {
                if spec.starts_with("./") || spec.starts_with("../") || spec == "." || spec == ".."
                {
                    let target = normalize(dir, spec)?;
                    if self.dirs.contains(&target) {
                        return Some(Ok(target));
                    }
                    return parent(&target).map(Ok);
                }
                if spec.starts_with('/')
                    || spec.contains(':')
                    || spec.starts_with('#')
                    || spec.starts_with('~')
                {
                    return None;
                }
                let mut parts = spec.splitn(3, '/');
                let first = parts.next()?;
                let name = if first.starts_with('@') {
                    format!("{}/{}", first, parts.next().unwrap_or(""))
                } else {
                    first.to_string()
                };
                match self.js_packages.get(&name) {
                    Some(d) => Some(Ok(d.clone())),
                    None if name.starts_with("@/") => None,
                    None => Some(Err(("js", name))),
                }
            }
            Import::Rust(segs) => {
                let first = segs[0].as_str();
                let rest: Vec<&str> = segs[1..].iter().map(|s| s.as_str()).collect();
                let at_root = matches!(file, "mod.rs" | "lib.rs" | "main.rs");
                match first {
                    "crate" => {
                        let krate = self.nearest_with(dir, &self.cargo_dirs)?;
                        let src = child_scope(&krate, "src");
                        let base = if self.dirs.contains(&src) { src } else { krate };
                        Some(Ok(self.longest_dir(&base, &rest)))
                    }
                    "self" => Some(Ok(self.longest_dir(dir, &rest))),
                    "super" => {
                        let mut base = if at_root {
                            parent(dir)?
                        } else {
                            dir.to_string()
                        };
                        let mut rest = rest.as_slice();
                        while rest.first() == Some(&"super") {
                            base = parent(&base)?;
                            rest = &rest[1..];
                        }
                        Some(Ok(self.longest_dir(&base, rest)))
                    }
                    name if imports::RUST_BUILTIN.contains(&name) => None,
                    name => match self.crates.get(name) {
                        Some(d) => Some(Ok(d.clone())),
                        None => Some(Err(("rust", name.to_string()))),
                    },
                }
            }
            Import::Go(path) => {
                for (module, mdir) in &self.go_modules {
                    if path == module {
                        return Some(Ok(mdir.clone()));
                    }
                    if let Some(rest) = path
                        .strip_prefix(module.as_str())
                        .and_then(|r| r.strip_prefix('/'))
                    {
                        let segs: Vec<&str> = rest.split('/').collect();
                        return Some(Ok(self.longest_dir(mdir, &segs)));
                    }
                }
                if path.split('/').next().is_some_and(|s| s.contains('.')) {
                    Some(Err(("go", path.clone())))
                } else {
                    None
                }
            }
        }
    }

    /// Facts of every scope, as one JSON array (one object per scope, in order).
    pub fn extract(&self, scopes: &[String]) -> String {
        let facts: Vec<ScopeFacts> = scopes.par_iter().map(|s| self.scope_facts(s)).collect();
        serde_json::to_string(&facts).unwrap_or_else(|_| "[]".to_string())
    }

    /// For each (scope, names): the names no file of the scope exports any more.
    pub fn missing_exports(&self, items: &[(String, Vec<String>)]) -> Vec<Vec<String>> {
        items
            .par_iter()
            .map(|(scope, names)| {
                let all = self.list_files(scope);
                let found: HashSet<String> = self
                    .sources(scope, &all)
                    .flat_map(|n| self.scan(scope, n, true, 0).names)
                    .collect();
                names
                    .iter()
                    .filter(|n| !found.contains(*n))
                    .cloned()
                    .collect()
            })
            .collect()
    }

    /// The regular files of a directory (links are not listed), sorted.
    fn list_files(&self, dir: &str) -> Vec<String> {
        let listed = self
            .confined
            .as_ref()
            .and_then(|r| r.list(Path::new(dir)).ok())
            .unwrap_or_default();
        let mut names: Vec<String> = listed
            .into_iter()
            .filter(|(_, k)| *k == Kind::File)
            .map(|(n, _)| n.to_string_lossy().into_owned())
            .collect();
        names.sort();
        names
    }

    /// What one file of a scope says, read through the confined layer.
    fn scan(&self, scope: &str, name: &str, want_names: bool, budget: usize) -> FileScan {
        match &self.confined {
            Some(root) => scan_one(
                root,
                Path::new(&child_scope(scope, name)),
                want_names,
                budget,
            ),
            None => FileScan::default(),
        }
    }

    /// The files of a scope's listing that a context file describes: not hidden, counted
    /// as source by the walk, not ignored.
    fn sources<'b>(
        &'b self,
        scope: &'b str,
        all: &'b [String],
    ) -> impl Iterator<Item = &'b String> {
        let abs = self.root.join(scope);
        all.iter().filter(move |n| {
            !n.starts_with('.') && is_source_file(n) && !self.rules.ignores(scope, &abs.join(n))
        })
    }

    /// For each scope, the names of the files its context file lists.
    pub fn source_files(&self, scopes: &[String]) -> Vec<Vec<String>> {
        scopes
            .par_iter()
            .map(|s| {
                let all = self.list_files(s);
                self.sources(s, &all).cloned().collect()
            })
            .collect()
    }

    fn scope_facts(&self, scope: &str) -> ScopeFacts {
        let all = self.list_files(scope);
        let present: HashSet<&str> = all.iter().map(|s| s.as_str()).collect();
        let test_dirs: Vec<(&str, Vec<String>)> = ["tests", "test", "__tests__"]
            .into_iter()
            .filter(|d| self.dirs.contains(&child_scope(scope, d)))
            .map(|d| (d, self.list_files(&child_scope(scope, d))))
            .collect();
        let manifests = all
            .iter()
            .filter(|n| self.manifests.contains(n.as_str()))
            .cloned()
            .collect();
        let mut facts = ScopeFacts {
            manifests,
            ..ScopeFacts::default()
        };
        let mut internal = BTreeSet::new();
        let mut external = BTreeSet::new();
        let mut tests = BTreeSet::new();
        let mut seen = HashSet::new();
        for name in self.sources(scope, &all) {
            let scan = self.scan(scope, name, false, MAX_EXPORTS - facts.exports.len());
            let (label, lang) = (kind_of(name).label, kind_of(name).lang);
            for import in &scan.imports {
                match self.resolve(scope, name, import) {
                    Some(Ok(d)) if d != scope => {
                        internal.insert(d);
                    }
                    Some(Err((eco, pkg))) => {
                        external.insert((eco, pkg));
                    }
                    _ => {}
                }
            }
            if scan.tests || is_test_name(name, lang) {
                tests.insert(match lang {
                    Lang::Python => "python",
                    Lang::Rust => "rust",
                    Lang::Go => "go",
                    Lang::TypeScript | Lang::JavaScript => "js",
                    _ => continue,
                });
            }
            let generic = scan.purpose.is_none();
            let purpose = scan.purpose.unwrap_or_else(|| {
                if scan.first.is_empty() {
                    label.to_string()
                } else {
                    let more = if scan.count > scan.first.len() {
                        ", …"
                    } else {
                        ""
                    };
                    format!("{} defining {}{}", label, scan.first.join(", "), more)
                }
            });
            if generic {
                facts.generic.push(name.clone());
            }
            let test_file = if is_code(lang) && !is_test_name(name, lang) {
                find_test(name, lang, &present, &test_dirs)
            } else {
                None
            };
            // A test file's functions are not the directory's interface.
            for e in scan
                .exports
                .into_iter()
                .filter(|_| !is_test_name(name, lang))
            {
                if !seen.insert(e.sig.clone()) {
                    continue;
                }
                if let Some(d) = e.doc {
                    if facts.interfaces.len() < MAX_INTERFACES {
                        facts.interfaces.push(InterfaceOut {
                            name: e.sig.clone(),
                            description: d,
                        });
                    }
                }
                facts.exports.push(e.sig);
            }
            facts.files.push(FileOut {
                name: name.clone(),
                purpose,
                test_file,
            });
        }
        facts.internal = internal.into_iter().collect();
        facts.external = external
            .into_iter()
            .map(|(e, p)| (e.to_string(), p))
            .collect();
        facts.tests = tests.into_iter().map(|s| s.to_string()).collect();
        facts
    }
}

fn nearest(cands: &[String], dir: &str) -> String {
    let shared = |c: &String| {
        c.split('/')
            .zip(dir.split('/'))
            .take_while(|(a, b)| a == b)
            .count()
    };
    cands
        .iter()
        .max_by(|a, b| shared(a).cmp(&shared(b)).then(b.cmp(a)))
        .cloned()
        .unwrap_or_default()
}

fn normalize(dir: &str, spec: &str) -> Option<String> {
    let mut parts: Vec<&str> = if dir == "." {
        vec![]
    } else {
        dir.split('/').collect()
    };
    for seg in spec.split('/') {
        match seg {
            "" | "." => {}
            ".." => {
                parts.pop()?;
            }
            s => parts.push(s),
        }
    }
    Some(if parts.is_empty() {
        ".".to_string()
    } else {
        parts.join("/")
    })
}

/// Where the tests of `name` are: beside it, or in a test directory of the scope.
fn find_test(
    name: &str,
    lang: Lang,
    present: &HashSet<&str>,
    test_dirs: &[(&str, Vec<String>)],
) -> Option<String> {
    let candidates = test_names(name, lang)?;
    for c in &candidates {
        if present.contains(c.as_str()) {
            return Some(c.clone());
        }
    }
    for (d, files) in test_dirs {
        for c in &candidates {
            if files.iter().any(|f| f == c) {
                return Some(format!("{}/{}", d, c));
            }
        }
    }
    None
}

#[derive(Serialize)]
struct FileOut {
    name: String,
    purpose: String,
    #[serde(skip_serializing_if = "Option::is_none")]
    test_file: Option<String>,
}

#[derive(Serialize)]
struct InterfaceOut {
    name: String,
    description: String,
}

/// What one directory's files say, in the shape Python decodes (`generate.ScopeFacts`).
#[derive(Serialize, Default)]
struct ScopeFacts {
    files: Vec<FileOut>,
    /// Names of files whose purpose is only a label for their kind.
    generic: Vec<String>,
    exports: Vec<String>,
    interfaces: Vec<InterfaceOut>,
    internal: Vec<String>,
    external: Vec<(String, String)>,
    manifests: Vec<String>,
    /// Languages with tests here: "python", "rust", "go", "js".
    tests: Vec<String>,
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::testing::TempTree;

    #[test]
    fn cargo_package_name_reads_what_toml_reads() {
        let name = |t: &str| cargo_package_name(t);
        let a = Some("a-b".to_string());
        assert_eq!(name("[package]\nname = \"a-b\"\n"), a);
        assert_eq!(name("[ package ] # the crate\nname='a-b' # x\n"), a);
        assert_eq!(
            name("package.name = \"a-b\"\n[dependencies]\nname = \"z\"\n"),
            a
        );
        assert_eq!(name("[package]\nnamespace = \"z\"\nname = \"a-b\"\n"), a);
        assert_eq!(name("[package]\nname.workspace = true\n"), None);
        assert_eq!(name("[package.metadata]\nname = \"z\"\n"), None);
        assert_eq!(
            name("[[bin]]\nname = \"z\"\n[package]\nversion = \"1\"\n"),
            None
        );
        assert_eq!(name("[dependencies]\npackage.name = \"z\"\n"), None);
    }

    #[test]
    fn ignored_files_are_not_described() {
        let root = TempTree::with(
            "sources-ignore",
            &[
                (".gitignore", "*.local.py\nkeep.*\n"),
                ("src/sub/.gitignore", "!keep.py\n"),
                (".git/info/exclude", "excluded.py\n"),
                (".contextignore", "noise.md\n"),
            ],
        );
        for f in [
            "a.py",
            "b.local.py",
            "keep.py",
            "excluded.py",
            "noise.md",
            "extra.py",
        ] {
            root.write(Path::new("src/sub").join(f), "x = 1\n");
        }
        let dirs = vec![".".to_string(), "src".to_string(), "src/sub".to_string()];
        let index = Index::build(
            &root,
            dirs,
            &["extra.py".to_string()],
            vec!["Cargo.toml".to_string()],
        );
        assert_eq!(
            index.source_files(&["src/sub".to_string()]),
            vec![vec!["a.py".to_string(), "keep.py".to_string()]]
        );
    }

    /// The internal and external dependencies `extract` gives one scope.
    fn deps(index: &Index, scope: &str) -> (Vec<String>, Vec<(String, String)>) {
        let facts: serde_json::Value =
            serde_json::from_str(&index.extract(&[scope.to_string()])).unwrap();
        let internal = facts[0]["internal"]
            .as_array()
            .unwrap()
            .iter()
            .map(|v| v.as_str().unwrap().to_string())
            .collect();
        let external = facts[0]["external"]
            .as_array()
            .unwrap()
            .iter()
            .map(|p| {
                (
                    p[0].as_str().unwrap().to_string(),
                    p[1].as_str().unwrap().to_string(),
                )
            })
            .collect();
        (internal, external)
    }

    fn scopes(list: &[&str]) -> Vec<String> {
        list.iter().map(|s| s.to_string()).collect()
    }

    #[test]
    fn go_modules_are_read_by_the_one_parser() {
        // A tab after `module`, a trailing comment, the block form, a quoted path, and two
        // `module` lines (the last holds) resolve as the plain form does.
        let root = TempTree::with(
            "sources-gomod",
            &[
                ("plain/go.mod", "module ex.com/plain\n\ngo 1.22\n"),
                ("tab/go.mod", "module\tex.com/tab // the module\n"),
                ("block/go.mod", "// Code generated.\nmodule (\n\tex.com/block\n)\n"),
                ("quoted/go.mod", "\u{feff}module \"ex.com/quoted\" // q\r\n"),
                ("twice/go.mod", "module ex.com/old\nmodule ex.com/twice\n"),
                ("cmd/main.go", "package main\n\nimport (\n\t\"ex.com/plain/util\"\n\t\"ex.com/tab/util\"\n\t\"ex.com/block/util\"\n\t\"ex.com/quoted/util\"\n\t\"ex.com/twice/util\"\n\t\"ex.com/old/util\"\n)\n"),
            ],
        );
        let mut dirs = scopes(&[".", "cmd"]);
        for m in ["plain", "tab", "block", "quoted", "twice"] {
            root.write(format!("{m}/util/u.go"), "package util\n");
            dirs.extend([m.to_string(), format!("{m}/util")]);
        }
        let index = Index::build(&root, dirs, &[], Vec::new());
        let (internal, external) = deps(&index, "cmd");
        assert_eq!(
            internal,
            [
                "block/util",
                "plain/util",
                "quoted/util",
                "tab/util",
                "twice/util"
            ]
        );
        assert_eq!(
            external,
            [("go".to_string(), "ex.com/old/util".to_string())]
        );
    }

    #[test]
    #[cfg_attr(
        windows,
        ignore = "wine 8 makes no link: CreateSymbolicLinkW is a stub that returns success, and a link made from the Linux side reads as its target"
    )]
    fn manifests_are_read_through_the_confined_layer() {
        // Manifests that are links out of the root are not read (their names would make the
        // imports internal); links inside the root are followed, as Python's reader does.
        let base = TempTree::with(
            "sources-links",
            &[
                ("out/go.mod", "module ex.com/leak\n"),
                ("out/package.json", "{\"name\": \"@leak/ui\"}"),
                ("out/Cargo.toml", "[package]\nname = \"leak\"\n"),
                (
                    "root/cmd/main.go",
                    "package main\n\nimport \"ex.com/leak/util\"\nimport \"ex.com/in/util\"\n",
                ),
                (
                    "root/web/index.ts",
                    "import { x } from '@leak/ui';\nimport { y } from '@in/ui';\n",
                ),
                ("root/web/lib.rs", "use leak::Thing;\nuse inside::Other;\n"),
                ("root/util/u.go", "package util\n"),
                ("root/in/util/u.go", "package util\n"),
                ("root/in/real/go.mod.txt", "module ex.com/in\n"),
                ("root/in/real/package.json.txt", "{\"name\": \" @in/ui \"}"),
                (
                    "root/in/real/Cargo.toml.txt",
                    "[package]\nname = \"inside\"\n",
                ),
            ],
        );
        let root = base.join("root");
        for name in ["go.mod", "package.json", "Cargo.toml"] {
            crate::tree::os::symlink(base.join("out").join(name), root.join(name)).unwrap();
            crate::tree::os::symlink(format!("real/{name}.txt"), root.join("in").join(name))
                .unwrap();
        }
        let dirs = scopes(&[".", "cmd", "web", "util", "in", "in/util", "in/real"]);
        let index = Index::build(&root, dirs, &[], Vec::new());
        let (internal, external) = deps(&index, "cmd");
        assert_eq!(internal, ["in/util"]);
        assert_eq!(
            external,
            [("go".to_string(), "ex.com/leak/util".to_string())]
        );
        let (internal, external) = deps(&index, "web");
        assert_eq!(internal, ["in"]);
        assert!(
            external.contains(&("js".to_string(), "@leak/ui".to_string())),
            "{external:?}"
        );
        assert!(
            external.contains(&("rust".to_string(), "leak".to_string())),
            "{external:?}"
        );
        assert!(
            !index.cargo_dirs.contains("."),
            "a Cargo.toml linked out is read as absent"
        );
    }

    #[test]
    fn relative_paths_normalise_inside_the_root_only() {
        assert_eq!(normalize("src/a", "../b/c").as_deref(), Some("src/b/c"));
        assert_eq!(normalize(".", "./x").as_deref(), Some("x"));
        assert_eq!(normalize("a", "../.."), None);
    }
}
