//! Binding glue: the Python shapes of the core's results and errors, used by the bindings in
//! lib.rs and by nothing else. Every result of more than one value crosses as a named,
//! frozen class (python/repoctx/_core.pyi types them; stubtest checks the stub): Python reads
//! fields by name, never tuples by index. The rows Python reads on hot paths (the walk table,
//! annotations, YAML reads) hold Python objects, so a field is a plain slot read, as fast as
//! a tuple's item.

use crate::artifacts::annotate::Annotation as Found;
use crate::caches::{cache, fresh};
use crate::formats::yamlread::{Parsed, Refusal};
use crate::tasks::limits::TooBig;
use crate::tree::fs;
use crate::tree::live;
use crate::tree::os::{errno, Meta};
use crate::tree::walk;
use cap_std::fs::Metadata;
use pyo3::exceptions::{PyException, PyOSError};
use pyo3::prelude::*;
use pyo3::types::{PyBool, PyInt, PyList, PyString};
use std::cmp::Ordering;
use std::path::Path;

fn int<T>(py: Python<'_>, n: T) -> Py<PyInt>
where
    T: for<'py> IntoPyObject<
        'py,
        Target = PyInt,
        Output = Bound<'py, PyInt>,
        Error = std::convert::Infallible,
    >,
{
    let Ok(n) = n.into_pyobject(py);
    n.unbind()
}

fn boolean(py: Python<'_>, b: bool) -> Py<PyBool> {
    PyBool::new(py, b).to_owned().unbind()
}

fn string(py: Python<'_>, s: &str) -> Py<PyString> {
    PyString::new(py, s).unbind()
}

/// One directory of the walk table.
#[pyclass(frozen, get_all, module = "repoctx._core")]
pub struct DirRow {
    /// "." for the root, else the path relative to it ("src/auth").
    pub scope: Py<PyString>,
    /// dotcontext's 8-hex stat fingerprint of the directory.
    pub fingerprint: Py<PyString>,
    pub source_bytes: Py<PyInt>,
    pub files: Py<PyInt>,
    pub has_context: Py<PyBool>,
    pub included: Py<PyBool>,
    pub eligible: Py<PyBool>,
    /// mtime (ns) and size of `.context.yaml`: a parsed copy holds while they do.
    pub context_mtime_ns: Py<PyInt>,
    pub context_size: Py<PyInt>,
}

impl DirRow {
    pub fn of(py: Python<'_>, r: &walk::DirRow) -> PyResult<Py<DirRow>> {
        Py::new(
            py,
            DirRow {
                scope: string(py, &r.scope),
                fingerprint: string(py, &r.fingerprint),
                source_bytes: int(py, r.source_bytes),
                files: int(py, r.files),
                has_context: boolean(py, r.has_context),
                included: boolean(py, r.included),
                eligible: boolean(py, r.eligible),
                context_mtime_ns: int(py, r.context_stat.0),
                context_size: int(py, r.context_stat.1),
            },
        )
    }

    fn fields<'a>(&'a self, py: Python<'a>) -> [(&'static str, &'a Bound<'a, PyAny>); 9] {
        [
            ("scope", self.scope.bind(py).as_any()),
            ("fingerprint", self.fingerprint.bind(py).as_any()),
            ("source_bytes", self.source_bytes.bind(py).as_any()),
            ("files", self.files.bind(py).as_any()),
            ("has_context", self.has_context.bind(py).as_any()),
            ("included", self.included.bind(py).as_any()),
            ("eligible", self.eligible.bind(py).as_any()),
            ("context_mtime_ns", self.context_mtime_ns.bind(py).as_any()),
            ("context_size", self.context_size.bind(py).as_any()),
        ]
    }
}

#[pymethods]
impl DirRow {
    fn __eq__(&self, py: Python<'_>, other: &Bound<'_, DirRow>) -> PyResult<bool> {
        for ((_, a), (_, b)) in self.fields(py).iter().zip(other.get().fields(py).iter()) {
            if !a.eq(b)? {
                return Ok(false);
            }
        }
        Ok(true)
    }

    fn __repr__(&self, py: Python<'_>) -> PyResult<String> {
        let fields: PyResult<Vec<String>> = self
            .fields(py)
            .iter()
            .map(|(k, v)| Ok(format!("{k}={}", v.repr()?)))
            .collect();
        Ok(format!("DirRow({})", fields?.join(", ")))
    }
}

/// What a scan or a build left out, and why: a directory of the walk (its subtree with it; a
/// name that is not UTF-8 written with `\xNN`), or a file a repository cache build skipped.
#[pyclass(
    frozen,
    get_all,
    eq,
    str = "{path}: {reason}",
    module = "repoctx._core"
)]
#[derive(PartialEq)]
pub struct LeftOut {
    pub path: String,
    pub reason: String,
}

fn left_out<'a>(
    py: Python<'_>,
    items: impl IntoIterator<Item = (&'a str, &'a str)>,
) -> PyResult<Py<PyList>> {
    let items: PyResult<Vec<Py<LeftOut>>> = items
        .into_iter()
        .map(|(path, reason)| {
            Py::new(
                py,
                LeftOut {
                    path: path.into(),
                    reason: reason.into(),
                },
            )
        })
        .collect();
    Ok(PyList::new(py, items?)?.unbind())
}

/// The directory table of a tree: a cold walk's, or a live index's as of its last refresh.
#[pyclass(frozen, get_all, module = "repoctx._core")]
pub struct Table {
    /// The scopes' rows, sorted by the scope's bytes.
    pub rows: Py<PyList>,
    /// Included directories under the `min_tokens` threshold.
    pub skipped: usize,
    pub left_out: Py<PyList>,
    /// A live index's generation (bumped by every change); 0 for a walk.
    pub generation: u64,
    /// A live index's generation at which each row (beside `rows`) last changed; None for a walk.
    pub changed_at: Option<Py<PyList>>,
    /// The rows of the directories that are no scope (hidden, `build`, or beneath one), whose
    /// files only task context reads; sorted by their bytes.
    pub unscoped: Py<PyList>,
    /// As `changed_at`, beside `unscoped`.
    pub unscoped_changed_at: Option<Py<PyList>>,
    /// Each directory's files as the walk listed them, when it was asked to keep them.
    pub files: Option<Py<WalkFiles>>,
}

/// What a walk asked to keep them kept of each directory's files (tree/walk.rs `Kept`), for
/// the task index to take once rather than list the tree again; opaque to Python.
#[pyclass(frozen, module = "repoctx._core")]
pub struct WalkFiles {
    pub kept: std::sync::Mutex<Option<walk::Kept>>,
}

impl WalkFiles {
    /// What was kept, the first time (None after).
    pub fn take(&self) -> Option<walk::Kept> {
        self.kept.lock().unwrap_or_else(|e| e.into_inner()).take()
    }
}

impl Table {
    pub fn walked(py: Python<'_>, t: &walk::Table) -> PyResult<Table> {
        let rows: PyResult<Vec<Py<DirRow>>> = t.rows.iter().map(|r| DirRow::of(py, r)).collect();
        let all = PyList::new(py, rows?)?;
        let k = walk::scoped(&t.rows);
        Ok(Table {
            rows: all.get_slice(0, k).unbind(),
            skipped: t.skipped,
            left_out: left_out(
                py,
                t.unreadable.iter().map(|(p, w)| (p.as_str(), w.as_str())),
            )?,
            generation: 0,
            changed_at: None,
            unscoped: all.get_slice(k, all.len()).unbind(),
            unscoped_changed_at: None,
            files: None,
        })
    }
}

/// The last table a live index handed to Python, with private copies of its rows and their
/// generations (Python may hold, but never changes, these), so the next table is made from
/// the rows that changed since: after a touch, one new row object and two list copies.
pub struct Shown {
    table: Py<Table>,
    rows: Py<PyList>,
    changed_at: Py<PyList>,
}

/// Generations as Python ints, one object per value: a table's thousands of rows share a few.
struct Ints<'py>(
    Python<'py>,
    std::collections::HashMap<u64, Bound<'py, PyInt>>,
);

impl<'py> Ints<'py> {
    fn get(&mut self, n: u64) -> Bound<'py, PyInt> {
        self.1
            .entry(n)
            .or_insert_with(|| int(self.0, n).into_bound(self.0))
            .clone()
    }
}

/// The live index's table; `shown` (the last one made) is reused while nothing changed, and
/// its row objects are reused where rows did not change.
pub fn live_table(
    py: Python<'_>,
    index: &live::LiveIndex,
    shown: &mut Option<Shown>,
) -> PyResult<Py<Table>> {
    if let Some(s) = shown.as_ref() {
        if s.table.get().generation == index.generation {
            return Ok(s.table.clone_ref(py));
        }
    }
    let (now, skipped, unreadable) = index.table();
    let changed_at = index.changed_at();
    let mut ints = Ints(py, Default::default());
    let (rows, at) = match shown.take() {
        None => {
            let rows: PyResult<Vec<Py<DirRow>>> = now.iter().map(|r| DirRow::of(py, r)).collect();
            (
                PyList::new(py, rows?)?,
                PyList::new(py, changed_at.iter().map(|&g| ints.get(g)))?,
            )
        }
        Some(before) => {
            let since = before.table.get().generation;
            let (old_rows, old_at) = (before.rows.into_bound(py), before.changed_at.into_bound(py));
            match index.changes_since(since) {
                // Rows changed in place: positions hold.
                Some(changed) => {
                    for (i, r) in changed {
                        old_rows.set_item(i, DirRow::of(py, r)?)?;
                        old_at.set_item(i, ints.get(changed_at[i]))?;
                    }
                    (old_rows, old_at)
                }
                // Rows came or went: an unchanged row is found by its scope (both in the
                // table's order).
                None => {
                    let mut old = old_rows.iter().peekable();
                    let mut rows = Vec::with_capacity(now.len());
                    for (r, &at) in now.iter().zip(changed_at) {
                        let mut kept = None;
                        while let Some(o) = old.peek().filter(|_| at <= since) {
                            let o = o.cast::<DirRow>()?.clone();
                            let scope = o.get().scope.bind(py).to_str()?;
                            let order = walk::order_key(walk::is_unscoped(scope), scope)
                                .cmp(&r.order_key());
                            if order == Ordering::Greater {
                                break;
                            }
                            old.next();
                            if order == Ordering::Equal {
                                kept = Some(o.unbind());
                                break;
                            }
                        }
                        rows.push(match kept {
                            Some(o) => o,
                            None => DirRow::of(py, r)?,
                        });
                    }
                    (
                        PyList::new(py, rows)?,
                        PyList::new(py, changed_at.iter().map(|&g| ints.get(g)))?,
                    )
                }
            }
        }
    };
    let k = walk::scoped(now);
    let table = Table {
        rows: rows.get_slice(0, k).unbind(),
        skipped,
        left_out: left_out(py, unreadable.iter().map(|(p, w)| (p.as_str(), w.as_str())))?,
        generation: index.generation,
        changed_at: Some(at.get_slice(0, k).unbind()),
        unscoped: rows.get_slice(k, rows.len()).unbind(),
        unscoped_changed_at: Some(at.get_slice(k, at.len()).unbind()),
        files: None,
    };
    let table = Py::new(py, table)?;
    *shown = Some(Shown {
        table: table.clone_ref(py),
        rows: rows.unbind(),
        changed_at: at.unbind(),
    });
    Ok(table)
}

/// One annotation found in a source file.
#[pyclass(frozen, get_all, module = "repoctx._core")]
pub struct Annotation {
    /// The file, relative to the root.
    pub path: Py<PyString>,
    /// 1-based.
    pub line: Py<PyInt>,
    /// spec, decision, norm or test.
    pub kind: Py<PyString>,
    /// The id with its optional `.anchor` or `/test-name`, as written.
    pub target: Py<PyString>,
    /// "function", "class", "struct", … of the symbol below, or "".
    pub symbol_kind: Py<PyString>,
    pub symbol: Py<PyString>,
}

/// Annotations as Python objects; consecutive ones of one file share its path's string.
pub fn annotations(
    py: Python<'_>,
    found: impl IntoIterator<Item = (String, Found)>,
) -> PyResult<Vec<Py<Annotation>>> {
    let mut last: Option<(String, Py<PyString>)> = None;
    found
        .into_iter()
        .map(|(path, a)| {
            let path = match &last {
                Some((p, s)) if *p == path => s.clone_ref(py),
                _ => {
                    let s = string(py, &path);
                    last = Some((path, s.clone_ref(py)));
                    s
                }
            };
            Py::new(
                py,
                Annotation {
                    path,
                    line: int(py, a.line),
                    kind: PyString::intern(py, a.kind).unbind(),
                    target: string(py, &a.target),
                    symbol_kind: PyString::intern(py, a.symbol_kind).unbind(),
                    symbol: string(py, &a.symbol),
                },
            )
        })
        .collect()
}

/// One file `read_yaml_many` was asked for: `kind` "json" (`text` the document as JSON),
/// "missing", "too_large", "invalid" (`text` why it was not read) or "refused" (`text` JSON
/// {reason, line, column} of YAML the reader refused).
#[pyclass(frozen, get_all, module = "repoctx._core")]
pub struct YamlFile {
    pub kind: Py<PyString>,
    pub text: Py<PyString>,
}

pub fn yaml_file(py: Python<'_>, p: Parsed) -> PyResult<Py<YamlFile>> {
    let (kind, text) = match p {
        Parsed::Json(s) => ("json", s),
        Parsed::Missing => ("missing", String::new()),
        Parsed::TooLarge => ("too_large", String::new()),
        Parsed::Invalid(e) => ("invalid", e),
        Parsed::Refused(r) => (
            "refused",
            serde_json::json!({"reason": r.reason, "line": r.line, "column": r.column}).to_string(),
        ),
    };
    Py::new(
        py,
        YamlFile {
            kind: PyString::intern(py, kind).unbind(),
            text: string(py, &text),
        },
    )
}

/// What `jsonrpc_request_id` read of a line.
#[pyclass(frozen, get_all, module = "repoctx._core")]
pub struct RequestId {
    /// Whether the line is one JSON object.
    pub is_object: bool,
    /// Its integer or string `id`, where one can be read; else None.
    pub id: Option<Py<PyAny>>,
    /// Whether it has a top-level `id` key, whatever its value.
    pub has_id: bool,
}

/// A `require` of a go.mod (formats/gomod.rs).
#[pyclass(frozen, get_all, eq, module = "repoctx._core")]
#[derive(PartialEq)]
pub struct GoRequire {
    pub path: String,
    pub version: String,
    /// `// indirect` (or `// indirect; why`) on its line, as Go reads it.
    pub indirect: bool,
}

/// What a go.mod or go.work declares (formats/gomod.rs).
#[pyclass(frozen, get_all, module = "repoctx._core")]
pub struct GoFile {
    /// The last `module` directive's path; "" without one.
    pub module: String,
    /// The last `go` directive's version.
    pub go: Option<String>,
    /// Every `require` with a path and a version, in order.
    pub requires: Vec<Py<GoRequire>>,
    /// The directories of every `use` (go.work), as written, in order.
    pub uses: Vec<String>,
}

pub fn go_file(py: Python<'_>, g: crate::formats::gomod::GoFile) -> PyResult<GoFile> {
    let requires: PyResult<Vec<Py<GoRequire>>> = g
        .requires
        .into_iter()
        .map(|r| {
            Py::new(
                py,
                GoRequire {
                    path: r.path,
                    version: r.version,
                    indirect: r.indirect,
                },
            )
        })
        .collect();
    Ok(GoFile {
        module: g.module,
        go: g.go,
        requires: requires?,
        uses: g.uses,
    })
}

/// How the core was built.
#[pyclass(frozen, get_all, module = "repoctx._core")]
pub struct BuildInfo {
    /// The crate's version.
    pub version: &'static str,
    /// "debug" or "release".
    pub profile: &'static str,
    /// "<arch>-<os>".
    pub target: String,
}

/// A file of a module that says what it is.
#[pyclass(frozen, get_all, module = "repoctx._core")]
pub struct KeyFile {
    /// Relative to the root.
    pub path: String,
    /// entry, config, core or test.
    pub role: &'static str,
}

/// What `scan_modules` found in one module directory.
#[pyclass(frozen, get_all, module = "repoctx._core")]
pub struct ModuleScan {
    /// Source files of a programming language (not docs or data).
    pub code_files: u32,
    /// In the order of their roles: entry, config, core, test.
    pub key_files: Vec<Py<KeyFile>>,
    /// Sorted, unique: "py:a.b", "js:spec", "rs:crate", "go:path", or "mod:N" for a relative
    /// import that lands in the module dirs[N].
    pub imports: Vec<String>,
    /// The directory, or one above it, is ignored by the root's gitignore rules.
    pub ignored: bool,
}

pub fn module_scan(
    py: Python<'_>,
    m: crate::project::modscan::ModuleScan,
) -> PyResult<Py<ModuleScan>> {
    let key_files: PyResult<Vec<Py<KeyFile>>> = m
        .key_files
        .into_iter()
        .map(|(path, role)| Py::new(py, KeyFile { path, role }))
        .collect();
    Py::new(
        py,
        ModuleScan {
            code_files: m.code_files,
            key_files: key_files?,
            imports: m.imports,
            ignored: m.ignored,
        },
    )
}

/// One document of a built cache, as its manifest lists it.
#[pyclass(frozen, get_all, module = "repoctx._core")]
pub struct CacheEntry {
    pub id: String,
    /// "sha256:<hex>" of the content.
    pub version: String,
    /// "documents/<name>.json", relative to the cache.
    pub file: String,
}

/// What `build_cache` wrote.
#[pyclass(frozen, get_all, module = "repoctx._core")]
pub struct BuiltCache {
    /// Sorted by id.
    pub entries: Vec<Py<CacheEntry>>,
    /// Content bytes of the documents kept.
    pub source_bytes: u64,
    /// The files a repository build left out, sorted by path.
    pub skipped: Py<PyList>,
}

pub fn built_cache(py: Python<'_>, b: cache::Built) -> PyResult<BuiltCache> {
    let entries: PyResult<Vec<Py<CacheEntry>>> = b
        .entries
        .into_iter()
        .map(|e| {
            Py::new(
                py,
                CacheEntry {
                    id: e.id,
                    version: e.version,
                    file: e.file,
                },
            )
        })
        .collect();
    Ok(BuiltCache {
        entries: entries?,
        source_bytes: b.bytes,
        skipped: left_out(py, b.skipped.iter().map(|(p, w)| (p.as_str(), *w)))?,
    })
}

/// One row of the one table of file kinds (lang::FILE_KINDS).
#[pyclass(frozen, get_all, module = "repoctx._core")]
pub struct FileKind {
    pub key: &'static str,
    pub label: &'static str,
    pub language: &'static str,
    pub code: bool,
    /// The import grammar: "python", "js", "rust", "go", or "" for none.
    pub imports: &'static str,
}

pub fn file_kind(k: &crate::lang::FileKind) -> FileKind {
    use crate::lang::imports::Grammar;
    FileKind {
        key: k.key,
        label: k.label,
        language: k.language,
        code: k.code,
        imports: match k.imports {
            Some(Grammar::Python) => "python",
            Some(Grammar::Js) => "js",
            Some(Grammar::Rust) => "rust",
            Some(Grammar::Go) => "go",
            None => "",
        },
    }
}

/// A language of the tree and how many of its files.
#[pyclass(frozen, get_all, module = "repoctx._core")]
pub struct Language {
    pub name: String,
    pub files: u64,
}

/// An entry of a directory listed through the confined layer.
#[pyclass(frozen, get_all, module = "repoctx._core")]
pub struct DirEntry {
    /// The name (bytes that are not UTF-8 as the file-system encoding gives them).
    pub name: std::ffi::OsString,
    /// "f" file, "d" directory, "l" link, "o" other, as the directory records it.
    pub kind: &'static str,
}

/// A stat through the confined layer; times in nanoseconds.
#[pyclass(frozen, get_all, module = "repoctx._core")]
pub struct Stat {
    pub mode: u32,
    pub ino: u64,
    pub dev: u64,
    pub nlink: u64,
    pub uid: u32,
    pub gid: u32,
    pub size: u64,
    pub atime_ns: i64,
    pub mtime_ns: i64,
    pub ctime_ns: i64,
}

impl Stat {
    pub fn of(m: &Metadata) -> Stat {
        let s = m.stat();
        Stat {
            mode: s.mode,
            ino: s.ino,
            dev: s.dev,
            nlink: s.nlink,
            uid: s.uid,
            gid: s.gid,
            size: s.size,
            atime_ns: s.atime_ns(),
            mtime_ns: s.mtime_ns(),
            ctime_ns: s.ctime_ns(),
        }
    }
}

/// A cache path's stat key as Python hands it over: an `os.stat_result`, read by name.
#[derive(FromPyObject)]
pub struct StatResult {
    #[pyo3(attribute("st_dev"))]
    dev: u64,
    #[pyo3(attribute("st_ino"))]
    ino: u64,
    #[pyo3(attribute("st_size"))]
    size: u64,
    #[pyo3(attribute("st_mode"))]
    mode: u32,
    #[pyo3(attribute("st_mtime_ns"))]
    mtime_ns: i64,
    #[pyo3(attribute("st_ctime_ns"))]
    ctime_ns: i64,
}

impl StatResult {
    pub fn key(&self) -> fresh::StatKey {
        fresh::StatKey {
            dev: self.dev,
            ino: self.ino,
            size: self.size,
            mode: self.mode,
            mtime: self.mtime_ns,
            ctime: self.ctime_ns,
        }
    }
}

/// An OS error as the OSError Python would raise for it: `OSError(errno, strerror[, filename])`,
/// which is the errno's own subclass (FileNotFoundError, …); on Windows the OS's number is a
/// winerror, which Python maps to the errno itself. An error the OS did not number (the core's
/// own, such as "not a regular file") is an OSError with its text alone, but a task index too
/// big (tasks/limits.rs), which is EFBIG's, as a file too large is (`fs_err`): its text is then
/// the strerror the answers show.
pub fn io_err(e: &std::io::Error, text: String, filename: Option<&Path>) -> PyErr {
    let Some(n) = e.raw_os_error() else {
        if e.get_ref().is_some_and(|e| e.is::<TooBig>()) {
            return PyOSError::new_err((errno::EFBIG, text));
        }
        return PyOSError::new_err(text);
    };
    let text = text
        .trim_end_matches(&format!(" (os error {n})"))
        .to_string();
    let filename = filename.map(|p| p.as_os_str().to_os_string());
    if cfg!(windows) {
        PyOSError::new_err((0, text, filename, n))
    } else if let Some(filename) = filename {
        PyOSError::new_err((n, text, filename))
    } else {
        PyOSError::new_err((n, text))
    }
}

/// An OS error of the core, errno kept (see `io_err`).
pub fn os_err(e: std::io::Error) -> PyErr {
    io_err(&e, e.to_string(), None)
}

/// An OS error met at `path` (the root or directory a call was given), errno and filename kept.
pub fn os_err_at(path: &Path) -> impl Fn(std::io::Error) -> PyErr + '_ {
    move |e| io_err(&e, e.to_string(), Some(path))
}

pyo3::create_exception!(
    _core,
    CoreRefused,
    PyException,
    "What the core refuses to read or build: `message` says why to a person; each subclass names \
     its further facts as fields."
);

pyo3::create_exception!(
    _core,
    CacheRefused,
    CoreRefused,
    "A cache the contract refuses: `code` (one of the contract's) and `message`."
);

pyo3::create_exception!(
    _core,
    YamlRefused,
    CoreRefused,
    "YAML the bounded reader refuses: `reason` (also `message`), `line` and `column` (from 1), \
     and whether it breaks YAML's `syntax` (else a bound, or a form the reader does not take)."
);

/// A refusal of class `T` whose text is `message`, with `message` and the named `fields` set on it.
fn refused<T: pyo3::PyTypeInfo>(
    message: &str,
    fields: impl FnOnce(&Bound<'_, pyo3::exceptions::PyBaseException>) -> PyResult<()>,
) -> PyErr {
    Python::attach(|py| {
        let err = PyErr::new::<T, _>((message.to_string(),));
        let value = err.value(py);
        match value
            .setattr("message", message)
            .and_then(|()| fields(value))
        {
            Ok(()) => err,
            Err(e) => e,
        }
    })
}

/// A cache's failure: CacheRefused(code, message) of the contract, or OSError.
pub fn cache_err(e: cache::Fail) -> PyErr {
    match e {
        cache::Fail::Io(e) => os_err(e),
        cache::Fail::Code(code, message) => {
            refused::<CacheRefused>(message, |v| v.setattr("code", code))
        }
    }
}

/// YAML refused by formats/yamlread.rs, as YamlRefused.
pub fn yaml_refused(r: Refusal) -> PyErr {
    refused::<YamlRefused>(&r.reason, |v| {
        v.setattr("reason", &r.reason)?;
        v.setattr("line", r.line)?;
        v.setattr("column", r.column)?;
        v.setattr("syntax", r.syntax)
    })
}

pyo3::create_exception!(
    _core,
    LinkRefused,
    PyOSError,
    "A link in the repository leads outside it: not followed."
);

/// A confined layer's failure as the OSError (errno, text) Python would raise, or LinkRefused.
pub fn fs_err(e: fs::Error) -> PyErr {
    let message = e.to_string();
    match e {
        fs::Error::Outside(_) => LinkRefused::new_err((errno::ELOOP, message)),
        fs::Error::NotRegular(_, dir) => {
            PyOSError::new_err((if dir { errno::EISDIR } else { errno::EINVAL }, message))
        }
        fs::Error::TooLarge(..) => PyOSError::new_err((errno::EFBIG, message)),
        fs::Error::NotReplaced(_, _, errno) => PyOSError::new_err((errno, message)),
        fs::Error::Io(e) => io_err(&e, message, None),
    }
}

/// Run `op` on the confined layer of `root`, without the GIL.
pub fn in_root<T>(
    py: Python<'_>,
    root: &Path,
    op: impl FnOnce(&fs::Root) -> fs::Result<T> + Send,
) -> PyResult<T>
where
    T: Send,
{
    py.detach(|| {
        fs::Root::open(root)
            .map_err(fs::Error::Io)
            .and_then(|r| op(&r))
    })
    .map_err(fs_err)
}
